import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

/// Records what the original API reports. Main-actor isolated with checked conformances: a callback
/// that arrived off the main queue would stop the test.
@MainActor
final class RecordingObserver: @preconcurrency SKPaymentTransactionObserver, @preconcurrency SKProductsRequestDelegate {
    var states: [(String, SKPaymentTransactionState)] = []
    var restoreFinished = 0
    var revoked: [String] = []
    var response: SKProductsResponse?

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        for transaction in transactions {
            states.append((transaction.payment.productIdentifier, transaction.transactionState))
            if transaction.transactionState != .purchasing && transaction.transactionState != .deferred {
                queue.finishTransaction(transaction)
            }
        }
    }

    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) { restoreFinished += 1 }

    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]) {
        revoked += productIdentifiers
    }

    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) { self.response = response }

    /// Waits until `condition` holds, for reports that arrive from the update listener.
    func waitUntil(_ condition: () -> Bool) async throws {
        try await eventually("the payment queue's report (so far: \(states))") { condition() }
    }
}

@Suite("The original StoreKit API on the same store", .timeLimit(.minutes(10)))
@MainActor
struct OriginalAPITests {
    @Test("a products request reports products and invalid identifiers")
    func productsRequest() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let observer = RecordingObserver()
        let request = SKProductsRequest(productIdentifiers: [Shop.pro, "com.example.nope"], client: phone)
        request.delegate = observer
        request.start()
        await request.waitUntilFinished()
        #expect(observer.response?.products.map(\.productIdentifier) == [Shop.pro])
        #expect(observer.response?.invalidProductIdentifiers == ["com.example.nope"])
    }

    @Test("prices are formatted in the store's locale and storefront currency: priceFormatStyle and SKProduct.priceLocale", arguments: [
        ("USA", "en_US", "USD"), ("ESP", "es_ES", "EUR"), ("JPN", "ja_JP", "JPY"),
    ])
    func priceLocale(_ storefront: String, _ locale: String, _ currency: String) async throws {
        let session = try Shop.session()
        session.storefront = storefront
        session.locale = Locale(identifier: locale)
        let phone = try await session.client(device: "phone")
        let product = try #require(try await phone.products(for: [Shop.pro]).first)
        #expect(product.currencyCode == currency)
        #expect(product.price.formatted(product.priceFormatStyle) == product.displayPrice)
        let observer = RecordingObserver()
        let request = SKProductsRequest(productIdentifiers: [Shop.pro], client: phone)
        request.delegate = observer
        request.start()
        await request.waitUntilFinished()
        let legacy = try #require(observer.response?.products.first)
        #expect(legacy.priceLocale.identifier.hasPrefix(locale))
        #expect(legacy.priceLocale.currency?.identifier == currency)
        #expect(legacy.price.decimalValue.formatted(.currency(code: currency).locale(legacy.priceLocale)) == product.displayPrice)
    }

    @Test("a payment goes purchasing → purchased; a cancelled one fails with paymentCancelled")
    func paymentStates() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let queue = SKPaymentQueue(client: phone)
        let observer = RecordingObserver()
        queue.add(observer)
        let request = SKProductsRequest(productIdentifiers: [Shop.wizard], client: phone)
        request.delegate = observer
        request.start()
        await request.waitUntilFinished()
        let wizard = try #require(observer.response?.products.first)
        queue.add(SKPayment(product: wizard))
        await queue.settle()
        #expect(observer.states.map(\.1) == [.purchasing, .purchased])
        #expect(try await collect(phone.unfinishedTransactions).isEmpty)

        try await session.setSimulatedError(.generic(.userCancelled), forAPI: .purchase)
        let payment = SKMutablePayment(product: wizard)
        payment.quantity = 1
        queue.add(payment)
        await queue.settle()
        #expect(observer.states.map(\.1) == [.purchasing, .purchased, .purchasing, .failed])
        queue.stop()
    }

    @Test("Ask to Buy defers; the approval arrives as purchased; restore delivers restored; refunds revoke")
    func deferredRestoreRevoke() async throws {
        let session = try Shop.session()
        session.askToBuyEnabled = true
        let phone = try await session.client(device: "phone")
        let queue = SKPaymentQueue(client: phone)
        let observer = RecordingObserver()
        queue.add(observer)
        let request = SKProductsRequest(productIdentifiers: [Shop.pro], client: phone)
        request.delegate = observer
        request.start()
        await request.waitUntilFinished()
        queue.add(SKPayment(product: try #require(observer.response?.products.first)))
        await queue.settle()
        #expect(observer.states.map(\.1) == [.purchasing, .deferred])

        let pending = try #require(await session.allTransactions().first { $0.pendingAskToBuyConfirmation })
        try await session.approveAskToBuyTransaction(identifier: pending.identifier)
        try await observer.waitUntil { observer.states.count == 3 }
        #expect(observer.states.last?.1 == .purchased)

        queue.restoreCompletedTransactions()
        await queue.settle()
        #expect(observer.restoreFinished == 1)
        #expect(observer.states.last.map { [$0.0] } == [Shop.pro])
        #expect(observer.states.last?.1 == .restored)

        try await session.refundTransaction(identifier: pending.identifier)
        try await observer.waitUntil { !observer.revoked.isEmpty }
        #expect(observer.revoked == [Shop.pro])
        queue.stop()
    }
}
