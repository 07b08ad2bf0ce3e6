import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import StoreService
import Synchronization
import Testing
import TestSupport

/// The store posts its server notifications to the developer's URL as Apple does: in order, signed,
/// retried on Apple's schedule on the store's clock while the receiver is down, and the history shows
/// every attempt.
@Suite(.timeLimit(.minutes(10)))
struct NotificationDeliveryTests {
    /// A webhook receiver that records what it is posted and can be told to fail.
    final class Receiver: Sendable {
        /// What the handler shares with the test.
        final class State: Sendable {
            let received = Mutex<[String]>([])
            let failing = Atomic<Bool>(false)
        }

        private let state = State()
        let server: HTTPServer

        /// Runs `body` with a receiver that is stopped when `body` returns or throws.
        static func with(_ body: (Receiver) async throws -> Void) async throws {
            let receiver = try Receiver()
            do {
                try await body(receiver)
                await receiver.server.stop()
            } catch {
                await receiver.server.stop()
                throw error
            }
        }

        private init() throws {
            let state = self.state
            server = try HTTPServer { request in
                guard !state.failing.load(ordering: .acquiring) else { return .text(503, "down for maintenance") }
                guard let object = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
                      let payload = object["signedPayload"] as? String else { return .text(400, "no signedPayload") }
                state.received.withLock { $0.append(payload) }
                return .text(200, "ok")
            }
        }

        var payloads: [String] { state.received.withLock { $0 } }
        func fail(_ on: Bool) { state.failing.store(on, ordering: .releasing) }
        var url: URL { server.url.appendingPathComponent("/apple/notifications") }
    }

    @Test("notifications arrive signed; with the receiver down they are retried on schedule and arrive once it is back")
    func deliveryAndRetries() async throws {
        // An Xcode store: a Sandbox one makes one attempt only, as Apple's sandbox does.
        try await ServedServerAPI.with(environment: .xcode) { api in
            try await Receiver.with { receiver in
                try await api.store.apply([try SettingAssignment(key: "notificationURL", value: receiver.url.absoluteString)])
                for product in [ExampleShop.gems, ExampleShop.pro, ExampleShop.premiumMonthly] {
                    _ = try await api.store.purchase(PurchaseRequest(productID: product, account: "alice", device: "phone"))
                }
                try await eventually("the receiver got three notifications") { receiver.payloads.count == 3 }
                var options = SignedDataVerifier.Options()
                options.verifiesLocalEnvironments = true
                let verifier = try SignedDataVerifier(rootCertificates: [api.store.rootCertificate], bundleId: ServedServerAPI.bundleID,
                                                      environment: .xcode, options: options)
                let types = try receiver.payloads.map { try verifier.verifyAndDecodeNotification($0).notificationType?.rawValue }
                // Three purchases, three original transactions: posted at once, in no promised order (Apple promises none).
                #expect(types.compactMap { $0 }.sorted() == ["ONE_TIME_CHARGE", "ONE_TIME_CHARGE", "SUBSCRIBED"])

                // The receiver goes down: the refund's notification fails, and is retried an hour later.
                receiver.fail(true)
                let pro = try #require(try await api.store.ledgerTransactions(account: "alice").first { $0.productID == ExampleShop.pro })
                try await api.store.refundTransaction(pro.id)
                let refund = try #require(try await api.store.notifications().last)
                try await eventually("attempt 1 to deliver the refund") { try await api.store.notification(sequence: refund.sequence)?.1.attempts.count == 1 }
                let firstAttempt = try #require(try await api.store.notification(sequence: refund.sequence)?.1)
                #expect(firstAttempt.attempts.map(\.result) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE"])
                let now = try await api.store.currentTime()
                #expect(firstAttempt.nextAttemptDate == now.addingTimeInterval(3_600))
                try await api.store.advanceTime(by: 3_600)
                try await eventually("attempt 2 to deliver the refund") { try await api.store.notification(sequence: refund.sequence)?.1.attempts.count == 2 }
                #expect(try await api.store.notification(sequence: refund.sequence)?.1.nextAttemptDate == now.addingTimeInterval(13 * 3_600))
                // Back up: the retry twelve hours later arrives, with the same notificationUUID.
                receiver.fail(false)
                try await api.store.advanceTime(by: 12 * 3_600)
                try await eventually("the receiver got the refund") { receiver.payloads.count == 4 }
                try await eventually("attempt 3 to deliver the refund") { try await api.store.notification(sequence: refund.sequence)?.1.attempts.count == 3 }
                let delivered = try await verifier.verifyAndDecodeNotification(receiver.payloads[3])
                #expect(delivered.notificationType == .refund)
                #expect(delivered.notificationUUID == refund.notificationUUID)
                let final = try #require(try await api.store.notification(sequence: refund.sequence)?.1)
                #expect(final.attempts.map(\.result) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"])
                #expect(final.nextAttemptDate == nil)

                // Notification history shows the attempts; onlyFailures keeps the refund (failed before it succeeded? no: delivered now).
                let start = AppStoreJSON.milliseconds(from: now) - 86_400_000
                let history = try await api.send("POST", "/inApps/v1/notifications/history",
                                                 json: #"{"startDate": \#(start), "endDate": \#(start + 3 * 86_400_000)}"#)
                #expect(history.status == 200)
                let items = try #require(history.json?["notificationHistory"] as? [[String: Any]])
                #expect(items.count == 4)
                let attempts = try #require(items.last?["sendAttempts"] as? [[String: Any]])
                #expect(attempts.compactMap { $0["sendAttemptResult"] as? String } == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"])
                let failures = try await api.send("POST", "/inApps/v1/notifications/history",
                                                  json: #"{"startDate": \#(start), "endDate": \#(start + 3 * 86_400_000), "onlyFailures": true}"#)
                #expect((failures.json?["notificationHistory"] as? [[String: Any]])?.isEmpty == true, "every notification reached the receiver in the end")
            }
        }
    }

    @Test("a receiver that never answers: each attempt is recorded, and delivery gives up after Apple's five retries")
    func givesUp() async throws {
        try await ServedServerAPI.with(environment: .xcode) { api in
            // Nothing listens on this port, and no parallel test's server can take it.
            let refusing = try ReservedPort()
            let url = refusing.url(path: "/notifications")
            try await api.store.apply([try SettingAssignment(key: "notificationURL", value: url.absoluteString)])
            let token = try await api.store.requestTestNotification()
            for (attempt, delay) in zip(1..., [0.0] + SimulatedAppStore.notificationRetryDelays) {
                if delay > 0 { try await api.store.advanceTime(by: delay) }
                try await eventually("attempt \(attempt) to deliver the test notification") { try await api.store.testNotification(uuid: token)?.1.attempts.count == attempt }
            }
            let delivery = try #require(try await api.store.testNotification(uuid: token)?.1)
            #expect(delivery.attempts.count == 6)
            #expect(Set(delivery.attempts.map(\.result)) == ["NO_RESPONSE"])
            #expect(delivery.nextAttemptDate == nil)
            let status = try await api.send("GET", "/inApps/v1/notifications/test/\(token)")
            #expect((status.json?["sendAttempts"] as? [[String: Any]])?.count == 6)
            withExtendedLifetime(refusing) {}
        }
    }
}
