import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Synchronization
import Testing
import TestSupport

/// The headless store views show and do what StoreKit's `ProductView`, `StoreView` and
/// `SubscriptionStoreView` do.
@Suite("Store view models: ordering, eligibility, current plan, purchases through the views", .timeLimit(.minutes(10)))
struct StoreViewModelTests {
    static let plusPlans = [Shop.premiumYearly, Shop.premiumMonthly, Shop.standardMonthly, Shop.basicWeekly]

    @Test("a store view keeps the order of its identifiers, shows an unknown one as unavailable, and marks what the customer owns")
    func storeViewOrderAndOwnership() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let environment = StoreViewEnvironment(client: phone)
        let ids = [Shop.pro, "com.example.shop.retired", Shop.gems, Shop.premiumMonthly]
        var view = await StoreViewModel.load(ids: ids, environment: environment)
        #expect(view.products.map(\.id) == ids)
        #expect(view.products.map(\.state) == [.available, .unavailable, .available, .available])
        #expect(view.products[0].buttonLabel == view.products[0].priceText && view.products[0].priceText.hasPrefix("$"), "a one-time product's button shows its price")
        #expect(view.products[3].priceText == "$9.99/month")
        #expect(view.products[3].offerText == "$4.99/month for 3 months", "the introductory offer the customer is eligible for")

