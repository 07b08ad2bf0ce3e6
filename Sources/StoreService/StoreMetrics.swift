import AppStoreSimulator
import Foundation
import HTTPService

/// What `storekit serve --metrics` exports beside the HTTP metrics: open long polls, the outbox's
/// backlog and the age of its oldest undelivered notification (the sender counts its attempts).
enum StoreMetrics {
    /// The routes whose requests wait for changes.
    static let longPollRoutes = ["/v1/devices/{device}/updates", "/v1/admin/changes"]

    static func register(on router: inout Router, registry: MetricsRegistry, store: SimulatedAppStore) {
        let http = HTTPMetrics(registry: registry)
        router.metrics = http
        http.register(on: &router)
        let longPolls = registry.gauge("openstorekit_long_polls_open", help: "Long polls waiting for a change (device updates and the admin change feed).")
        let undelivered = registry.gauge("openstorekit_notifications_undelivered",
                                         help: "Notifications waiting for a delivery attempt, due now or retried later.")
        let oldestAge = registry.gauge("openstorekit_notification_oldest_undelivered_age_seconds",
                                       help: "How long the oldest undelivered notification has waited, on the store's clock (0 when none waits).")
        registry.onScrape { [weak registry] in
            longPolls.set(longPollRoutes.map { registry?.value("openstorekit_http_requests_in_progress", [$0]) ?? 0 }.reduce(0, +))
            // One read of the outbox for both of its gauges.
            let backlog = try? await store.notificationBacklog()
            undelivered.set(Double(backlog?.count ?? 0))
            oldestAge.set(backlog?.oldestAge ?? 0)
        }
    }
}
