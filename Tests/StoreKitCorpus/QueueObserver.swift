// Corpus: an app's original-API (StoreKit 1) observer, as apps that still support promoted in-app
// purchases keep it: it delivers and finishes purchases, accepts or defers a purchase the customer
// started on the App Store (`shouldAddStorePayment`), hears storefront changes, decides as the queue's
// delegate whether a purchase goes on in a new storefront, and shows a product's offers from
// `SKProductDiscount`. An `NSObject`, not tied to an actor, called on the main queue.
import StoreKit

final class QueueObserver: NSObject, SKPaymentTransactionObserver, SKPaymentQueueDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []
    private var deferred: [SKPayment] = []
    /// Whether a promoted purchase is bought at once (else it waits for ``buyDeferredPayments(on:)``).
    var acceptsPromotedPurchases = true
    /// Whether a purchase goes on after the customer's storefront changed.
    var continuesInNewStorefront = true
    /// Whether a waiting price-increase consent sheet shows now (else later, after onboarding).
    var showsPriceConsent = true

    /// What happened, in order.
    var log: [String] { lock.withLock { events } }

    private func note(_ event: String) {
        lock.withLock { events.append(event) }
    }

    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction]) {
        for transaction in transactions {
            switch transaction.transactionState {
            case .purchased, .restored:
                note("delivered \(transaction.payment.productIdentifier)")
                queue.finishTransaction(transaction)
            case .failed:
                let code = (transaction.error as NSError?)?.code ?? -1
                note("failed \(transaction.payment.productIdentifier) \(code)")
                queue.finishTransaction(transaction)
            case .purchasing, .deferred:
                break
            @unknown default:
                break
            }
        }
    }

    func paymentQueue(_ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct) -> Bool {
        note("promoted \(product.productIdentifier)")
        if !acceptsPromotedPurchases {
            lock.withLock { deferred.append(payment) }
        }
        return acceptsPromotedPurchases
    }

    /// Buys the promoted purchases deferred earlier (after onboarding, say).
    func buyDeferredPayments(on queue: SKPaymentQueue) {
        let payments = lock.withLock { () -> [SKPayment] in
            defer { deferred = [] }
            return deferred
        }
        for payment in payments {
            queue.add(payment)
        }
    }

    func paymentQueueDidChangeStorefront(_ queue: SKPaymentQueue) {
        note("storefront \(queue.storefront?.countryCode ?? "unknown")")
    }

    func paymentQueue(_ paymentQueue: SKPaymentQueue, shouldContinue transaction: SKPaymentTransaction,
                      in newStorefront: SKStorefront) -> Bool {
        note("continue in \(newStorefront.countryCode)? \(continuesInNewStorefront)")
        return continuesInNewStorefront
    }

    func paymentQueueShouldShowPriceConsent(_ paymentQueue: SKPaymentQueue) -> Bool {
        note("price consent shown? \(showsPriceConsent)")
        return showsPriceConsent
    }

    /// "1 month free, then $4.99 / month", from the original API's products.
    static func offerText(for product: SKProduct) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .currency
        formatter.locale = product.priceLocale
        let price = formatter.string(from: product.price) ?? product.price.stringValue
        guard let period = product.subscriptionPeriod else { return price }
        let unit = unitName(period.unit)
        let regular = "\(price) / \(period.numberOfUnits == 1 ? unit : "\(period.numberOfUnits) \(unit)s")"
        guard let intro = product.introductoryPrice else { return regular }
        let introLength = "\(intro.subscriptionPeriod.numberOfUnits * max(intro.numberOfPeriods, 1)) \(unitName(intro.subscriptionPeriod.unit))"
        switch intro.paymentMode {
        case .freeTrial: return "\(introLength) free, then \(regular)"
        case .payUpFront, .payAsYouGo: return "\(formatter.string(from: intro.price) ?? "") for \(introLength), then \(regular)"
        @unknown default: return regular
        }
    }

    private static func unitName(_ unit: SKProduct.PeriodUnit) -> String {
        switch unit {
        case .day: return "day"
        case .week: return "week"
        case .month: return "month"
        case .year: return "year"
        @unknown default: return "period"
        }
    }

    /// A payment with a promotional offer the server signed, as the original API takes it.
    static func discountedPayment(for product: SKProduct, offerID: String, keyID: String, nonce: UUID, signature: Data,
                                  timestamp: Int) -> SKPayment {
        let payment = SKMutablePayment(product: product)
        payment.paymentDiscount = SKPaymentDiscount(identifier: offerID, keyIdentifier: keyID, nonce: nonce,
                                                    signature: signature.base64EncodedString(), timestamp: NSNumber(value: timestamp))
        return payment
    }
}
