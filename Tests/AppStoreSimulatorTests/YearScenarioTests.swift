import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// A whole year of a monthly plan with a billing failure, grace, recovery, an upgrade, a downgrade and
/// a refund, checked against transactions, status, renewal info and the exact notification sequence.
@Suite(.timeLimit(.minutes(10)))
struct YearScenarioTests {
    @Test("a year of a monthly plan: billing failure, grace, recovery, upgrade, downgrade, refund")
    func year() async throws {
        let test = try TestStore()
        let store = test.store
        // January 1: a standard monthly subscription with its six-month pay-up-front introductory offer.
        let first = try test.verified(try await test.buy(Shop.standardMonthly))
        #expect(first.offerDiscountType == .payUpFront && first.expiresDate == date("2026-07-01T00:00:00Z"))
        // July 1: the first renewal fails; with grace on the customer keeps service.
        try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true }
        try await store.advanceTime(to: date("2026-07-05T00:00:00Z"))
        var status = try #require(try await store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.state == .inGracePeriod && status.renewalInfo.gracePeriodExpiresDate == date("2026-07-17T00:00:00Z"))
        #expect(!(try await store.currentEntitlements(device: "phone")).isEmpty)
        // July 5: the billing issue is resolved; the cycle is kept.
        try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = false }
        try await store.resolveIssueForTransaction(0)
        status = try #require(try await store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.state == .subscribed)
        #expect(try test.verified(status.transaction).expiresDate == date("2026-08-01T00:00:00Z"))
        // August 10: upgrade to premium monthly, effective at once.
        try await store.advanceTime(to: date("2026-08-10T00:00:00Z"))
        let upgraded = try test.verified(try await test.buy(Shop.premiumMonthly))
        #expect(upgraded.productId == Shop.premiumMonthly && upgraded.originalTransactionId == "0")
        #expect(upgraded.expiresDate == date("2026-09-10T00:00:00Z"))
        // October 20: downgrade back to standard, effective at the November 10 renewal.
        try await store.advanceTime(to: date("2026-10-20T00:00:00Z"))
        _ = try await test.buy(Shop.standardMonthly)
        status = try #require(try await store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.renewalInfo.productId == Shop.premiumMonthly && status.renewalInfo.autoRenewProductId == Shop.standardMonthly)
        // December 15: the December 10 renewal is refunded; the subscription is revoked.
        try await store.advanceTime(to: date("2026-12-15T00:00:00Z"))
        let december = try #require(try await store.ledgerTransactions(account: "alice").last)
        #expect(december.productID == Shop.standardMonthly && december.purchaseDate == date("2026-12-10T00:00:00Z"))
        try await store.refundTransaction(december.id, reason: .refundedDueToIssue)
        try await store.advanceTime(to: date("2027-01-01T00:00:00Z"))
        status = try #require(try await store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.state == .revoked)
        #expect(try await store.currentEntitlements(device: "phone").isEmpty)

        let transactions = try await store.ledgerTransactions(account: "alice")
        // Jan 1 buy, Jul 5 recovery, Aug 1 renewal, Aug 10 upgrade, Sep 10 and Oct 10 renewals,
        // Nov 10 and Dec 10 renewals as standard after the downgrade.
        #expect(transactions.map(\.productID) == [Shop.standardMonthly, Shop.standardMonthly, Shop.standardMonthly, Shop.premiumMonthly,
                                                  Shop.premiumMonthly, Shop.premiumMonthly, Shop.standardMonthly, Shop.standardMonthly])
        #expect(transactions.map(\.reason) == [.purchase, .renewal, .renewal, .purchase, .renewal, .renewal, .renewal, .renewal])
        #expect(transactions.map(\.purchaseDate) == ["01-01", "07-05", "08-01", "08-10", "09-10", "10-10", "11-10", "12-10"].map {
            date("2026-\($0)T00:00:00Z")
        })
        #expect(transactions.allSatisfy { $0.originalID == 0 })
        #expect(transactions.map(\.isUpgraded) == [false, false, true, false, false, false, false, false])
        #expect(transactions.last?.revocation?.reason == .refundedDueToIssue)
        #expect(try await test.notificationKinds() == [
            "SUBSCRIBED/INITIAL_BUY",
            "DID_FAIL_TO_RENEW/GRACE_PERIOD",
            "DID_RENEW/BILLING_RECOVERY",
            "DID_RENEW",
            "DID_CHANGE_RENEWAL_PREF/UPGRADE",
            "DID_RENEW",
            "DID_RENEW",
            "DID_CHANGE_RENEWAL_PREF/DOWNGRADE",
            "DID_RENEW",
            "DID_RENEW",
            "REFUND",
        ])
        for notification in try await store.notifications() {
            let payload = try await test.verifier.verifyAndDecodeNotification(notification.signedPayload)
            let embedded = try await test.verifier.verifyAndDecodeEmbeddedData(of: payload)
            #expect(embedded.transaction?.originalTransactionId == "0")
            #expect(embedded.renewalInfo?.originalTransactionId == "0")
        }
    }
}
