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
    /// The subscription's recorded status still says active (or in grace), but this, its latest
    /// period, has ended: a renewal, expiry or refund was not heard of. Not entitled; the backend
    /// asks the App Store the status at its next reconciliation.
    public var expiredUnconfirmed: Bool
    /// What the customer paid, in milliunits of ``currency`` (the transaction's `price`), if it says.
    public var price: Int64?
    public var currency: String?
    /// The storefront's three-letter country code and its numeric identifier.
    public var storefront: String?
    public var storefrontId: String?
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

    public func entitlements(customer: String) async throws(BackendError) -> [CustomerEntitlement] {
        entitlements(of: try await evaluate(customer: customer))
    }

    public func history(customer: String) async throws(BackendError) -> [CustomerHistoryEntry] {
        history(of: try await evaluate(customer: customer))
    }

    /// A customer's transactions, the latest statuses of their subscriptions, and which transactions entitle.
    struct Evaluation {
        let transactions: [BackendTransaction]
        let statuses: [String: BackendSubscriptionStatus]
        let entitled: [BackendTransaction]
        /// Latest periods whose status says active or in grace though they ended (see
        /// ``CustomerHistoryEntry/expiredUnconfirmed``), by transaction identifier.
        let expiredUnconfirmed: Set<String>

        /// The status a notification told for the transaction's subscription, when it was told at
        /// the transaction's signing or later (an older status says nothing about a newer period).
        func confirmedStatus(of transaction: BackendTransaction) -> Status? {
            Self.confirmedStatus(of: transaction, in: statuses)
        }

        static func confirmedStatus(of transaction: BackendTransaction, in statuses: [String: BackendSubscriptionStatus]) -> Status? {
            guard let status = statuses[transaction.originalTransactionID], status.signedDate >= transaction.signedDate else { return nil }
            return status.status
        }
    }

    func entitlements(of evaluation: Evaluation) -> [CustomerEntitlement] {
        evaluation.entitled.map { transaction in
            let payload = transaction.payload
            let status = evaluation.statuses[transaction.originalTransactionID]
            let reason: String
            if payload.inAppOwnershipType == .familyShared {
                reason = "familyShared"
            } else if payload.type == .autoRenewableSubscription {
                if let code = evaluation.confirmedStatus(of: transaction) {
                    reason = code == .billingGracePeriod ? "gracePeriod" : "subscribed"
                } else {
                    reason = status?.status == nil ? "notYetConfirmed" : "subscribed"
                }
            } else {
                reason = "purchased"
            }
            return CustomerEntitlement(productId: payload.productId ?? "", transactionId: transaction.transactionID,
                                       originalTransactionId: transaction.originalTransactionID, type: payload.type?.rawValue ?? "",
                                       reason: reason, expiresDate: payload.expiresDate,
                                       gracePeriodExpiresDate: status?.renewalInfo?.gracePeriodExpiresDate,
                                       willAutoRenew: status?.renewalInfo.map { $0.autoRenewStatus == .on })
        }
    }

    func history(of evaluation: Evaluation) -> [CustomerHistoryEntry] {
        let entitledIDs = Set(evaluation.entitled.map(\.transactionID))
        return evaluation.transactions.map { transaction in
            let payload = transaction.payload
            return CustomerHistoryEntry(transactionId: transaction.transactionID, originalTransactionId: transaction.originalTransactionID,
                                        productId: payload.productId ?? "", type: payload.type?.rawValue ?? "", purchaseDate: payload.purchaseDate,
                                        expiresDate: payload.expiresDate, revocationDate: payload.revocationDate,
                                        revocationReason: payload.revocationReason?.rawValue, isUpgraded: payload.isUpgraded == true,
                                        entitled: entitledIDs.contains(transaction.transactionID),
                                        expiredUnconfirmed: evaluation.expiredUnconfirmed.contains(transaction.transactionID),
                                        price: payload.price, currency: payload.currency, storefront: payload.storefront, storefrontId: payload.storefrontId)
        }
    }

    /// What the backend knows of a customer, found by their app account token (any case), their app's
    /// user id, or one of their purchases' transaction identifiers: their entitlements, every
    /// transaction, and the newest notifications about their subscriptions. A purchase no app
    /// account token or user id links to a customer is shown alone. `nil` when nothing matches.
    public func lookup(_ search: String, notificationLimit: Int = 200) async throws(BackendError) -> CustomerRecord? {
        let search = search.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !search.isEmpty else { return nil }
        var customer: String? = BackendService.customerKey(search)
        var evaluation: Evaluation?
        if search.allSatisfy(\.isASCII), search.allSatisfy(\.isNumber) {
            let purchase = try await storage.transactions(sharingOriginalOf: search)
            if let original = purchase.first?.originalTransactionID {
                let owner: String?
                if let token = purchase.lazy.compactMap(\.customerID).first { owner = token } else { owner = try await storage.linkedCustomer(originalTransactionID: original) }
                customer = owner
                if owner == nil { evaluation = try await evaluate(transactions: purchase) }
            }
        }
        if evaluation == nil, let customer { evaluation = try await evaluate(customer: customer) }
        guard let evaluation, !evaluation.transactions.isEmpty else { return nil }
        let notifications = try await storage.notifications(originalTransactionIDs: Set(evaluation.transactions.map(\.originalTransactionID)),
                                                            limit: notificationLimit)
        return CustomerRecord(customerID: customer, entitlements: entitlements(of: evaluation), history: history(of: evaluation),
                              notifications: notifications)
    }

    func evaluate(customer: String) async throws(BackendError) -> Evaluation {
        evaluate(try await storage.customerRecords(customer: customer))
    }

    func evaluate(transactions: [BackendTransaction]) async throws(BackendError) -> Evaluation {
        let statuses = try await storage.statuses(originalTransactionIDs: Set(transactions.map(\.originalTransactionID)))
        return evaluate(CustomerRecords(transactions: transactions, statuses: statuses))
    }

    /// Applies the rules to one customer's records.
    func evaluate(_ records: CustomerRecords) -> Evaluation {
        let (transactions, statuses) = (records.transactions, records.statuses)
        // A subscription's current period: its latest transaction by purchase date.
        var latest: [String: BackendTransaction] = [:]
        for transaction in transactions where transaction.payload.type == .autoRenewableSubscription {
            if let current = latest[transaction.originalTransactionID],
               (current.payload.purchaseDate ?? .distantPast, current.transactionID.count, current.transactionID)
                >= (transaction.payload.purchaseDate ?? .distantPast, transaction.transactionID.count, transaction.transactionID) { continue }
            latest[transaction.originalTransactionID] = transaction
        }
        let now = self.now()
        var expiredUnconfirmed: Set<String> = []
        let entitled = EntitlementRules.currentEntitlements(transactions) { transaction in
            let payload = transaction.payload
            var subscriptionEntitled = false
            if payload.type == .autoRenewableSubscription, latest[transaction.originalTransactionID]?.transactionID == transaction.transactionID {
                // A period entitles until it ends (a grace period until the end its renewal info
                // states), whatever the last status said: a lost notification cannot keep access
                // open, and the status then only takes access away (billing retry, expired, revoked).
                let periodEnd = payload.expiresDate ?? .distantFuture
                switch Evaluation.confirmedStatus(of: transaction, in: statuses) {
                case .active?:
                    subscriptionEntitled = periodEnd > now
                    if !subscriptionEntitled { expiredUnconfirmed.insert(transaction.transactionID) }
                case .billingGracePeriod?:
                    let graceEnd = statuses[transaction.originalTransactionID]?.renewalInfo?.gracePeriodExpiresDate ?? periodEnd
                    subscriptionEntitled = max(graceEnd, periodEnd) > now
                    if !subscriptionEntitled { expiredUnconfirmed.insert(transaction.transactionID) }
                case nil:
                    subscriptionEntitled = periodEnd > now
                default:
                    subscriptionEntitled = false
                }
            }
            return EntitlementRules.Candidate(productID: payload.productId ?? "", type: payload.type ?? .consumable,
                                              purchaseDate: payload.purchaseDate ?? .distantPast, isRevoked: payload.revocationDate != nil,
                                              isUpgraded: payload.isUpgraded == true, subscriptionEntitled: subscriptionEntitled)
        }
        return Evaluation(transactions: transactions, statuses: statuses, entitled: entitled, expiredUnconfirmed: expiredUnconfirmed)
    }
}

