import Synchronization
import Testing
import BlockingWork

/// `GroupCommit` turns callers into groups: every caller gets its own outcome after the group
/// holding its item committed, callers that arrive during a commit share the next one, and items
/// that step aside lead the next group.
@Suite struct GroupCommitQueueTests {
    /// What a test's commits saw: each group's items, in order.
    final class CommitLog: Sendable {
        let groups = Mutex<[[Int]]>([])
        func record(_ group: [Int]) { groups.withLock { $0.append(group) } }
        var all: [[Int]] { groups.withLock { $0 } }
    }

    @Test func everyCallerGetsItsOwnOutcomeAndCallersShareCommits() async {
        let commits = GroupCommit<Int, Int>()
        let log = CommitLog()
        let outcomes = await withTaskGroup(of: (Int, Int).self) { group in
            for item in 0..<200 {
                group.addTask {
                    let outcome = await commits.submit(item) { items in
                        log.record(items)
                        // A commit that takes a while, as an fsync does: callers arriving meanwhile queue.
                        try? await Task.sleep(for: .milliseconds(2))
                        return items.map { $0 * 10 }
                    }
                    return (item, outcome)
                }
            }
            var outcomes: [Int: Int] = [:]
            for await (item, outcome) in group { outcomes[item] = outcome }
            return outcomes
        }
        #expect(outcomes.count == 200)
        #expect(outcomes.allSatisfy { $0.value == $0.key * 10 })
        let groups = log.all
        #expect(groups.flatMap { $0 }.sorted() == Array(0..<200), "each item is committed exactly once")
        #expect(groups.count < 200, "callers that wait during a commit share the next one (\(groups.count) commits)")
    }

    @Test func itemsThatStepAsideLeadTheNextGroup() async {
        // Odd items conflict with an earlier odd item of the same group: only the first odd one of a
        // group commits; the others wait for the next group and come first in it.
        let commits = GroupCommit<Int, Int>(gatheringRounds: 8)
        let log = CommitLog()
        let outcomes = await withTaskGroup(of: Int.self) { group in
            for item in 0..<40 {
                group.addTask {
                    await commits.submit(item) { items in
                        log.record(items)
                        var oddTaken = false
                        return items.enumerated().map { index, item -> Int? in
                            guard item % 2 == 1 else { return item }
                            if index > 0, oddTaken { return nil }
                            oddTaken = true
                            return item
                        }
                    }
                }
            }
            var outcomes: [Int] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.sorted() == Array(0..<40), "every caller returns with its own item's outcome")
        let groups = log.all
        for (index, group) in groups.enumerated() where index > 0 {
            // An item deferred from the group before comes before every newcomer of this group.
            let deferred = Set(groups[index - 1].filter { $0 % 2 == 1 }.dropFirst())
            let positions = group.enumerated().filter { deferred.contains($0.element) }.map(\.offset)
            #expect(positions == Array(0..<positions.count), "deferred items lead group \(index): \(group)")
        }
        #expect(groups.count >= 20, "twenty odd items need twenty groups at least")
    }
}
