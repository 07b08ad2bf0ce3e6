import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// What a Sandbox or Production store signs verifies with Apple's own Python library (in Production
/// with the app's Apple ID, which Production data must carry and the verifier checks).
@Suite(.timeLimit(.minutes(10)), AppleLibraryOracle.required)
struct SimulatorInteropTests {
    static let stores: [(AppStoreModels.Environment, Int64?)] = [(.sandbox, nil), (.sandbox, 1_470_168_868), (.production, 1_470_168_868)]

    @Test("transactions, renewal infos and notifications verify with Apple's library", arguments: stores.indices)
    func storeInterop(_ index: Int) async throws {
        let (environment, appAppleId) = Self.stores[index]
        let test = try TestStore(environment: environment, appAppleId: appAppleId)
        let store = test.store
        let gems = try await test.buy(PurchaseTests.gems, quantity: 2)
        let pro = try await test.buy(PurchaseTests.pro)
        try await store.refundTransaction(pro.transaction.id)
        let premium = try await test.buy(Shop.premiumMonthly)
        try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true }
        try await store.advanceTime(by: 40 * day)
        try await store.resolveIssueForTransaction(premium.transaction.id)
        _ = try await test.buy(Shop.standardMonthly)
        try await store.requestPriceIncreaseConsent(transactionID: premium.transaction.id)
        try await store.requestTestNotification()
        var items: [(kind: String, jws: String)] = [("transaction", gems.jws)]
        for status in try await store.subscriptionStatuses(groupID: Shop.plus, device: "phone") {
            items.append(("transaction", status.transaction.jws))
            items.append(("renewal", status.signedRenewalInfo))
        }
        let notifications = try await store.notifications()
        #expect(Set(notifications.map(\.type)).isSuperset(of: [.oneTimeCharge, .refund, .subscribed, .didFailToRenew, .didRenew,
                                                               .didChangeRenewalPref, .priceIncrease, .test]))
        for notification in notifications {
            items.append(("notification", notification.signedPayload))
            let payload = try await test.verifier.verifyAndDecodeNotification(notification.signedPayload)
            if let transaction = payload.data?.signedTransactionInfo { items.append(("transaction", transaction)) }
            if let renewal = payload.data?.signedRenewalInfo { items.append(("renewal", renewal)) }
        }
        try await store.addDevice("phone", account: "alice")
        items.append(("app-transaction", try await store.appTransaction(device: "phone").jws))
        let verdicts = try await AppleLibraryOracle.verify(root: TestStore.authority.rootCertificate.derRepresentation, environment: environment.rawValue,
                                                     bundleId: "com.example.shop", appAppleId: appAppleId, items: items)
        #expect(verdicts == Array(repeating: "OK", count: items.count), "\(zip(items.map(\.kind), verdicts).filter { $0.1 != "OK" })")
    }
}
