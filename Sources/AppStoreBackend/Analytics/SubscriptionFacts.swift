import AppStoreModels
import Foundation

/// What the subscription metrics need of one transaction, taken from its signed payload when it is
/// recorded (and again by a rebuild), so computing them never decodes JSON.
public struct TransactionFact: Hashable, Sendable {
    /// The offer a transaction was bought with, as the metrics tell them apart.
    public enum Offer: String, Sendable {
        /// Full price, or a promotional, offer-code or win-back price that is not free.
        case none = ""
        /// A free trial (`offerDiscountType` FREE_TRIAL), whatever kind of offer gave it.
        case freeTrial = "trial"
        /// An introductory offer with a price (pay as you go, pay up front).
        case introductoryPrice = "intro"
    }

    public var transactionID: String
    /// Its original transaction identifier: the subscription (or the one purchase) it belongs to.
    public var subscription: String
    public var signedMilliseconds: Int64
    public var productID: String
    /// The subscription group, empty for a product that is not a subscription.
    public var groupID: String
    public var currency: String
    /// In milliunits of ``currency``.
    public var price: Int64
    public var offer: Offer
    public var purchaseMilliseconds: Int64
    /// Set for auto-renewable subscriptions only.
    public var expiresMilliseconds: Int64?
    public var revokedMilliseconds: Int64?
    /// Shared by a family member: no revenue of its own, so no figure counts it.
    public var isFamilyShared: Bool
    /// An automatic renewal (`transactionReason` RENEWAL), not a purchase by the customer.
    public var isRenewal: Bool

    public init(transactionID: String, subscription: String, signedMilliseconds: Int64, productID: String, groupID: String, currency: String,
                price: Int64, offer: Offer, purchaseMilliseconds: Int64, expiresMilliseconds: Int64?, revokedMilliseconds: Int64?,
                isFamilyShared: Bool, isRenewal: Bool) {
        self.transactionID = transactionID
        self.subscription = subscription
        self.signedMilliseconds = signedMilliseconds
        self.productID = productID
        self.groupID = groupID
        self.currency = currency
        self.price = price
        self.offer = offer
        self.purchaseMilliseconds = purchaseMilliseconds
        self.expiresMilliseconds = expiresMilliseconds
        self.revokedMilliseconds = revokedMilliseconds
        self.isFamilyShared = isFamilyShared
        self.isRenewal = isRenewal
    }

    /// The facts of a verified transaction.
    public init(_ transaction: BackendTransaction) {
        let payload = transaction.payload
        let offer: Offer
        if payload.offerDiscountType == .freeTrial {
            offer = .freeTrial
        } else if payload.offerType == .introductoryOffer {
            offer = .introductoryPrice
        } else {
            offer = .none
        }
        let isSubscription = payload.type == .autoRenewableSubscription
        self.init(transactionID: transaction.transactionID, subscription: transaction.originalTransactionID,
                  signedMilliseconds: AppStoreJSON.milliseconds(from: transaction.signedDate), productID: payload.productId ?? "",
                  groupID: isSubscription ? payload.subscriptionGroupIdentifier ?? "" : "", currency: payload.currency ?? "",
                  price: payload.price ?? 0, offer: offer,
                  purchaseMilliseconds: payload.purchaseDate.map(AppStoreJSON.milliseconds(from:)) ?? 0,
                  expiresMilliseconds: isSubscription ? payload.expiresDate.map(AppStoreJSON.milliseconds(from:)) : nil,
                  revokedMilliseconds: payload.revocationDate.map(AppStoreJSON.milliseconds(from:)),
                  isFamilyShared: payload.inAppOwnershipType == .familyShared, isRenewal: payload.transactionReason == .renewal)
    }

    /// Whether this view of the transaction replaces `stored`, as the backend's rows are replaced:
    /// when signed later, or at the same millisecond when it is revoked or `stored` is not (a refund
    /// and another notification about the transaction signed at one instant end revoked whichever
    /// arrives first).
    public func supersedes(_ stored: TransactionFact) -> Bool {
        signedMilliseconds > stored.signedMilliseconds
            || (signedMilliseconds == stored.signedMilliseconds && (revokedMilliseconds != nil || stored.revokedMilliseconds == nil))
    }

    /// The order of a subscription's transactions: by purchase, then by identifier.
    static func inPurchaseOrder(_ lhs: TransactionFact, _ rhs: TransactionFact) -> Bool {
        (lhs.purchaseMilliseconds, lhs.transactionID.count, lhs.transactionID) < (rhs.purchaseMilliseconds, rhs.transactionID.count, rhs.transactionID)
    }
}

/// What the subscription metrics need of one recorded notification.
public struct NotificationFact: Hashable, Sendable {
    public var notificationUUID: String
    public var type: String
    public var subtype: String?
    /// When it was signed: the day its event is counted on.
    public var signedMilliseconds: Int64
    public var transactionID: String?
    /// The end of the billing grace period its renewal info told (a `DID_FAIL_TO_RENEW` in grace).
    public var graceExpiresMilliseconds: Int64?
    /// The expiry of its transaction as it told it (see ``BackendNotification/transactionExpiresDate``).
    public var transactionExpiresMilliseconds: Int64?
    /// The revocation date its transaction carried (a `REFUND`'s), which a reversal takes off the stored transaction.
    public var transactionRevokedMilliseconds: Int64?

    public init(notificationUUID: String, type: String, subtype: String?, signedMilliseconds: Int64, transactionID: String?,
                graceExpiresMilliseconds: Int64?, transactionExpiresMilliseconds: Int64? = nil, transactionRevokedMilliseconds: Int64? = nil) {
        self.transactionRevokedMilliseconds = transactionRevokedMilliseconds
        self.transactionExpiresMilliseconds = transactionExpiresMilliseconds
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.signedMilliseconds = signedMilliseconds
        self.transactionID = transactionID
        self.graceExpiresMilliseconds = graceExpiresMilliseconds
    }
}
