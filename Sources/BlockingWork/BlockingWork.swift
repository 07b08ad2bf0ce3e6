import Dispatch

/// Runs a blocking call (waiting for a child process, stopping a C library's server thread, a
/// synchronous file or database operation) on a thread that is not Swift's cooperative pool, and
/// suspends the calling task until it returns.
///
/// The pool has one thread per core (two on a small CI machine); a call that blocks there can stop
/// every task in the process. Calls run on a bounded pool of threads of their own
/// (``BlockingThreadPool``, at most 128): calls that block at once each get a thread until the bound,
/// and later ones wait for a thread, so the process's thread count stays bounded.
public enum BlockingWork {
    /// Runs `body` off the cooperative pool and returns what it returns, or throws what it throws.
    ///
    /// The call is not cancelled with the task: a blocking call cannot be interrupted from outside.
    /// `label` names the call in a debugger's view of the waiting task.
    public static func run<Result: Sendable, Failure: Error>(_ label: String = "BlockingWork",
                                                             _ body: @escaping @Sendable () throws(Failure) -> Result) async throws(Failure) -> Result {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Swift.Result<Result, Failure>, Never>) in
            BlockingThreadPool.shared.submit {
                continuation.resume(returning: Swift.Result { () throws(Failure) -> Result in try body() })
            }
        }
        return try outcome.get()
    }
}

/// A serial queue for blocking calls that must not overlap (statements on one database connection):
/// each ``run(_:)`` waits for the ones before it, on the queue's thread, while the calling task is
/// suspended, never blocking Swift's cooperative pool.
public final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    /// A queue of its own, named `label` in debuggers and thread listings. A queue made this way
    /// targets Dispatch's overcommit pool, which starts another thread when its threads are blocked.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `body` on the queue, after the calls before it, and returns what it returns.
    public func run<Result: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> Result) async throws(Failure) -> Result {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Swift.Result<Result, Failure>, Never>) in
            queue.async {
                continuation.resume(returning: Swift.Result { () throws(Failure) -> Result in try body() })
            }
        }
        return try outcome.get()
    }

    /// Runs `body` on the queue and returns at once.
    public func async(_ body: @escaping @Sendable () -> Void) {
        queue.async(execute: body)
    }
}
