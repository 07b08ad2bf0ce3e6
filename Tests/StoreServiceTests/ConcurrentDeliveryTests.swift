import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
@testable import StoreService
import Synchronization
import Testing
import TestSupport

/// The sender posts several notifications at once, keeps them in order per original transaction,
/// and ends with every notification delivered once, whatever its receiver does.
@Suite(.timeLimit(.minutes(10)))
struct ConcurrentDeliveryTests {
    /// A receiver that verifies what it is posted, records each notification it accepts by UUID, and
    /// can fail every n-th request or take its time to answer.
    final class Receiver: Sendable {
        struct Accepted: Sendable {
            let uuid: String
            let originalTransactionID: String
            let signedDate: Int64
        }

        final class State: Sendable {
            let accepted = Mutex<[Accepted]>([])
            let requests = Atomic<Int>(0)
            let inFlight = Atomic<Int>(0)
            let maxInFlight = Atomic<Int>(0)
        }

        let state = State()
        let server: HTTPServer

        init(verifier: SignedDataVerifier, failEvery: Int? = nil, answerAfter delay: Duration? = nil) throws {
            let state = self.state
            server = try HTTPServer { request in
                let number = state.requests.wrappingAdd(1, ordering: .relaxed).newValue
                let now = state.inFlight.wrappingAdd(1, ordering: .relaxed).newValue
                state.maxInFlight.max(now, ordering: .relaxed)
                defer { state.inFlight.wrappingSubtract(1, ordering: .relaxed) }
                if let delay { try? await Task.sleep(for: delay) }
                if let failEvery, number % failEvery == 0 { return .text(500, "a failure on purpose") }
                guard let object = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
                      let payload = object["signedPayload"] as? String,
                      let notification = try? await verifier.verifyAndDecodeNotification(payload),
                      let signedTransaction = notification.data?.signedTransactionInfo,
                      let transaction = try? await verifier.verifyAndDecodeTransaction(signedTransaction),
                      let uuid = notification.notificationUUID, let original = transaction.originalTransactionId,
                      let signedDate = notification.signedDate
                else { return .text(400, "not a verified notification about a transaction") }
                state.accepted.withLock { $0.append(Accepted(uuid: uuid, originalTransactionID: original, signedDate: AppStoreJSON.milliseconds(from: signedDate))) }
                return .text(200, "ok")
            }
        }

        var url: URL { server.url.appendingPathComponent("/apple/notifications") }
        var accepted: [Accepted] { state.accepted.withLock { $0 } }
    }

