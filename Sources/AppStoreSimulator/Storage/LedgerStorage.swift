import AppStoreModels
import Foundation
import StoreKitCatalog

/// Where a local App Store keeps its ledger: the one truth every process that opens the store shares.
///
/// The store keeps no copy of the ledger. Every operation is one unit of work on the storage:
/// ``write(_:)`` for operations that change something, ``read(_:)`` for views. The body reads what it
/// needs through a ``LedgerReader`` and, for a write, returns the ``LedgerChanges`` to commit; several
/// processes (command-line tools, servers, tests) may work on one storage at once and each sees the
/// others' committed work.
///
/// Implementation requirements:
/// - ``write(_:)`` runs its body under the storage's write lock (SQLite: `BEGIN IMMEDIATE`;
///   PostgreSQL: a transaction that first takes the ledger's advisory lock or row locks), so writes
///   from any process serialize; the reader shows the state as of the lock, and the changes are
///   committed atomically and durably before `write` returns. When the body throws, or the commit
///   fails, nothing is applied. A non-empty commit increases ``LedgerReader/version`` by exactly one.
/// - ``read(_:)`` gives a consistent snapshot: a body never sees half of another process's commit.
/// - Rows are replaced by key (transaction ID, account name, device name, original transaction ID,
///   meta key); feed and outbox entries are appended in sequence order and never rewritten, except that
///   feed entries are marked delivered and removed with their transactions.
/// - Readers answer by index: the cost of a lookup depends on the rows it returns, not on the size
///   of the ledger.
public protocol LedgerStorage: Sendable {
    /// Runs `body` on a consistent snapshot of the ledger.
    func read<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> Result) throws(AppStoreError) -> Result

    /// Runs `body` under the write lock and commits the changes it returns, atomically and durably.
    func write<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> (LedgerChanges, Result)) throws(AppStoreError) -> Result

    /// Takes the store's lifecycle lease: the right to play time-driven work (renewals, expiries) that
    /// no two holders may play at once.
    ///
    /// The lease is held by at most one holder at a time (across processes, and within one) until it is
    /// released or its process dies. With `wait` false, returns `nil` at once when another holds it.
    func acquireLifecycleLease(wait: Bool) throws(AppStoreError) -> (any LifecycleLease)?

    /// Outbox notifications after `sequence`, oldest first, at most `limit`.
    func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord]

    /// Problems a consistency check finds; empty when the storage is sound.
    func integrityProblems() throws(AppStoreError) -> [String]

    /// While this process's writes fail: the latest failure, and when the first of them came (real
    /// time). `nil` once a write commits again. A server's `/health` reports it.
    var writeFailure: (failure: StorageFailure, since: Date)? { get }
}

extension LedgerStorage {
    /// Storage that does not track its writes' failures never reports one.
    public var writeFailure: (failure: StorageFailure, since: Date)? { nil }
}

/// A held lifecycle lease (see ``LedgerStorage/acquireLifecycleLease(wait:)``).
public protocol LifecycleLease: AnyObject, Sendable {
    /// Gives the lease up; releasing twice is harmless.
    func release()
}

/// What a unit of work reads: the ledger as of the start of its transaction, by key or by index.
///
/// Readers do not throw, so the engine's rules read like the rules they are. A storage failure
/// while reading (an I/O error, a record that cannot be decoded) is kept in ``failure``: the unit of
/// work reports it and commits nothing, whatever the body did with the empty answer it got.
public protocol LedgerReader {
    /// The first storage failure met by this reader, if any.
    var failure: AppStoreError? { get }
    /// The ledger's change counter: it grows by one with every committed write, in any process.
    var version: Int64 { get }

