import AppStoreModels
import Foundation

/// A transaction waiting in a device's update feed (`Transaction.updates`).
public struct LedgerUpdate: Hashable, Sendable, Codable {
    /// Why the transaction is delivered.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// Bought on another device or outside the app.
        case purchase
        /// Approved by a parent (Ask to Buy).
        case approval
        /// Completed after an interruption was resolved.
        case resolution
        /// Refunded or revoked.
        case revocation
        /// Shared by a family member.
        case familyShare
        /// A subscription renewal.
        case renewal
        /// A subscription change (upgrade, offer, expiry extension, …).
        case subscriptionChange
        /// A subscription's renewal state changed (status channel).
        case status
        /// Delivered again at launch because it is unfinished.
        case unfinished
    }

    /// Which sequence an entry belongs to.
    public enum Channel: String, Hashable, Sendable, Codable {
        /// `Transaction.updates`.
        case transactions
        /// `Product.SubscriptionInfo.Status.updates`.
        case statuses
    }

    /// The feed position, increasing across the store.
    public var sequence: Int64
    public var device: String
    public var channel: Channel = .transactions
    public var transactionID: UInt64
    public var kind: Kind
    /// The transaction signed for the device at the time of the change.
    public var signedTransaction: String
    /// For status entries: the renewal info signed for the device, the state and the group.
    public var signedRenewalInfo: String?
    public var renewalState: SubscriptionRecord.State?
    public var subscriptionGroupID: String?
    public var date: Date

    public init(sequence: Int64, device: String, transactionID: UInt64, kind: Kind, signedTransaction: String, date: Date) {
        self.sequence = sequence
        self.device = device
        self.transactionID = transactionID
        self.kind = kind
        self.signedTransaction = signedTransaction
        self.date = date
    }
}

/// An App Store Server Notification V2 in the outbox, signed when the change it describes was committed.
public struct StoredNotification: Hashable, Sendable, Codable {
    /// The outbox position, increasing across the store.
    public var sequence: Int64
    public var notificationUUID: String
    public var type: NotificationTypeV2
    public var subtype: Subtype?
    /// The transaction the notification is about, if any.
    public var transactionID: UInt64?
    /// The JWS Apple would post as `{"signedPayload": …}`.
    public var signedPayload: String
    public var date: Date

    public init(sequence: Int64, notificationUUID: String, type: NotificationTypeV2, subtype: Subtype?, transactionID: UInt64?,
                signedPayload: String, date: Date) {
        self.sequence = sequence
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.transactionID = transactionID
        self.signedPayload = signedPayload
        self.date = date
    }
}

/// The counters that make identifiers, persisted with every change that uses them.
public struct LedgerCounters: Hashable, Sendable, Codable {
    public var nextTransactionID: UInt64 = 0
    public var nextWebOrderLineItemID: UInt64 = 0
    public var nextAppTransactionID: UInt64 = 0
    public var nextUpdateSequence: Int64 = 1
    public var nextNotificationSequence: Int64 = 1

    public init(nextTransactionID: UInt64 = 0, nextWebOrderLineItemID: UInt64 = 0, nextAppTransactionID: UInt64 = 0,
                nextUpdateSequence: Int64 = 1, nextNotificationSequence: Int64 = 1) {
        self.nextTransactionID = nextTransactionID
        self.nextWebOrderLineItemID = nextWebOrderLineItemID
        self.nextAppTransactionID = nextAppTransactionID
        self.nextUpdateSequence = nextUpdateSequence
        self.nextNotificationSequence = nextNotificationSequence
    }
}
