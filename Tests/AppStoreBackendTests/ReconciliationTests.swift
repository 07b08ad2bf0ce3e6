import AppStoreBackend
import AppStoreModels
import AppStoreServerAPI
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import StoreService
import Testing
import TestSupport

/// A backend whose webhook was down for a simulated day converges to the store's entitlements by
/// reading the App Store Server API's notification history.
@Suite(.timeLimit(.minutes(10)))
struct ReconciliationTests {
    /// A Server API client of the served store, with a new key of its own.
    static func client(of store: SimulatedAppStore, at server: StoreServer) async throws -> AppStoreServerAPIClient {
        let key = try P256PrivateKey.generate()
        let record = try await store.registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
        return try AppStoreServerAPIClient(signingKey: try key.pemRepresentation, keyId: record.keyId, issuerId: record.issuerId,
                                           bundleId: "com.example.shop", environment: .sandbox, baseURL: server.url)
    }

    @Test("the webhook down for a day, then reconciliation through the notification history: the store's entitlements",
          arguments: BackendEngine.available)
    func downForADay(engine: BackendEngine) async throws {
        try await BackendLedgerTests.afterScriptedYear(engine: engine) { scenario, backend in
            let delivered = try await scenario.notificationBodies()
            for body in delivered { _ = await backend.post("/apple/notifications", body, key: nil) }
            for body in try await scenario.familyAppRequests() { _ = await backend.post("/v1/transactions", body) }

            // A day the webhook is down: purchases, a refund, renewals happen; nothing reaches the backend.
            let carolsPlan = try await scenario.buy(ExampleShop.premiumMonthly, "carol")
            _ = try await scenario.buy(ExampleShop.wizard, "erin")
            let bobsPro = try await scenario.buy(ExampleShop.pro, "bob")
            try await scenario.store.advanceTime(by: 12 * 3_600)
            try await scenario.store.refundTransaction(bobsPro.id)
            try await scenario.store.advanceTime(by: 12 * 3_600)
            let missed = try await scenario.store.notificationRecords().count - delivered.count
            #expect(missed >= 4)
            #expect(try await BackendScenario.backendEntitlements(backend) != (try await scenario.storeEntitlements()), "the backend is behind")

            try await StoreServer.serving(scenario.store) { server in
                let client = try await Self.client(of: scenario.store, at: server)
                let reconciler = NotificationReconciler(client: client, intake: backend.intake, storage: backend.storage)
                let outcome = try await reconciler.reconcile(to: try await scenario.store.currentTime())
                #expect(outcome.recorded == missed, "exactly the missed notifications were recorded")
                #expect(outcome.missing == 0, "none had a delivery attempt (no sender ran): on their way, not lost deliveries")
                #expect(outcome.listed >= missed)
                #expect(try await BackendScenario.backendEntitlements(backend) == (try await scenario.storeEntitlements()))
                #expect(try await backend.ledger.entitlements(customer: BackendScenario.token("carol").uuidString.lowercased()).map(\.transactionId)
                            .contains(String(carolsPlan.id)))

                let again = try await reconciler.reconcile(to: try await scenario.store.currentTime())
                #expect(again.recorded == 0, "a second reconciliation changes nothing")
            }
        }
    }

    @Test("a renewal whose notification was lost: the period's end takes access away (expired, unconfirmed), and the status check gives it back")
    func lostRenewal() async throws {
        let scenario = try BackendScenario()
        let first = try await scenario.buy(ExampleShop.premiumMonthly, "alice")
        try await scenario.withBackend { backend in
            for body in try await scenario.notificationBodies() { #expect(await backend.post("/apple/notifications", body, key: nil).status == 200) }
            let alice = BackendScenario.token("alice").uuidString.lowercased()
            #expect(try await backend.ledger.entitlements(customer: alice).map(\.transactionId) == [String(first.id)])
            // The month renews; its DID_RENEW never reaches the backend.
            try await scenario.store.advanceTime(by: 31 * 86_400)
            let renewal = try #require(try await scenario.store.entitledTransactions(of: "alice").first)
            #expect(renewal.id != first.id)
            #expect(try await backend.ledger.entitlements(customer: alice).isEmpty, "the period ended; no word of a renewal")
            #expect(try await backend.ledger.history(customer: alice).contains { $0.expiredUnconfirmed })
            #expect(try await backend.ledger.explain(customer: alice, productID: ExampleShop.premiumMonthly).because.contains("unconfirmed"))

            try await StoreServer.serving(scenario.store) { server in
                let client = try await Self.client(of: scenario.store, at: server)
                let reconciler = NotificationReconciler(client: client, intake: backend.intake, storage: backend.storage, clock: backend.clock)
                // A window that holds only what the backend has: only the status check can find the renewal.
                let outcome = try await reconciler.reconcile(from: BackendScenario.start, to: BackendScenario.start.addingTimeInterval(60))
                #expect(outcome.recorded == 0)
                #expect(outcome.statusChecks == 1)
                #expect(try await backend.ledger.entitlements(customer: alice).map(\.transactionId) == [String(renewal.id)])
                #expect(try await backend.ledger.history(customer: alice).allSatisfy { !$0.expiredUnconfirmed })
            }
        }
    }

    @Test("the window is the backend's own: a reconciliation starts a day before the time it last knew itself complete, and the App Store's stated time ends it")
    func ownWindow() async throws {
        let scenario = try BackendScenario()
        _ = try await scenario.buy(ExampleShop.pro, "alice")
        try await scenario.withBackend { backend in
            try await StoreServer.serving(scenario.store) { server in
                let client = try await Self.client(of: scenario.store, at: server)
                // The backend's clock has seen nothing: the machine's, eleven months from the store's.
                let clock = BackendClock(.appStore)
                let reconciler = NotificationReconciler(client: client, intake: backend.intake, storage: backend.storage, clock: clock)
                let first = try await reconciler.reconcile()
                #expect(first.recorded == 1, "the store's own time, stated in its answers, drew the window")
                #expect(first.through == (try await scenario.store.currentTime()))
                #expect(clock.now() == (try await scenario.store.currentTime()))
                #expect(try await backend.storage.reconciledThrough() == (try await scenario.store.currentTime()))
                // Ten days pass with the backend deaf: the next run starts where the last ended, not at the newest notification.
                for account in ["bob", "carol"] {
                    _ = try await scenario.buy(ExampleShop.wizard, account)
                    try await scenario.store.advanceTime(by: 5 * 86_400)
                }
                let second = try await reconciler.reconcile()
                #expect(second.recorded == 2)
                #expect(second.from == first.through?.addingTimeInterval(-NotificationReconciler.overlap))
                #expect(second.through == (try await scenario.store.currentTime()))
            }
        }
    }
}
