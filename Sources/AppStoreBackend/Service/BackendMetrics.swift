import Foundation
import HTTPService

/// What `backend serve --metrics` counts about ingestion, beside the HTTP metrics: notifications
/// recorded, duplicates and refusals; the lag from a notification's `signedDate` to its recording;
/// and how long the database's grouped commits take.
public struct BackendMetrics: Sendable {
    public let registry: MetricsRegistry
    private let notifications: Counter
    private let lag: Histogram
    private let commits: Histogram
    private let commitSizes: Histogram

    public init(registry: MetricsRegistry = MetricsRegistry()) {
        self.registry = registry
        notifications = registry.counter("openstorekit_backend_notifications_total",
                                         help: "Notifications received, by outcome: recorded, duplicate (recorded before) or refused (unverified or malformed).",
                                         labels: ["outcome"])
        lag = registry.histogram("openstorekit_backend_ingestion_lag_seconds",
                                 help: "From a notification's signedDate to its recording.",
                                 buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 3_600, 86_400])
        commits = registry.histogram("openstorekit_backend_commit_duration_seconds", help: "How long each grouped database commit took.")
        commitSizes = registry.histogram("openstorekit_backend_commit_changes", help: "How many changes each grouped database commit held.",
                                         buckets: [1, 2, 4, 8, 16, 32, 64, 128])
        for outcome in ["recorded", "duplicate", "refused"] { notifications.increment([outcome], by: 0) }
    }

    /// A notification verified and applied: recorded now, or a duplicate.
    func ingested(_ change: BackendChange, recorded: Bool, at now: Date) {
        notifications.increment([recorded ? "recorded" : "duplicate"])
        if recorded, let signed = change.notification?.signedDate { lag.observe(max(0, now.timeIntervalSince(signed))) }
    }

    /// A notification refused before anything was written.
    func refused() { notifications.increment(["refused"]) }

    /// Counts the commits of `storage` when it is the package's SQL storage.
    public func observeCommits(of storage: any BackendStorage) {
        guard let storage = storage as? SQLBackendStorage else { return }
        let commits = self.commits, sizes = commitSizes
        storage.observeCommits { seconds, changes in
            commits.observe(seconds)
            sizes.observe(Double(changes))
        }
    }
}
