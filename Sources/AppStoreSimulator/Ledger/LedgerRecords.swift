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
        /// A message for the customer (messages channel).
        case message
        /// A purchase the customer began on the App Store (purchase intents channel).
        case purchaseIntent
        /// The account's storefront changed (storefronts channel).
        case storefrontChange
    }

    /// Why StoreKit shows the customer a message (`Message.Reason`).
    public enum MessageReason: String, Hashable, Sendable, Codable, CaseIterable {
        /// A subscription renewal could not be billed: the customer should update the payment method.
        case billingIssue
        /// A price increase needs the customer's consent.
        case priceIncreaseConsent
        /// An expired subscriber may come back with a win-back offer.
        case winBackOffer
        case generic
    }

    /// What an entry that is not a transaction carries: a message's reason, a purchase intent's
    /// product and offer, or the new storefront.
    public struct Detail: Hashable, Sendable, Codable {
        public var messageReason: MessageReason?
        public var productID: String?
        public var offerID: String?
        /// The storefront's three-letter country code.
        public var storefront: String?

        public init(messageReason: MessageReason? = nil, productID: String? = nil, offerID: String? = nil, storefront: String? = nil) {
            self.messageReason = messageReason
            self.productID = productID
            self.offerID = offerID
            self.storefront = storefront
        }
    }

    /// Which sequence an entry belongs to.
    public enum Channel: String, Hashable, Sendable, Codable {
        /// `Transaction.updates`.
        case transactions
        /// `Product.SubscriptionInfo.Status.updates`.
        case statuses
        /// `Message.messages`.
        case messages
        /// `PurchaseIntent.intents`.
        case purchaseIntents
        /// `Storefront.updates`.
        case storefronts
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
    /// For messages, purchase intents and storefront changes: what they carry.
    public var detail: Detail?
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

/// An App Store Server Notification V2 from the outbox, signed as it is read.
///
/// The ledger keeps each notification's content (``NotificationRecord``) in the commit of the change
/// it describes; the store signs it when the outbox is read, with the signed date of that commit.
/// Reading twice gives the same payload under two valid signatures (ECDSA signatures are randomized).
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
    /// Its delivery to the store's notification URL.
    public var delivery = NotificationDelivery(nextAttemptDate: nil)

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

/// The delivery state of a notification: its attempts so far and when the next one is due
/// (`nil` when delivered, given up, or never to be sent because no URL was set).
public struct NotificationDelivery: Hashable, Sendable, Codable {
    /// One POST of the notification to the store's notification URL.
    public struct Attempt: Hashable, Sendable, Codable {
        public var date: Date
        /// Apple's `sendAttemptResult`: `SUCCESS`, `NO_RESPONSE`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, …
        public var result: String

        public init(date: Date, result: String) {
            self.date = date
            self.result = result
        }
    }

    public var attempts: [Attempt]
    /// When the next attempt is due on the store's clock (Apple's schedule, counted from each attempt).
    public var nextAttemptDate: Date?
    /// Until when a sender holds the notification to post it, in real time (not the store's clock): a
    /// sender that dies leaves it to another within ``SimulatedAppStore/deliveryLease``, however the
    /// store's clock moves or stands still.
    public var claimedUntil: Date?

    public init(attempts: [Attempt] = [], nextAttemptDate: Date?, claimedUntil: Date? = nil) {
        self.attempts = attempts
        self.nextAttemptDate = nextAttemptDate
        self.claimedUntil = claimedUntil
    }

    /// Whether the App Store stopped trying: every attempt it makes failed (six in production, one in Sandbox).
    public var isGivenUp: Bool { nextAttemptDate == nil && !attempts.isEmpty && !isDelivered }

    /// Whether an attempt succeeded.
    public var isDelivered: Bool { attempts.contains { $0.result == "SUCCESS" } }

    /// The attempts as the App Store Server API reports them (`sendAttempts`).
    public var sendAttempts: [SendAttemptItem] {
        attempts.map { SendAttemptItem(attemptDate: AppStoreJSON.milliseconds(from: $0.date), sendAttemptResult: $0.result) }
    }
}

/// A notification as the ledger keeps it: everything Apple would post, before signing.
public struct NotificationRecord: Hashable, Sendable {
    /// The outbox position, increasing across the store.
    public var sequence: Int64
    public var notificationUUID: String
    public var type: NotificationTypeV2
    public var subtype: Subtype?
    /// The transaction the notification is about, if any.
    public var transactionID: UInt64?
    public var date: Date
    /// The notification payload without `data.signedTransactionInfo`.
    public var payload: ResponseBodyV2DecodedPayload
    /// The transaction as the notification carries it (server form, signed on read into
    /// `data.signedTransactionInfo`), frozen as it was when the change was committed.
    public var transaction: JWSTransactionDecodedPayload?
    /// The renewal info as the notification carries it (signed on read into `data.signedRenewalInfo`),
    /// frozen as it was when the change was committed. Records written before this field existed
    /// carry their renewal info already signed in the payload.
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    /// Its delivery to the store's notification URL.
    public var delivery = NotificationDelivery(nextAttemptDate: nil)

    public init(sequence: Int64, notificationUUID: String, type: NotificationTypeV2, subtype: Subtype?, transactionID: UInt64?,
                date: Date, payload: ResponseBodyV2DecodedPayload, transaction: JWSTransactionDecodedPayload?,
                renewalInfo: JWSRenewalInfoDecodedPayload? = nil) {
        self.sequence = sequence
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.transactionID = transactionID
        self.date = date
        self.payload = payload
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }

    /// The content the storage keeps as one JSON object: `{"payload": …, "transaction": …, "renewalInfo": …}`.
    public struct Body: Codable, Hashable, Sendable, AppStoreJSONWritable {
        public var payload: ResponseBodyV2DecodedPayload
        public var transaction: JWSTransactionDecodedPayload?
        public var renewalInfo: JWSRenewalInfoDecodedPayload?

        public init(payload: ResponseBodyV2DecodedPayload, transaction: JWSTransactionDecodedPayload?,
                    renewalInfo: JWSRenewalInfoDecodedPayload? = nil) {
            self.payload = payload
            self.transaction = transaction
            self.renewalInfo = renewalInfo
        }

        public func writeJSON(to writer: inout JSONObjectWriter) {
            writer.write("payload", payload)
            writer.write("renewalInfo", renewalInfo)
            writer.write("transaction", transaction)
        }
    }

    public var body: Body { Body(payload: payload, transaction: transaction, renewalInfo: renewalInfo) }
}

/// The counters that make identifiers, persisted with every change that uses them.
///
/// Xcode's StoreKit Testing counts identifiers from 0; the App Store's Sandbox and Production ones are
/// 16 digits (transactions, web order line items) and 18 digits (app transactions), so a store in
/// those environments starts its counters there (``init(for:)``) and servers see ids of Apple's length.
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

    /// The first counters of a new store signing as `environment`.
    public init(for environment: AppStoreModels.Environment) {
        switch environment {
        case .sandbox, .production:
            self.init(nextTransactionID: 2_000_000_000_000_000, nextWebOrderLineItemID: 2_000_000_000_000_000,
                      nextAppTransactionID: 700_000_000_000_000_000)
        default:
            self.init()
        }
    }
}
