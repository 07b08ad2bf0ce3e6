import Foundation
import Synchronization

/// Runs an app's main-actor code on the process's main thread, as Apple platforms do.
///
/// On Linux, an `async` `main` (and Swift Testing) hands the main thread to Dispatch once it first
/// suspends, and main-actor code goes on on another thread: there `Thread.isMainThread` is false and
/// `OperationQueue.current` is `nil`, so store code written for iOS that captures
/// `OperationQueue.current!` traps. XCTest keeps its tests on the main thread by running the main
/// run loop while they wait; ``run(_:)`` does the same for an executable:
///
/// ```swift
/// @main
/// struct ShopApp {
///     static func main() throws {                  // not async
///         try MainThread.run {
///             let session = try LocalStore(contentsOf: shopFile)
///             try await ShopSession.run(session)   // main-actor code, on the main thread throughout
///         }
///     }
/// }
/// ```
public enum MainThread {
    /// Runs `body` on the main actor and returns what it returns, keeping the main thread's run loop
    /// going meanwhile, so every main-actor job runs on the main thread.
    ///
    /// Call it from a synchronous `main` on the main thread, before anything else has run on the main
    /// actor: it must not be called from main-actor code, which it would re-enter.
    public static func run<Result: Sendable>(_ body: @escaping @MainActor () async throws -> Result) throws -> Result {
        precondition(Thread.isMainThread, "MainThread.run is called from a synchronous main, on the main thread")
        let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)
        Task { @MainActor in
            let result: Swift.Result<Result, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
        }
        while true {
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
        }
    }
}
