import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPClient
import HTTPService
import SimulatorConnection
import StoreKitCatalog
import StoreService
import Testing
import TestSupport

/// `backend serve` as the developer's Get Retention Message endpoint: the store's signed requests
/// verified, answered from the backend's rules by product and tenure, and the figures of what each
/// message led to, counted from the notifications that followed.
@Suite(.timeLimit(.minutes(5)))
struct RetentionBackendTests {
    @Test("the backend's rules choose by product and tenure; the customers' answers reach its figures; no rule means the default")
    func rulesAnswerTheStore() async throws {
        let scenario = try await CancellationFlowTests.Scenario()
        let store = scenario.store
        let scratch = Scratch()
        let storage = try await SQLBackendStorage.sqlite(path: scratch.url.appendingPathComponent("backend.sqlite").path)
        // Xcode data: the backend goes by the App Store's clock, as backend serve does by default.
        let backend = BackendService(storage: storage, intake: SignedDataIntake(verifier: try SignedDataVerifier(
            rootCertificates: [store.rootCertificate], bundleId: store.identity.bundleId, environment: store.identity.environment)),
                                     clock: BackendClock(.appStore))
        let server = try HTTPServer(handler: backend.router(listeningAddress: "127.0.0.1").handler)
        defer { Task { await server.stop() } }
        func deliver() async throws {
            for notification in try await store.notifications() {
                let answer = try await HTTPClient.shared.send(.json("POST", server.url.appendingPathComponent("apple/notifications"),
                                                                    body: Data(#"{"signedPayload":"\#(notification.signedPayload)"}"#.utf8), timeout: .seconds(180)))
                #expect(answer.status == 200)
            }
        }

        try await storage.addRetentionRule(RetentionRule(id: "new", position: 1, productID: ExampleShop.premiumMonthly, maximumDays: 30,
                                                         kind: .message, messageIdentifier: scenario.textMessage))
        try await storage.addRetentionRule(RetentionRule(id: "loyal", position: 2, productID: ExampleShop.premiumMonthly, minimumDays: 31,
                                                         kind: .switchPlan, messageIdentifier: scenario.planMessage, alternateProductID: ExampleShop.standardMonthly))
        try await store.configureRetentionRealtimeURL(server.url.absoluteString + "/apple/retention")
        try await deliver()

        // Alice, subscribed today: the rule for new customers. She cancels.
        let alice = try await scenario.flow.start(originalTransactionID: scenario.subscriptions["alice"]!)
        #expect(alice.source == .realtime && alice.kind == .message && alice.messageIdentifier == scenario.textMessage, "\(alice)")
        _ = try await scenario.flow.answer(alice.id, outcome: .cancelled)
        // Forty days later Bob is a loyal customer: the cheaper plan is suggested, and he switches.
        try await store.advanceTime(by: 40 * 86_400)
        try await deliver()
        let bob = try await scenario.flow.start(originalTransactionID: scenario.subscriptions["bob"]!)
        #expect(bob.source == .realtime && bob.kind == .switchPlan && bob.alternateProductID == ExampleShop.standardMonthly, "\(bob)")
        _ = try await scenario.flow.answer(bob.id, outcome: .switched)
        // Carol keeps hers.
        let carol = try await scenario.flow.start(originalTransactionID: scenario.subscriptions["carol"]!)
        _ = try await scenario.flow.answer(carol.id, outcome: .kept)
        try await deliver()

        let figures = Dictionary(uniqueKeysWithValues: try await storage.retentionFigures().map { ($0.messageIdentifier, $0) })
        #expect(figures[scenario.textMessage].map { [$0.shown, $0.cancelled, $0.kept] } == [1, 1, 0])
        #expect(figures[scenario.planMessage].map { [$0.shown, $0.switched, $0.kept] } == [2, 1, 1])

        // No rule applies: the backend answers 404 and the store shows the default message.
        #expect(try await storage.removeRetentionRule(id: "loyal"))
        let dave = try await scenario.flow.start(originalTransactionID: scenario.subscriptions["dave"]!)
        #expect(dave.source == .defaultMessage && dave.realtimeFailure == "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "\(dave)")

        // A request the store did not sign is refused and recorded nowhere.
        let forged = try await HTTPClient.shared.send(.json("POST", server.url.appendingPathComponent("apple/retention"),
                                                            body: Data(#"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.e30.AAAA"}"#.utf8), timeout: .seconds(180)))
        #expect((400..<500).contains(forged.status))
        #expect(try await storage.retentionFigures().map(\.shown).reduce(0, +) == 3)

        // An offer rule on a backend without the developer's offer key cannot answer (503): the store
        // shows the default, and the backend does not count the offer as shown.
        try await storage.addRetentionRule(RetentionRule(id: "offer", position: 0, kind: .promotionalOffer, messageIdentifier: scenario.offerMessage,
                                                         offerIdentifier: "premium.monthly.firstmonth"))
        let unsigned = try await scenario.flow.start(originalTransactionID: scenario.subscriptions["dave"]!)
        #expect(unsigned.source == .defaultMessage && unsigned.realtimeFailure == "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "\(unsigned)")
        #expect(try await storage.retentionFigures().map(\.shown).reduce(0, +) == 3)
    }

    @Test("a captured Get Retention Message request replayed signs no new offer: one answer per request id, none for an old date, and the offer names the customer's transaction (#53)")
    func replaysSignNoOffer() async throws {
        let scenario = try await CancellationFlowTests.Scenario()
        let store = scenario.store
        let scratch = Scratch()
        let storage = try await SQLBackendStorage.sqlite(path: scratch.url.appendingPathComponent("backend.sqlite").path)
        let pair = try #require(TestStores.shop.subscriptionOffersKeyPair)
        var backend = BackendService(storage: storage, intake: SignedDataIntake(verifier: try SignedDataVerifier(
            rootCertificates: [store.rootCertificate], bundleId: store.identity.bundleId, environment: store.identity.environment)),
                                     clock: BackendClock(.appStore))
        backend.offerSigner = OfferSignatureCreator(signingKey: try P256PrivateKey(pemRepresentation: try #require(pair.privateKey)), keyId: try #require(pair.id),
                                                    issuerId: "issuer", bundleId: store.identity.bundleId)
        try await storage.addRetentionRule(RetentionRule(id: "offer", position: 0, kind: .promotionalOffer, messageIdentifier: scenario.offerMessage,
                                                         offerIdentifier: "premium.monthly.firstmonth"))
        let server = try HTTPServer(handler: backend.router(listeningAddress: "127.0.0.1").handler)
        func post(_ signedPayload: String) async throws -> HTTPClient.Response {
            try await HTTPClient.shared.send(.json("POST", server.url.appendingPathComponent("apple/retention"),
                                                   body: Data(#"{"signedPayload":"\#(signedPayload)"}"#.utf8), timeout: .seconds(180)))
        }
        let alice = String(try #require(scenario.subscriptions["alice"]))
        let now = await store.now
        let captured = try store.signedRealtimeRequest(originalTransactionId: alice, productId: ExampleShop.premiumMonthly, userLocale: "en-US", at: now)
        let first = try await post(captured.signedPayload)
        #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
        // The offer is bound to Alice's subscription.
        let answer = try JSONDecoder().decode(RealtimeResponseBody.self, from: first.body)
        let signature = try #require(answer.promotionalOffer?.promotionalOfferSignatureV2)
        let claims = try JSONDecoder().decode(OfferSignatureClaims.self, from: try CompactJWS(signature).payloadData)
        #expect(claims.transactionId == alice, "\(claims)")
        // The same request again, and again: no new offer.
        for _ in 0..<3 {
            let replayed = try await post(captured.signedPayload)
            #expect(replayed.status == 409 && !String(decoding: replayed.body, as: UTF8.self).contains("promotionalOfferSignatureV2"))
        }
        // A request signed long ago (a new id, an old date) is refused too.
        let old = try store.signedRealtimeRequest(originalTransactionId: alice, productId: ExampleShop.premiumMonthly, userLocale: "en-US",
                                                  at: now.addingTimeInterval(-3_600))
        let stale = try await post(old.signedPayload)
        #expect(stale.status == 400 && String(decoding: stale.body, as: UTF8.self).contains("replay"))
        #expect(try await storage.retentionFigures().map(\.shown).reduce(0, +) == 1)
        await server.stop()
    }
}
