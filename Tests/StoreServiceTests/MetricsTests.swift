import AppStoreSimulator
import Foundation
import HTTPService
import StoreService
import Testing
import TestSupport

/// `storekit serve --metrics`: Prometheus' text format that a scraper and promtool accept, labelled by
/// route pattern (never a raw path), with long polls and notification delivery, behind the token.
@Suite(.timeLimit(.minutes(5)))
struct MetricsTests {
    /// Said once: the format was checked by the tests' own parser only.
    static let promtoolMissing: Void = print("MetricsTests: promtool is not installed; /metrics was checked by PrometheusText alone")

    static func samples(_ answer: Exchange) async throws -> [PrometheusText.Sample] {
        #expect(answer.status == 200)
        #expect(answer.contentType == MetricsRegistry.contentType)
        let text = String(decoding: answer.body, as: UTF8.self)
        let parsed = PrometheusText.parse(text)
        #expect(parsed.problems.isEmpty, "\(parsed.problems)")
        if let promtool = try await PrometheusText.promtool(text) {
            #expect(promtool.passed, "promtool check metrics: \(promtool.output)")
        } else {
            _ = Self.promtoolMissing
        }
        return parsed.samples
    }

    @Test("the store's /metrics: requests by route pattern and status, durations, long polls, delivery attempts and the outbox")
    func storeMetrics() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        try await store.addDevice("phone", account: "alice")
        // Nothing listens here: every delivery attempt fails, and the notification waits for its retry.
        let refusing = try ReservedPort()
        try await store.updateSettings { $0.notificationURL = refusing.url(path: "/notifications").absoluteString }
        let server = try StoreServer(store: store, metrics: true)
        do {
            let base = server.url.absoluteString
            #expect(try await Exchange.send("GET", URL(string: "\(base)/v1/admin/transactions?limit=5")!).status == 200)
            #expect(try await Exchange.send("POST", URL(string: "\(base)/v1/admin/purchases")!,
                                            json: #"{"productID": "\#(ExampleShop.pro)", "account": "alice"}"#).status == 201)
            #expect(try await Exchange.send("GET", URL(string: "\(base)/v1/devices/phone/storefront")!).status == 200)
            #expect(try await Exchange.send("GET", URL(string: "\(base)/no/such/path")!).status == 404)
            try await eventually("the purchase's notification was attempted") {
                let samples = try await Self.samples(try await Exchange.send("GET", URL(string: "\(base)/metrics")!))
                return samples.contains { $0.name == "openstorekit_notification_attempts_total" && $0.labels["result"] == "NO_RESPONSE" && $0.value >= 1 }
            }
            // Long polls that wait at the ledger's version, asked again whenever it moves, as the pages do.
            let poll = Task {
                while !Task.isCancelled {
                    guard let version = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/changes")!).json?["version"] as? Int else { return }
                    _ = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/changes?since=\(version)&wait=20")!)
                }
            }
            try await eventually("the long poll is open") {
                let samples = try await Self.samples(try await Exchange.send("GET", URL(string: "\(base)/metrics")!))
                return samples.contains { $0.name == "openstorekit_long_polls_open" && $0.value == 1 }
            }
            let samples = try await Self.samples(try await Exchange.send("GET", URL(string: "\(base)/metrics")!))
            let requests = samples.filter { $0.name == "openstorekit_http_requests_total" }
            #expect(requests.contains { $0.labels == ["route": "/v1/devices/{device}/storefront", "method": "GET", "status": "200"] && $0.value == 1 })
            #expect(requests.contains { $0.labels == ["route": "/v1/admin/purchases", "method": "POST", "status": "201"] })
            #expect(requests.contains { $0.labels == ["route": "unmatched", "method": "GET", "status": "404"] })
            #expect(!requests.contains { ($0.labels["route"] ?? "").contains("phone") || ($0.labels["route"] ?? "").contains("such") },
                    "routes are patterns, never raw paths")
            #expect(samples.contains { $0.name == "openstorekit_http_request_duration_seconds_count" && $0.labels["route"] == "/v1/admin/transactions" && $0.value == 1 })
            #expect(samples.first { $0.name == "openstorekit_notifications_undelivered" }?.value == 1, "the purchase's notification waits for its retry")
            #expect(samples.contains { $0.name == "openstorekit_notification_oldest_undelivered_age_seconds" })
            poll.cancel()
            _ = try? await poll.value
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        withExtendedLifetime(refusing) {}
    }

    @Test("metrics are off unless asked for, and behind the access token when there is one")
    func offAndProtected() async throws {
        let off = try await withServedStore { _, server in try await Exchange.send("GET", server.url.appendingPathComponent("/metrics")) }
        #expect(off.status == 404)
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let server = try StoreServer(store: store, access: ServerAccess(token: "secret-token"), metrics: true)
        let url = server.url.appendingPathComponent("/metrics")
        let without = try await Exchange.send("GET", url)
        let with = try await Exchange.send("GET", url, headers: [(name: "Authorization", value: "Bearer secret-token")])
        await server.stop()
        #expect(without.status == 401)
        #expect(with.status == 200)
    }
}
