import AppStoreModels
import AppStoreSimulator
import Foundation
import OpenStoreKit
import Synchronization

extension LocalStore {
    /// How a session's time moves.
    public enum Time: Sendable, Hashable {
        /// Time stands still until ``LocalStore/advance(by:)`` moves it, and subscription periods have
        /// their calendar lengths: every run plays the same events at the same dates.
        case manual
        /// Time runs with the real time from the session's start, as in Xcode's StoreKit testing:
        /// renewals, grace periods and expiries happen by themselves, at the pace of
        /// ``LocalStore/timeRate`` (`.oneRenewalEveryTwoSeconds`, say), and reach listening apps
        /// through their updates. ``LocalStore/advance(by:)`` still moves it ahead, and it runs on
        /// from there. Only for a store in this process.
        case running
    }
}

/// The real time a running session keeps its store's clock up with: the session's start plus the
/// real time since (measured on a monotonic clock), plus whatever ``LocalStore/advance(by:)`` added.
///
/// Before every store call the store is brought up to that time, so purchases carry the time they
/// happen at and renewals that fell due are played first; between calls a task does the same a few
/// times a second while something falls due, so updates arrive while a test waits for them.
final class RunningTime: Sendable {
    private let store: SimulatedAppStore
    private let clock: ManualStoreClock
    private let settings: LocalStore.PendingSettings
    private let start: Date
    private let began = ContinuousClock.now
    /// How far advances have moved the session's time ahead of the real time since its start.
    private let lead = Mutex<TimeInterval>(0)

    /// How often the background task looks for events falling due.
    static let tick = Duration.milliseconds(100)

    init(store: SimulatedAppStore, clock: ManualStoreClock, start: Date, settings: LocalStore.PendingSettings) {
        self.store = store
        self.clock = clock
        self.start = start
        self.settings = settings
    }

    /// The session's time now, to the millisecond (the store keeps milliseconds).
    func target() -> Date {
        let elapsed = began.duration(to: .now) / .seconds(1)
        let exact = start.addingTimeInterval(elapsed + lead.withLock { $0 })
        return AppStoreJSON.date(fromMilliseconds: AppStoreJSON.milliseconds(from: exact))
    }

    /// Brings the store's clock to the session's time, playing what falls due on the way.
    func catchUp() async throws {
        let target = self.target()
        guard target > clock.now() else { return }
        do {
            _ = try await store.advanceTime(to: target)
        } catch {
            throw SKTestError(error)
        }
    }

    /// Records that an advance moved the store's clock to `date`, so time runs on from there.
    func movedAhead(to date: Date) {
        let behind = date.timeIntervalSince(target())
        if behind > 0 { lead.withLock { $0 += behind } }
    }

    /// Plays what falls due as time passes, for as long as `session` lives (the clients it made may
    /// live longer; they still bring the store up to date whenever they call it). Pending property
    /// changes are applied first, as a change made between store calls applies at once in Xcode.
    func keepTime(for session: LocalStore) {
        Task { [weak session, self] in
            while session != nil, !Task.isCancelled {
                guard await playDueEvents() else { return }
                try? await Task.sleep(for: Self.tick)
            }
        }
    }

    /// One look for due events; `false` once the store cannot be read.
    private func playDueEvents() async -> Bool {
        do {
            try await LocalStore.flush(settings, to: store)
            if try await store.hasLifecycleEvent(dueBy: target()) { try await catchUp() }
            return true
        } catch {
            StoreDiagnostics.report("a running test session stopped playing renewals: \(error)")
            return false
        }
    }
}
