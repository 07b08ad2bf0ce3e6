import Synchronization

/// Commits made in groups: callers submit an item and suspend, and every item waiting is committed
/// as one unit (one database transaction, one fsync). Either one caller at a time, the leader, commits
/// the group and hands the lead to the first caller still waiting (``submit(_:commit:)``: the ledger's
/// purchases, committed on the store's executor), or a drain on a thread of its own commits group
/// after group (``submit(_:drainingWith:commit:)``: the backend's writer lane).
///
/// A group is committed by the `commit` its leader submitted with (every caller of one queue passes
/// the same). It receives the items of a group in the order they were submitted, the leader's first, and
/// returns an outcome for each, or `nil` for an item that must wait for the next group (one that
/// conflicts with an earlier item of the group); the leader's own item always gets an outcome.
/// Items that stepped aside lead the queue for the next group. Every caller returns only after the
/// group holding its item was committed.
public final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    private enum Turn {
        case done(Outcome)
        case lead
    }

    private struct Waiting {
        let item: Item
        let turn: CheckedContinuation<Turn, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        var isCommitting = false
    }

    private let state = Mutex(State())
    private let gatheringRounds: Int

    /// - Parameters:
    ///   - gatheringRounds: How many times a leader yields, while more items keep arriving, before it
    ///     takes the group: callers already on their way join it (a server's connections arrive a
    ///     few microseconds apart). `0` takes what waits at once.
    public init(gatheringRounds: Int = 0) {
        self.gatheringRounds = gatheringRounds
    }

    /// Submits `item` and returns its outcome once the group holding it is committed; `commit`
    /// commits a group and returns each item's outcome, when this caller leads one.
    public func submit(_ item: Item, commit: ([Item]) async -> [Outcome?]) async -> Outcome {
        var turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let leads = state.withLock { state -> Bool in
                guard !state.isCommitting else {
                    state.waiting.append(Waiting(item: item, turn: continuation))
                    return false
                }
                state.isCommitting = true
                return true
            }
            if leads { continuation.resume(returning: .lead) }
        }
        while true {
            switch turn {
            case .done(let outcome): return outcome
            case .lead: turn = await lead(with: item, commit: commit)
            }
        }
    }

    /// Submits `item` and returns its outcome once the group holding it is committed, for commits
    /// that block their thread (a database's): the first caller to find no commit running starts a
    /// drain with `schedule` (on a thread of its own, a writer lane), which commits group after group
    /// with `commit` until nothing waits, so a busy writer never waits for a pool thread between
    /// commits. Every caller of one queue passes the same `schedule` and `commit`.
    public func submit(_ item: Item, drainingWith schedule: (@escaping @Sendable () -> Void) -> Void,
                       commit: @escaping @Sendable ([Item]) -> [Outcome?]) async -> Outcome {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let startsDrain = state.withLock { state -> Bool in
                state.waiting.append(Waiting(item: item, turn: continuation))
                defer { state.isCommitting = true }
                return !state.isCommitting
            }
            if startsDrain { schedule { self.drain(commit) } }
        }
        guard case .done(let outcome) = turn else { preconditionFailure("a drained group commit never hands on the lead") }
        return outcome
    }

    /// Commits what waits, group after group, on the calling thread, until nothing does.
    private func drain(_ commit: @Sendable ([Item]) -> [Outcome?]) {
        while true {
            let group = state.withLock { state -> [Waiting] in
                defer { state.waiting = [] }
                if state.waiting.isEmpty { state.isCommitting = false }
                return state.waiting
            }
            guard !group.isEmpty else { return }
            let outcomes = commit(group.map(\.item))
            precondition(outcomes.count == group.count && outcomes.first.map({ $0 != nil }) == true,
                         "a group commit answers every item, the first always")
            var deferred: [Waiting] = []
            for (waiting, outcome) in zip(group, outcomes) {
                if let outcome { waiting.turn.resume(returning: .done(outcome)) } else { deferred.append(waiting) }
            }
            if !deferred.isEmpty { state.withLock { $0.waiting = deferred + $0.waiting } }
        }
    }

    /// Commits a group led by `own`, answers its other items, hands on the lead, and returns the
    /// leader's outcome.
    private func lead(with own: Item, commit: ([Item]) async -> [Outcome?]) async -> Turn {
        var gathered = -1
        var rounds = 0
        while rounds < gatheringRounds {
            let count = state.withLock { $0.waiting.count }
            if count == gathered { break }
            gathered = count
            rounds += 1
            await Task.yield()
        }
        let others = state.withLock { state -> [Waiting] in
            defer { state.waiting = [] }
            return state.waiting
        }
        let outcomes = await commit([own] + others.map(\.item))
        precondition(outcomes.count == others.count + 1, "a group commit answers every item")
        var deferred: [Waiting] = []
        for (waiting, outcome) in zip(others, outcomes.dropFirst()) {
            if let outcome { waiting.turn.resume(returning: .done(outcome)) } else { deferred.append(waiting) }
        }
        let next = state.withLock { state -> Waiting? in
            state.waiting = deferred + state.waiting
            guard !state.waiting.isEmpty else {
                state.isCommitting = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.turn.resume(returning: .lead)
        guard let own = outcomes[0] else { preconditionFailure("a group commit answers the leader's item") }
        return .done(own)
    }
}
