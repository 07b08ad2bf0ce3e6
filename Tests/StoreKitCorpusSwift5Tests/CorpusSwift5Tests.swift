import Foundation
import OpenStoreKitTesting
import StoreKit
import SwiftUI
import Testing
import TestSupport

/// Drives the Swift 5 corpus (files shaped as open-source StoreKit 2 code writes each pattern, compiled
/// unchanged) through purchases, renewals, refunds and restore on the example shop. Sessions start at
/// the real time, so the corpus's `Date()` comparisons see what they would see on a device.
@Suite("The Swift 5 corpus of StoreKit code compiles unchanged and behaves", .timeLimit(.minutes(10)))
@MainActor
struct CorpusSwift5Tests {
    static let shop = ExampleShop.self

    @Test("a helper library's store class: products by price, purchases, renewals and a refund logged in words, restore")
    func purchaseHelper() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        let ids = [Self.shop.pro, Self.shop.gems, Self.shop.premiumYearly]
        try await session.withDefaultClient(device: "phone", account: "alice", launchingFirst: { PurchaseHelper(productIDs: ids) }) { client, helper in
            await helper.start()
            #expect(helper.products?.map(\.id) == [Self.shop.gems, Self.shop.pro, Self.shop.premiumYearly])
            try await eventually("both listeners listening") { client.transactionUpdateListenerCount == 1 }

            let pro = try #require(helper.products?.first { $0.id == Self.shop.pro })
            let bought = try #require(try await helper.purchase(pro))
            #expect(helper.isPurchased(productId: Self.shop.pro))
            #expect(AccessCheck.isActive(bought))

            // A yearly plan whose introductory offer is a two-week free trial: live by the device's clock.
            let yearly = try #require(helper.products?.first { $0.id == Self.shop.premiumYearly })
            let trial = try #require(try await helper.purchase(yearly))
            #expect(AccessCheck.isInFreeTrial(trial))
            #expect(StatusLog.line(for: trial) == "Auto-Renewable Subscription \(Self.shop.premiumYearly) with Introductory Offer")
            #expect(AccessCheck.isActive(trial), "a trial bought in a session started today is live by Date()")
            #expect(helper.purchasedProducts == [Self.shop.premiumYearly, Self.shop.pro])

            // The trial ends and the plan renews at its price, through Transaction.updates.
            #expect(try await session.advance(byDays: 15) >= 1)
            try await eventually("the renewal logged") { helper.log.contains("Auto-Renewable Subscription \(Self.shop.premiumYearly)") }

            // A refund from outside reaches the listener, which logs why and drops Pro.
            try await session.refundTransaction(identifier: bought.id)
            try await eventually("the refund logged") { helper.log.contains("Non-Consumable \(Self.shop.pro) refunded: Other") }
            try await eventually("Pro dropped") { !helper.purchasedProducts.contains(Self.shop.pro) }

            // Cancelled and expired: the status line says so and why.
            try await session.expireSubscription(productIdentifier: Self.shop.premiumYearly, account: "alice")
            try await eventually("the expiry logged") {
                helper.log.contains { $0.hasPrefix("\(Self.shop.premiumYearly): Expired (expired ") && $0.hasSuffix("because of Auto-Renew Disabled)") }
            }
            try await eventually("the plan dropped") { helper.purchasedProducts.isEmpty }
        }

        // Restore on a new phone: Pro was refunded, the plan expired; the gems were consumed. Nothing.
        try await session.withDefaultClient(device: "tablet", account: "alice") { _ in
            let helper = PurchaseHelper(productIDs: ids)
            await helper.restore()
            #expect(helper.purchasedProducts.isEmpty)
        }
        // Another customer restores what they own.
        try await session.withDefaultClient(device: "old-phone", account: "bob") { client in
            _ = try await client.purchase(productID: Self.shop.pro, options: [])
        }
        try await session.withDefaultClient(device: "new-phone", account: "bob") { _ in
            let helper = PurchaseHelper(productIDs: ids)
            await helper.restore()
            #expect(helper.purchasedProducts == [Self.shop.pro])
        }
    }

    @Test("paywall copy from the format styles and localized descriptions; a Foundation-only view model filled from StoreKit")
    func paywallText() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone") { _ in
            let plans = try await Product.products(for: [Self.shop.premiumYearly, Self.shop.premiumMonthly, Self.shop.standardMonthly,
                                                         Self.shop.basicWeekly])
            let yearly = try #require(plans.first { $0.id == Self.shop.premiumYearly })
            #expect(yearly.billingPeriodText == "one year")
            #expect(yearly.pricePerPeriodText == "$99.99 / year")
            #expect(yearly.introductoryOfferText == "Free Trial: two weeks, then $99.99 / year")
            let monthly = try #require(plans.first { $0.id == Self.shop.premiumMonthly })
            #expect(monthly.introductoryOfferText == "Pay As You Go: $4.99 for one month, then $9.99 / month")
            let standard = try #require(plans.first { $0.id == Self.shop.standardMonthly })
            #expect(standard.introductoryOfferText == "Pay Up Front: $9.99 for six months, then $4.99 / month")
            let start = Date(timeIntervalSince1970: 1_767_225_600)
            #expect(yearly.periodRangeText(from: start) == "one year")

            let model = PlanListModel()
            let changes = ObjectChanges(model)
            try await model.load(groupProductIDs: plans.map(\.id))
            #expect(model.rows.map(\.name) == ["Basic (Weekly)", "Standard (Monthly)", "Premium (Monthly)", "Premium (Yearly)"])
            #expect(model.rows.map(\.period) == ["one week", "one month", "one month", "one year"])
            #expect(!model.isLoading)
            #expect(changes.count == 3, "loading on, the rows, loading off")
        }
    }

    @Test("the sample's list cell buys through the store it observes and shows the badge")
    func carCell() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "carol") { _ in
            let store = PurchaseHelper(productIDs: [Self.shop.wizard])
            await store.start()
            let wizard = try #require(store.products?.first)
            let cell = CarCellModel(store: store, product: wizard)
            #expect(!cell.isPurchased)
            await cell.buy()
            #expect(cell.isPurchased)
            #expect(cell.errorTitle.isEmpty)

            // A failed purchase shows its error instead.
            try await session.setSimulatedError(.purchase(.productUnavailable), forAPI: .purchase)
            let second = CarCellModel(store: store, product: wizard)
            await second.buy()
            #expect(!second.isPurchased)
            #expect(second.errorTitle.hasPrefix("Purchase failed"))
        }
    }

    @Test("expiry compared with Date() sees live subscriptions as live in a session started today, and not in one started in the past")
    func deviceClock() async throws {
        for (startDate, live) in [(Date?.none, true), (TestSession.referenceStartDate, false)] {
            let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop", startDate: startDate)
            try await session.withDefaultClient(device: "phone") { client in
                let monthly = try #require(try await client.products(for: [Self.shop.newsLite]).first)
                guard case .success(.verified(let transaction)) = try await monthly.purchase() else {
                    Issue.record("the purchase was not verified")
                    return
                }
                #expect(AccessCheck.isActive(transaction) == live, "started at \(session.now)")
                #expect(await AccessCheck.activeProductIDs() == (live ? [Self.shop.newsLite] : []))
            }
        }
    }
}
