import Foundation

/// The HTTP metrics of a ``Router``: requests by route pattern (never the raw path, so the series
/// stay bounded), method and status; their durations; and the requests in progress per route, long
/// polls among them.
public struct HTTPMetrics: Sendable {
    /// The registry they are kept in, which `GET /metrics` renders.
    public let registry: MetricsRegistry
    private let requests: Counter
    private let durations: Histogram
    private let inProgress: Gauge

    /// The label of requests that matched no route (refused paths, 404s and 405s).
    public static let unmatched = "unmatched"

    public init(registry: MetricsRegistry) {
        self.registry = registry
        requests = registry.counter("openstorekit_http_requests_total", help: "HTTP requests answered, by route pattern, method and status.",
                                    labels: ["route", "method", "status"])
        durations = registry.histogram("openstorekit_http_request_duration_seconds",
                                       help: "Time from a request's arrival at the router to its answer, by route pattern and method.",
                                       labels: ["route", "method"])
        inProgress = registry.gauge("openstorekit_http_requests_in_progress", help: "Requests being answered now (long polls included), by route pattern.",
                                    labels: ["route"])
    }

    func started(route: String) { inProgress.add(1, [route]) }

    func finished(route: String, method: String, status: Int, seconds: Double) {
        inProgress.add(-1, [route])
        requests.increment([route, Self.methodLabel(method), String(status)])
        durations.observe(seconds, [route, Self.methodLabel(method)])
    }

    /// Methods outside HTTP's usual set share one label, so a client cannot make new series.
    static func methodLabel(_ method: String) -> String {
        ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].contains(method) ? method : "other"
    }

    /// Registers `GET /metrics`, answering ``scrape(_:)``.
    public func register(on router: inout Router) {
        let registry = self.registry
        router.on("GET", "/metrics") { _, _ in await HTTPMetrics.scrape(registry) }
    }

    /// The registry in Prometheus' text format, as `GET /metrics` answers it.
    public static func scrape(_ registry: MetricsRegistry) async -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", MetricsRegistry.contentType), ("Cache-Control", "no-store")],
                     body: Data(await registry.render().utf8))
    }
}