    /// A store with `subscribers` monthly subscribers, its sender posting to `receiver`.
    static func withDelivery(subscribers: Int, inFlight: Int = 8, failEvery: Int? = nil, answerAfter delay: Duration? = nil,
                             _ body: (SimulatedAppStore, Receiver, SimulatedAppStore.ImportedSubscribers, NotificationDeliverer) async throws -> Void) async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let imported = try await store.importSubscribers(productID: ExampleShop.premiumMonthly, accountPrefix: "subscriber", count: subscribers)
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = true
        let verifier = try SignedDataVerifier(rootCertificates: [store.rootCertificate], bundleId: "com.example.shop", environment: .xcode, options: options)
        let receiver = try Receiver(verifier: verifier, failEvery: failEvery, answerAfter: delay)
        try await store.updateSettings { $0.notificationURL = receiver.url.absoluteString }
        // A receiver's answer may wait long behind a loaded machine: these tests are about concurrency
        // and order, so no attempt may end as a timeout (whose retry waits an hour of store time).
        let deliverer = NotificationDeliverer(store: store, options: NotificationDeliverer.Options(inFlight: inFlight, timeout: .seconds(90),
                                                                                                   idlePoll: .milliseconds(20)))
        let delivery = Task { await deliverer.run() }
        do {
            try await body(store, receiver, imported, deliverer)
        } catch {
            delivery.cancel()
            await delivery.value
            await receiver.server.stop()
            throw error
        }
        delivery.cancel()
        await delivery.value
        await receiver.server.stop()
    }

    /// Whether every notification in the outbox has been delivered (its last attempt a success).
    static func allDelivered(_ store: SimulatedAppStore) async throws -> Bool {
        try await store.notificationRecords().allSatisfy { $0.delivery.attempts.last?.result == "SUCCESS" }
    }

    /// Whether every notification due now has had its attempt: none is due or claimed (a retry whose
    /// date the clock has passed, counted from the attempt before, is due at once).
    static func nothingWaiting(_ store: SimulatedAppStore) async throws -> Bool {
        let now = try await store.currentTime()
        return try await store.notificationRecords().allSatisfy { record in
            record.delivery.nextAttemptDate.map { $0 > now } ?? true
        }
    }

    /// Each notification accepted once, and per original transaction in the order they were signed.
    static func expectOncePerNotificationInOrder(_ accepted: [Receiver.Accepted], expected: Int) {
        #expect(accepted.count == expected)
        #expect(Set(accepted.map(\.uuid)).count == expected, "a notification was accepted twice")
        for (original, notifications) in Dictionary(grouping: accepted, by: \.originalTransactionID) {
            let dates = notifications.map(\.signedDate)
            #expect(dates == dates.sorted(), "subscription \(original)'s notifications arrived out of order")
        }
    }

    @Test("a receiver that fails a tenth of requests: three months of renewals end delivered once each, in order per subscription, retried on Apple's schedule")
    func failingReceiver() async throws {
        try await Self.withDelivery(subscribers: 120, failEvery: 10) { store, receiver, imported, _ in
            var now = try await store.currentTime()
            let end = imported.lastRenewalDate.addingTimeInterval(62 * 86_400)
            // A day at a time: a failed attempt's retry (an hour later) is due at the next step.
            while now < end {
                now = min(now.addingTimeInterval(86_400), end)
                try await store.advanceTime(to: now)
                try await eventually("the day's notifications are answered") { try await Self.nothingWaiting(store) }
            }
            // The last failures' retries (a retry that fails again waits 12, 24, … hours more).
            var days = 0
            while try await !Self.allDelivered(store), days < 10 {
                try await store.advanceTime(by: 86_400)
                try await eventually("the day's retries are answered") { try await Self.nothingWaiting(store) }
                days += 1
            }
            #expect(try await Self.allDelivered(store))
            let notifications = try await store.notificationRecords()
            #expect(notifications.count == 360, "each of 120 subscribers renewed three times")
            Self.expectOncePerNotificationInOrder(receiver.accepted, expected: notifications.count)
            let failed = notifications.filter { $0.delivery.attempts.first?.result == "UNSUCCESSFUL_HTTP_RESPONSE_CODE" }
            #expect(failed.count >= 20, "about a tenth of first attempts failed (\(failed.count))")
            for notification in failed {
                let attempts = notification.delivery.attempts
                #expect(attempts.count >= 2 && attempts[1].date.timeIntervalSince(attempts[0].date) >= 3_600, "the retry came an hour or more later")
            }
        }
    }

    @Test("a receiver that takes 2 seconds per answer gets 8 posts at once, and every notification once, in order, also when the clock moves past the claims of posts in flight")
    func slowReceiver() async throws {
        try await Self.withDelivery(subscribers: 24, answerAfter: .seconds(2)) { store, receiver, imported, deliverer in
            // Every subscriber's second renewal, and no one's third.
            try await store.advanceTime(to: imported.lastRenewalDate.addingTimeInterval(31 * 86_400))
            // Claims are leases in real time: moving the store's clock while posts are in flight must
            // not make them due again.
            for round in 1...3 {
                try await eventually("posts in flight (round \(round))") { receiver.state.inFlight.load(ordering: .relaxed) > 0 }
                try await store.advanceTime(by: 120)
            }
            try await eventually("every notification delivered") { try await Self.allDelivered(store) }
            let notifications = try await store.notificationRecords()
            #expect(notifications.count == 48, "each of 24 subscribers renewed twice")
            Self.expectOncePerNotificationInOrder(receiver.accepted, expected: 48)
            #expect(receiver.state.maxInFlight.load(ordering: .relaxed) == 8, "8 posts at once")
            #expect(deliverer.statistics.maxInFlight == 8)
            #expect(deliverer.statistics.successes == 48)
        }
    }

    @Test("imported subscribers renew in their numbers' order: advancing to one's renewal date renews exactly those before it and itself")
    func importedRenewalDates() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let imported = try await store.importSubscribers(productID: ExampleShop.premiumMonthly, accountPrefix: "subscriber", count: 40)
        #expect(imported.renewalDate(ofSubscriber: 39) == imported.lastRenewalDate)
        #expect(imported.renewalDate(ofSubscriber: 0) < imported.renewalDate(ofSubscriber: 1))
        // The first ten, then the next twenty, then the rest: each once, none early.
        #expect(try await store.advanceTime(to: imported.renewalDate(ofSubscriber: 9)) == 10)
        #expect(try await store.advanceTime(to: imported.renewalDate(ofSubscriber: 10).addingTimeInterval(-1)) == 0)
        #expect(try await store.advanceTime(to: imported.renewalDate(ofSubscriber: 29)) == 20)
        #expect(try await store.advanceTime(to: imported.lastRenewalDate) == 10)
        let renewed = try await store.notificationRecords().filter { $0.type == .didRenew }
        #expect(renewed.count == 40)
        #expect(Set(renewed.compactMap { $0.transaction?.originalTransactionId }).count == 40)
    }

    @Test("a claim answers others in place of what its sender holds, and the store's clock does not end its lease")
    func claimExcludingHeld() async throws {
        let scratch = Scratch()
        // Real time stands still here: a loaded machine taking longer than a lease between claims must
        // not lapse them (their lapse and renewal: DeliveryScheduleTests).
        let realTime = ManualStoreClock(startingAt: TestStores.start)
        let store = try await TestStores.directory(in: scratch, realTime: realTime).store
        let imported = try await store.importSubscribers(productID: ExampleShop.premiumMonthly, accountPrefix: "subscriber", count: 30)
        try await store.updateSettings { $0.notificationURL = "http://127.0.0.1:9/apple/notifications" }
        try await store.advanceTime(to: imported.lastRenewalDate)
        func claim(_ limit: Int, excluding held: [Int64] = []) async throws -> [Int64] {
            try await store.claimDueNotificationRecords(limit: limit, excluding: Set(held))?.records.map(\.sequence) ?? []
        }
        let first = try await claim(5)
        #expect(first.count == 5)
        // The store's clock moves while the posts are in flight: the five stay claimed (a lease in real
        // time), and their sender holds them.
        try await store.advanceTime(by: 120)
        let second = try await claim(5, excluding: first)
        #expect(second.count == 5 && Set(second).isDisjoint(with: first), "others in place of the held: \(second)")
        let rest = try await claim(100, excluding: first + second)
        #expect(rest.count == 20 && Set(rest).isDisjoint(with: first + second), "the held are not answered again: \(rest)")
        // Everything is held now, however the store's clock moves: the leases are in real time
        // (their lapse and renewal: DeliveryScheduleTests).
        try await store.advanceTime(by: 120)
        #expect(try await claim(100).isEmpty, "the store's clock does not end a lease")
        // Real time does, and the twenty come back.
        realTime.set(to: realTime.now().addingTimeInterval(SimulatedAppStore.deliveryLease + 1))
        #expect(try await claim(100).count == 30)
    }

    @Test("pages grow with the rate posts end at, up to their largest, and shrink for a slow receiver")
    func pageSizes() {
        var pages = NotificationDeliverer.PageSize(inFlight: 8)
        let start = ContinuousClock.now
        #expect(pages.next(now: start) == 32, "the first page is the smallest")
        #expect(pages.record == 32)
        pages.ended = 100
        #expect(pages.next(now: start + .milliseconds(100)) == 32, "measured over a quarter of a second at least")
        #expect(pages.next(now: start + .milliseconds(500)) == 400, "100 attempts in half a second: two seconds' worth")
        #expect(pages.record == 100, "recorded a quarter page at a time")
        pages.ended = 5_000
        #expect(pages.next(now: start + .milliseconds(1_500)) == 512, "never more than the largest page")
        pages.ended = 4
        #expect(pages.next(now: start + .milliseconds(2_500)) == 32, "a slow receiver: back to the smallest")
    }
}
