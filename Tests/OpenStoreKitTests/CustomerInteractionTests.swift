import AppStoreSimulator
import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Synchronization
import Testing
import TestSupport

/// What reaches an app besides purchases, and what the customer does in StoreKit's sheets:
/// messages, the manage-subscriptions and offer-code sheets, purchase intents, storefront changes,
/// payment restrictions, entitlement tasks and every group's statuses.
@Suite("Messages, sheets, purchase intents, storefronts and payment restrictions", .timeLimit(.minutes(10)))
struct CustomerInteractionTests {
    @Test("a failed renewal sends a billing-issue message; closed, nothing changes; with the payment method updated, it renews")
    func billingIssueMessage() async throws {
        let session = try Shop.session()
        session.shouldEnterBillingRetryOnRenewal = true
        let phone = try await session.client(device: "phone")
        var messages = phone.messages.makeAsyncIterator()
        let first = try await phone.purchase(productID: Shop.standardMonthly).verifiedTransaction()
        await first.finish()
        try await session.advance(to: try #require(first.expirationDate).addingTimeInterval(60))
        let message = try #require(await messages.next())
        #expect(message.reason == .billingIssue)

        session.shouldEnterBillingRetryOnRenewal = false
        try await message.display()
        #expect(try await phone.subscriptionStatuses(groupID: Shop.plus).map(\.state) == [.inBillingRetryPeriod], "closing the sheet changes nothing")

        try await session.queueCustomerResponse(.updatePaymentMethod, in: .billingIssue, device: "phone")
        try await message.display()
        let status = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first)
        #expect(status.state == .subscribed)
        #expect(try status.transaction.verifiedValue().id != first.id, "the recovered period is a new renewal transaction")
    }

    @Test("each price-increase request sends a message; declining in its sheet stops automatic renewal")
    func priceIncreaseMessage() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        var messages = phone.messages.makeAsyncIterator()
        let subscription = try await phone.purchase(productID: Shop.premiumMonthly).verifiedTransaction()
        try await session.requestPriceIncreaseConsentForTransaction(identifier: subscription.id)
        try await session.requestPriceIncreaseConsentForTransaction(identifier: subscription.id)
        let message = try #require(await messages.next())
        let again = try #require(await messages.next())
        #expect([message.reason, again.reason] == [.priceIncreaseConsent, .priceIncreaseConsent], "sent again on every request, as StoreKit does")

