import BlockingWork

/// Runs CPU-heavy test work (fuzzing, thousands of mutations) on a thread of its own.
///
/// Swift's cooperative pool has one thread per core (two on a small CI machine) and runs every other
/// test's servers, stores and clients; a loop that holds one of its threads for seconds slows them
/// all. Record issues after it returns: the thread does not carry the test's context.
public func onThreadOfItsOwn<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await BlockingWork.run("test work") { () throws(any Error) -> Result in try body() }
}
