import AppStoreModels
import Foundation

/// Signed data read for an import (``SimulatedAppStore/importSignedHistory(_:options:)``): each item
/// decoded, verified unless the reader was told not to, and labelled with where it was read.
///
/// A reader fills it from JWS lines and from the App Store Server API's answers (transaction history
/// pages, subscription statuses, notification history pages). The import rebuilds customers from it.
public struct SignedHistory: Sendable {
    /// One decoded item and where it came from, such as `history-1.json: signedTransactions[3]` or `data.txt:7`.
    public struct Item<Payload: Sendable>: Sendable {
        public var payload: Payload
        public var source: String

        public init(_ payload: Payload, source: String) {
            self.payload = payload
            self.source = source
        }
    }

    /// A subscription's status as Get All Subscription Statuses reported it, dated by its renewal info.
    public struct StatusClaim: Sendable {
        public var originalTransactionID: String
        public var status: Status
        public var signedDate: Date
        public var source: String

        public init(originalTransactionID: String, status: Status, signedDate: Date, source: String) {
            self.originalTransactionID = originalTransactionID
            self.status = status
            self.signedDate = signedDate
            self.source = source
        }
    }

    /// A notification with its signed transaction and renewal info decoded, and the delivery attempts
    /// the notification history reported for it.
    public struct Notification: Sendable {
        public var payload: ResponseBodyV2DecodedPayload
        public var transaction: JWSTransactionDecodedPayload?
        public var renewalInfo: JWSRenewalInfoDecodedPayload?
        public var sendAttempts: [NotificationDelivery.Attempt]
        public var source: String

        public init(payload: ResponseBodyV2DecodedPayload, transaction: JWSTransactionDecodedPayload?,
                    renewalInfo: JWSRenewalInfoDecodedPayload?, sendAttempts: [NotificationDelivery.Attempt] = [], source: String) {
            self.payload = payload
            self.transaction = transaction
            self.renewalInfo = renewalInfo
            self.sendAttempts = sendAttempts
            self.source = source
        }

        /// The notification's content without its signatures: what two copies must agree on.
        var content: NotificationRecord.Body {
            var payload = payload
            payload.data?.signedTransactionInfo = nil
            payload.data?.signedRenewalInfo = nil
            return NotificationRecord.Body(payload: payload, transaction: transaction, renewalInfo: renewalInfo)
        }
    }

    /// Transactions read on their own: JWS lines, history pages, subscription statuses.
    public var transactions: [Item<JWSTransactionDecodedPayload>] = []
    /// Renewal infos read on their own: JWS lines, subscription statuses.
    public var renewalInfos: [Item<JWSRenewalInfoDecodedPayload>] = []
    public var statuses: [StatusClaim] = []
    public var notifications: [Notification] = []
    public var appTransactions: [Item<AppTransaction>] = []

    public init() {}

    /// How many items were read.
    public var itemCount: Int {
        transactions.count + renewalInfos.count + statuses.count + notifications.count + appTransactions.count
    }

    /// Every signed date in the data: items on their own and what notifications carry.
    public var signedDates: [Date] {
        transactions.compactMap(\.payload.signedDate) + renewalInfos.compactMap(\.payload.signedDate)
            + notifications.compactMap(\.payload.signedDate) + appTransactions.compactMap(\.payload.receiptCreationDate)
    }

    /// Every transaction in the data, on its own or in a notification, with where it was read.
    public var allTransactions: [Item<JWSTransactionDecodedPayload>] {
        transactions + notifications.compactMap { notification in
            notification.transaction.map { Item($0, source: "\(notification.source): signedTransactionInfo") }
        }
    }
}

/// Something in imported data that disagrees with the rest, reported item by item.
public struct ImportContradiction: Hashable, Sendable, Codable {
    /// Where the item was read.
    public var source: String
    public var message: String

    public init(source: String, message: String) {
        self.source = source
        self.message = message
    }
}
