import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPClient
import HTTPService
import OpenStoreKit
import OpenStoreKitTesting
import StoreKitCatalog
import SimulatorConnection
import StoreService
import Synchronization
import Testing
import TestSupport

/// A customer cancelling a subscription: the developer's Get Retention Message endpoint chooses what
/// the page shows (a message, a switch-plan suggestion, a promotional offer), the default stands in
/// when the endpoint is slow, down or wrong, and each answer has the App Store's effects.
@Suite(.timeLimit(.minutes(5)))
struct CancellationFlowTests {
    /// A developer's endpoint: answers by original transaction, optionally after a pause, and keeps
    /// the payloads it received.
    final class Endpoint: Sendable {
        final class State: Sendable {
            let answers = Mutex<[String: RealtimeResponseBody]>([:])
            let pause = Mutex<Duration>(.zero)
            let received = Mutex<[DecodedRealtimeRequestBody]>([])
        }
        let state = State()
        let server: HTTPServer

        init() throws {
            let state = self.state
            server = try HTTPServer { request in
                guard let body = try? JSONDecoder().decode(RealtimeRequestBody.self, from: request.body), let jws = body.signedPayload,
                      let payload = try? CompactJWS(jws).payload(as: DecodedRealtimeRequestBody.self) else { return .text(400, "bad request") }
                state.received.withLock { $0.append(payload) }
                let wait = state.pause.withLock { $0 }
                if wait > .zero { try? await Task.sleep(for: wait) }
                guard let answer = state.answers.withLock({ $0[payload.originalTransactionId] }) else { return .text(500, "no answer") }
                return .json(200, try! JSONEncoder().encode(answer))
            }
        }

        var url: String { server.url.absoluteString + "/retention" }
    }

    /// A store with the shop's plans, three approved messages (one with an image, the default), and
    /// four premium monthly subscribers.
    struct Scenario {
        let scratch = Scratch()
        let store: SimulatedAppStore
        /// Waits for the endpoint whatever its time: a loaded test machine may miss Apple's 700 ms.
        let flow: CancellationFlow
        /// Apple's 700 ms.
        let applesFlow: CancellationFlow
        let textMessage = UUID().uuidString.lowercased(), planMessage = UUID().uuidString.lowercased(), offerMessage = UUID().uuidString.lowercased()
        var subscriptions: [String: UInt64] = [:]

