import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

typealias Shop = ExampleShop

let day: TimeInterval = 86_400

func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

@Suite(.timeLimit(.minutes(10)))
struct SubscriptionLifecycleTests {
    @Test("a subscription starts with SUBSCRIBED INITIAL_BUY, a calendar-month period and signed renewal info")
    func initialBuy() async throws {
        let test = try TestStore()
        let signed = try await test.buy(Shop.newsLite)
        let payload = try test.verified(signed)
        #expect(payload.type == .autoRenewableSubscription)
        #expect(payload.subscriptionGroupIdentifier == Shop.news)
        #expect(payload.expiresDate == date("2026-02-01T00:00:00Z"))
        #expect(payload.webOrderLineItemId == "0")
        #expect(payload.offerType == nil)
        #expect(payload.price == 990)
        let notifications = try await test.store.notifications()
        #expect(notifications.map(\.type) == [.subscribed])
        #expect(notifications.first?.subtype == .initialBuy)
        let notification = try await test.verifier.verifyAndDecodeNotification(notifications[0].signedPayload)
        #expect(notification.data?.status == .active)
        let renewal = try await test.verifier.verifyAndDecodeRenewalInfo(try #require(notification.data?.signedRenewalInfo))
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.autoRenewProductId == Shop.newsLite)
        #expect(renewal.renewalDate == date("2026-02-01T00:00:00Z"))
        #expect(renewal.originalTransactionId == "0")
        #expect(renewal.renewalPrice == 990 && renewal.currency == "USD")
        let statuses = try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone")
        #expect(statuses.map(\.state) == [.subscribed])
        #expect(TestStore.ids(try await test.store.currentEntitlements(device: "phone")) == [0])
    }

