import Combine
import Foundation
import OpenStoreKitTesting
import StoreKit
import SwiftUI
import Testing
import TestSupport

/// The store managers most apps write (`ObservableObject` with `@Published` state, `@AppStorage`
/// flags, a buy button reading `@Environment(\.purchase)`), compiled as written for Apple's
/// frameworks and driven by a `TestSession`: purchases, refunds, renewals, restore, with the
/// `objectWillChange` events that make SwiftUI redraw.
@Suite("Store managers written for Apple's StoreKit, Combine and SwiftUI compile unchanged and behave", .timeLimit(.minutes(10)))
@MainActor
struct StoreManagerTests {
    static let shop = SharedTestData.packageRoot.appendingPathComponent("Examples/Shop.storekit")
    static let pro = "com.example.shop.pro"
    static let monthly = "com.example.shop.plus.standard.monthly"
    static let gems = "com.example.shop.gems.small"
    static let productIDs = [pro, monthly, gems]

    @Test("an ObservableObject manager: products, a purchase, a subscription, a refund and an expiry from outside, renewals, restore; each change announced")
    func observableManager() async throws {
        let session = try TestSession(contentsOf: Self.shop, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice", launchingFirst: { StoreManager(productIDs: Self.productIDs) }) { _, store in
            let changes = ObjectChanges(store)
            try await store.loadProducts()
            #expect(store.products.map(\.id).sorted() == Self.productIDs.sorted())
            #expect(changes.count == 1, "loading the products is one change")

            let pro = try #require(store.products.first { $0.id == Self.pro })
            #expect(try await store.purchase(pro))
            #expect(store.purchasedProductIDs == [Self.pro])
            #expect(changes.count == 2)

            let monthly = try #require(store.products.first { $0.id == Self.monthly })
            #expect(try await store.purchase(monthly))
            #expect(store.purchasedProductIDs == [Self.pro, Self.monthly])
            #expect(changes.count == 3)

            // A refund made outside the app reaches the listener started in init.
            let proTransaction = try #require(await session.allTransactions().first { $0.productIdentifier == Self.pro })
            try await session.refundTransaction(identifier: proTransaction.identifier)
            try await changes.wait(forAtLeast: 4)
            try await eventually("the refund taking Pro away") { store.purchasedProductIDs == [Self.monthly] }

            // Renewals arrive through the listener too, and change nothing the app shows (the plan's
            // introductory offer makes its first period six months long).
            let before = await session.allTransactions().count
            #expect(try await session.advance(byMonths: 8) >= 2)
            try await eventually("two renewals in the ledger") { await session.allTransactions().count >= before + 2 }
            await store.updatePurchasedProducts()
            #expect(store.purchasedProductIDs == [Self.monthly])
            #expect(changes.count == 4, "a renewal that changes nothing announces nothing")

            try await session.expireSubscription(productIdentifier: Self.monthly, account: "alice")
            try await changes.wait(forAtLeast: 5)
            try await eventually("the expiry taking the plan away") { store.purchasedProductIDs.isEmpty }
        }

        // A second device restores: what the account owns now (nothing but the refunded Pro and the expired plan: nothing).
        try await session.withDefaultClient(device: "tablet", account: "alice") { _ in
            let store = StoreManager(productIDs: Self.productIDs)
            let changes = ObjectChanges(store)
            try await store.restore()
            #expect(store.purchasedProductIDs.isEmpty)
            #expect(changes.count == 2, "isRestoring went up and down")
        }
        try await session.withDefaultClient(device: "old-phone", account: "bob") { client in
            _ = try await client.purchase(productID: Self.pro, options: [])
        }
        try await session.withDefaultClient(device: "new-phone", account: "bob") { _ in
            let store = StoreManager(productIDs: Self.productIDs)
            let changes = ObjectChanges(store)
            try await store.restore()
            #expect(store.purchasedProductIDs == [Self.pro])
            #expect(changes.count == 3, "isRestoring up, the restored purchase, isRestoring down")
        }
    }

