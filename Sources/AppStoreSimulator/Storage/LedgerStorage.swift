import Foundation

/// Where a local App Store keeps its ledger.
///
/// The store holds its state in memory and asks the storage to persist each change before it
/// acknowledges it. Implementations live in their own modules (`AppStoreSimulatorSQLite`, …);
/// ``InMemoryLedgerStorage`` is the reference.
///
/// Implementation requirements:
/// - ``commit(_:)`` is atomic and durable: when it returns, every part of the change set survives a
///   crash or power loss; when it throws, none of it was applied. A change set is never applied twice.
/// - Rows are replaced by key (transaction ID, account name, device name, original transaction ID,
///   meta key); feed and outbox entries are appended in sequence order and never rewritten, except that
///   feed entries are marked delivered and removed with their transactions.
/// - ``load()`` returns exactly what the commits so far left, or `nil` for storage that holds no store.
/// - Calls come from one store at a time; implementations must still be safe to call from any thread.
public protocol LedgerStorage: Sendable {
    /// Everything the storage holds, or `nil` when it holds no store yet.
    func load() throws(AppStoreError) -> LedgerSnapshot?

    /// Persists a change set atomically and durably.
    func commit(_ changes: LedgerChanges) throws(AppStoreError)

    /// Outbox notifications after `sequence`, oldest first, at most `limit`.
    func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord]

    /// Problems a consistency check finds; empty when the storage is sound.
    func integrityProblems() throws(AppStoreError) -> [String]
}

/// Everything a store persists, as loaded.
public struct LedgerSnapshot: Sendable {
    public var meta: [String: String] = [:]
    public var accounts: [StoreAccount] = []
    public var devices: [StoreDevice] = []
    public var transactions: [LedgerTransaction] = []
    public var subscriptions: [SubscriptionRecord] = []
    /// Feed entries not yet delivered, in sequence order.
    public var pendingUpdates: [LedgerUpdate] = []

    public init() {}
}

/// One atomic change to the ledger.
public struct LedgerChanges: Sendable {
    public var meta: [String: String] = [:]
    public var accounts: [String: StoreAccount] = [:]
    public var devices: [String: StoreDevice] = [:]
    public var transactions: [UInt64: LedgerTransaction] = [:]
    public var deletedTransactions: Set<UInt64> = []
    public var subscriptions: [UInt64: SubscriptionRecord] = [:]
    public var deletedSubscriptions: Set<UInt64> = []
    public var appendedUpdates: [LedgerUpdate] = []
    public var deliveredUpdates: [Int64] = []
    public var appendedNotifications: [NotificationRecord] = []

    public init() {}

    public var isEmpty: Bool {
        meta.isEmpty && accounts.isEmpty && devices.isEmpty && transactions.isEmpty && deletedTransactions.isEmpty
            && subscriptions.isEmpty && deletedSubscriptions.isEmpty && appendedUpdates.isEmpty
            && deliveredUpdates.isEmpty && appendedNotifications.isEmpty
    }
}