    func meta(_ key: String) -> String?
    func account(_ name: String) -> StoreAccount?
    /// Every account, by name; at most `limit` after `name`.
    func accounts(after name: String?, limit: Int) -> [StoreAccount]
    /// The accounts whose names contain `text`, ignoring ASCII case, by name; at most `limit` after `name`.
    func accounts(matching text: String, after name: String?, limit: Int) -> [StoreAccount]
    /// The accounts in a Family Sharing group, by name.
    func accounts(familyGroup: String) -> [StoreAccount]
    func device(_ name: String) -> StoreDevice?
    /// The devices signed in to an account, by name.
    func devices(account: String) -> [StoreDevice]
    /// Every device, by name; at most `limit` after `name`.
    func devices(after name: String?, limit: Int) -> [StoreDevice]
    func transaction(_ id: UInt64) -> LedgerTransaction?
    /// The transactions a query selects, in identifier order (descending with ``TransactionQuery/newestFirst``).
    func transactions(_ query: TransactionQuery) -> [LedgerTransaction]
    /// A source of the Transaction Manager's list: the transactions it selects, in its order, at
    /// most its limit, answered through an index whatever the ledger's size.
    func transactions(_ source: TransactionListingSource) -> [LedgerTransaction]
    /// The keys of a source's rows from position `offset` on (sort values as ``TransactionListing``
    /// compares them, and identifiers), in its order, at most its limit: read from the source's index
    /// alone, so skipping to a page by number reads no row.
    func transactionKeys(_ source: TransactionListingSource, offset: Int) -> [TransactionListing.Key]
    /// How many rows a source selects, counted up to its limit along its index.
    func transactionCount(_ source: TransactionListingSource) -> Int
    /// The products the ledger's transactions are of, with their kinds.
    func listedProducts() -> [String: CatalogProduct.Kind]
    func subscription(_ originalTransactionID: UInt64) -> SubscriptionRecord?
    /// The subscription records a query selects, by original transaction identifier.
    func subscriptions(_ query: SubscriptionQuery) -> [SubscriptionRecord]
    /// The earliest lifecycle event date after `after` (exclusive, when given) and not after `limit`.
    func nextEventDate(after: Date?, notAfter limit: Date) -> Date?
    /// The subscriptions whose next lifecycle event is exactly at `date`, by original transaction identifier.
    func subscriptions(dueAt date: Date) -> [SubscriptionRecord]
    /// Undelivered entries of one channel of a device's feed, in sequence order, at most `limit`.
    func waitingUpdates(device: String, channel: LedgerUpdate.Channel, limit: Int) -> [LedgerUpdate]
    /// An outbox notification by sequence number.
    func notification(sequence: Int64) -> NotificationRecord?
    /// The delivery state of an outbox notification alone (nothing of its content decoded).
    func notificationDelivery(sequence: Int64) -> NotificationDelivery?
    /// How many outbox notifications wait for a delivery attempt (due or scheduled), and when the
    /// oldest of them was made.
    func notificationBacklog() -> (count: Int, oldest: Date?)
    /// A `TEST` notification by its `notificationUUID` (the App Store Server API's test notification token).
    func testNotification(uuid: String) -> NotificationRecord?
    /// Notifications whose next delivery attempt is due by `date` (the store's clock) and that no sender
    /// holds at `realTime` (their claim ended or was never made), oldest first, at most `limit`.
    func notificationsDue(notAfter date: Date, unclaimedAt realTime: Date, limit: Int) -> [NotificationRecord]
    /// The notifications about any of these transactions, oldest first (a purchase's page, a subscription's timeline).
    func notifications(aboutTransactions ids: [UInt64]) -> [NotificationRecord]
    /// Notifications signed from `start` to `end` (inclusive), after sequence `after`, oldest first, at most `limit`.
    func notifications(from start: Date, to end: Date, after sequence: Int64, limit: Int) -> [NotificationRecord]
}

/// Which transactions to read; unset fields do not filter. Every query names an account, an
/// original transaction, a family source or a range of identifiers, so it is answered by an index.
public struct TransactionQuery: Hashable, Sendable {
    public var account: String?
    public var productID: String?
    public var originalID: UInt64?
    public var familySourceID: UInt64?
    public var subscriptionGroupID: String?
    /// Only transactions that can be entitlements: everything but consumables.
    public var entitlementCandidatesOnly = false
    /// Only completed (purchased) transactions the app has not finished.
    public var unfinishedOnly = false
    /// Only completed transactions, leaving out finished consumables (`Transaction.all` without
    /// `SKIncludeConsumableInAppPurchaseHistory`).
    public var historyOnly = false
    /// Only identifiers after this one (before it, with ``newestFirst``): the next page.
    public var afterID: UInt64?
    public var newestFirst = false
    public var limit: Int = .max