    @Test("advancing a year of a monthly plan renews it twelve times, in order, with the same original ID")
    func yearOfRenewals() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        let played = try await test.store.advanceTime(by: 365 * day)
        #expect(played == 12)
        let transactions = try await test.store.ledgerTransactions(account: "alice")
        #expect(transactions.count == 13)
        #expect(transactions.allSatisfy { $0.originalID == 0 })
        #expect(transactions.dropFirst().allSatisfy { $0.reason == .renewal })
        #expect(Set(transactions.compactMap(\.webOrderLineItemID)).count == 13)
        let expirations = transactions.compactMap(\.expirationDate)
        #expect(expirations == expirations.sorted())
        #expect(transactions.last?.purchaseDate == date("2027-01-01T00:00:00Z"))
        #expect(transactions.last?.expirationDate == date("2027-02-01T00:00:00Z"))
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY"] + Array(repeating: "DID_RENEW", count: 12))
        let entitlements = try await test.store.currentEntitlements(device: "phone")
        #expect(TestStore.ids(entitlements) == [12])
        let renewal = try test.verified(entitlements[0])
        #expect(renewal.transactionReason == .renewal && renewal.originalTransactionId == "0")
        #expect(try await test.store.takeUpdates(device: "phone").filter { $0.kind == .renewal }.count == 12)
    }

    @Test("a subscription bought on January 31 renews on February 28 and March 31")
    func monthEnd() async throws {
        let test = try TestStore()
        test.clock.set(to: date("2026-01-31T12:00:00Z"))
        _ = try await test.buy(Shop.newsLite)
        try await test.store.advanceTime(to: date("2026-04-01T00:00:00Z"))
        let expirations = try await test.store.ledgerTransactions(account: "alice").compactMap(\.expirationDate)
        #expect(expirations == [date("2026-02-28T12:00:00Z"), date("2026-03-31T12:00:00Z"), date("2026-04-30T12:00:00Z")])
    }

    @Test("turning automatic renewal off expires the subscription at the end of the period (VOLUNTARY)")
    func voluntaryExpiry() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.setAutoRenew(originalTransactionID: 0, enabled: false)
        try await test.store.advanceTime(by: 40 * day)
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY"])
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.state == .expired)
        #expect(status.renewalInfo.expirationIntent == .customerCancelled)
        #expect(status.renewalInfo.autoRenewStatus == .off)
        #expect(try await test.store.currentEntitlements(device: "phone").isEmpty)
    }

    @Test("billing retry: not entitled, recovered by resolving with a new period from now")
    func billingRetryRecovery() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true }
        try await test.store.advanceTime(by: 32 * day)
        var status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.state == .inBillingRetryPeriod)
        #expect(status.renewalInfo.isInBillingRetryPeriod == true)
        #expect(try await test.store.currentEntitlements(device: "phone").isEmpty)
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = false }
        try await test.store.resolveIssueForTransaction(0)
        status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.state == .subscribed)
        let recovered = try test.verified(status.transaction)
        #expect(recovered.purchaseDate == date("2026-02-02T00:00:00Z"))
        #expect(recovered.expiresDate == date("2026-03-02T00:00:00Z"))
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "DID_FAIL_TO_RENEW", "DID_RENEW/BILLING_RECOVERY"])
    }

    @Test("billing retry that runs out expires the subscription with a billing error")
    func billingRetryRunsOut() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true }
        try await test.store.advanceTime(by: 120 * day)
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "DID_FAIL_TO_RENEW", "EXPIRED/BILLING_RETRY"])
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.state == .expired)
        #expect(status.renewalInfo.expirationIntent == .billingError)
        await #expect(throws: AppStoreError.self) { try await test.store.resolveIssueForTransaction(0) }
    }

    @Test("turning renewal off while billing is retried ends the retries now, in billing retry and in a grace period: EXPIRED VOLUNTARY, nothing left to resolve",
          arguments: [false, true])
    func cancelledDuringBillingRetry(grace: Bool) async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = grace }
        try await test.store.advanceTime(by: 32 * day)
        let failing = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(failing.state == (grace ? .inGracePeriod : .inBillingRetryPeriod))
        try await test.store.setAutoRenew(originalTransactionID: 0, enabled: false)
        let kinds = try await test.notificationKinds()
        #expect(Array(kinds.suffix(2)) == ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY"], "\(kinds)")
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.state == .expired && status.renewalInfo.expirationIntent == .customerCancelled)
        #expect(status.renewalInfo.isInBillingRetryPeriod != true && status.renewalInfo.gracePeriodExpiresDate == nil)
        #expect(try await test.store.currentEntitlements(device: "phone").isEmpty, "a grace period ends with the retries")
        // No retry is left to run out, and no billing issue to resolve.
        try await test.store.advanceTime(by: 90 * day)
        #expect(try await test.notificationKinds() == kinds)
        await #expect(throws: AppStoreError.self) { try await test.store.resolveIssueForTransaction(0) }
    }

    @Test("grace period: entitled until it ends, then billing retry; recovery in grace keeps the cycle")
    func gracePeriod() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true }
        try await test.store.advanceTime(by: 35 * day)
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.state == .inGracePeriod)
        #expect(status.renewalInfo.gracePeriodExpiresDate == date("2026-02-17T00:00:00Z"))
        #expect(TestStore.ids(try await test.store.currentEntitlements(device: "phone")) == [0])
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = false }
        try await test.store.resolveIssueForTransaction(0)
        let renewed = try test.verified(try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first).transaction)
        #expect(renewed.expiresDate == date("2026-03-01T00:00:00Z"))
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "DID_FAIL_TO_RENEW/GRACE_PERIOD", "DID_RENEW/BILLING_RECOVERY"])

        let lapsing = try TestStore()
        _ = try await lapsing.buy(Shop.newsLite)
        try await lapsing.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true }
        try await lapsing.store.advanceTime(by: 50 * day)
        #expect(try await lapsing.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "DID_FAIL_TO_RENEW/GRACE_PERIOD", "GRACE_PERIOD_EXPIRED"])
        #expect(try await lapsing.store.currentEntitlements(device: "phone").isEmpty)
    }

    @Test("a refund of the current period revokes the subscription")
    func refundRevokes() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.refundTransaction(0)
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.state == .revoked)
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "REFUND"])
        let refund = try await test.verifier.verifyAndDecodeNotification(try #require(try await test.store.notifications().last).signedPayload)
        #expect(refund.data?.status == .revoked)
        try await test.store.advanceTime(by: 60 * day)
        #expect(try await test.store.ledgerTransactions().count == 1)
    }
}

