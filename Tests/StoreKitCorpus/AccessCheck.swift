// Corpus: deciding access from a transaction the way helper libraries and small apps do, comparing
// the expiration date with the device's clock (`Date()`), and reading the introductory offer through
// the pre-iOS 17.2 names (`offerType`, `offerPaymentModeStringRepresentation`) beside `offer`.
// Imports only StoreKit.
import StoreKit

enum AccessCheck {
    /// Revoked first, then expired by the device's clock, then upgraded away; otherwise active.
    static func isActive(_ transaction: Transaction) -> Bool {
        if transaction.revocationDate != nil { return false }
        if let expiration = transaction.expirationDate, expiration < Date() { return false }
        if transaction.isUpgraded { return false }
        return true
    }

    /// Whether the customer is in a free trial now.
    static func isInFreeTrial(_ transaction: Transaction) -> Bool {
        if #available(iOS 17.2, macOS 14.2, tvOS 17.2, watchOS 10.2, *) {
            return transaction.offer?.type == .introductory && transaction.offer?.paymentMode == .freeTrial
        }
        return transaction.offerType == .introductory && transaction.offerPaymentModeStringRepresentation == "FREE_TRIAL"
    }

    /// The products the customer may use now, from the current entitlements.
    static func activeProductIDs() async -> Set<String> {
        var active = Set<String>()
        for await result in Transaction.currentEntitlements {
            guard case .verified(let transaction) = result, isActive(transaction) else { continue }
            active.insert(transaction.productID)
        }
        return active
    }
}
