import Foundation
import Testing
import BlockingWork

/// `BlockingWork.run` keeps blocking calls off the cooperative pool on a bounded set of threads of
/// its own; calls that block at the same time must each get a thread (up to the bound), or a call
/// waiting for another would wait for ever.
@Suite struct BlockingWorkTests {
    @Test func callsThatWaitForEachOtherAllRunAtOnce() async throws {
        // Twelve calls that each block until all twelve have started: they finish only if the pool
        // gives every one a thread, also when they are submitted faster than threads wake.
        let parties = 12
        let arrived = NSCondition()
        let count = LockedCounter()
        let deadline = Date().addingTimeInterval(30)
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<parties {
                group.addTask {
                    await BlockingWork.run("barrier") {
                        arrived.lock()
                        defer { arrived.unlock() }
                        count.increment()
                        arrived.broadcast()
                        while count.value < parties {
                            if !arrived.wait(until: deadline) { return false }
                        }
                        return true
                    }
                }
            }
            var all: [Bool] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == parties)
        #expect(results.allSatisfy { $0 }, "some blocking calls waited for a thread held by another call")
    }

    @Test func errorsAndResultsComeBackToTheCaller() async {
        struct Refusal: Error, Equatable { let code: Int }
        let value = await BlockingWork.run { 6 * 7 }
        #expect(value == 42)
        await #expect(throws: Refusal(code: 7)) {
            try await BlockingWork.run { () throws(Refusal) -> Int in throw Refusal(code: 7) }
        }
    }
}

private final class LockedCounter: @unchecked Sendable {
    // Unchecked: read and written only while the test's condition is locked.
    private(set) var value = 0
    func increment() { value += 1 }
}
