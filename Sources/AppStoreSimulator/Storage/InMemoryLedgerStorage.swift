import Foundation
import Synchronization

/// A ledger storage that keeps everything in memory: fast, isolated, gone with the process.
///
/// It is the reference implementation of ``LedgerStorage`` and what tests use. ``failNextCommits``
/// lets a test check that a failed commit leaves the store unchanged.
public final class InMemoryLedgerStorage: LedgerStorage {
    private struct Contents {
        var snapshot: LedgerSnapshot?
        var notifications: [StoredNotification] = []
        var failures = 0
    }

    private let contents = Mutex(Contents())

    public init() {}

    /// Makes the next `count` commits fail without applying anything.
    public func failNextCommits(_ count: Int) {
        contents.withLock { $0.failures = count }
    }

    public func load() throws(AppStoreError) -> LedgerSnapshot? {
        contents.withLock { $0.snapshot }
    }

    public func commit(_ changes: LedgerChanges) throws(AppStoreError) {
        let failed = contents.withLock { contents -> Bool in
            if contents.failures > 0 {
                contents.failures -= 1
                return true
            }
            var snapshot = contents.snapshot ?? LedgerSnapshot()
            snapshot.meta.merge(changes.meta) { $1 }
            snapshot.accounts = Self.replacing(snapshot.accounts, with: changes.accounts, key: \.name)
            snapshot.devices = Self.replacing(snapshot.devices, with: changes.devices, key: \.name)
            snapshot.transactions = Self.replacing(snapshot.transactions.filter { !changes.deletedTransactions.contains($0.id) },
                                                   with: changes.transactions, key: \.id).sorted { $0.id < $1.id }
            snapshot.subscriptions = Self.replacing(snapshot.subscriptions.filter { !changes.deletedSubscriptions.contains($0.originalTransactionID) },
                                                    with: changes.subscriptions, key: \.originalTransactionID)
            let delivered = Set(changes.deliveredUpdates)
            snapshot.pendingUpdates = (snapshot.pendingUpdates + changes.appendedUpdates).filter {
                !delivered.contains($0.sequence) && !changes.deletedTransactions.contains($0.transactionID)
            }
            contents.snapshot = snapshot
            contents.notifications += changes.appendedNotifications
            return false
        }
        if failed { throw .storage("simulated commit failure") }
    }

    public func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [StoredNotification] {
        contents.withLock { Array($0.notifications.filter { $0.sequence > sequence }.prefix(limit)) }
    }

    public func integrityProblems() throws(AppStoreError) -> [String] { [] }

    private static func replacing<Element, Key: Hashable>(_ elements: [Element], with replacements: [Key: Element],
                                                          key: KeyPath<Element, Key>) -> [Element] {
        guard !replacements.isEmpty else { return elements }
        var remaining = replacements
        var result = elements.map { element -> Element in
            if let replacement = remaining.removeValue(forKey: element[keyPath: key]) { return replacement }
            return element
        }
        result += remaining.values
        return result
    }
}
