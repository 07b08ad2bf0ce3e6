import SQLDatabase
import Foundation

/// Where the backend keeps what it verified. Several backend processes may share one database:
/// every change is one database transaction that re-reads what it changes, and nothing is kept in
/// memory that another process could contradict.
///
/// Every call is `async`: database work blocks (SQLite waits for locks and `fsync`s, PostgreSQL
/// answers over the network), so an implementation runs it on threads of its own, never on Swift's
/// cooperative pool.
public protocol BackendStorage: Sendable {
    /// Applies a verified change as one transaction. Returns `false` (and changes nothing) when its
    /// notification was recorded before: a duplicate delivery.
    ///
    /// A transaction or status replaces the stored one only when it was signed at the same time or
    /// later, so notifications that arrive late or out of order never roll the ledger back.
    func apply(_ change: BackendChange) async throws(BackendError) -> Bool

    /// A customer's transactions (by app account token or linked user id, and everything sharing
    /// their original transactions), in ascending order of transaction identifier.
    func transactions(customer: String) async throws(BackendError) -> [BackendTransaction]

    /// A customer's transactions (as ``transactions(customer:)``) and the latest statuses of their
    /// subscriptions, read from one snapshot: what entitlements are computed from.
    func customerRecords(customer: String) async throws(BackendError) -> CustomerRecords

    /// The transactions sharing an original transaction with `transactionID` (an original transaction
    /// identifier, or any of its transactions'), in ascending order of transaction identifier.
    func transactions(sharingOriginalOf transactionID: String) async throws(BackendError) -> [BackendTransaction]

    /// The customer an app linked to an original transaction with a user id, if any.
    func linkedCustomer(originalTransactionID: String) async throws(BackendError) -> String?

    /// The newest notifications about these subscriptions, newest first, at most `limit`.
    func notifications(originalTransactionIDs: Set<String>, limit: Int) async throws(BackendError) -> [BackendNotification]

    /// The latest statuses of these subscriptions, by original transaction identifier.
    func statuses(originalTransactionIDs: Set<String>) async throws(BackendError) -> [String: BackendSubscriptionStatus]

    /// How many notifications were recorded (each UUID once).
    func notificationCount() async throws(BackendError) -> Int

    /// When the newest notification recorded was signed, if any.
    func latestNotificationDate() async throws(BackendError) -> Date?

    /// The App Store time up to which the backend knows it holds every notification (where the next
    /// reconciliation starts): the end of the last reconciliation that read the history to its end.
    func reconciledThrough() async throws(BackendError) -> Date?
    /// Records that every notification signed up to `date` is held. A date before the one recorded
    /// changes nothing (another instance got further).
    func markReconciled(through date: Date) async throws(BackendError)
    /// Records `date` as complete even when it is earlier than what was: the App Store's own time went
    /// back (a local store's clock moved back), and what lay past it is already held.
    func resetReconciled(to date: Date) async throws(BackendError)
    /// Subscriptions whose status says active or in grace, though their latest known period ended
    /// by `date` (a notification about what came next is missing): original transaction
    /// identifiers, at most `limit`.
    func subscriptionsPastExpiry(at date: Date, limit: Int) async throws(BackendError) -> [String]

    /// The subscription figures of each day in a range (see docs/analytics.md), from the daily rollups.
    func metrics(_ query: MetricsQuery) async throws(BackendError) -> MetricsReport

    /// The cohort table of the months from `from` to `to`.
    func cohorts(from: CalendarDay, to: CalendarDay) async throws(BackendError) -> CohortReport

    /// The products the figures know of, each with its subscription group: what the dashboard's
    /// product and group filters offer.
    func metricScopes() async throws(BackendError) -> [MetricScope]

    /// Recomputes the rollups from the recorded transactions and notifications; from now on in the
    /// days of `timeZone` (a tz database identifier) when given.
    func rebuildMetrics(timeZone: String?) async throws(BackendError)

    /// The time zone whose days the figures are kept in (`UTC` unless a rebuild named another).
    func metricsTimeZone() async throws(BackendError) -> String