    public init(account: String? = nil, productID: String? = nil, originalID: UInt64? = nil, familySourceID: UInt64? = nil,
                subscriptionGroupID: String? = nil, entitlementCandidatesOnly: Bool = false, unfinishedOnly: Bool = false,
                historyOnly: Bool = false, afterID: UInt64? = nil, newestFirst: Bool = false, limit: Int = .max) {
        self.account = account
        self.productID = productID
        self.originalID = originalID
        self.familySourceID = familySourceID
        self.subscriptionGroupID = subscriptionGroupID
        self.entitlementCandidatesOnly = entitlementCandidatesOnly
        self.unfinishedOnly = unfinishedOnly
        self.historyOnly = historyOnly
        self.afterID = afterID
        self.newestFirst = newestFirst
        self.limit = limit
    }

    /// Whether a transaction passes the query's filters (identifier paging and limit aside).
    public func matches(_ transaction: LedgerTransaction) -> Bool {
        if let account, transaction.account != account { return false }
        if let productID, transaction.productID != productID { return false }
        if let originalID, transaction.originalID != originalID { return false }
        if let familySourceID, transaction.familySourceID != familySourceID { return false }
        if let subscriptionGroupID, transaction.subscriptionGroupID != subscriptionGroupID { return false }
        if entitlementCandidatesOnly, transaction.productKind == .consumable { return false }
        if unfinishedOnly, !transaction.isPurchased || transaction.isFinished { return false }
        if historyOnly, !transaction.isPurchased || (transaction.productKind == .consumable && transaction.isFinished) { return false }
        return true
    }
}

/// Which subscription records to read; unset fields do not filter.
public struct SubscriptionQuery: Hashable, Sendable {
    public var account: String?
    public var groupID: String?
    public var familySourceID: UInt64?
    /// Only identifiers after this one: the next page.
    public var afterID: UInt64?
    public var limit: Int = .max

    public init(account: String? = nil, groupID: String? = nil, familySourceID: UInt64? = nil, afterID: UInt64? = nil, limit: Int = .max) {
        self.account = account
        self.groupID = groupID
        self.familySourceID = familySourceID
        self.afterID = afterID
        self.limit = limit
    }

    public func matches(_ record: SubscriptionRecord) -> Bool {
        if let account, record.account != account { return false }
        if let groupID, record.groupID != groupID { return false }
        if let familySourceID, record.familySourceID != familySourceID { return false }
        return true
    }
}

/// One atomic change to the ledger.
public struct LedgerChanges: Sendable {
    public var meta: [String: String] = [:]
    public var accounts: [String: StoreAccount] = [:]
    public var devices: [String: StoreDevice] = [:]
    public var transactions: [UInt64: LedgerTransaction] = [:]
    public var deletedTransactions: Set<UInt64> = []
    /// Deletes every transaction and subscription, with their waiting feed entries (accounts and devices stay).
    public var deletesEveryTransaction = false
    public var subscriptions: [UInt64: SubscriptionRecord] = [:]
    public var deletedSubscriptions: Set<UInt64> = []
    public var appendedUpdates: [LedgerUpdate] = []
    public var deliveredUpdates: [Int64] = []
    public var appendedNotifications: [NotificationRecord] = []
    /// New delivery states of outbox notifications, by sequence.
    public var notificationDeliveries: [Int64: NotificationDelivery] = [:]

    public init() {}

    public var isEmpty: Bool {
        meta.isEmpty && accounts.isEmpty && devices.isEmpty && transactions.isEmpty && deletedTransactions.isEmpty && !deletesEveryTransaction
            && subscriptions.isEmpty && deletedSubscriptions.isEmpty && appendedUpdates.isEmpty
            && deliveredUpdates.isEmpty && appendedNotifications.isEmpty && notificationDeliveries.isEmpty
    }
}
