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

/// A local store whose clock goes back: a manual store that ran two months ahead, then served on
/// the real clock. A backend following the App Store's time (Xcode data) follows it back at its next
/// reconciliation, which reads the history the move left behind what was complete.
@Suite(.timeLimit(.minutes(5)))
struct ClockMovedBackTests {
    static let accounts = ["alice", "bob", "carol"]

    @Test("the store's clock moved back 60 days: after its next reconciliation the backend's time is the store's again, it holds every notification, and every subscriber has the store's entitlements")
    func storeClockMovedBack() async throws {
        let storage = InMemoryLedgerStorage()
        let authority = try CertificateAuthority.make()
        let realNow = SystemStoreClock().now()
        let ahead = ManualStoreClock(startingAt: realNow.addingTimeInterval(60 * 86_400))
        let identity = StoreIdentity(bundleId: "com.example.shop", environment: .xcode)
        let store = try await SimulatedAppStore.create(configuration: TestStores.shop, identity: identity, authority: authority, storage: storage, clock: ahead)
        func buy(_ store: SimulatedAppStore, _ account: String) async throws {
            let request = PurchaseRequest(productID: ExampleShop.premiumMonthly, account: account, device: "\(account)-phone", appAccountToken: BackendScenario.token(account))
            guard case .success = try await store.purchase(request) else { throw TestFailure("\(account) could not buy") }
        }
        try await buy(store, "alice")

        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = true
        let verifier = try SignedDataVerifier(rootCertificates: [authority.rootCertificate], bundleId: "com.example.shop", environment: .xcode, options: options)
        let clock = BackendClock(.appStore)
        let scratch = Scratch()
        let backendStorage = try await SQLBackendStorage.sqlite(path: scratch.path("backend.sqlite"))
        let backend = BackendService(storage: backendStorage, intake: SignedDataIntake(verifier: verifier), clock: clock)
        var posted = 0
        func deliver(_ store: SimulatedAppStore) async throws {
            let notifications = try await store.notifications()
            for notification in notifications.dropFirst(posted) {
                let response = await backend.handle(HTTPRequest(method: "POST", path: "/apple/notifications", body: Data(#"{"signedPayload":"\#(notification.signedPayload)"}"#.utf8)))
                #expect(response.status == 200)
            }
            posted = notifications.count
        }
        try await deliver(store)
        #expect(clock.now() > realNow.addingTimeInterval(59 * 86_400), "the backend follows the store's time ahead")

        // The same store served on the real clock: its time goes back 60 days. Bob and carol subscribe
        // then; only bob's notification reaches the backend.
        let moved = try await SimulatedAppStore.open(storage: storage, authority: authority, clock: SystemStoreClock())
        try await buy(moved, "bob")
        try await deliver(moved)
        try await buy(moved, "carol")
        try await StoreServer.serving(moved) { server in
            let key = try P256PrivateKey.generate()
            let record = try await moved.registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
            let client = try AppStoreServerAPIClient(signingKey: try key.pemRepresentation, keyId: record.keyId, issuerId: record.issuerId,
                                                     bundleId: "com.example.shop", environment: .xcode, baseURL: server.url)
            let reconciler = NotificationReconciler(client: client, intake: SignedDataIntake(verifier: verifier), storage: backendStorage, clock: clock)
            _ = try await reconciler.reconcile()
            #expect(abs(clock.now().timeIntervalSince(SystemStoreClock().now())) < 600, "the backend's time is the store's again: \(clock.now())")
            let expected = Set(try await moved.notificationRecords().map(\.notificationUUID))
            let held = Set(try await backendStorage.notifications(originalTransactionIDs: Set(try await moved.ledgerTransactions().map { String($0.originalID) }),
                                                                   limit: 1_000).map(\.notificationUUID))
            #expect(expected.isSubset(of: held), "\(expected.subtracting(held).count) notifications missing after the reconciliation")
            for account in Self.accounts {
                let customer = BackendScenario.token(account).uuidString.lowercased()
                let backendIDs = try await backend.ledger.entitlements(customer: customer).map(\.transactionId).sorted()
                let storeIDs = try await moved.entitledTransactions(of: account).map { String($0.id) }.sorted()
                #expect(backendIDs == storeIDs, "\(account): the backend says \(backendIDs), the store \(storeIDs)")
                #expect(!storeIDs.isEmpty || account == "alice", "\(account) pays and has access")
            }
            // A second reconciliation reads on from the store's time, not from the future it left.
            let again = try await reconciler.reconcile()
            #expect(again.recorded == 0)
            #expect(again.from.map { $0 > SystemStoreClock().now().addingTimeInterval(-3 * 86_400) } == true, "\(String(describing: again.from))")
        }
    }
}
