import Synchronization

/// Commits made in groups: callers submit an item and suspend, and one caller at a time, the
/// leader, commits every item waiting as one unit (one database transaction, one fsync), then hands
/// the lead to the first caller still waiting. The ledger's purchases and the backend's recorded
/// notifications are both committed this way.
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
