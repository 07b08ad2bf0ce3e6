import Foundation
import OpenStoreKit

/// A store written on the original StoreKit API in Apple's plain style: an `NSObject` helper (no
/// actor) that is the products request's delegate and the default payment queue's observer, keeps
/// purchased product identifiers on the device, tells cancellations from failures by their
/// `NSError` code, and restores. StoreKit calls it on the main queue.
final class LegacyStore: NSObject, SKProductsRequestDelegate, SKPaymentTransactionObserver {
    private(set) var products: [SKProduct] = []
    private(set) var purchasedIDs: Set<String>
    private(set) var failures: [String] = []
    private(set) var cancellations = 0
    private(set) var restoreCompleted = false
    private let purchasesFile: URL
    let queue: SKPaymentQueue
    private var productsRequest: SKProductsRequest?

    init(purchasesFile: URL, queue: SKPaymentQueue = .default()) {
        self.purchasesFile = purchasesFile
        self.queue = queue
        let saved = (try? JSONDecoder().decode([String].self, from: Data(contentsOf: purchasesFile))) ?? []
        self.purchasedIDs = Set(saved)
        super.init()
        queue.add(self)
    }

    func requestProducts(_ identifiers: Set<String>) async {
        let request = SKProductsRequest(productIdentifiers: identifiers)
        request.delegate = self
        productsRequest = request
        request.start()
        await request.waitUntilFinished()
    }

    func buy(_ productID: String) {
        guard let product = products.first(where: { $0.productIdentifier == productID }) else { return }
        queue.add(SKPayment(product: product))
    }

    func restore() {
        queue.restoreCompletedTransactions()
    }

    // MARK: SKProductsRequestDelegate

    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) {
        products = response.products
    }

    func request(_ request: SKRequest, didFailWithError error: any Error) {
        failures.append("products: \(error.localizedDescription)")
    }

    // MARK: SKPaymentTransactionObserver

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        for transaction in transactions {
            switch transaction.transactionState {
            case .purchased, .restored:
                purchasedIDs.insert(transaction.payment.productIdentifier)
                save()
                queue.finishTransaction(transaction)
            case .failed:
                if let error = transaction.error as NSError?, error.domain == SKErrorDomain, error.code == SKError.paymentCancelled.rawValue {
                    cancellations += 1
                } else {
                    failures.append("\(transaction.payment.productIdentifier): \(transaction.error?.localizedDescription ?? "unknown")")
                }
                queue.finishTransaction(transaction)
            case .purchasing, .deferred:
                break
            }
        }
    }

    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {
        restoreCompleted = true
    }

    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]) {
        purchasedIDs.subtract(productIdentifiers)
        save()
    }

    private func save() {
        try? JSONEncoder().encode(purchasedIDs.sorted()).write(to: purchasesFile, options: .atomic)
    }
}
