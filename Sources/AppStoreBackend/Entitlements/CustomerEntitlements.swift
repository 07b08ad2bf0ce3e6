import AppStoreModels
import Foundation

/// What a customer is entitled to now, and why, by StoreKit's rules (``EntitlementRules``, the
/// same code the local App Store decides with).
public struct CustomerEntitlement: Hashable, Sendable, Codable {
    public var productId: String
    public var transactionId: String
    public var originalTransactionId: String
    public var type: String
    /// Why: `purchased`, `familyShared`, `subscribed`, `gracePeriod` (a billing problem, still entitled)
    /// or `notYetConfirmed` (a subscription known only from the app, not yet from a notification).
    public var reason: String
    public var expiresDate: Date?
    public var gracePeriodExpiresDate: Date?
    public var willAutoRenew: Bool?
}

/// A transaction the customer once had and why it no longer entitles (or does).
public struct CustomerHistoryEntry: Hashable, Sendable, Codable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var type: String
    public var purchaseDate: Date?
    public var expiresDate: Date?
    public var revocationDate: Date?
    public var revocationReason: Int32?
    public var isUpgraded: Bool
    public var entitled: Bool
}

/// Applies the rules to what the storage holds for one customer.
public struct CustomerLedger: Sendable {
    public let storage: any BackendStorage
    /// The backend's "now", for subscriptions no notification has told the status of yet.
    public let now: @Sendable () -> Date

    public init(storage: any BackendStorage, now: @escaping @Sendable () -> Date = { Date() }) {
        self.storage = storage
        self.now = now
    }

    public func entitlements(customer: String) throws(BackendError) -> [CustomerEntitlement] {
        let (transactions, statuses, entitled) = try evaluate(customer: customer)
        return entitled.map { transaction in
            let payload = transaction.payload
            let status = statuses[transaction.originalTransactionID]
            let reason: String
            if payload.inAppOwnershipType == .familyShared {
                reason = "familyShared"
            } else if payload.type == .autoRenewableSubscription {
                if let code = status?.status, status!.signedDate >= transaction.signedDate {
                    reason = code == .billingGracePeriod ? "gracePeriod" : "subscribed"
                } else {
                    reason = status?.status == nil ? "notYetConfirmed" : "subscribed"
                }
            } else {
                reason = "purchased"
            }
            _ = transactions
            return CustomerEntitlement(productId: payload.productId ?? "", transactionId: transaction.transactionID,
                                       originalTransactionId: transaction.originalTransactionID, type: payload.type?.rawValue ?? "",
                                       reason: reason, expiresDate: payload.expiresDate,
                                       gracePeriodExpiresDate: status?.renewalInfo?.gracePeriodExpiresDate,
                                       willAutoRenew: status?.renewalInfo.map { $0.autoRenewStatus == .on })
        }
    }

    public func history(customer: String) throws(BackendError) -> [CustomerHistoryEntry] {
        let (transactions, _, entitled) = try evaluate(customer: customer)
        let entitledIDs = Set(entitled.map(\.transactionID))
        return transactions.map { transaction in
            let payload = transaction.payload
            return CustomerHistoryEntry(transactionId: transaction.transactionID, originalTransactionId: transaction.originalTransactionID,
                                        productId: payload.productId ?? "", type: payload.type?.rawValue ?? "", purchaseDate: payload.purchaseDate,
                                        expiresDate: payload.expiresDate, revocationDate: payload.revocationDate,
                                        revocationReason: payload.revocationReason?.rawValue, isUpgraded: payload.isUpgraded == true,
                                        entitled: entitledIDs.contains(transaction.transactionID))
        }
    }

    private func evaluate(customer: String) throws(BackendError)
        -> ([BackendTransaction], [String: BackendSubscriptionStatus], [BackendTransaction]) {
        let transactions = try storage.transactions(customer: customer)
        let statuses = try storage.statuses(originalTransactionIDs: Set(transactions.map(\.originalTransactionID)))
        // A subscription's current period: its latest transaction by purchase date.
        var latest: [String: BackendTransaction] = [:]
        for transaction in transactions where transaction.payload.type == .autoRenewableSubscription {
            if let current = latest[transaction.originalTransactionID],
               (current.payload.purchaseDate ?? .distantPast, current.transactionID.count, current.transactionID)
                >= (transaction.payload.purchaseDate ?? .distantPast, transaction.transactionID.count, transaction.transactionID) { continue }
            latest[transaction.originalTransactionID] = transaction
        }
        let now = self.now()
        let entitled = EntitlementRules.currentEntitlements(transactions) { transaction in
            let payload = transaction.payload
            var subscriptionEntitled = false
            if payload.type == .autoRenewableSubscription, latest[transaction.originalTransactionID]?.transactionID == transaction.transactionID {
                if let status = statuses[transaction.originalTransactionID], let code = status.status, status.signedDate >= transaction.signedDate {
                    subscriptionEntitled = code == .active || code == .billingGracePeriod
                } else {
                    subscriptionEntitled = (payload.expiresDate ?? .distantPast) > now
                }
            }
            return EntitlementRules.Candidate(productID: payload.productId ?? "", type: payload.type ?? .consumable,
                                              purchaseDate: payload.purchaseDate ?? .distantPast, isRevoked: payload.revocationDate != nil,
                                              isUpgraded: payload.isUpgraded == true, subscriptionEntitled: subscriptionEntitled)
        }
        return (transactions, statuses, entitled)
    }
}
