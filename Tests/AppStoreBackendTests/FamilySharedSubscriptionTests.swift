import AppStoreBackend
import AppStoreModels
import AppStoreSimulator
import Foundation
import Testing
import TestSupport

/// A subscription shared through Family Sharing, its purchaser in billing retry, and every control
/// on the purchaser's subscription and on a family member's copy: what the store does, the
/// notifications it sends, and what the backend then entitles, each against Apple's documented
/// behaviour (docs/family-sharing.md cites it).
@Suite(.timeLimit(.minutes(10)))
struct FamilySharedSubscriptionTests {
    /// The purchaser, alice (her app account token is her backend customer id), and the member, dave
    /// (his app sends his transactions with his own user id).
    let scenario: BackendScenario

    init() throws { scenario = try BackendScenario() }

    var store: SimulatedAppStore { scenario.store }

    /// The notifications sent since `sequence`: type, subtype, whose transaction (purchase or copy).
    func notifications(after sequence: Int64) async throws -> [(type: String, subtype: String?, ownership: String?, transaction: UInt64?)] {
        try await store.notificationRecords(after: sequence).map {
            ($0.type.rawValue, $0.subtype?.rawValue, $0.transaction?.inAppOwnershipType?.rawValue, $0.transactionID)
        }
    }

    func lastSequence() async throws -> Int64 { try await store.notificationRecords().last?.sequence ?? 0 }

    /// Every notification so far delivered to the backend, and dave's app's transactions sent to it; then each customer's entitlements.
    func entitlements(in backend: BackendService) async throws -> (alice: [String], dave: [String]) {
        for body in try await scenario.notificationBodies() { _ = await backend.post("/apple/notifications", body, key: nil) }
        for body in try await scenario.familyAppRequests() { _ = await backend.post("/v1/transactions", body) }
        let alice = try await backend.ledger.entitlements(customer: BackendScenario.token("alice").uuidString.lowercased()).map(\.productId)
        let dave = try await backend.ledger.entitlements(customer: BackendScenario.familyMember.userID).map(\.productId)
        return (alice.sorted(), dave.sorted())
    }

    /// The purchaser's and the member's records of the shared subscription.
    func records() async throws -> (alice: SubscriptionRecord, dave: SubscriptionRecord) {
        let alice = try #require(try await store.subscriptionRecords(account: "alice").first)
        let dave = try #require(try await store.subscriptionRecords(account: "dave").first { $0.familySourceID == alice.originalTransactionID })
        return (alice, dave)
    }

    /// Both a notification about the purchase and one about the member's copy, of this type and subtype.
    func expectTwins(_ sent: [(type: String, subtype: String?, ownership: String?, transaction: UInt64?)], _ type: String, _ subtype: String?,
                     sourceLocation: SourceLocation = #_sourceLocation) {
        let matching = sent.filter { $0.type == type && $0.subtype == subtype }
        #expect(matching.contains { $0.ownership == "PURCHASED" }, "\(type) \(subtype ?? "") about alice's purchase: \(sent)", sourceLocation: sourceLocation)
        #expect(matching.contains { $0.ownership == "FAMILY_SHARED" }, "\(type) \(subtype ?? "") about dave's copy: \(sent)", sourceLocation: sourceLocation)
    }

