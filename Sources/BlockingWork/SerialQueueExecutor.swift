import Dispatch

/// A serial executor on a dispatch queue of its own, for actors whose methods block: SQLite waiting
/// for another process's write lock, an `fsync`, a file lock, a call to a database server.
///
/// Swift's cooperative pool has one thread per core, and a job that blocks one of them takes it from
/// every task in the process. A queue made with `DispatchQueue(label:)` targets Dispatch's overcommit
/// pool instead, which starts another thread when its threads are blocked, so blocking here never
/// delays work elsewhere. An actor adopts it with
///
/// ```swift
/// actor Ledger {
///     nonisolated let executor = SerialQueueExecutor(label: "ledger")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
public final class SerialQueueExecutor: SerialExecutor, @unchecked Sendable {
    // Sendable: the queue is immutable and Dispatch queues are thread-safe.
    private let queue: DispatchQueue

    /// A new executor with a queue of its own, named `label` in debuggers and thread listings.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func isSameExclusiveExecutionContext(other: SerialQueueExecutor) -> Bool { self === other }

    /// Traps unless the caller runs on this executor's queue: what `assumeIsolated` and the runtime's
    /// isolation checks ask of an executor that is not the one they expected by identity.
    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
