import Foundation
import HTTPClient
import HTTPService
import ServiceLogging
import Synchronization

/// Runs a ``NotificationReconciler`` by itself (`backend serve --reconcile every 1h`): once at start,
/// then every interval; after a failed run (the database or the App Store unreachable) again after
/// a short backoff; and at once when the database answers again after failing (a reconnect), so
/// an outage is closed without anyone running a command. While the backend's writes fail (a full
/// disk) it tries again after the same backoff, never later than the interval: its own writes tell
/// when they work again, and the notifications refused meanwhile are recorded then.
public final class ReconciliationSchedule: Sendable {
    /// What the schedule has done, for `/health` and the logs.
    public struct State: Sendable, Hashable {
        /// Runs that read the history to its end, and runs that failed.
        public var succeeded = 0
        public var failed = 0
        /// The last successful run's outcome.
        public var lastOutcome: NotificationReconciler.Outcome?
        /// Why the last run failed, when it did.
        public var lastFailure: String?
        /// Before the first run that read the history: why the App Store Server API does not answer yet
        /// (a local store started beside the backend, still starting). Not counted as a failed run.
        public var waitingForAppStore: String?
    }

    public let reconciler: NotificationReconciler
    public let interval: Duration
    /// How often the database is asked whether it answers, to reconcile at once when it comes back.
    public let healthPoll: Duration
    private let logger: Logger
    private let state = Mutex(State())
    private let runs: Counter?
    private let recorded: Counter?
    private let completeThrough: Gauge?

    /// - Parameter metrics: Where runs are counted: `openstorekit_backend_reconciliations_total`
    ///   by result, the notifications they recorded, and the App Store time known complete.
    public init(reconciler: NotificationReconciler, interval: Duration, healthPoll: Duration = .seconds(1), metrics: MetricsRegistry? = nil,
                logger: Logger = .disabled) {
        self.reconciler = reconciler
        self.interval = interval
        self.healthPoll = healthPoll
        self.logger = logger
        runs = metrics?.counter("openstorekit_backend_reconciliations_total",
                                help: "Reconciliations with the App Store Server API's notification history, by result (ok, failed).", labels: ["result"])
        recorded = metrics?.counter("openstorekit_backend_reconciled_notifications_total",
                                    help: "Notifications a reconciliation recorded whose delivery the App Store had tried and the backend had not recorded (each was lost).")
        completeThrough = metrics?.gauge("openstorekit_backend_reconciled_through_seconds",
                                         help: "The App Store time (Unix seconds) up to which every notification is known recorded.")
        for result in ["ok", "failed"] { runs?.increment([result], by: 0) }
        recorded?.increment([], by: 0)
    }

    /// What it has done so far.
    public var current: State { state.withLock { $0 } }

    /// Reconciles until cancelled.
    public func run() async {
        var due = ContinuousClock.now
        var backoff = Duration.seconds(1)
        var databaseAnswers = true
        while !Task.isCancelled {
            if ContinuousClock.now >= due {
                if await runOnce() {
                    due = .now + interval
                    backoff = .seconds(1)
                } else {
                    due = .now + min(backoff, interval)
                    backoff = min(backoff * 2, .seconds(60))
                }
            }
            try? await Task.sleep(for: min(healthPoll, max(.milliseconds(10), due - .now)))
            guard !Task.isCancelled else { break }
            let answers = (try? await reconciler.storage.checkHealth()) != nil
            if answers, !databaseAnswers {
                logger.notice("the database answers again: reconciling with the App Store's notification history now")
                due = .now
            }
            if !answers, due > .now + min(backoff, interval) { due = .now + min(backoff, interval) }
            databaseAnswers = answers
        }
    }

    /// One reconciliation, logged and counted; whether it read the history to its end.
    @discardableResult
    public func runOnce() async -> Bool {
        do {
            let outcome = try await reconciler.reconcile()
            state.withLock {
                $0.succeeded += 1
                $0.lastOutcome = outcome
                $0.lastFailure = nil
                $0.waitingForAppStore = nil
            }
            runs?.increment(["ok"])
            recorded?.increment([], by: Double(outcome.missing))
            if let through = outcome.through { completeThrough?.set(through.timeIntervalSince1970) }
            if outcome.recorded > 0 || outcome.statusChecks > 0 {
                logger.notice("reconciled: recorded \(outcome.recorded) notifications of \(outcome.listed) listed (\(outcome.missing) whose delivery had been lost, the rest still on their way); asked \(outcome.statusChecks) subscription statuses",
                              metadata: ["through": outcome.through.map { $0.formatted(.iso8601) } ?? ""])
            }
            return true
        } catch let failure as HTTPClient.Failure where failure.isNetworkFailure && current.succeeded == 0 && current.failed == 0 {
            // Nothing read yet and nobody answers: the App Store (a local store started beside the
            // backend, as `make run` does) is not up yet. Said as such, and tried again shortly.
            let first = state.withLock { (state) -> Bool in
                defer { state.waitingForAppStore = failure.description }
                return state.waitingForAppStore == nil
            }
            if first { logger.notice("waiting for the App Store Server API to answer before the first reconciliation: \(failure)") }
            return false
        } catch {
            state.withLock {
                $0.failed += 1
                $0.lastFailure = "\(error)"
            }
            runs?.increment(["failed"])
            logger.warning("reconciliation failed: \(error); it is tried again shortly")
            return false
        }
    }
}