/// One customer as the backend knows them (``CustomerLedger/lookup(_:notificationLimit:)``).
public struct CustomerRecord: Hashable, Sendable {
    /// Their app account token (lower case) or user id; `nil` for a purchase linked to no customer.
    public var customerID: String?
    public var entitlements: [CustomerEntitlement]
    /// Every transaction, in ascending order of identifier.
    public var history: [CustomerHistoryEntry]
    /// The newest notifications about their purchases, newest first.
    public var notifications: [BackendNotification]
}

/// Why a customer is or is not entitled to a product: the answer to "I was charged but lost access".
public struct EntitlementExplanation: Hashable, Sendable, Codable {
    public var productId: String
    public var entitled: Bool
    /// The rule that decided, in words.
    public var because: String
    /// The transaction the rule looked at, if any.
    public var transactionId: String?
    /// How that transaction belongs to the customer: `appAccountToken` (the purchase carries the
    /// customer's token), `userID` (the app sent it with the customer's user id) or
    /// `originalTransaction` (it renews or shares a purchase that belongs to the customer).
    public var linkedBy: String?
}

extension CustomerLedger {
    /// How a transaction belongs to the customer (see ``EntitlementExplanation/linkedBy``).
    static func link(of transactionID: String, in evaluation: Evaluation, customer: String) -> String? {
        guard let transaction = evaluation.transactions.first(where: { $0.transactionID == transactionID }) else { return nil }
        if transaction.payload.appAccountToken?.uuidString.lowercased() == customer { return "appAccountToken" }
        if transaction.customerID == customer { return "userID" }
        return "originalTransaction"
    }

