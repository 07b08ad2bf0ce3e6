import AppStoreBackend
import Foundation
import HTTPService
import Testing
import TestSupport

/// `backend serve --metrics`: notifications recorded, duplicates and refusals, ingestion lag and
/// commit durations, in Prometheus' text format, behind the backend's key.
@Suite(.timeLimit(.minutes(5)))
struct BackendMetricsTests {
    @Test("the backend's /metrics counts recorded, duplicate and refused notifications, their lag and its commits")
    func backendMetrics() async throws {
        let scenario = try BackendScenario()
        _ = try await scenario.buy(ExampleShop.pro, "alice")
        let body = try #require(try await scenario.notificationBodies().first)
        try await scenario.withBackend { plain in
            var backend = plain
            let metrics = BackendMetrics()
            metrics.observeCommits(of: backend.storage)
            backend.metrics = metrics
            #expect(await backend.post("/apple/notifications", body, key: nil).status == 200)
            #expect(await backend.post("/apple/notifications", body, key: nil).status == 200, "a duplicate is answered 200, and not recorded again")
            #expect((400..<500).contains(await backend.post("/apple/notifications", Data(#"{"signedPayload":"forged"}"#.utf8), key: nil).status))
            #expect(await backend.get("/metrics", key: nil).status == 401, "the metrics are behind the key")
            let answer = await backend.get("/metrics")
            #expect(answer.status == 200)
            let text = String(decoding: answer.body, as: UTF8.self)
            let parsed = PrometheusText.parse(text)
            #expect(parsed.problems.isEmpty, "\(parsed.problems)")
            if let promtool = try await PrometheusText.promtool(text) { #expect(promtool.passed, "\(promtool.output)") }
            func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
                parsed.samples.first { $0.name == name && $0.labels == labels }?.value
            }
            #expect(value("openstorekit_backend_notifications_total", ["outcome": "recorded"]) == 1)
            #expect(value("openstorekit_backend_notifications_total", ["outcome": "duplicate"]) == 1)
            #expect(value("openstorekit_backend_notifications_total", ["outcome": "refused"]) == 1)
            #expect(value("openstorekit_backend_ingestion_lag_seconds_count") == 1)
            #expect((value("openstorekit_backend_commit_duration_seconds_count") ?? 0) >= 1)
            #expect(value("openstorekit_http_requests_total", ["route": "/apple/notifications", "method": "POST", "status": "200"]) == 2)
        }
    }
}
