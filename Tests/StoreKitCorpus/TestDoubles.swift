// Corpus: test doubles of the original API, as suites written for Apple's StoreKit make them: a
// product, a transaction and a queue subclassed with their properties overridden, so code under test
// can be driven without a store.
import StoreKit

final class StubProduct: SKProduct, @unchecked Sendable {
    private let stubIdentifier: String
    private let stubPrice: Decimal

    init(identifier: String, price: Decimal) {
        stubIdentifier = identifier
        stubPrice = price
        super.init()
    }

    override var productIdentifier: String { stubIdentifier }
    override var price: NSDecimalNumber { NSDecimalNumber(decimal: stubPrice) }
    override var priceLocale: Locale { Locale(identifier: "en_US@currency=USD") }
    override var localizedTitle: String { "Stub \(stubIdentifier)" }
    override var subscriptionPeriod: SKProductSubscriptionPeriod? { StubPeriod() }
}

final class StubPeriod: SKProductSubscriptionPeriod, @unchecked Sendable {
    override var numberOfUnits: Int { 1 }
    override var unit: SKProduct.PeriodUnit { .month }
}

final class StubTransaction: SKPaymentTransaction, @unchecked Sendable {
    private let stubState: SKPaymentTransactionState
    private let stubPayment: SKPayment

    init(productIdentifier: String, state: SKPaymentTransactionState) {
        let payment = SKMutablePayment()
        payment.productIdentifier = productIdentifier
        stubPayment = payment
        stubState = state
        super.init()
    }

    override var transactionState: SKPaymentTransactionState { stubState }
    override var payment: SKPayment { stubPayment }
    override var transactionIdentifier: String? { stubState == .purchased ? "1000" : nil }
    override var error: Error? { stubState == .failed ? SKError(.paymentCancelled) : nil }
}

final class RecordingQueue: SKPaymentQueue, @unchecked Sendable {
    private let lock = NSLock()
    private var finishedIDs: [String] = []

    var finished: [String] { lock.withLock { finishedIDs } }

    override func finishTransaction(_ transaction: SKPaymentTransaction) {
        lock.withLock { finishedIDs.append(transaction.payment.productIdentifier) }
    }
}
