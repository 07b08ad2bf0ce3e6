import Foundation
import OpenStoreKitTesting
import StoreKit
import Testing
import TestSupport

@Suite("StoreKit code written for Apple's StoreKit compiles with `import StoreKit` and runs unchanged", .timeLimit(.minutes(10)))
@MainActor
struct TutorialTests {
    static let shop = SharedTestData.packageRoot.appendingPathComponent("Examples/Shop.storekit")
    static let pro = "com.example.shop.pro"
    static let wizard = "com.example.shop.character.wizard"
    static let gems = "com.example.shop.gems.small"

    @Test("a StoreKit 2 store made before the app connects: products, purchases, updates from another device, status")
    func storeKit2Tutorial() async throws {
        let session = try TestSession(contentsOf: Self.shop, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice", launchingFirst: { TutorialStore() }) { _, store in
            await store.requestProducts()
            #expect(store.products.map(\.id).sorted() == TutorialStore.productIDs.sorted())
            let pro = try #require(store.products.first { $0.id == Self.pro })
            let bought: StoreKit.Transaction? = try await store.purchase(pro)
            #expect(bought?.productID == Self.pro)
            #expect(try await store.isPurchased(pro))
            let gems = try #require(store.products.first { $0.id == Self.gems })
            _ = try await store.purchase(gems)
            #expect(store.gems == 10)

            // Bought on alice's tablet: the listener the store started before anything was connected hears it.
            let tablet = try await session.client(device: "tablet", account: "alice")
            _ = try await tablet.purchase(productID: Self.wizard, options: [])
            try await eventually("the tablet's purchase arriving through Transaction.updates") {
                store.purchasedIdentifiers.contains(Self.wizard) && store.lastUpdate?.productID == Self.wizard
            }

            let monthly = try #require(store.products.first { $0.id == "com.example.shop.plus.standard.monthly" })
            _ = try await store.purchase(monthly)
            #expect(store.subscriptionState == .subscribed)
            #expect(store.purchasedIdentifiers == [Self.pro, Self.wizard, "com.example.shop.plus.standard.monthly"])
        }
    }

    @Test("a StoreKit 1 helper on SKPaymentQueue.default(): products, a purchase, a cancellation told apart by its NSError code, a failure, restore")
    func storeKit1Helper() async throws {
        let session = try TestSession(contentsOf: Self.shop, bundleID: "com.example.shop")
        let bought = try await session.withDefaultClient(device: "old-phone", account: "bob") { _ in
            #expect(IAPHelper.canMakePayments())
            let helper = IAPHelper(productIds: [Self.pro, Self.wizard, "com.example.shop.retired"])
            helper.requestProducts()
            try await eventually("the products request answering") { helper.products.count == 2 }
            let pro = try #require(helper.products.first { $0.productIdentifier == Self.pro })
            helper.buyProduct(pro)
            await SKPaymentQueue.default().settle()
            #expect(helper.isProductPurchased(Self.pro))

            try await session.setSimulatedError(.generic(.userCancelled), forAPI: .purchase)
            helper.buyProduct(try #require(helper.products.first { $0.productIdentifier == Self.wizard }))
            await SKPaymentQueue.default().settle()
            #expect(helper.cancelledCount == 1)
            #expect(helper.failedCount == 0)

            try await session.setSimulatedError(.purchase(.purchaseNotAllowed), forAPI: .purchase)
            helper.buyProduct(try #require(helper.products.first { $0.productIdentifier == Self.wizard }))
            await SKPaymentQueue.default().settle()
            try await session.setSimulatedError(nil, forAPI: .purchase)
            #expect(helper.failedCount == 1)
            #expect(!helper.isProductPurchased(Self.wizard))
            SKPaymentQueue.default().remove(helper)
            SKPaymentQueue.default().stop()
            return helper.purchasedProductIdentifiers
        }
        #expect(bought == [Self.pro])

        let restored = try await session.withDefaultClient(device: "new-phone", account: "bob") { _ in
            let helper = IAPHelper(productIds: [Self.pro, Self.wizard])
            #expect(!helper.isProductPurchased(Self.pro))
            helper.restorePurchases()
            await SKPaymentQueue.default().settle()
            #expect(helper.restoreFinished)
            SKPaymentQueue.default().remove(helper)
            SKPaymentQueue.default().stop()
            return helper.purchasedProductIdentifiers
        }
        #expect(restored == [Self.pro])
    }

    @Test("a StoreKit 1 helper made before any client is set hears the client set later, on the same default queue")
    func storeKit1HelperBeforeConnecting() async throws {
        let session = try TestSession(contentsOf: Self.shop, bundleID: "com.example.shop")
        let heard = try await session.withDefaultClient(device: "early-phone", account: "carol",
                                                        launchingFirst: { (IAPHelper(productIds: [Self.pro]), SKPaymentQueue.default()) }) { _, launched in
            let (helper, earlyQueue) = launched
            #expect(SKPaymentQueue.default() === earlyQueue, "the queue handed out before connecting is the client's queue")
            let tablet = try await session.client(device: "carol-tablet", account: "carol")
            _ = try await tablet.purchase(productID: Self.pro, options: [])
            try await eventually("the tablet's purchase reaching the helper's observer") { helper.isProductPurchased(Self.pro) }
            SKPaymentQueue.default().remove(helper)
            SKPaymentQueue.default().stop()
            return helper.isProductPurchased(Self.pro)
        }
        #expect(heard)
    }

    @Test("SKError bridges to NSError as StoreKit's does", arguments: SKError.Code.allCases)
    func skErrorBridging(_ code: SKError.Code) {
        let error: Error = SKError(code)
        let bridged = error as NSError
        #expect(bridged.domain == SKErrorDomain)
        #expect(bridged.domain == "SKErrorDomain")
        #expect(bridged.code == code.rawValue)
        #expect(!bridged.localizedDescription.isEmpty)
        #expect(!bridged.localizedDescription.contains("OpenStoreKit"))
        var caught = false
        do { throw SKError(code) } catch SKError.paymentCancelled { caught = code == .paymentCancelled } catch { caught = code != .paymentCancelled }
        #expect(caught)
    }
}
