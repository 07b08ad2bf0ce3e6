// Corpus: what helper libraries log about subscriptions, with StoreKit's `localizedDescription` on
// its enumerations (renewal state, expiration reason, revocation reason, product type, offer type).
// Shaped like the logging of helper libraries' status listeners, which guard the calls with
// `#available(iOS 15.4, *)`. Imports only StoreKit.
import StoreKit

enum StatusLog {
    /// "Premium: In Grace Period", and why a subscription expired when it did.
    static func line(for status: Product.SubscriptionInfo.Status) -> String {
        guard #available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, *) else { return "status changed" }
        var text = "\(status.transaction.unsafePayloadValue.productID): \(status.state.localizedDescription)"
        if case .verified(let info) = status.renewalInfo, let reason = info.expirationReason,
           let expired = status.transaction.unsafePayloadValue.expirationDate {
            text += " (expired \(expired.formatted(.iso8601)) because of \(reason.localizedDescription))"
        }
        return text
    }

    /// "Consumable refunded: Developer Issue".
    static func line(for transaction: Transaction) -> String {
        guard #available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, *) else { return transaction.productID }
        var text = "\(transaction.productType.localizedDescription) \(transaction.productID)"
        if transaction.revocationDate != nil {
            text += " refunded: \(transaction.revocationReason?.localizedDescription ?? "unknown")"
        }
        if let offer = transaction.offerType {
            text += " with \(offer.localizedDescription)"
        }
        return text
    }
}