    @Test("@AppStorage flags in an app group's suite: set from verified entitlements, read by another reader of the suite, cleared by a refund and an expiry, held through renewals, restored")
    func appStorageFlags() async throws {
        UserDefaults(suiteName: ProFlags.suite)?.removePersistentDomain(forName: ProFlags.suite)
        defer { UserDefaults(suiteName: ProFlags.suite)?.removePersistentDomain(forName: ProFlags.suite) }
        let session = try TestSession(contentsOf: Self.shop, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "carol") { client in
            let flags = ProFlags()
            let changes = ObjectChanges(flags)
            await flags.refresh()
            #expect(!flags.isPro)
            let bought = try await client.purchase(productID: Self.pro, options: [])
            guard case .success(.verified(let transaction)) = bought else { throw TestFailure("expected a verified purchase, got \(bought)") }
            await flags.refresh()
            #expect(flags.isPro)
            #expect(flags.$isPro.wrappedValue)
            #expect(UserDefaults(suiteName: ProFlags.suite)?.bool(forKey: "isPro") == true, "the extension reading the suite sees it")
            #expect(flags.lastVerifiedProductID == Self.pro)
            try await session.refundTransaction(identifier: transaction.id)
            await flags.refresh()
            #expect(!flags.isPro)
            #expect(UserDefaults(suiteName: ProFlags.suite)?.bool(forKey: "isPro") == false)
            #expect(changes.count == 3, "only the @Published counter announces changes; @AppStorage in a model does not")

            // A subscription: the flag holds through renewals and goes when the plan expires.
            _ = try await client.purchase(productID: Self.monthly, options: [])
            await flags.refresh()
            #expect(flags.hasPlus)
            #expect(try await session.advance(byMonths: 8) >= 2)
            await flags.refresh()
            #expect(flags.hasPlus, "renewed")
            try await session.expireSubscription(productIdentifier: Self.monthly, account: "carol")
            await flags.refresh()
            #expect(!flags.hasPlus)
            #expect(UserDefaults(suiteName: ProFlags.suite)?.bool(forKey: "hasPlus") == false)
        }
        // Restore on a new device of an account that owns Pro.
        try await session.withDefaultClient(device: "erins-phone", account: "erin") { client in
            _ = try await client.purchase(productID: Self.pro, options: [])
        }
        try await session.withDefaultClient(device: "erins-new-phone", account: "erin") { _ in
            let flags = ProFlags()
            try await flags.restore()
            #expect(flags.isPro)
        }
    }

    @Test("a buy button model reading @Environment(\\.purchase) and openURL: bought, pending under Ask to Buy, each state announced")
    func environmentPurchase() async throws {
        let session = try TestSession(contentsOf: Self.shop, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "dana") { client in
            let products = try await Product.products(for: [Self.pro, Self.gems])
            let pro = try #require(products.first { $0.id == Self.pro })
            let gems = try #require(products.first { $0.id == Self.gems })
            let model = BuyButtonModel()
            let changes = ObjectChanges(model)
            // The default environment buys through the active client.
            await model.buy(gems)
            #expect(model.state == .bought(Self.gems))
            #expect(changes.count == 2, "buying, then bought")

            // A test sets the environment around the code it drives, as a view's environment would.
            let opened = URLRecorder()
            try await session.configureAccount("dana", askToBuy: true)
            await EnvironmentValues.withValues({ values in
                values.purchase = PurchaseAction(client: client)
                values.openURL = OpenURLAction { url in opened.record(url); return .handled }
            }) {
                await model.buy(pro)
                model.manageSubscriptions()
            }
            #expect(model.state == .pending)
            #expect(opened.urls == [URL(string: "https://apps.apple.com/account/subscriptions")!])
            #expect(changes.count == 4)
            let pending = try #require(await session.allTransactions().first { $0.productIdentifier == Self.pro })
            #expect(pending.pendingAskToBuyConfirmation)
        }
    }
}

/// The URLs an `openURL` handler was given.
final class URLRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [URL] = []
    func record(_ url: URL) { lock.withLock { recorded.append(url) } }
    var urls: [URL] { lock.withLock { recorded } }
}
