import Foundation
import Synchronization

/// A ledger storage that keeps everything in memory: fast, isolated, gone with the process.
///
/// It is the reference implementation of ``LedgerStorage`` and what tests use. ``failNextCommits(_:)``
/// lets a test check that a failed commit leaves the store unchanged.
public final class InMemoryLedgerStorage: LedgerStorage {
    private struct Contents {
        var meta: [String: String] = [:]
        var accounts: [String: StoreAccount] = [:]
        var devices: [String: StoreDevice] = [:]
        var transactions: [UInt64: LedgerTransaction] = [:]
        var subscriptions: [UInt64: SubscriptionRecord] = [:]
        var pendingUpdates: [Int64: LedgerUpdate] = [:]
        var notifications: [NotificationRecord] = []
        var failures = 0
    }

    private let contents = Mutex(Contents())

    public init() {}

    /// Makes the next `count` commits fail without applying anything.
    public func failNextCommits(_ count: Int) {
        contents.withLock { $0.failures = count }
    }

    public func load() throws(AppStoreError) -> LedgerSnapshot? {
        contents.withLock { contents -> LedgerSnapshot? in
            guard !contents.meta.isEmpty else { return nil }
            var snapshot = LedgerSnapshot()
            snapshot.meta = contents.meta
            snapshot.accounts = Array(contents.accounts.values)
            snapshot.devices = Array(contents.devices.values)
            snapshot.transactions = contents.transactions.values.sorted { $0.id < $1.id }
            snapshot.subscriptions = Array(contents.subscriptions.values)
            snapshot.pendingUpdates = contents.pendingUpdates.values.sorted { $0.sequence < $1.sequence }
            return snapshot
        }
    }

    public func commit(_ changes: LedgerChanges) throws(AppStoreError) {
        let failed = contents.withLock { contents -> Bool in
            if contents.failures > 0 {
                contents.failures -= 1
                return true
            }
            contents.meta.merge(changes.meta) { $1 }
            contents.accounts.merge(changes.accounts) { $1 }
            contents.devices.merge(changes.devices) { $1 }
            for id in changes.deletedTransactions { contents.transactions[id] = nil }
            contents.transactions.merge(changes.transactions) { $1 }
            for id in changes.deletedSubscriptions { contents.subscriptions[id] = nil }
            contents.subscriptions.merge(changes.subscriptions) { $1 }
            for update in changes.appendedUpdates { contents.pendingUpdates[update.sequence] = update }
            for sequence in changes.deliveredUpdates { contents.pendingUpdates[sequence] = nil }
            if !changes.deletedTransactions.isEmpty {
                contents.pendingUpdates = contents.pendingUpdates.filter { !changes.deletedTransactions.contains($0.value.transactionID) }
            }
            contents.notifications += changes.appendedNotifications
            return false
        }
        if failed { throw .storage("simulated commit failure") }
    }

    public func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord] {
        contents.withLock { contents in
            // The outbox is in sequence order, so the first entry after `sequence` is found by bisection.
            var low = 0
            var high = contents.notifications.count
            while low < high {
                let middle = (low + high) / 2
                if contents.notifications[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
            }
            return Array(contents.notifications[low...].prefix(limit))
        }
    }

    public func integrityProblems() throws(AppStoreError) -> [String] { [] }
}