    /// Explains one product for one customer, by the same rules as ``entitlements(customer:)``.
    public func explain(customer: String, productID: String) async throws(BackendError) -> EntitlementExplanation {
        let dateStyle = Date.ISO8601FormatStyle().year().month().day()
        let evaluation = try await evaluate(customer: customer)
        if let entitlement = entitlements(of: evaluation).first(where: { $0.productId == productID }) {
            let because: String
            switch entitlement.reason {
            case "familyShared": because = "shared by a family member"
            case "gracePeriod": because = "subscribed; the last renewal failed and the billing grace period keeps access until \(entitlement.gracePeriodExpiresDate.map { $0.formatted(dateStyle) } ?? "its end")"
            case "notYetConfirmed": because = "subscribed, as the app reported; no notification has confirmed the subscription's status yet"
            case "subscribed": because = "subscribed until \(entitlement.expiresDate.map { $0.formatted(dateStyle) } ?? "?")\(entitlement.willAutoRenew == false ? ", not renewing" : "")"
            default: because = "bought"
            }
            return EntitlementExplanation(productId: productID, entitled: true, because: because, transactionId: entitlement.transactionId,
                                          linkedBy: Self.link(of: entitlement.transactionId, in: evaluation, customer: customer))
        }
        let all = history(of: evaluation)
        let history = all.filter { $0.productId == productID }
        guard let latest = history.max(by: { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) }) else {
            return EntitlementExplanation(productId: productID, entitled: false, because: "never bought by this customer", transactionId: nil)
        }
        let because: String
        if let revoked = latest.revocationDate {
            because = "refunded or revoked on \(revoked.formatted(dateStyle))\(latest.revocationReason == 1 ? " (an issue in the app)" : "")"
        } else if latest.type == ProductType.consumable.rawValue {
            because = "a consumable: delivered when bought, never an entitlement"
        } else if let moved = all.first(where: { $0.originalTransactionId == latest.originalTransactionId && $0.productId != productID
                                                  && ($0.purchaseDate ?? .distantPast) >= (latest.purchaseDate ?? .distantPast) }) {
            because = "the subscription moved to \(moved.productId) (an upgrade or a plan change)"
        } else if latest.isUpgraded {
            because = "upgraded to another plan of its group"
        } else if latest.expiredUnconfirmed {
            because = "expired on \(latest.expiresDate.map { $0.formatted(dateStyle) } ?? "?"), unconfirmed: the last status heard said active, "
                + "but no renewal was recorded since; the backend asks the App Store its status at the next reconciliation"
        } else {
            switch evaluation.statuses[latest.originalTransactionId]?.status {
            case .billingRetry?: because = "a renewal failed and the App Store is retrying the payment; access is paused until it succeeds"
            case .revoked?: because = "revoked by the App Store"
            default: because = "expired on \(latest.expiresDate.map { $0.formatted(dateStyle) } ?? "?")"
            }
        }
        return EntitlementExplanation(productId: productID, entitled: false, because: because, transactionId: latest.transactionId,
                                      linkedBy: Self.link(of: latest.transactionId, in: evaluation, customer: customer))
    }
}
