import Foundation

/// StoreKit's rules for `Transaction.currentEntitlements`, in one place: the local App Store's
/// ledger, the entitlement backend and tests all decide with them.
///
/// A customer is entitled to: every non-renewing subscription bought and not revoked; the latest
/// non-consumable purchase of each product not revoked; and, of each auto-renewable product, the
/// latest transaction that is not revoked, not upgraded, and whose subscription is entitled now
/// (the subscription's latest period, subscribed or in its billing grace period). Consumables never.
public enum EntitlementRules {
    /// What the rules read of a transaction.
    public struct Candidate: Hashable, Sendable {
        public var productID: String
        public var type: ProductType
        public var purchaseDate: Date
        public var isRevoked: Bool
        public var isUpgraded: Bool
        /// For auto-renewable subscriptions: whether this transaction is its subscription's current,
        /// entitled period. Ignored for other kinds.
        public var subscriptionEntitled: Bool

        public init(productID: String, type: ProductType, purchaseDate: Date, isRevoked: Bool, isUpgraded: Bool,
                    subscriptionEntitled: Bool = false) {
            self.productID = productID
            self.type = type
            self.purchaseDate = purchaseDate
            self.isRevoked = isRevoked
            self.isUpgraded = isUpgraded
            self.subscriptionEntitled = subscriptionEntitled
        }
    }

    /// The items that are current entitlements, in their given order.
    ///
    /// - Parameters:
    ///   - items: An account's transactions, in ascending order of identifier (later ones win ties).
    ///   - candidate: What the rules read of each.
    public static func currentEntitlements<Item>(_ items: [Item], _ candidate: (Item) -> Candidate) -> [Item] {
        var latestByProduct: [String: (index: Int, date: Date)] = [:]
        var kept: Set<Int> = []
        for (index, item) in items.enumerated() {
            let facts = candidate(item)
            guard !facts.isRevoked else { continue }
            switch facts.type {
            case .nonRenewingSubscription:
                kept.insert(index)
            case .nonConsumable:
                latestByProduct[facts.productID] = (index, facts.purchaseDate)
            case .autoRenewableSubscription:
                guard !facts.isUpgraded, facts.subscriptionEntitled else { continue }
                if let current = latestByProduct[facts.productID], current.date > facts.purchaseDate { continue }
                latestByProduct[facts.productID] = (index, facts.purchaseDate)
            default:
                continue
            }
        }
        for entry in latestByProduct.values { kept.insert(entry.index) }
        return items.indices.filter(kept.contains).map { items[$0] }
    }
}