    /// Records the SHA-256 of a service key; ``hasKey(hash:)`` checks one.
    func addKey(hash: String, label: String, created: Date) async throws(BackendError)
    func hasKey(hash: String) async throws(BackendError) -> Bool
    /// Every key, oldest first: its digest, label and creation date (the key itself is never kept).
    func keys() async throws(BackendError) -> [ServiceKeyRecord]
    /// Removes the keys whose digest starts with `digestPrefix`, and every dashboard session they
    /// opened; returns what was removed.
    func revokeKeys(digestPrefix: String) async throws(BackendError) -> [ServiceKeyRecord]

    /// Records a dashboard session (its id's digest) opened with the key of digest `keyHash`.
    func openSession(hash: String, keyHash: String, expires: Date) async throws(BackendError)
    /// Whether a session is open: recorded, not expired at `now`, and its key not revoked.
    func hasSession(hash: String, now: Date) async throws(BackendError) -> Bool
    /// Ends a session (signing out).
    func endSession(hash: String) async throws(BackendError)
    /// Throws when the database does not answer (a `/health` check).
    func checkHealth() async throws(BackendError)

    /// Adds a rule for Get Retention Message requests (see ``RetentionRule``).
    func addRetentionRule(_ rule: RetentionRule) async throws(BackendError)
    /// The rules, in the order they are tried.
    func retentionRules() async throws(BackendError) -> [RetentionRule]
    /// Removes a rule; `false` when there was none by that id.
    func removeRetentionRule(id: String) async throws(BackendError) -> Bool
    /// Records a request the backend answered, once per request identifier: `false` when one with
    /// its identifier was recorded before (a replay), and nothing is changed.
    @discardableResult
    func recordRetentionRequest(_ record: RetentionRequestRecord) async throws(BackendError) -> Bool
    /// Whether a request with this identifier was recorded.
    func hasRetentionRequest(_ requestIdentifier: String) async throws(BackendError) -> Bool
    /// Messages shown through the backend's answers and what customers did after (see ``RetentionFigure``).
    func retentionFigures() async throws(BackendError) -> [RetentionFigure]
}

extension BackendStorage {
    /// Recomputes the rollups in the days they are kept in.
    public func rebuildMetrics() async throws(BackendError) { try await rebuildMetrics(timeZone: nil) }
}

/// A failure of the backend: bad input (4xx) or storage (5xx).
public enum BackendError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The request is malformed or names nothing the backend knows.
    case badRequest(String)
    /// The signed data did not verify (forged, foreign, wrong app or environment).
    case unverified(String)
    /// The caller has no valid service key.
    case unauthorized(String)
    /// A record could not be encoded, or a stored one decoded (damaged data); nothing was changed.
    case encoding(String)
    /// The database file is unsafe to use (other users can write it); nothing was opened.
    case unsafeFile(String)
    /// The database failed, with the engine's code and whether running again may succeed; nothing was changed.
    case database(DatabaseError)
    /// The request contradicts what is recorded (a purchase already linked to another customer).
    case conflict(String)
    /// The backend lacks what the answer needs (an offer key to sign a rule's promotional offer with).
    case unavailable(String)

    public var description: String {
        switch self {
        case .badRequest(let message), .unverified(let message), .unauthorized(let message), .encoding(let message), .unsafeFile(let message),
             .conflict(let message),
             .unavailable(let message):
            return message
        case .database(let error):
            return "the backend database failed: \(error)"
        }
    }
}

/// A service key as the backend keeps it: the digest only.
public struct ServiceKeyRecord: Sendable, Hashable {
    public var digest: String
    public var label: String
    public var created: Date

    /// The short form of the digest that names the key (`backend key list`, `backend key revoke`).
    public var id: String { String(digest.prefix(12)) }
}

/// What the backend holds of one customer at one moment: their transactions and the latest statuses
/// of their subscriptions (see ``BackendStorage/customerRecords(customer:)``).
public struct CustomerRecords: Sendable {
    /// In ascending order of transaction identifier.
    public var transactions: [BackendTransaction]
    /// By original transaction identifier.
    public var statuses: [String: BackendSubscriptionStatus]

    public init(transactions: [BackendTransaction], statuses: [String: BackendSubscriptionStatus]) {
        self.transactions = transactions
        self.statuses = statuses
    }
}

/// A product the figures know of, and its subscription group.
public struct MetricScope: Hashable, Sendable {
    public var productID: String
    public var groupID: String

    public init(productID: String, groupID: String) {
        self.productID = productID
        self.groupID = groupID
    }
}