        await view.products[0].buy(environment: environment)
        await view.products[2].buy(environment: environment)
        view = await StoreViewModel.load(ids: ids, environment: environment)
        #expect(view.products[0].state == .owned)
        #expect(view.products[0].buttonLabel == "Purchased")
        #expect(view.products[2].state == .available, "a consumable can always be bought again")
    }

    @Test("a subscription store lists plans by service level, offers the intro only while eligible, and labels the customer's plan")
    func subscriptionStorePlans() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let environment = StoreViewEnvironment(client: phone)
        var view = await SubscriptionStoreViewModel.load(groupID: Shop.plus, productIDs: Self.plusPlans + [Shop.pro], environment: environment)
        #expect(view.plans.map(\.id) == Self.plusPlans, "level 1 first; within a level the dearer plan first")
        #expect(view.plans.allSatisfy { $0.relation == .subscribe })
        #expect(view.plans.map(\.offerText) == ["2 weeks free", "$4.99/month for 3 months", "$9.99 for 6 months", "3 days free"])
        #expect(view.plans[0].buttonLabel == "Try It Free")
        #expect(view.currentPlan == nil)

        await view.buy(try #require(view.plans.first { $0.id == Shop.standardMonthly }))
        view = await SubscriptionStoreViewModel.load(groupID: Shop.plus, productIDs: Self.plusPlans, environment: environment)
        #expect(view.plans.map(\.relation) == [.upgrade, .upgrade, .current, .downgrade])
        #expect(view.plans.map(\.buttonLabel) == ["Upgrade", "Upgrade", "Current Plan", "Downgrade"])
        #expect(view.plans.allSatisfy { $0.offer == nil }, "no intro offer once subscribed in the group")
        let current = try #require(view.currentPlan)
        #expect(current.productID == Shop.standardMonthly && current.state == .subscribed)
        // Bought at its introductory price (six months paid up front): the summary says so, and what follows.
        #expect(current.summary.hasPrefix("Introductory price ($9.99 for 6 months) until ") && current.summary.hasSuffix(", then $4.99/month"), "\(current.summary)")

        await view.buy(try #require(view.plans.last))
        view = await SubscriptionStoreViewModel.load(groupID: Shop.plus, productIDs: Self.plusPlans, environment: environment)
        #expect(view.currentPlan?.productID == Shop.standardMonthly, "a downgrade waits for the renewal")
        #expect(view.plans.last?.isScheduledNext == true)
        #expect(view.plans.last?.buttonLabel == "Starts at Renewal")
        #expect(view.currentPlan?.summary.contains("renews as Basic (Weekly)") == true, "the next plan by its name: \(view.currentPlan?.summary ?? "")")
        #expect(view.currentPlan?.summary.contains(Shop.basicWeekly) == false)
    }

    @Test("after an expiry the plans offer subscribing again, with the win-back offer the renewal info names and no intro offer")
    func expiredSubscriptionShowsWinBack() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let environment = StoreViewEnvironment(client: phone)
        let first = try await phone.purchase(productID: Shop.premiumMonthly).verifiedTransaction()
        try await session.expireSubscription(productIdentifier: Shop.premiumMonthly)
        _ = first
        let view = await SubscriptionStoreViewModel.load(groupID: Shop.plus, productIDs: Self.plusPlans, environment: environment)
        #expect(view.currentPlan?.state == .expired)
        #expect(view.currentPlan?.summary.hasPrefix("Expired on") == true)
        #expect(view.plans.allSatisfy { $0.relation == .subscribe })
        let monthly = try #require(view.plans.first { $0.id == Shop.premiumMonthly })
        #expect(monthly.offer?.type == .winBack)
        #expect(monthly.offer?.id == "premium.monthly.freemonth")
        #expect(view.plans.first { $0.id == Shop.basicWeekly }?.offer == nil, "the intro offer is spent for the group")
    }

    @Test("a billing problem shows in the current plan's state")
    func gracePeriodSummary() async throws {
        let session = try Shop.session()
        session.shouldEnterBillingRetryOnRenewal = true
        session.billingGracePeriodIsEnabled = true
        let phone = try await session.client(device: "phone")
        let bought = try await phone.purchase(productID: Shop.standardMonthly).verifiedTransaction()
        try await session.advance(to: try #require(bought.expirationDate).addingTimeInterval(60))
        let view = await SubscriptionStoreViewModel.load(groupID: Shop.plus, productIDs: Self.plusPlans, environment: StoreViewEnvironment(client: phone))
        #expect(view.currentPlan?.state == .inGracePeriod)
        #expect(view.currentPlan?.summary.hasPrefix("Billing problem: access continues until") == true)
    }

    @Test("a purchase through a view reaches Transaction.updates and the completion handler; PurchaseAction returns it instead")
    func purchasesThroughViews() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let started = Mutex<[String]>([])
        let completed = Mutex<[UInt64]>([])
        let token = UUID()
        let environment = StoreViewEnvironment(
            client: phone,
            purchaseOptions: { _ in [.appAccountToken(token)] },
            onPurchaseStart: { product in started.withLock { $0.append(product.id) } },
            onPurchaseCompletion: { _, result in
                if case .success(.success(.verified(let transaction))) = result { completed.withLock { $0.append(transaction.id) } }
            })
        var updates = phone.transactionUpdates.makeAsyncIterator()
        await ProductViewModel.load(id: Shop.gems, environment: environment).buy(environment: environment)
        let delivered = try #require(await updates.next()).verifiedValue()
        #expect(delivered.productID == Shop.gems)
        #expect(delivered.appAccountToken == token, "the environment's purchase options apply")
        #expect(started.withLock { $0 } == [Shop.gems])
        #expect(completed.withLock { $0 } == [delivered.id])

        let purchase = PurchaseAction(client: phone)
        let pro = try #require(try await phone.products(for: [Shop.pro]).first)
        let result = try await purchase(pro)
        #expect(try result.verifiedTransaction().productID == Shop.pro)
    }

    @Test("the store buttons link the file's policies (Apple's standard EULA when it has none), or the app's own")
    func policies() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let stores = await StoreViewModel.load(ids: [Shop.pro], environment: StoreViewEnvironment(client: phone))
        #expect(stores.buttons.policies.termsOfServiceURL == StorePolicies.standardEULA)
        #expect(stores.buttons.policies.privacyPolicyURL == nil)
        let own = StorePolicies(termsOfServiceURL: URL(string: "https://example.com/terms"), privacyPolicyURL: URL(string: "https://example.com/privacy"))
        let app = await StoreViewModel.load(ids: [Shop.pro], environment: StoreViewEnvironment(client: phone, policies: own))
        #expect(app.buttons.policies == own)
    }
}
