import BlockingWork
import Foundation
import Synchronization

/// One connection and the thread its calls run on: a lane of a database that callers in async code
/// use one after another (a writer lane, a reader lane), never on Swift's cooperative pool.
public final class DatabaseLane: Sendable {
    private let connection: Mutex<any DatabaseConnection>
    private let queue: BlockingQueue
    /// What the lane's database is, for messages.
    public let location: String
    public let engine: DatabaseEngine

    public init(_ connection: any DatabaseConnection, label: String) {
        self.location = connection.location
        self.engine = connection.engine
        self.connection = Mutex(connection)
        self.queue = BlockingQueue(label: label)
    }

    /// Runs `body` with the lane's connection on the lane's thread, after the calls queued before it.
    public func run<Result: Sendable, Failure: Error>(_ body: @escaping @Sendable (any DatabaseConnection) throws(Failure) -> Result) async throws(Failure) -> Result {
        try await queue.run { () throws(Failure) -> Result in
            try self.connection.withLock { (connection) throws(Failure) -> Result in
                // A connection lost since the last call (PostgreSQL restarted) is made again first; if
                // the server is still away, `body` fails with the reason and the next call tries again.
                try? connection.reconnectIfLost()
                return try body(connection)
            }
        }
    }

    /// Runs `body` with the lane's connection on the calling thread, which must not be the
    /// cooperative pool (the lane's own thread, as a writer that drains its queue does).
    public func runHere<Result, Failure: Error>(_ body: (any DatabaseConnection) throws(Failure) -> Result) throws(Failure) -> Result {
        try connection.withLock { (connection) throws(Failure) -> Result in
            try? connection.reconnectIfLost()
            return try body(connection)
        }
    }

    /// Queues `body` on the lane's thread without waiting for it.
    public func async(_ body: @escaping @Sendable () -> Void) {
        queue.async(body)
    }
}

/// Several reader lanes of one database, as GRDB's `DatabasePool` keeps several readers beside its
/// writer: reads run at once on as many connections (SQLite's WAL lets readers run beside the
/// writer and each other), each call on the lane with the fewest calls in flight.
public final class DatabaseReaders: Sendable {
    private let lanes: [DatabaseLane]
    private let inFlight: Mutex<[Int]>

    /// How many reader connections a database gets by default: one per core, two at least and four
    /// at most (reads also decode on their callers' threads).
    public static var defaultCount: Int { min(4, max(2, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Lanes over `connections` (one lane each), named `label` and their number.
    public init(_ connections: [any DatabaseConnection], label: String) {
        precondition(!connections.isEmpty, "a database needs a reader")
        lanes = connections.enumerated().map { DatabaseLane($0.element, label: "\(label).\($0.offset + 1)") }
        inFlight = Mutex(Array(repeating: 0, count: connections.count))
    }

    /// Runs `body` on the least busy reader lane's connection and thread.
    public func run<Result: Sendable, Failure: Error>(_ body: @escaping @Sendable (any DatabaseConnection) throws(Failure) -> Result) async throws(Failure) -> Result {
        let index = inFlight.withLock { counts -> Int in
            let index = counts.indices.min { counts[$0] < counts[$1] } ?? 0
            counts[index] += 1
            return index
        }
        defer { inFlight.withLock { $0[index] -= 1 } }
        return try await lanes[index].run(body)
    }
}
