import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

@Suite("Products and purchases through the StoreKit-shaped client", .timeLimit(.minutes(10)))
struct ClientPurchaseTests {
    @Test("products carry StoreKit's types, prices and subscription details")
    func productsArePresented() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let products = try await phone.products(for: [Shop.gems, Shop.pro, Shop.premiumMonthly, Shop.seasonPass, "com.example.unknown"])
        #expect(Set(products.map(\.id)) == [Shop.gems, Shop.pro, Shop.premiumMonthly, Shop.seasonPass])
        let byID = Dictionary(uniqueKeysWithValues: products.map { ($0.id, $0) })
        #expect(byID[Shop.gems]?.type == .consumable)
        #expect(byID[Shop.pro]?.type == .nonConsumable)
        #expect(byID[Shop.seasonPass]?.type == .nonRenewable)
        let monthly = try #require(byID[Shop.premiumMonthly])
        #expect(monthly.type == .autoRenewable)
        let subscription = try #require(monthly.subscription)
        #expect(subscription.subscriptionGroupID == Shop.plus)
        #expect(subscription.subscriptionPeriod == .monthly)
        #expect(subscription.introductoryOffer?.paymentMode == .payAsYouGo)
        #expect(subscription.introductoryOffer?.periodCount == 3)
        #expect(monthly.displayPrice.contains(NSDecimalNumber(decimal: monthly.price).stringValue))
    }

    @Test("a purchase is verified on the device, stays unfinished until finished, and carries the app account token")
    func purchaseLifecycle() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let pro = try #require(try await phone.products(for: [Shop.pro]).first)
        let token = UUID(uuidString: "6A3E1F0C-1D2B-4C5D-9E8F-7A6B5C4D3E2F")!
        let transaction = try await pro.purchase(options: [.appAccountToken(token)]).verifiedTransaction()
        #expect(transaction.productID == Shop.pro)
        #expect(transaction.appAccountToken == token)
        #expect(transaction.ownershipType == .purchased)
        #expect(transaction.environment == .xcode)
        #expect(transaction.storefront.countryCode == "USA")
        #expect(transaction.price == pro.price)

        let unfinished = try await collect(phone.unfinishedTransactions).map { try $0.verifiedValue().id }
        #expect(unfinished == [transaction.id])
        await transaction.finish()
        #expect(try await collect(phone.unfinishedTransactions).isEmpty)
        let entitlements = try await collect(phone.currentEntitlements).map { try $0.verifiedValue().productID }
        #expect(entitlements == [Shop.pro])
    }

    @Test("consumable quantities are checked by the store", arguments: [0, 11])
    func invalidQuantity(quantity: Int) async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let gems = try #require(try await phone.products(for: [Shop.gems]).first)
        await #expect(throws: Product.PurchaseError.invalidQuantity) {
            _ = try await gems.purchase(options: [.quantity(quantity)])
        }
        let bought = try await gems.purchase(options: [.quantity(3)]).verifiedTransaction()
        #expect(bought.purchasedQuantity == 3)
    }

    @Test("a simulated purchase failure surfaces as StoreKit's error, and userCancelled as a result")
    func simulatedPurchaseFailures() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let pro = try #require(try await phone.products(for: [Shop.pro]).first)
        try await session.setSimulatedError(.purchase(.productUnavailable), forAPI: .purchase)
        await #expect(throws: Product.PurchaseError.productUnavailable) { _ = try await pro.purchase() }
        try await session.setSimulatedError(.generic(.userCancelled), forAPI: .purchase)
        guard case .userCancelled = try await pro.purchase() else { Issue.record("expected userCancelled"); return }
        try await session.setSimulatedError(nil, forAPI: .purchase)
        _ = try await pro.purchase().verifiedTransaction()
    }

    @Test("loading products fails as the session says")
    func simulatedLoadFailure() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        try await session.setSimulatedError(.generic(.networkError), forAPI: .loadProducts)
        do {
            _ = try await phone.products(for: [Shop.pro])
            Issue.record("expected a network error")
        } catch StoreKitError.networkError {
        }
    }

    @Test("Ask to Buy: pending, then the approval arrives through updates; a decline produces nothing")
    func askToBuy() async throws {
        let session = try Shop.session()
        session.askToBuyEnabled = true
        let phone = try await session.client(device: "phone")
        let products = try await phone.products(for: [Shop.pro, Shop.wizard])
        let pro = try #require(products.first { $0.id == Shop.pro })
        let wizard = try #require(products.first { $0.id == Shop.wizard })
        guard case .pending = try await pro.purchase() else { Issue.record("expected pending"); return }
        guard case .pending = try await wizard.purchase() else { Issue.record("expected pending"); return }
        let pending = await session.allTransactions().filter(\.pendingAskToBuyConfirmation)
        #expect(pending.map(\.productIdentifier) == [Shop.pro, Shop.wizard])

        try await session.declineAskToBuyTransaction(identifier: pending[1].identifier)
        try await session.approveAskToBuyTransaction(identifier: pending[0].identifier)
        let approved = try await firstElement(of: phone.transactionUpdates).verifiedValue()
        #expect(approved.productID == Shop.pro)
        let entitled = try await collect(phone.currentEntitlements).map { try $0.verifiedValue().productID }
        #expect(entitled == [Shop.pro])
    }

    @Test("a purchase on one device of an account arrives on the other through updates")
    func twoDevicesOneAccount() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone", account: "alice")
        let tablet = try await session.client(device: "tablet", account: "alice")
        let laptop = try await session.client(device: "laptop", account: "bob")
        let wizard = try #require(try await phone.products(for: [Shop.wizard]).first)
        let bought = try await wizard.purchase().verifiedTransaction()

        let arrived = try await firstElement(of: tablet.transactionUpdates).verifiedValue()
        #expect(arrived.id == bought.id)
        #expect(arrived.productID == Shop.wizard)
        // Signed for the tablet: its device verification matches the tablet, not the phone.
        #expect(arrived.deviceVerificationNonce != bought.deviceVerificationNonce)
        #expect(try await collect(laptop.currentEntitlements).isEmpty)
    }

    @Test("static calls reach the task's bound client")
    func binding() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let ids = try await phone.withCurrent {
            try await Product.products(for: [Shop.pro, Shop.gems]).map(\.id).sorted()
        }
        #expect(ids == [Shop.gems, Shop.pro])
        let deviceID = await phone.withCurrent { AppStore.deviceVerificationID }
        #expect(deviceID == phone.verificationContext.deviceVerificationID)
        let tablet = try await session.client(device: "tablet")
        let tabletID = await tablet.withCurrent { AppStore.deviceVerificationID }
        #expect(tabletID == tablet.verificationContext.deviceVerificationID)
        #expect(tabletID != deviceID)
    }

    @Test("the app transaction is verified, and sync and storefront answer for the device")
    func appTransactionSyncAndStorefront() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let appTransaction = try await phone.appTransaction().verifiedValue()
        #expect(appTransaction.bundleID == "com.example.shop")
        #expect(appTransaction.environment == .xcode)
        try await phone.sync()
        try await session.setSimulatedError(.generic(.userCancelled), forAPI: .appStoreSync)
        do {
            try await phone.sync()
            Issue.record("expected sync to fail")
        } catch StoreKitError.userCancelled {
        }
        #expect(await phone.storefront()?.countryCode == "USA")
        try await session.configureAccount("default", storefront: "FRA")
        #expect(await phone.storefront()?.countryCode == "FRA")
    }

    @Test("a refund request from the app revokes the transaction and sends it through updates")
    func refundRequest() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let pro = try #require(try await phone.products(for: [Shop.pro]).first)
        let bought = try await pro.purchase().verifiedTransaction()
        await bought.finish()
        #expect(try await bought.beginRefundRequest() == .success)
        let revoked = try await firstElement(of: phone.transactionUpdates).verifiedValue()
        #expect(revoked.id == bought.id)
        #expect(revoked.revocationDate != nil)
        await #expect(throws: Transaction.RefundRequestError.duplicateRequest) { _ = try await bought.beginRefundRequest() }
        #expect(try await collect(phone.currentEntitlements).isEmpty)
    }
}
