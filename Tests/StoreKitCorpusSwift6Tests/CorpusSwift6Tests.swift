import Foundation
import OpenStoreKitTesting
import StoreKit
import SwiftUI
import Testing
import TestSupport

/// Drives the Swift 6 corpus (files shaped as StoreKit 2 code written for Swift 6 and iOS 17 writes
/// each pattern, compiled unchanged with strict concurrency) through purchases, renewals, refunds and
/// restore on the example shop.
@Suite("The Swift 6 corpus of StoreKit code compiles unchanged and behaves", .timeLimit(.minutes(10)))
@MainActor
struct CorpusSwift6Tests {
    static let shop = ExampleShop.self

    @Test("an @Observable entitlement model: a subscription from Status.all, a refund and an expiry through its listener")
    func entitlementModel() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { client in
            let model = EntitlementModel(groupID: Self.shop.plus)
            model.start()
            defer { model.stop() }
            try await eventually("the listener listening") { client.transactionUpdateListenerCount == 1 }
            await model.refresh()
            #expect(!model.hasPremium)

            let premium = try #require(try await Product.products(for: [Self.shop.premiumMonthly]).first)
            _ = try await premium.purchase()
            await model.refresh()
            #expect(model.hasPremium)
            #expect(model.ownedProductIDs == [Self.shop.premiumMonthly])

            // Renewals keep it; the listener hears them.
            #expect(try await session.advance(byMonths: 2) >= 1)
            await model.refresh()
            #expect(model.hasPremium)

            try await session.expireSubscription(productIdentifier: Self.shop.premiumMonthly, account: "alice")
            try await eventually("the expiry reaching the model") { !model.hasPremium }

            // A one-time purchase, refunded from outside.
            let pro = try #require(try await Product.products(for: [Self.shop.pro]).first)
            guard case .success(.verified(let bought)) = try await pro.purchase() else {
                Issue.record("the purchase was not verified")
                return
            }
            await model.refresh()
            #expect(model.ownedProductIDs == [Self.shop.pro])
            try await session.refundTransaction(identifier: bought.id)
            try await eventually("the refund reaching the model") { model.ownedProductIDs.isEmpty }
        }
    }

    @Test("a pass status mapped from subscription statuses by an actor, through EntitlementTaskState.map")
    func passStatus() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "bob") { _ in
            let model = PassModel(tiers: PassTiers(tiers: [Self.shop.standardMonthly: .basic, Self.shop.premiumMonthly: .premium,
                                                           Self.shop.premiumYearly: .premium]))
            #expect(model.passStatus == .notSubscribed)
            await model.update(with: .success(try await Product.SubscriptionInfo.status(for: Self.shop.plus)))
            #expect(model.passStatus == .notSubscribed)

            let standard = try #require(try await Product.products(for: [Self.shop.standardMonthly]).first)
            _ = try await standard.purchase()
            await model.update(with: .success(try await Product.SubscriptionInfo.status(for: Self.shop.plus)))
            #expect(model.passStatus == .basic)

            // Upgrading takes effect at once.
            let premium = try #require(try await Product.products(for: [Self.shop.premiumMonthly]).first)
            _ = try await premium.purchase()
            await model.update(with: .success(try await Product.SubscriptionInfo.status(for: Self.shop.plus)))
            #expect(model.passStatus == .premium)

            await model.update(with: .failure(StoreKitError.networkError(URLError(.notConnectedToInternet))))
            #expect(model.passStatus == .notSubscribed)
            await model.update(with: .loading)
            #expect(model.state.value == nil)
        }
    }

    @Test("a Swift 6 store manager importing only StoreKit: a purchase, a refund through its listener, restore on a new device")
    func proStore() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "carol", launchingFirst: { ProStore() }) { client, store in
            let changes = ObjectChanges(store)
            try await eventually("the listener listening") { client.transactionUpdateListenerCount == 1 }
            let pro = try #require(try await Product.products(for: [Self.shop.pro]).first)
            #expect(await store.buy(pro))
            #expect(store.purchasedIDs == [Self.shop.pro])
            #expect(changes.count == 1)

            let bought = try #require(await session.allTransactions().first { $0.productIdentifier == Self.shop.pro })
            try await session.refundTransaction(identifier: bought.identifier)
            try await eventually("the refund reaching the store") { store.purchasedIDs.isEmpty }

            try await session.setSimulatedError(.purchase(.purchaseNotAllowed), forAPI: .purchase)
            #expect(!(await store.buy(pro)))
            #expect(store.lastError == "purchaseNotAllowed")
            try await session.setSimulatedError(nil, forAPI: .purchase)
        }
        try await session.withDefaultClient(device: "dave-phone", account: "dave") { client in
            _ = try await client.purchase(productID: Self.shop.wizard, options: [])
        }
        try await session.withDefaultClient(device: "dave-tablet", account: "dave") { _ in
            let store = ProStore()
            try await AppStore.sync()
            await store.reload()
            #expect(store.purchasedIDs == [Self.shop.wizard])
        }
    }

    @Test("a paywall view model: a LocalizedStringKey title, columns by DynamicTypeSize, an owned store made once, a selection with animation")
    func paywallLayout() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "erin") { _ in
            let layout = PaywallLayout()
            #expect(layout.title == "Go Pro")
            #expect(layout.subtitle(count: 3) == LocalizedStringKey("3 plans"))
            #expect(layout.columns(for: .medium) == 3)
            #expect(layout.columns(for: .xxLarge) == 2)
            #expect(layout.columns(for: .accessibility2) == 1)
            #expect(DynamicTypeSize.allCases.filter(\.isAccessibilitySize).count == 5)
            #expect(layout.store === layout.store, "a state object is made once")

            let products = try await Product.products(for: [Self.shop.pro, Self.shop.wizard]).sorted { $0.price < $1.price }
            layout.select(products[0])
            #expect(layout.selection.productID == Self.shop.wizard)
            let row = PaywallRow(store: layout.store, product: products[1])
            #expect(!row.isOwned)
            #expect(await layout.store.buy(products[1]))
            #expect(row.isOwned)
            #expect(products[1].pricePerPeriodText == "$9.99")
        }
    }

    @Test("paywall text, status lines and access checks read the same in Swift 6")
    func sharedFiles() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "frank") { _ in
            let weekly = try #require(try await Product.products(for: [Self.shop.basicWeekly]).first)
            #expect(weekly.introductoryOfferText == "Free Trial: three days, then $0.99 / week")
            guard case .success(.verified(let trial)) = try await weekly.purchase() else {
                Issue.record("the purchase was not verified")
                return
            }
            #expect(AccessCheck.isInFreeTrial(trial))
            #expect(AccessCheck.isActive(trial))
            let status = try #require(try await weekly.subscription?.status.first)
            #expect(StatusLog.line(for: status) == "\(Self.shop.basicWeekly): Subscribed")
        }
    }
}