    @Test("a family-shared subscription in billing retry: every control on the purchase or on a member's copy acts on the purchaser's subscription or is refused with the reason; the copy follows with its own notifications, and the backend entitles both alike")
    func everyControlOnEitherSide() async throws {
        try await store.setFamilyGroup("smiths", for: "alice")
        try await store.addDevice("dave-phone", account: "dave")
        try await store.setFamilyGroup("smiths", for: "dave")
        let purchase = try await scenario.buy(ExampleShop.premiumMonthly, "alice")
        try await scenario.withBackend { backend in
            // Each member gets a transaction of their own, owned FAMILY_SHARED ("Supporting Family Sharing in your app").
            var (alice, dave) = try await records()
            let copy = dave.originalTransactionID
            #expect(try await store.ledgerTransaction(copy)?.ownership == .familyShared)
            var entitled = try await entitlements(in: backend)
            #expect(entitled.alice == [ExampleShop.premiumMonthly] && entitled.dave == [ExampleShop.premiumMonthly], "\(entitled)")

            // The renewal fails: the purchaser's subscription enters billing retry, and the copy with it.
            try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = false }
            var mark = try await lastSequence()
            try await store.advanceTime(by: 32 * 86_400)
            (alice, dave) = try await records()
            #expect(alice.state == .inBillingRetryPeriod && dave.state == .inBillingRetryPeriod, "\(alice.state) \(dave.state)")
            expectTwins(try await notifications(after: mark), "DID_FAIL_TO_RENEW", nil)
            entitled = try await entitlements(in: backend)
            #expect(entitled.alice.isEmpty && entitled.dave.isEmpty, "no access in billing retry without grace: \(entitled)")

            // What only the purchaser's subscription can be asked for is refused on the copy, with the reason.
            await #expect(throws: AppStoreError.self) { try await store.extendRenewalDate(originalTransactionID: copy, days: 5) }
            await #expect(throws: AppStoreError.self) { try await store.requestPriceIncreaseConsent(transactionID: copy) }
            await #expect(throws: AppStoreError.self) { try await store.refundTransaction(copy) }
            do {
                try await store.expireSubscription(productID: ExampleShop.premiumMonthly, account: "dave")
                Issue.record("expiring dave's copy should be refused")
            } catch {
                #expect("\(error)".contains("alice"), "the reason names the purchaser: \(error)")
            }
            // Apple extends only an active subscription; this one is in billing retry.
            await #expect(throws: AppStoreError.self) { try await store.extendRenewalDate(originalTransactionID: purchase.originalID, days: 5) }

            // The purchaser's billing is fixed, through the copy: one renewal, BILLING_RECOVERY, both entitled again.
            mark = try await lastSequence()
            try await store.resolveBillingIssue(originalTransactionID: copy)
            (alice, dave) = try await records()
            #expect(alice.state == .subscribed && dave.state == .subscribed)
            expectTwins(try await notifications(after: mark), "DID_RENEW", "BILLING_RECOVERY")
            #expect(try await store.ledgerTransactions(account: "alice").filter { $0.originalID == purchase.originalID }.count == 2,
                    "one purchase, one renewal: the recovery bills alice once")
            entitled = try await entitlements(in: backend)
            #expect(entitled.alice == [ExampleShop.premiumMonthly] && entitled.dave == [ExampleShop.premiumMonthly], "\(entitled)")

            // Renewal off, on the member's copy: the purchaser's renewal is what turns off, and both are told.
            mark = try await lastSequence()
            try await store.setAutoRenew(originalTransactionID: copy, enabled: false)
            (alice, dave) = try await records()
            #expect(!alice.autoRenewEnabled && !dave.autoRenewEnabled)
            expectTwins(try await notifications(after: mark), "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED")
            mark = try await lastSequence()
            try await store.setAutoRenew(originalTransactionID: purchase.originalID, enabled: true)
            (alice, dave) = try await records()
            #expect(alice.autoRenewEnabled && dave.autoRenewEnabled)
            expectTwins(try await notifications(after: mark), "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED")

            // Extending the purchaser's subscription extends the family's (FamilySharedSubscriptionExtensionIneligibleError's discussion).
            try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = false }
            mark = try await lastSequence()
            let before = try await records()
            try await store.extendRenewalDate(originalTransactionID: purchase.originalID, days: 5)
            (alice, dave) = try await records()
            #expect(alice.expirationDate == before.alice.expirationDate.addingTimeInterval(5 * 86_400))
            #expect(dave.expirationDate == alice.expirationDate, "the copy's period ends with the purchaser's")
            expectTwins(try await notifications(after: mark), "RENEWAL_EXTENDED", nil)

            // The purchaser's refund: REFUND for alice, REVOKE for dave's copy with alice's reason (revocationReason's discussion).
            mark = try await lastSequence()
            let latest = try #require(try await store.ledgerTransactions(account: "alice").last)
            try await store.refundTransaction(latest.id, reason: .refundedDueToIssue)
            let sent = try await notifications(after: mark)
            #expect(sent.contains { $0.type == "REFUND" && $0.ownership == "PURCHASED" }, "\(sent)")
            #expect(sent.contains { $0.type == "REVOKE" && $0.ownership == "FAMILY_SHARED" }, "\(sent)")
            let revokedCopy = try #require(try await store.ledgerTransactions(account: "dave").last { $0.ownership == .familyShared })
            #expect(revokedCopy.revocation?.type == .familyRevoke && revokedCopy.revocation?.reason == .refundedDueToIssue, "\(String(describing: revokedCopy.revocation))")
            entitled = try await entitlements(in: backend)
            #expect(entitled.alice.isEmpty && entitled.dave.isEmpty, "a refund ends the purchaser's and the family's access: \(entitled)")
        }
    }
}
