import AppStoreSimulator
import Foundation
import SQLDatabase

extension SQLLedgerStorage {
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

        /// The largest `meta` value kept in memory. Larger ones (a retention image: up to 2,000 of
        /// them, megabytes each) are read from the ledger each time, so the store's memory does not
        /// grow with what it keeps on disk.
        static let largestCachedMetaValue = 64 * 1_024

        static func keeps(_ value: String?) -> Bool { (value?.utf8.count ?? 0) <= largestCachedMetaValue }

        /// How many bytes of `meta` values the cache holds (for tests).
        var metaBytes: Int { meta.values.reduce(0) { $0 + ($1?.utf8.count ?? 0) } }

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
            for (key, value) in changes.meta { meta[key] = Self.keeps(value) ? .some(value) : nil }
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

extension SQLLedgerStorage.RowCache {
    /// Drops the rows other processes changed, making the cache that of `version`.
    func invalidate(_ changed: SQLLedgerStorage.ChangeLog.Keys, version: Int64) {
        self.version = version
        for key in changed.meta { meta[key] = changed.metaValues?[key].map { .some($0) } }
        for name in changed.accounts { accounts[name] = nil }
        if !changed.devices.isEmpty {
            for name in changed.devices { devices[name] = nil }
            devicesByAccount.removeAll()
        }
        if changed.everyTransaction {
            transactions.removeAll()
            subscriptions.removeAll()
        }
        for id in changed.transactions { transactions[id] = nil }
        for id in changed.subscriptions { subscriptions[id] = nil }
    }
}

extension SQLLedgerStorage {
    /// Which rows each commit changed, kept in a PostgreSQL ledger for the other processes sharing it:
    /// a process that finds the ledger's version moved on drops only those rows from its cache, rather
    /// than all of them, so instances taking turns keep their caches warm.
    enum ChangeLog {
        /// The rows one or more commits changed.
        struct Keys: Codable {
            var meta: [String] = []
            var accounts: [String] = []
            var devices: [String] = []
            var transactions: [UInt64] = []
            var subscriptions: [UInt64] = []
            var everyTransaction = false
            /// The new values of the changed meta rows that are small (the identifier counters every
            /// purchase moves), so a process catching up keeps them instead of reading them again.
            var metaValues: [String: String]?

            init() {}

            init(_ changes: LedgerChanges) {
                meta = Array(changes.meta.keys)
                metaValues = changes.meta.filter { $0.value.utf8.count <= Self.largestCarriedValue }
                accounts = Array(changes.accounts.keys)
                devices = Array(changes.devices.keys)
                transactions = Array(changes.transactions.keys) + changes.deletedTransactions
                subscriptions = Array(changes.subscriptions.keys) + changes.deletedSubscriptions
                everyTransaction = changes.deletesEveryTransaction
            }

            /// The largest meta value a change log entry carries.
            static let largestCarriedValue = 1_024

            mutating func add(_ other: Keys) {
                meta += other.meta
                // A later value replaces an earlier one; a later change without its value drops it.
                var values = metaValues ?? [:]
                for key in other.meta { values[key] = other.metaValues?[key] }
                metaValues = values
                accounts += other.accounts
                devices += other.devices
                transactions += other.transactions
                subscriptions += other.subscriptions
                everyTransaction = everyTransaction || other.everyTransaction
            }
        }

        /// How many commits behind a cache may be and still be brought up to date from the log.
        static let reach: Int64 = 256

        /// The statements that record the commit's changed rows, and every `reach` commits drop
        /// entries no cache can use.
        static func recording(_ changes: LedgerChanges, version: Int64) throws -> [DatabaseStatement] {
            let text = String(decoding: try JSONEncoder().encode(Keys(changes)), as: UTF8.self)
            var statements = [DatabaseStatement("INSERT INTO ledger_changes (version, keys) VALUES ($1, $2)", [.integer(version), .text(text)])]
            if version % reach == 0 { statements.append(DatabaseStatement("DELETE FROM ledger_changes WHERE version <= $1", [.integer(version - reach)])) }
            return statements
        }

        /// The statement that reads the log's entries after `version`, up to one more than a cache
        /// can be brought up to date from (run in the same round trip as the version it is read for).
        static func reading(after version: Int64) -> DatabaseStatement {
            DatabaseStatement("SELECT version, keys FROM ledger_changes WHERE version > $1 ORDER BY version LIMIT $2",
                              [.integer(version), .integer(reach + 1)])
        }

        /// The rows changed after `version` up to `latest`, from what ``reading(after:)`` answered, or
        /// `nil` when the log does not hold every commit between (too far behind, or a cache that
        /// never held a version).
        static func changes(in rows: [DatabaseRow], after version: Int64, through latest: Int64) -> Keys? {
            guard version >= 0, latest > version, latest - version <= reach else { return nil }
            var keys = Keys()
            var expected = version + 1
            for row in rows {
                guard let entryVersion = try? row.decode(Int64.self, "version"), entryVersion <= latest else { break }
                guard entryVersion == expected, let text = try? row.decode(String.self, "keys"),
                      let entry = try? JSONDecoder().decode(Keys.self, from: Data(text.utf8)) else { return nil }
                keys.add(entry)
                expected += 1
            }
            return expected == latest + 1 ? keys : nil
        }
    }
}
