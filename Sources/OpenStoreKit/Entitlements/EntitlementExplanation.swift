import Foundation

/// Why a customer is, or is not, entitled to a product: which transaction, which group, which rule.
public struct EntitlementExplanation: Hashable, Sendable, CustomStringConvertible {
    /// The rule that decided.
    public enum Rule: Hashable, Sendable {
        /// A non-consumable the customer bought.
        case nonConsumablePurchased
        /// A non-consumable or subscription a family member shares.
        case familyShared
        /// A non-renewing subscription; the app decides how long it lasts from the purchase date.
        case nonRenewingPurchased
        /// An auto-renewable subscription in its paid period.
        case subscriptionActive(expires: Date?)
        /// A renewal failed but the App Store keeps the service on while it retries.
        case subscriptionInGracePeriod(until: Date?)
        /// Another product of the same group is the customer's active subscription.
        case coveredByGroup(activeProductID: String)
        /// A renewal failed and the App Store retries; no service meanwhile.
        case subscriptionInBillingRetry
        /// The subscription ended.
        case subscriptionExpired(on: Date?)
        /// The customer moved to a higher level in the group.
        case upgradedAway
        /// Refunded or revoked.
        case revoked(on: Date?, reason: Transaction.RevocationReason?)
        /// A consumable: it grants a balance, not an entitlement.
        case consumableBalance(Int)
        /// Nothing was delivered for the product.
        case neverDelivered
    }

    public let productID: String
    public let isEntitled: Bool
    public let rule: Rule
    /// The transaction the rule rests on.
    public let transactionID: UInt64?
    public let subscriptionGroupID: String?
    /// Whether the answer comes from verified subscription statuses the store sent now (`true`) or
    /// only from the journal's signed dates (`false`, when the store could not be reached).
    public let isConfirmedByStore: Bool

    public var description: String {
        var text = "\(productID): \(isEntitled ? "entitled" : "not entitled") — "
        switch rule {
        case .nonConsumablePurchased: text += "non-consumable bought"
        case .familyShared: text += "shared by a family member"
        case .nonRenewingPurchased: text += "non-renewing subscription bought"
        case .subscriptionActive(let expires): text += "subscription active" + (expires.map { " until \(Self.format($0))" } ?? "")
        case .subscriptionInGracePeriod(let until): text += "billing grace period" + (until.map { " until \(Self.format($0))" } ?? "")
        case .coveredByGroup(let active): text += "the group's active subscription is \(active)"
        case .subscriptionInBillingRetry: text += "renewal failed, billing retry"
        case .subscriptionExpired(let date): text += "subscription expired" + (date.map { " on \(Self.format($0))" } ?? "")
        case .upgradedAway: text += "upgraded to a higher level"
        case .revoked(let date, let reason):
            text += "revoked" + (date.map { " on \(Self.format($0))" } ?? "")
            if let reason { text += reason == .developerIssue ? " (refund: issue in the app)" : " (refund or revocation: other)" }
        case .consumableBalance(let balance): text += "consumable, balance \(balance)"
        case .neverDelivered: text += "never delivered"
        }
        if let transactionID { text += ", transaction \(transactionID)" }
        if let subscriptionGroupID { text += ", group \(subscriptionGroupID)" }
        if !isConfirmedByStore, subscriptionGroupID != nil { text += " (from the journal; the store was not reached)" }
        return text
    }

    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day())
    }
}