@Suite(.timeLimit(.minutes(10)))
struct LevelChangeTests {
    @Test("an upgrade takes effect at once and marks the old transaction upgraded")
    func upgrade() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.standardMonthly)
        test.clock.set(to: TestStore.start.addingTimeInterval(10 * day))
        let upgraded = try await test.buy(Shop.premiumMonthly)
        #expect(upgraded.transaction.productID == Shop.premiumMonthly)
        #expect(upgraded.transaction.originalID == 0)
        #expect(upgraded.transaction.purchaseDate == TestStore.start.addingTimeInterval(10 * day))
        #expect(try await test.store.ledgerTransaction(0)?.isUpgraded == true)
        #expect(try await test.store.currentEntitlements(device: "phone").map(\.transaction.productID) == [Shop.premiumMonthly])
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/UPGRADE"])
        let old = try #require(try await test.store.takeUpdates(device: "phone").first { $0.transactionID == 0 })
        #expect(try await test.verifier.verifyAndDecodeTransaction(old.signedTransaction).isUpgraded == true)
    }

    @Test("under Ask to Buy a plan change waits for approval: an approved upgrade happens then, a declined one never (docs/ask-to-buy.md)")
    func upgradeAsksToBuy() async throws {
        let test = try TestStore()
        try await test.store.addDevice("ipad", account: "kid")
        let monthly = try await test.buy(Shop.standardMonthly, account: "kid", device: "ipad")
        try await test.store.configureAccount("kid", askToBuy: true)
        test.clock.set(to: TestStore.start.addingTimeInterval(5 * day))
        let asked = try await test.store.purchase(PurchaseRequest(productID: Shop.premiumMonthly, account: "kid", device: "ipad"))
        guard case .pending(let request, .askToBuy) = asked else { throw TestFailure("expected pending, got \(asked)") }
        // Nothing changed: the monthly plan is still the entitlement, renewing as before.
        #expect(try await test.store.currentEntitlements(device: "ipad").map(\.transaction.productID) == [Shop.standardMonthly])
        #expect(try await test.store.ledgerTransaction(monthly.transaction.id)?.isUpgraded == false)
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY"])
        let waiting = try await test.store.allTestTransactions().first { $0.identifier == request }
        #expect(waiting?.pendingAskToBuyConfirmation == true)

        test.clock.set(to: TestStore.start.addingTimeInterval(7 * day))
        try await test.store.approveAskToBuyTransaction(request)
        let upgraded = try #require(try await test.store.ledgerTransaction(request))
        #expect(upgraded.productID == Shop.premiumMonthly && upgraded.isPurchased)
        #expect(upgraded.originalID == monthly.transaction.originalID, "the same subscription")
        #expect(upgraded.purchaseDate == TestStore.start.addingTimeInterval(7 * day), "the change happens when approved")
        #expect(try await test.store.ledgerTransaction(monthly.transaction.id)?.isUpgraded == true)
        #expect(try await test.store.currentEntitlements(device: "ipad").map(\.transaction.productID) == [Shop.premiumMonthly])
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/UPGRADE"])
        #expect(try await test.store.takeUpdates(device: "ipad").contains { $0.transactionID == request && $0.kind == .approval })

        // A declined change leaves the plan as it is.
        let again = try await test.store.purchase(PurchaseRequest(productID: Shop.standardMonthly, account: "kid", device: "ipad"))
        guard case .pending(let declined, .askToBuy) = again else { throw TestFailure("expected pending, got \(again)") }
        try await test.store.declineAskToBuyTransaction(declined)
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "ipad").first)
        #expect(status.renewalInfo.autoRenewProductId == Shop.premiumMonthly)
        #expect(status.transaction.transaction.productID == Shop.premiumMonthly)
    }

    @Test("under Ask to Buy an approved downgrade changes what renews next; the request leaves the ledger")
    func downgradeAsksToBuy() async throws {
        let test = try TestStore()
        try await test.store.addDevice("ipad", account: "kid")
        _ = try await test.buy(Shop.premiumMonthly, account: "kid", device: "ipad")
        try await test.store.configureAccount("kid", askToBuy: true)
        let asked = try await test.store.purchase(PurchaseRequest(productID: Shop.standardMonthly, account: "kid", device: "ipad"))
        guard case .pending(let request, .askToBuy) = asked else { throw TestFailure("expected pending, got \(asked)") }
        var status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "ipad").first)
        #expect(status.renewalInfo.autoRenewProductId == Shop.premiumMonthly, "nothing changes before approval")
        try await test.store.approveAskToBuyTransaction(request)
        status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "ipad").first)
        #expect(status.renewalInfo.autoRenewProductId == Shop.standardMonthly)
        #expect(status.transaction.transaction.productID == Shop.premiumMonthly)
        #expect(try await test.store.ledgerTransaction(request) == nil)
        #expect(try await test.notificationKinds().last == "DID_CHANGE_RENEWAL_PREF/DOWNGRADE")
        try await test.store.advanceTime(by: 31 * day)
        status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "ipad").first)
        #expect(status.transaction.transaction.productID == Shop.standardMonthly, "renewed into the approved plan, with no approval of its own")
    }

    @Test("a downgrade changes the renewal product now and the product at the next renewal")
    func downgrade() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.premiumMonthly, offer: nil)
        try await test.store.advanceTime(by: 95 * day)
        let current = try await test.buy(Shop.standardMonthly)
        #expect(current.transaction.productID == Shop.premiumMonthly)
        var status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.renewalInfo.autoRenewProductId == Shop.standardMonthly)
        #expect(status.renewalInfo.productId == Shop.premiumMonthly)
        try await test.store.advanceTime(by: 31 * day)
        status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.transaction.transaction.productID == Shop.standardMonthly)
        #expect(try await test.notificationKinds().suffix(2) == ["DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_RENEW"])
    }

    @Test("a crossgrade to another period waits for renewal; buying the current product back cancels a pending change")
    func crossgrade() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.premiumMonthly)
        _ = try await test.buy(Shop.premiumYearly)
        var status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.renewalInfo.autoRenewProductId == Shop.premiumYearly)
        _ = try await test.buy(Shop.premiumMonthly)
        status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.renewalInfo.autoRenewProductId == Shop.premiumMonthly)
        #expect(try await test.notificationKinds() == ["SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_CHANGE_RENEWAL_PREF"])
    }

    @Test("two groups resolve independently and their entitlements merge")
    func twoGroups() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.basicWeekly)
        _ = try await test.buy(Shop.newsPlus)
        try await test.store.setAutoRenew(originalTransactionID: 0, enabled: false)
        #expect(Set(try await test.store.currentEntitlements(device: "phone").map(\.transaction.productID)) == [Shop.basicWeekly, Shop.newsPlus])
        try await test.store.advanceTime(by: 7 * day)
        #expect(try await test.store.currentEntitlements(device: "phone").map(\.transaction.productID) == [Shop.newsPlus])
        #expect(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first?.state == .expired)
        #expect(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first?.state == .subscribed)
    }
}

@Suite(.timeLimit(.minutes(10)))
struct ProductAvailabilityTests {
    @Test("a product taken off sale cannot be bought and its subscriptions expire at renewal")
    func offSale() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.setProductAvailable(Shop.newsLite, false)
        await #expect(throws: AppStoreError.purchase(.productUnavailable, "com.example.shop.news.lite is not for sale")) {
            try await test.buy(Shop.newsLite, account: "bob", device: "bob-phone")
        }
        try await test.store.advanceTime(by: 32 * day)
        #expect(try await test.notificationKinds().last == "EXPIRED/PRODUCT_NOT_FOR_SALE")
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.renewalInfo.expirationIntent == .productNotAvailable)
        try await test.store.setProductAvailable(Shop.newsLite, true)
        _ = try await test.buy(Shop.newsLite, account: "bob", device: "bob-phone")
    }
}
