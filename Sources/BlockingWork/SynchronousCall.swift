import Dispatch
import Synchronization

extension BlockingWork {
    /// Runs asynchronous work for a caller that must be synchronous, and blocks the calling thread
    /// until the work ends: for APIs whose shape is synchronous though the work behind them is not,
    /// such as Xcode's `SKTestSession` (`try session.refundTransaction(identifier: 3)`).
    ///
    /// The work runs with a task executor of its own (threads of a dispatch queue), so nothing it does
    /// waits for Swift's cooperative pool, where such callers usually are: a caller blocking a pool
    /// thread here cannot starve the work it waits for. Actors with executors of their own (the local
    /// App Store) still run their parts there. Work that needs the main actor must not be waited for
    /// from the main thread.
    public static func synchronously<Result: Sendable>(_ operation: @escaping @Sendable () async throws -> Result) throws -> Result {
        let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: SynchronousCallExecutor.shared) {
            let result: Swift.Result<Result, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}

/// The task executor of ``BlockingWork/synchronously(_:)``: jobs run on threads of its own, made when
/// a job comes and none is idle (a job that itself waits for a synchronous call gets another thread).
///
/// Not a concurrent dispatch queue: on Linux such a queue runs on Dispatch's default-priority pool,
/// the one Swift's cooperative threads come from. With every cooperative thread blocked in a
/// synchronous call, the work those calls waited for queued behind them until Dispatch noticed and
/// added threads, about a second at a time: eight callers took 49 s in the whole suite, and every
/// other task in the process waited with them.
final class SynchronousCallExecutor: TaskExecutor, Sendable {
    static let shared = SynchronousCallExecutor()
    private let threads = BlockingThreadPool(maximumThreads: 64, name: "SyncCall")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        threads.submit { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
