import AppStoreModels
import Foundation

/// A verified transaction as the backend keeps it.
public struct BackendTransaction: Hashable, Sendable {
    public var payload: JWSTransactionDecodedPayload
    /// The JWS it came in, kept for audits and for the app's own checks.
    public var signedTransaction: String
    /// The customer it belongs to: its app account token (lower case), or the app's user id given with it.
    public var customerID: String?

    public init(payload: JWSTransactionDecodedPayload, signedTransaction: String, customerID: String?) {
        self.payload = payload
        self.signedTransaction = signedTransaction
        self.customerID = customerID
    }

    public var transactionID: String { payload.transactionId ?? "" }
    public var originalTransactionID: String { payload.originalTransactionId ?? transactionID }
    /// When Apple signed this view of the transaction: a later one supersedes an earlier one.
    public var signedDate: Date { payload.signedDate ?? .distantPast }
}

/// A subscription's status as the latest signed data told it.
public struct BackendSubscriptionStatus: Hashable, Sendable {
    public var originalTransactionID: String
    /// The status a notification carried (`data.status`), when it carried one.
    public var status: Status?
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    /// When the data this status comes from was signed: a later one supersedes an earlier one.
    public var signedDate: Date

    public init(originalTransactionID: String, status: Status?, renewalInfo: JWSRenewalInfoDecodedPayload?, signedDate: Date) {
        self.originalTransactionID = originalTransactionID
        self.status = status
        self.renewalInfo = renewalInfo
        self.signedDate = signedDate
    }
}

/// A notification the backend received, recorded once by its UUID.
public struct BackendNotification: Hashable, Sendable {
    public var notificationUUID: String
    public var type: String
    public var subtype: String?
    public var signedDate: Date
    public var transactionID: String?
    public var originalTransactionID: String?
    /// The end of the billing grace period the notification's renewal info told, if any.
    public var gracePeriodExpiresDate: Date?
    /// The expiry of its transaction as this notification told it: the first notification about a
    /// renewal tells the period it was charged for, whatever an extension or an early expiry makes
    /// of it later.
    public var transactionExpiresDate: Date?
    /// The revocation date its transaction carried (a `REFUND`'s): kept with the notification, since a
    /// reversal later takes it off the stored transaction.
    public var transactionRevocationDate: Date?

    public init(notificationUUID: String, type: String, subtype: String?, signedDate: Date, transactionID: String?, originalTransactionID: String?,
                gracePeriodExpiresDate: Date? = nil, transactionExpiresDate: Date? = nil, transactionRevocationDate: Date? = nil) {
        self.transactionExpiresDate = transactionExpiresDate
        self.transactionRevocationDate = transactionRevocationDate
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.signedDate = signedDate
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
    }
}

/// What one verified input changes, applied as one transaction of the database.
public struct BackendChange: Hashable, Sendable {
    /// The notification, when the input was one: recorded first, and when it was already recorded the
    /// whole change is skipped (a duplicate delivery).
    public var notification: BackendNotification?
    public var transaction: BackendTransaction?
    public var status: BackendSubscriptionStatus?
    /// An app's user id for a purchase and everything with its original transaction
    /// (`POST /v1/transactions` with `userID`).
    public var link: CustomerLink?

    public init(notification: BackendNotification? = nil, transaction: BackendTransaction? = nil, status: BackendSubscriptionStatus? = nil) {
        self.notification = notification
        self.transaction = transaction
        self.status = status
    }
}

/// An app's own user id, attached to an original transaction.
public struct CustomerLink: Hashable, Sendable {
    public var originalTransactionID: String
    public var customerID: String

    public init(originalTransactionID: String, customerID: String) {
        self.originalTransactionID = originalTransactionID
        self.customerID = customerID
    }
}