        try await session.queueCustomerResponse(.declinePriceIncrease, in: .priceIncreaseConsent, device: "phone")
        try await message.display()
        let renewal = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first).renewalInfo.verifiedValue()
        #expect(!renewal.willAutoRenew)
    }

    @Test("the offer-code sheet redeems the queued code, and the transaction arrives through updates")
    func offerCodeSheet() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        try await session.queueCustomerResponse(.redeemOfferCode(referenceName: "FRIENDS-MONTH"), in: .offerCodeRedeem, device: "phone")
        try await phone.withCurrent { try await AppStore.presentOfferCodeRedeemSheet() }
        let redeemed = try await firstElement(of: phone.transactionUpdates).verifiedValue()
        #expect(redeemed.productID == Shop.premiumYearly)
        // Stackable: an intro-eligible new customer gets the introductory offer first, the code after it.
        let renewal = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first).renewalInfo.verifiedValue()
        #expect(redeemed.offer?.type == .introductory || redeemed.offer?.type == .code)
        #expect(renewal.currentProductID == Shop.premiumYearly)

        try await phone.withCurrent { try await AppStore.presentOfferCodeRedeemSheet() }
        #expect(try await collect(phone.currentEntitlements).count == 1, "a second showing with nothing queued buys nothing")
    }

    @Test("a response that does not fit the sheet is refused when queued")
    func responseMustFitTheSheet() async throws {
        let session = try Shop.session()
        _ = try await session.client(device: "phone")
        await #expect(throws: SKTestError.self) {
            try await session.queueCustomerResponse(.cancelSubscription(productID: Shop.premiumMonthly), in: .offerCodeRedeem, device: "phone")
        }
        await #expect(throws: SKTestError.self) {
            try await session.queueCustomerResponse(.dismiss, in: .offerCodeRedeem, device: "nobody")
        }
    }

    @Test("the manage-subscriptions sheet cancels or changes the subscription as queued; a simulated failure throws")
    func manageSubscriptionsSheet() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let first = try await phone.purchase(productID: Shop.standardMonthly).verifiedTransaction()
        await first.finish()
        try await phone.withCurrent { try await AppStore.showManageSubscriptions() }
        var renewal = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first).renewalInfo.verifiedValue()
        #expect(renewal.willAutoRenew)

        try await session.queueCustomerResponse(.changeSubscription(toProductID: Shop.premiumMonthly), in: .manageSubscriptions, device: "phone")
        try await phone.withCurrent { try await AppStore.showManageSubscriptions() }
        var updates = phone.transactionUpdates.makeAsyncIterator()
        let changed = [try #require(await updates.next()).verifiedValue(), try #require(await updates.next()).verifiedValue()]
        #expect(changed.map(\.productID).sorted() == [Shop.premiumMonthly, Shop.standardMonthly],
                "an upgrade takes effect at once: the old period comes back upgraded, the new one starts, both through updates")
        #expect(changed.first { $0.productID == Shop.standardMonthly }?.isUpgraded == true)

        try await session.queueCustomerResponse(.cancelSubscription(productID: Shop.premiumMonthly), in: .manageSubscriptions, device: "phone")
        try await phone.withCurrent { try await AppStore.showManageSubscriptions() }
        renewal = try #require(try await phone.subscriptionStatuses(groupID: Shop.plus).first).renewalInfo.verifiedValue()
        #expect(!renewal.willAutoRenew)

        try await session.setSimulatedError(.generic(.networkError), forAPI: .manageSubscriptions)
        await #expect(throws: StoreKitError.self) { try await phone.withCurrent { try await AppStore.showManageSubscriptions() } }
    }

    @Test("a purchase intent reaches PurchaseIntent.intents with its product and offer, and the app can buy it")
    func purchaseIntent() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        try await session.sendPurchaseIntent(productIdentifier: Shop.pro, device: "phone")
        let intent = try await firstElement(of: phone.purchaseIntents)
        #expect(intent.id == Shop.pro)
        #expect(intent.offer == nil)
        let bought = try await intent.product.purchase().verifiedTransaction()
        #expect(bought.productID == Shop.pro)

        try await session.sendPurchaseIntent(productIdentifier: Shop.premiumMonthly, offerID: "premium.monthly.freemonth", device: "phone")
        #expect(try await firstElement(of: phone.purchaseIntents).offer?.id == "premium.monthly.freemonth")
        await #expect(throws: SKTestError.self) { try await session.sendPurchaseIntent(productIdentifier: "no.such.product", device: "phone") }
    }

    @Test("Storefront.updates hears the account's new storefront")
    func storefrontUpdates() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        #expect(await phone.storefront()?.countryCode == "USA")
        try await session.configureAccount("default", storefront: "GBR")
        let changed = try await firstElement(of: phone.storefrontUpdates)
        #expect(changed.countryCode == "GBR")
        #expect(await phone.storefront() == changed)
    }

    @Test("onStorefrontChange asks the app when the storefront changed since it last looked; false ends the purchase unbought")
    func onStorefrontChange() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        _ = await phone.storefront()
        try await session.configureAccount("default", storefront: "GBR")
        let asked = Mutex<[String]>([])
        let refuse = Product.PurchaseOption.onStorefrontChange { storefront in
            asked.withLock { $0.append(storefront.countryCode) }
            return false
        }
        let error = await #expect(throws: StoreKitError.self) { _ = try await phone.purchase(productID: Shop.pro, options: [refuse]) }
        guard case .notAvailableInStorefront? = error else { throw TestFailure("expected notAvailableInStorefront, got \(String(describing: error))") }
        #expect(asked.withLock { $0 } == ["GBR"])
        #expect(try await collect(phone.currentEntitlements).isEmpty, "nothing was bought")
        _ = try await phone.purchase(productID: Shop.pro, options: [refuse]).verifiedTransaction()
        #expect(asked.withLock { $0 } == ["GBR"], "the app has now seen GBR: no change, no question")
    }

    @Test("canMakePayments is false while the account's purchases are restricted, and purchases fail with purchaseNotAllowed")
    func canMakePayments() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        #expect(await phone.withCurrent { AppStore.canMakePayments })
        try await session.setPurchasesAllowed(false, account: "default")
        await #expect(throws: Product.PurchaseError.purchaseNotAllowed) { _ = try await phone.purchase(productID: Shop.pro) }
        #expect(await !phone.withCurrent { AppStore.canMakePayments })
        #expect(await !phone.withCurrent { SKPaymentQueue.canMakePayments() })
        let tablet = try await session.client(device: "tablet")
        #expect(await !tablet.withCurrent { AppStore.canMakePayments }, "a launch while restricted reads the restriction")

        try await session.setPurchasesAllowed(true, account: "default")
        try await phone.sync()
        #expect(await phone.withCurrent { AppStore.canMakePayments })
    }

    @Test("currentEntitlementTask reports loading, then none, then the purchase made on another device")
    func currentEntitlementTask() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let tablet = try await session.client(device: "tablet")
        var states = await phone.withCurrent { Transaction.currentEntitlementTask(for: Shop.pro) }.makeAsyncIterator()
        guard case .loading? = await states.next() else { throw TestFailure("expected loading first") }
        guard case .success(let none)? = await states.next() else { throw TestFailure("expected a loaded state") }
        #expect(none == nil)
        let bought = try await tablet.purchase(productID: Shop.pro).verifiedTransaction()
        guard case .success(let entitlement)? = await states.next() else { throw TestFailure("expected the new entitlement") }
        #expect(try entitlement?.verifiedValue().id == bought.id)
    }

    @Test("Status.all gives each group the customer subscribed in, with its statuses")
    func allStatuses() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        _ = try await phone.purchase(productID: Shop.standardMonthly).verifiedTransaction()
        _ = try await phone.purchase(productID: Shop.newsLite).verifiedTransaction()
        _ = try await phone.purchase(productID: Shop.pro).verifiedTransaction()
        var groups: [String: [Product.SubscriptionInfo.RenewalState]] = [:]
        await phone.withCurrent {
            for await (group, statuses) in Product.SubscriptionInfo.Status.all { groups[group] = statuses.map(\.state) }
        }
        #expect(groups == [Shop.plus: [.subscribed], Shop.news: [.subscribed]])
    }
}
