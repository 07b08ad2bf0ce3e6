import AppStoreSimulator
import Foundation

extension SQLiteLedgerStorage {
    /// Decoded rows of one ledger version, so a process that keeps working on a store does not decode
    /// the same records again (a purchase reads its account, devices and settings every time).
    ///
    /// Valid only for ``version``: a unit of work that finds another version in the database (another
    /// process committed) drops everything; this process's own commits are written through. Absent rows
    /// are cached too (as `.some(nil)`). Bounded: past ``capacity`` transactions or subscriptions the
    /// cache starts over.
    final class RowCache {
        private(set) var version: Int64 = -1
        var meta: [String: String?] = [:]
        var accounts: [String: StoreAccount?] = [:]
        var devices: [String: StoreDevice?] = [:]
        var devicesByAccount: [String: [StoreDevice]] = [:]
        private(set) var transactions: [UInt64: LedgerTransaction?] = [:]
        private(set) var subscriptions: [UInt64: SubscriptionRecord?] = [:]
        let capacity = 10_000

        func reset(version: Int64) {
            self.version = version
            meta = [:]
            accounts = [:]
            devices = [:]
            devicesByAccount = [:]
            transactions = [:]
            subscriptions = [:]
        }

        func remember(_ transaction: LedgerTransaction?, id: UInt64) {
            if transactions.count >= capacity { transactions = [:] }
            transactions[id] = .some(transaction)
        }

        func remember(_ subscription: SubscriptionRecord?, id: UInt64) {
            if subscriptions.count >= capacity { subscriptions = [:] }
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
                transactions = [:]
                subscriptions = [:]
            }
            for id in changes.deletedTransactions { transactions[id] = .some(nil) }
            for (id, transaction) in changes.transactions { remember(transaction, id: id) }
            for id in changes.deletedSubscriptions { subscriptions[id] = .some(nil) }
            for (id, subscription) in changes.subscriptions { remember(subscription, id: id) }
        }
    }
}