        init() async throws {
            store = try await TestStores.directory(in: scratch, environment: .xcode).store
            flow = CancellationFlow(store: store, answerLimit: .seconds(60))
            applesFlow = CancellationFlow(store: store)
            let image = UUID().uuidString
            try await store.uploadRetentionImage(image, png: Self.png)
            try await store.uploadRetentionMessage(textMessage, UploadMessageRequestBody(
                header: "Before you go", body: "Your plans sync to every device.", image: UploadMessageImage(imageIdentifier: image, altText: "Plans")))
            try await store.uploadRetentionMessage(planMessage, UploadMessageRequestBody(header: "A plan for less", body: "Standard keeps your plans in sync."))
            try await store.uploadRetentionMessage(offerMessage, UploadMessageRequestBody(header: "A month on us", body: "Stay and the next month is 0.99."))
            for identifier in [image, textMessage, planMessage, offerMessage] { try await store.reviewRetentionContent(identifier, state: .approved) }
            try await store.configureDefaultRetentionMessage(productID: ExampleShop.premiumMonthly, locale: "en-US", messageIdentifier: textMessage)
            for account in ["alice", "bob", "carol", "dave"] {
                guard case .success(let signed) = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: account, device: "\(account)-phone")) else {
                    throw TestFailure("expected \(account)'s subscription")
                }
                subscriptions[account] = signed.transaction.originalID
            }
        }

        /// A 3840 × 400 PNG header (the store reads the chunks, not the pixels).
        static let png: Data = {
            func be32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
            func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] { be32(data.count) + Array(type.utf8) + data + [0, 0, 0, 0] }
            return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", be32(3840) + be32(400) + [8, 2, 0, 0, 0])
                        + chunk("IDAT", [0x78, 0x01]) + chunk("IEND", []))
        }()

        func offerSignature() throws -> String {
            let pair = try #require(TestStores.shop.subscriptionOffersKeyPair)
            let creator = OfferSignatureCreator(signingKey: try P256PrivateKey(pemRepresentation: try #require(pair.privateKey)), keyId: try #require(pair.id),
                                                issuerId: "issuer", bundleId: "com.example.shop")
            return try creator.promotionalOfferSignature(productId: ExampleShop.premiumMonthly, offerIdentifier: "premium.monthly.firstmonth",
                                                         nonce: UUID(), issuedAt: TestStores.start)
        }

        func notifications(of account: String) async throws -> [String] {
            let id = subscriptions[account]!
            return try await store.notifications().compactMap { stored in
                guard let payload = try? CompactJWS(stored.signedPayload).payload(as: ResponseBodyV2DecodedPayload.self),
                      let transaction = payload.data?.signedTransactionInfo.flatMap({ try? CompactJWS($0).payload(as: JWSTransactionDecodedPayload.self) }),
                      transaction.originalTransactionId == String(id) else { return nil }
                return [payload.notificationType?.rawValue, payload.subtype?.rawValue].compactMap { $0 }.joined(separator: "/")
            }
        }
    }

    @Test("the endpoint's choice is shown, and keeping, switching, redeeming and cancelling each do what the App Store does")
    func realtimeChoicesAndAnswers() async throws {
        let endpoint = try Endpoint()
        let scenario = try await Scenario()
        let store = scenario.store
        let ids = scenario.subscriptions
        let signature = try scenario.offerSignature()
        endpoint.state.answers.withLock {
            $0[String(ids["alice"]!)] = RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: scenario.textMessage))
            $0[String(ids["bob"]!)] = RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: scenario.planMessage, productId: ExampleShop.standardMonthly))
            $0[String(ids["carol"]!)] = RealtimeResponseBody(promotionalOffer: RealtimePromotionalOffer(messageIdentifier: scenario.offerMessage,
                                                                                                         promotionalOfferSignatureV2: signature))
            $0[String(ids["dave"]!)] = RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: scenario.textMessage))
        }
        try await store.configureRetentionRealtimeURL(endpoint.url)
        // Past the plan's three-month introductory offer, so the next renewal shows the promotional one.
        try await store.advanceTime(by: 92 * 86_400)

        let alice = try await scenario.flow.start(originalTransactionID: ids["alice"]!, locale: "en-US")
        #expect(alice.source == .realtime && alice.kind == .message && alice.messageIdentifier == scenario.textMessage)
        #expect(alice.answers == [.kept, .cancelled])
        let bob = try await scenario.flow.start(originalTransactionID: ids["bob"]!)
        #expect(bob.source == .realtime && bob.kind == .switchPlan && bob.alternateProductID == ExampleShop.standardMonthly)
        let carol = try await scenario.flow.start(originalTransactionID: ids["carol"]!)
        #expect(carol.source == .realtime && carol.kind == .promotionalOffer && carol.offerIdentifier == "premium.monthly.firstmonth")
        let dave = try await scenario.flow.start(originalTransactionID: ids["dave"]!)
        // The request is Apple's body: the subscription, its product and the customer's locale.
        let received = endpoint.state.received.withLock { $0 }
        #expect(received.count == 4)
        #expect(received.first?.productId == ExampleShop.premiumMonthly && received.first?.userLocale == "en-US" && received.first?.environment == .xcode)
        #expect(Set(received.map(\.requestIdentifier)).count == 4)

        _ = try await scenario.flow.answer(alice.id, outcome: .kept)
        _ = try await scenario.flow.answer(bob.id, outcome: .switched)
        _ = try await scenario.flow.answer(carol.id, outcome: .redeemed)
        _ = try await scenario.flow.answer(dave.id, outcome: .cancelled)
        await #expect(throws: AppStoreError.self, "an attempt is answered once") { _ = try await scenario.flow.answer(dave.id, outcome: .kept) }
        await #expect(throws: AppStoreError.self, "a message without a plan cannot be switched") {
            let again = try await scenario.flow.start(originalTransactionID: ids["alice"]!)
            _ = try await scenario.flow.answer(again.id, outcome: .switched)
        }

        let renewed = Array(repeating: "DID_RENEW", count: 3)
        #expect(try await scenario.notifications(of: "alice") == ["SUBSCRIBED/INITIAL_BUY"] + renewed)
        #expect(try await scenario.notifications(of: "dave") == ["SUBSCRIBED/INITIAL_BUY"] + renewed + ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"])
        #expect(try await store.subscriptionRecord(originalTransactionID: ids["dave"]!)?.autoRenewEnabled == false)
        let bobNotes = try await scenario.notifications(of: "bob")
        #expect(bobNotes.count == 5 && bobNotes.last?.hasPrefix("DID_CHANGE_RENEWAL_PREF") == true, "\(bobNotes)")
        #expect(try await scenario.notifications(of: "carol") == ["SUBSCRIBED/INITIAL_BUY"] + renewed + ["OFFER_REDEEMED"])

        // The next renewals: Carol's is the offer's discounted month, Bob's is the plan he switched to.
        try await store.advanceTime(by: 32 * 86_400)
        let carolRenewal = try #require(try await store.ledgerTransactions(account: "carol").last)
        #expect(carolRenewal.offer?.id == "premium.monthly.firstmonth" && carolRenewal.offer?.type == .promotionalOffer && carolRenewal.price == 990)
        #expect(try await store.ledgerTransactions(account: "bob").last?.productID == ExampleShop.standardMonthly)

        let attempts = try await store.cancellationAttempts()
        #expect(attempts.compactMap(\.outcome) == [.kept, .switched, .redeemed, .cancelled])

        // The Transaction Manager's page of the purchase lists its attempts.
        let server = try StoreServer(store: store)
        let page = try await HTTPClient.shared.send(HTTPClient.Request("GET", server.url.appendingPathComponent("transactions/\(ids["dave"]!)"),
                                                                      timeout: .seconds(180)))
        await server.stop()
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("Cancellation attempts") && html.contains(#"data-outcome="cancelled""#) && html.contains("“Before you go”"), "\(html.suffix(3000))")
        #expect(html.contains("the real-time URL"))
    }

    @Test("a slow, failing or wrong endpoint: the default message is shown without waiting past the limit")
    func defaultWhenTheEndpointFails() async throws {
        let endpoint = try Endpoint()
        let scenario = try await Scenario()
        let store = scenario.store
        let alice = scenario.subscriptions["alice"]!
        try await store.configureRetentionRealtimeURL(endpoint.url)

        // Slow: the endpoint would answer after 120 s; with Apple's limit the page shows the default long before.
        endpoint.state.answers.withLock { $0[String(alice)] = RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: scenario.textMessage)) }
        endpoint.state.pause.withLock { $0 = .seconds(120) }
        let started = ContinuousClock.now
        let slow = try await scenario.applesFlow.start(originalTransactionID: alice)
        #expect(ContinuousClock.now - started < .seconds(60), "the page did not wait for the slow endpoint")
        #expect(slow.source == .defaultMessage && slow.messageIdentifier == scenario.textMessage && slow.realtimeFailure == "TIMED_OUT")
        endpoint.state.pause.withLock { $0 = .zero }

        // Failing: a 500.
        endpoint.state.answers.withLock { $0 = [:] }
        let failing = try await scenario.flow.start(originalTransactionID: alice)
        #expect(failing.source == .defaultMessage && failing.realtimeFailure == "UNSUCCESSFUL_HTTP_RESPONSE_CODE")

        // Wrong: a message that is not approved, a plan of another group, two choices at once.
        let pending = UUID().uuidString.lowercased()
        try await store.uploadRetentionMessage(pending, UploadMessageRequestBody(header: "Pending", body: "Not reviewed yet."))
        for wrong in [RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: pending)),
                      RealtimeResponseBody(alternateProduct: AlternateProduct(messageIdentifier: scenario.planMessage, productId: ExampleShop.newsPlus)),
                      RealtimeResponseBody(message: RealtimeMessage(messageIdentifier: scenario.textMessage),
                                           alternateProduct: AlternateProduct(messageIdentifier: scenario.planMessage, productId: ExampleShop.standardMonthly))] {
            endpoint.state.answers.withLock { $0[String(alice)] = wrong }
            let attempt = try await scenario.flow.start(originalTransactionID: alice)
            #expect(attempt.source == .defaultMessage && attempt.realtimeFailure?.hasPrefix("INVALID_RESPONSE") == true, "\(attempt)")
        }

        // Down: nothing listens.
        await endpoint.server.stop()
        let down = try await scenario.flow.start(originalTransactionID: alice)
        #expect(down.source == .defaultMessage && down.realtimeFailure == "NO_RESPONSE", "\(down)")

        // No default for the locale: nothing is shown, and the customer can still cancel.
        let french = try await scenario.flow.start(originalTransactionID: alice, locale: "fr-FR")
        #expect(french.source == RetentionOfferAttempt.Source.none && french.messageIdentifier == nil && french.answers == [.kept, .cancelled])
    }

    @Test("TestSession opens and answers cancellation pages: in this process the default message, on a served store the endpoint's offer")
    func testSessionCancellation() async throws {
        // In this process: no real-time URL, so the default message; confirming turns renewal off.
        let local = try TestSession(contentsOf: ExampleShop.file, bundleID: "com.example.shop", startDate: TestStores.start)
        let store = try #require(local.store)
        let message = UUID().uuidString.lowercased()
        try await store.uploadRetentionMessage(message, UploadMessageRequestBody(header: "Before you go", body: "Your plans sync everywhere."))
        try await store.reviewRetentionContent(message, state: .approved)
        try await store.configureDefaultRetentionMessage(productID: ExampleShop.premiumMonthly, locale: "en-US", messageIdentifier: message)
        let bought = try await local.buyProduct(identifier: ExampleShop.premiumMonthly)
        let page = try await local.openCancellationPage(forTransaction: bought.id)
        #expect(page.source == .defaultMessage && page.messageIdentifier == message && page.answers == [.kept, .cancelled], "\(page)")
        let answered = try await local.answerCancellationPage(page, with: .cancelled)
        #expect(answered.outcome == .cancelled)
        #expect(try await store.subscriptionRecord(originalTransactionID: bought.originalID)?.autoRenewEnabled == false)
        await #expect(throws: SKTestError.self) { try await local.answerCancellationPage(page, with: .kept) }

        // A served store: the developer's endpoint makes an offer, which the customer redeems.
        let endpoint = try Endpoint()
        let scenario = try await Scenario()
        let server = try StoreServer(store: scenario.store, retentionAnswerLimit: .seconds(60))
        let remote = try await TestSession(server: server.url, namespace: "")
        let carol = try #require(scenario.subscriptions["carol"])
        endpoint.state.answers.withLock {
            $0[String(carol)] = RealtimeResponseBody(promotionalOffer: RealtimePromotionalOffer(messageIdentifier: scenario.offerMessage,
                                                                                                promotionalOfferSignatureV2: try! scenario.offerSignature()))
        }
        try await scenario.store.configureRetentionRealtimeURL(endpoint.url)
        try await scenario.store.advanceTime(by: 92 * 86_400)
        let offer = try await remote.openCancellationPage(forTransaction: carol)
        #expect(offer.source == .realtime && offer.kind == .promotionalOffer && offer.offerIdentifier == "premium.monthly.firstmonth", "\(offer)")
        #expect(try await remote.answerCancellationPage(offer, with: .redeemed).outcome == .redeemed)
        #expect(try await scenario.notifications(of: "carol").contains("OFFER_REDEEMED"))
        await server.stop()
        await endpoint.server.stop()
    }
}
