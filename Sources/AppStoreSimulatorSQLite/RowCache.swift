import AppStoreSimulator
import Foundation

extension SQLiteLedgerStorage {
    /// Decoded rows of one ledger version, so a process that keeps working on a store does not decode
    /// the same records again (a purchase reads its account, devices and settings every time).
    ///
    /// Valid only for ``version``: a unit of work that finds another version in the database (another
    /// process committed) drops everything; this process's own commits are written through. Absent rows
    /// are cached too (as `.some(nil)`). Bounded, so memory stays flat however many customers a store
    /// has: accounts, devices, transactions and subscriptions are kept in two generations of at most
    /// ``capacity`` each; when the newer one fills up, the older is dropped, so rows read or written
    /// recently stay (a year of renewals reads each subscription's latest transaction, written a
    /// period earlier).
    final class RowCache {
        private(set) var version: Int64 = -1
        var meta: [String: String?] = [:]
        var accounts = Generations<String, StoreAccount>(capacity: RowCache.capacity)
        var devices = Generations<String, StoreDevice>(capacity: RowCache.capacity)
        var devicesByAccount = Generations<String, [StoreDevice]>(capacity: RowCache.capacity)
        var transactions = Generations<UInt64, LedgerTransaction>(capacity: RowCache.capacity)
        var subscriptions = Generations<UInt64, SubscriptionRecord>(capacity: RowCache.capacity)
        static let capacity = 10_000

        func reset(version: Int64) {
            self.version = version
            meta = [:]
            accounts.removeAll()
            devices.removeAll()
            devicesByAccount.removeAll()
            transactions.removeAll()
            subscriptions.removeAll()
        }

        func remember(_ transaction: LedgerTransaction?, id: UInt64) {
            transactions[id] = .some(transaction)
        }

        func remember(_ subscription: SubscriptionRecord?, id: UInt64) {
            subscriptions[id] = .some(subscription)
        }

        /// Writes a change this process committed through, making the cache that of the new version.
        func didCommit(_ changes: LedgerChanges, version: Int64) {
            guard version == self.version + 1 else { return reset(version: version) }
            self.version = version
            for (key, value) in changes.meta { meta[key] = .some(value) }
            for (name, account) in changes.accounts { accounts[name] = .some(account) }
            for (name, device) in changes.devices {
                devices[name] = .some(device)
                devicesByAccount[device.account] = nil
            }
            if changes.deletesEveryTransaction {
                transactions.removeAll()
                subscriptions.removeAll()
            }
            for id in changes.deletedTransactions { transactions[id] = .some(nil) }
            for (id, transaction) in changes.transactions { remember(transaction, id: id) }
            for id in changes.deletedSubscriptions { subscriptions[id] = .some(nil) }
            for (id, subscription) in changes.subscriptions { remember(subscription, id: id) }
        }
    }

    /// Rows by identifier in two generations: lookups see both, additions go to the newer one, and
    /// a full newer generation becomes the older one (the older is dropped).
    struct Generations<Key: Hashable, Row> {
        private var newer: [Key: Row?] = [:]
        private var older: [Key: Row?] = [:]
        let capacity: Int

        init(capacity: Int) { self.capacity = capacity }

        /// The cached row (`.some(nil)` when known to be absent), or `nil` when not cached.
        subscript(id: Key) -> Row?? {
            get { newer[id] ?? older[id] }
            set {
                if newer[id] == nil, newer.count >= capacity {
                    older = newer
                    newer = [:]
                }
                newer[id] = newValue
                if newValue == nil { older[id] = nil }
            }
        }

        mutating func removeAll() {
            newer = [:]
            older = [:]
        }
    }
}
