import AppStoreBackend
import AppStoreModels
import AppStoreServerAPI
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreService
import Testing
import TestSupport

/// A backend whose webhook was down for a simulated day converges to the store's entitlements by
/// reading the App Store Server API's notification history.
@Suite(.timeLimit(.minutes(10)))
struct ReconciliationTests {
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
                let key = try P256PrivateKey.generate()
                let record = try await scenario.store.registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
                let client = try AppStoreServerAPIClient(signingKey: try key.pemRepresentation, keyId: record.keyId, issuerId: record.issuerId,
                                                         bundleId: "com.example.shop", environment: .sandbox, baseURL: server.url)
                let reconciler = NotificationReconciler(client: client, intake: backend.intake, storage: backend.storage)
                let outcome = try await reconciler.reconcile(to: try await scenario.store.currentTime())
                #expect(outcome.recorded == missed, "exactly the missed notifications were recorded")
                #expect(outcome.listed >= missed)
                #expect(try await BackendScenario.backendEntitlements(backend) == (try await scenario.storeEntitlements()))
                #expect(try await backend.ledger.entitlements(customer: BackendScenario.token("carol").uuidString.lowercased()).map(\.transactionId)
                            .contains(String(carolsPlan.id)))

                let again = try await reconciler.reconcile(to: try await scenario.store.currentTime())
                #expect(again.recorded == 0, "a second reconciliation changes nothing")
            }
        }
    }
}
