import BlockingWork
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
