// An in-app purchase helper in the plain style of the original StoreKit API, as tutorials and older
// apps write it, with only `import StoreKit`: an `NSObject` subclass with no actor, the default
// payment queue, an `SKProductsRequest` whose delegate hears `request(_:didFailWithError:)`, and
// cancellations told from failures by the `NSError` code.
import StoreKit

final class IAPHelper: NSObject, SKProductsRequestDelegate, SKPaymentTransactionObserver {
    private let productIdentifiers: Set<String>
    private var productsRequest: SKProductsRequest?
    private(set) var products: [SKProduct] = []
    private(set) var purchasedProductIdentifiers: Set<String> = []
    private(set) var cancelledCount = 0
    private(set) var failedCount = 0
    private(set) var restoreFinished = false
    private(set) var productRequestError: Error?

    init(productIds: Set<String>) {
        productIdentifiers = productIds
        super.init()
        SKPaymentQueue.default().add(self)
    }

    func requestProducts() {
        productsRequest?.cancel()
        productsRequest = SKProductsRequest(productIdentifiers: productIdentifiers)
        productsRequest!.delegate = self
        productsRequest!.start()
    }

    func buyProduct(_ product: SKProduct) {
        let payment = SKPayment(product: product)
        SKPaymentQueue.default().add(payment)
    }

    func isProductPurchased(_ productIdentifier: String) -> Bool {
        return purchasedProductIdentifiers.contains(productIdentifier)
    }

    class func canMakePayments() -> Bool {
        return SKPaymentQueue.canMakePayments()
    }

    func restorePurchases() {
        SKPaymentQueue.default().restoreCompletedTransactions()
    }

    // MARK: - SKProductsRequestDelegate

    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) {
        products = response.products
        clearRequestAndHandler()
    }

    func request(_ request: SKRequest, didFailWithError error: Error) {
        productRequestError = error
        clearRequestAndHandler()
    }

    private func clearRequestAndHandler() {
        productsRequest = nil
    }

    // MARK: - SKPaymentTransactionObserver

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        for transaction in transactions {
            switch transaction.transactionState {
            case .purchased:
                complete(transaction: transaction)
            case .failed:
                fail(transaction: transaction)
            case .restored:
                restore(transaction: transaction)
            case .deferred:
                break
            case .purchasing:
                break
            }
        }
    }

    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {
        restoreFinished = true
    }

    private func complete(transaction: SKPaymentTransaction) {
        purchasedProductIdentifiers.insert(transaction.payment.productIdentifier)
        SKPaymentQueue.default().finishTransaction(transaction)
    }

    private func restore(transaction: SKPaymentTransaction) {
        guard let productIdentifier = transaction.original?.payment.productIdentifier else { return }
        purchasedProductIdentifiers.insert(productIdentifier)
        SKPaymentQueue.default().finishTransaction(transaction)
    }

    private func fail(transaction: SKPaymentTransaction) {
        if let transactionError = transaction.error as NSError?,
           transactionError.code != SKError.paymentCancelled.rawValue {
            failedCount += 1
        } else {
            cancelledCount += 1
        }
        SKPaymentQueue.default().finishTransaction(transaction)
    }
}
