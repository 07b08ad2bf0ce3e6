import AppStoreSimulator
import Foundation
import OpenStoreKit

/// The bodies of the admin API (`docs/admin-api.md`) that both its server (`StoreService`) and its
/// client (`RemoteStoreControls`, in the test kit) handle: one definition, so the two cannot drift apart.
public enum AdminAPI {
    /// `POST /v1/admin/purchases`.
    public struct PurchaseBody: Codable, Sendable {
        public var productID: String
        public var account: String?
        public var quantity: Int?
        public var appAccountToken: UUID?
        public var offer: DeviceAPI.OfferBody?
        /// Milliseconds since 1970; back-dates a subscription purchase.
        public var purchaseDate: Int64?
        /// `untilNow` (the default) or `cancelImmediately`.
        public var renewal: String?

        public init(productID: String, account: String?, quantity: Int?, appAccountToken: UUID?, offer: DeviceAPI.OfferBody?,
                    purchaseDate: Int64?, renewal: String?) {
            self.productID = productID
            self.account = account
            self.quantity = quantity
            self.appAccountToken = appAccountToken
            self.offer = offer
            self.purchaseDate = purchaseDate
            self.renewal = renewal
        }
    }

    /// A transaction with its signed form.
    public struct TransactionBody: Codable, Sendable {
        public var transaction: LedgerTransaction
        public var signedTransaction: String

        public init(transaction: LedgerTransaction, signedTransaction: String) {
            self.transaction = transaction
            self.signedTransaction = signedTransaction
        }
    }

    /// The Transaction Manager's rows.
    public struct TestTransactionsBody: Codable, Sendable {
        public var transactions: [TestTransaction]

        public init(transactions: [TestTransaction]) { self.transactions = transactions }
    }

    /// A page of the notification outbox.
    public struct NotificationsBody: Codable, Sendable {
        public var notifications: [NotificationBody]

        public init(notifications: [NotificationBody]) { self.notifications = notifications }
    }

    /// One notification of the outbox, signed.
    public struct NotificationBody: Codable, Sendable {
        public var sequence: Int64
        public var notificationUUID: String
        public var notificationType: String
        public var subtype: String?
        public var transactionId: String?
        public var signedDate: Date
        public var signedPayload: String
        /// Its delivery to the store's notification URL: each attempt's date and result, and when the next is due.
        public var delivery: DeliveryBody?

        public struct DeliveryBody: Codable, Sendable {
            public var attempts: [NotificationDelivery.Attempt]
            public var nextAttemptDate: Date?
            public init(attempts: [NotificationDelivery.Attempt], nextAttemptDate: Date?) {
                self.attempts = attempts
                self.nextAttemptDate = nextAttemptDate
            }
        }

        public init(sequence: Int64, notificationUUID: String, notificationType: String, subtype: String?, transactionId: String?,
                    signedDate: Date, signedPayload: String) {
            self.sequence = sequence
            self.notificationUUID = notificationUUID
            self.notificationType = notificationType
            self.subtype = subtype
            self.transactionId = transactionId
            self.signedDate = signedDate
            self.signedPayload = signedPayload
        }
    }
}
