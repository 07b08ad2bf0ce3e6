import AppStoreModels
import BlockingWork
import Foundation
import StoreKitCatalog
import Synchronization

/// A ledger storage that keeps everything in memory: fast, isolated, gone with the process.
///
/// It is the reference implementation of ``LedgerStorage`` and what tests use: the same units of
/// work and the same indexes as the SQLite storage, behind one lock. ``failNextCommits(_:)`` lets a
/// test check that a failed commit leaves the store unchanged.
public final class InMemoryLedgerStorage: LedgerStorage {
    private let contents = Mutex(Contents())
    /// The lifecycle lease: whether it is held, and the condition a waiting holder sleeps on until
    /// it is released.
    private let lease = BlockingFlag()

    public init() {}

    /// Makes the next `count` commits fail without applying anything.
    public func failNextCommits(_ count: Int) {
        contents.withLock { $0.failures = count }
    }

    public func read<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> Result) throws(AppStoreError) -> Result {
        // A copy is a snapshot: the dictionaries are copied on write, so this costs nothing until a commit.
        let snapshot = contents.withLock { $0 }
        let reader = Reader(contents: snapshot)
        let result = try body(reader)
        if let failure = reader.failure { throw failure }
        return result
    }

    public func write<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> (LedgerChanges, Result)) throws(AppStoreError) -> Result {
        try contents.withLock { (contents: inout Contents) throws(AppStoreError) -> Result in
            let (changes, result): (LedgerChanges, Result)
            do {
                // The reader is dropped before the commit so the commit mutates the only copy.
                (changes, result) = try body(Reader(contents: contents))
            }
            guard !changes.isEmpty else { return result }
            if contents.failures > 0 {
                contents.failures -= 1
                throw .storage(.failed("simulated commit failure"))
            }
            contents.apply(changes)
            return result
        }
    }

    public func acquireLifecycleLease(wait: Bool) throws(AppStoreError) -> (any LifecycleLease)? {
        // Only the store's own serial executor waits (never Swift's pool), and the holder is another
        // store in this process, which lets go within its unit of work and wakes the waiter.
        guard lease.take(waiting: wait) else { return nil }
        return Lease(storage: self)
    }

    /// The in-memory lease: a flag, cleared once.
    final class Lease: LifecycleLease {
        private let storage: Mutex<InMemoryLedgerStorage?>
        init(storage: InMemoryLedgerStorage) { self.storage = Mutex(storage) }
        func release() {
            storage.withLock { storage in
                storage?.lease.release()
                storage = nil
            }
        }
        deinit { release() }
    }

    public func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord] {
        contents.withLock { contents in
            // The outbox is in sequence order, so the first entry after `sequence` is found by bisection.
            let start = contents.notifications.partitioningIndex { $0.sequence > sequence }
            return Array(contents.notifications[start...].prefix(limit))
        }
    }

    public func integrityProblems() throws(AppStoreError) -> [String] {
        contents.withLock { contents in
            var problems: [String] = []
            let uuids = contents.notifications.map(\.notificationUUID)
            if Set(uuids).count != uuids.count { problems.append("\(uuids.count - Set(uuids).count) notification UUIDs appear more than once") }
            return problems
        }
    }
}

extension InMemoryLedgerStorage {
    /// The rows, with the indexes the readers use.
    struct Contents {
        var version: Int64 = 0
        var meta: [String: String] = [:]
        var accounts: [String: StoreAccount] = [:]
        var devices: [String: StoreDevice] = [:]
        /// Device names per account (a device never changes account).
        var devicesByAccount: [String: Set<String>] = [:]
        var transactions: [UInt64: LedgerTransaction] = [:]
        var subscriptions: [UInt64: SubscriptionRecord] = [:]
        var updates: [Int64: LedgerUpdate] = [:]
        var notifications: [NotificationRecord] = []
        var failures = 0

        /// Transaction identifiers per account, per original transaction and per family source, ascending.
        var transactionsByAccount: [String: [UInt64]] = [:]
        var transactionsByOriginal: [UInt64: [UInt64]] = [:]
        var transactionsByFamilySource: [UInt64: [UInt64]] = [:]
        /// Per account: everything but consumables, the unfinished ones, and per product (the SQLite
        /// storage's partial indexes).
        var entitlementCandidatesByAccount: [String: [UInt64]] = [:]
        var unfinishedByAccount: [String: [UInt64]] = [:]
        var transactionsByAccountProduct: [String: [UInt64]] = [:]
        var subscriptionsByAccount: [String: Set<UInt64>] = [:]
        var subscriptionsByFamilySource: [UInt64: Set<UInt64>] = [:]
        /// Subscriptions by the millisecond of their next lifecycle event, and those instants in order.
        var dueAt: [Int64: Set<UInt64>] = [:]
        var dueInstants: [Int64] = []
        /// Undelivered feed entries per device, ascending.
        var waitingByDevice: [String: [Int64]] = [:]

        mutating func apply(_ changes: LedgerChanges) {
            version += 1
            meta.merge(changes.meta) { $1 }
            accounts.merge(changes.accounts) { $1 }
            for (name, device) in changes.devices {
                if let previous = devices[name], previous.account != device.account { devicesByAccount[previous.account]?.remove(name) }
                devices[name] = device
                devicesByAccount[device.account, default: []].insert(name)
            }
            if changes.deletesEveryTransaction {
                for id in transactions.keys.sorted() { removeTransaction(id) }
                for id in subscriptions.keys.sorted() { removeSubscription(id) }
                for sequence in updates.keys.sorted() { removeUpdate(sequence) }
            }
            for id in changes.deletedTransactions.sorted() { removeTransaction(id) }
            for transaction in changes.transactions.values.sorted(by: { $0.id < $1.id }) { putTransaction(transaction) }
            for id in changes.deletedSubscriptions { removeSubscription(id) }
            for subscription in changes.subscriptions.values { removeSubscription(subscription.originalTransactionID); putSubscription(subscription) }
            for update in changes.appendedUpdates {
                updates[update.sequence] = update
                Self.insert(update.sequence, into: &waitingByDevice[update.device, default: []])
            }
            for sequence in changes.deliveredUpdates { removeUpdate(sequence) }
            if !changes.deletedTransactions.isEmpty {
                for (sequence, update) in updates where changes.deletedTransactions.contains(update.transactionID) { removeUpdate(sequence) }
            }
            notifications += changes.appendedNotifications
            for (sequence, delivery) in changes.notificationDeliveries {
                let index = notifications.partitioningIndex { $0.sequence >= sequence }
                if index < notifications.count, notifications[index].sequence == sequence { notifications[index].delivery = delivery }
            }
        }

        private mutating func putTransaction(_ transaction: LedgerTransaction) {
            removeTransaction(transaction.id)
            transactions[transaction.id] = transaction
            let id = transaction.id
            Self.insert(id, into: &transactionsByAccount[transaction.account, default: []])
            Self.insert(id, into: &transactionsByOriginal[transaction.originalID, default: []])
            Self.insert(id, into: &transactionsByAccountProduct[transaction.account + "\u{0}" + transaction.productID, default: []])
            if let source = transaction.familySourceID { Self.insert(id, into: &transactionsByFamilySource[source, default: []]) }
            if transaction.productKind != .consumable { Self.insert(id, into: &entitlementCandidatesByAccount[transaction.account, default: []]) }
            if transaction.isPurchased, !transaction.isFinished { Self.insert(id, into: &unfinishedByAccount[transaction.account, default: []]) }
        }

        private mutating func removeTransaction(_ id: UInt64) {
            guard let removed = transactions.removeValue(forKey: id) else { return }
            Self.remove(id, from: &transactionsByAccount[removed.account])
            Self.remove(id, from: &transactionsByOriginal[removed.originalID])
            Self.remove(id, from: &transactionsByAccountProduct[removed.account + "\u{0}" + removed.productID])
            if let source = removed.familySourceID { Self.remove(id, from: &transactionsByFamilySource[source]) }
            Self.remove(id, from: &entitlementCandidatesByAccount[removed.account])
            Self.remove(id, from: &unfinishedByAccount[removed.account])
        }

        static func remove(_ id: UInt64, from ids: inout [UInt64]?) {
            guard let index = ids?.partitioningIndex(where: { $0 >= id }), index < ids!.count, ids![index] == id else { return }
            ids!.remove(at: index)
        }

        private mutating func putSubscription(_ record: SubscriptionRecord) {
            subscriptions[record.originalTransactionID] = record
            subscriptionsByAccount[record.account, default: []].insert(record.originalTransactionID)
            if let source = record.familySourceID { subscriptionsByFamilySource[source, default: []].insert(record.originalTransactionID) }
            if let date = record.nextEventDate {
                let instant = Self.milliseconds(date)
                if dueAt[instant] == nil { Self.insert(instant, into: &dueInstants) }
                dueAt[instant, default: []].insert(record.originalTransactionID)
            }
        }

        private mutating func removeSubscription(_ id: UInt64) {
            guard let removed = subscriptions.removeValue(forKey: id) else { return }
            subscriptionsByAccount[removed.account]?.remove(id)
            if let source = removed.familySourceID { subscriptionsByFamilySource[source]?.remove(id) }
            if let date = removed.nextEventDate {
                let instant = Self.milliseconds(date)
                dueAt[instant]?.remove(id)
                if dueAt[instant]?.isEmpty == true {
                    dueAt[instant] = nil
                    dueInstants.remove(at: dueInstants.partitioningIndex { $0 >= instant })
                }
            }
        }

        private mutating func removeUpdate(_ sequence: Int64) {
            guard let removed = updates.removeValue(forKey: sequence) else { return }
            waitingByDevice[removed.device]?.removeAll { $0 == sequence }
        }

        static func milliseconds(_ date: Date) -> Int64 { AppStoreJSON.milliseconds(from: date) }

        static func insert<Value: Comparable>(_ value: Value, into values: inout [Value]) {
            if let last = values.last, last >= value {
                values.insert(value, at: values.partitioningIndex { $0 >= value })
            } else {
                values.append(value)
            }
        }
    }

    /// A reader over a snapshot of the contents.
    final class Reader: LedgerReader {
        let contents: Contents
        let failure: AppStoreError? = nil
        var version: Int64 { contents.version }

        init(contents: Contents) { self.contents = contents }

        func meta(_ key: String) -> String? { contents.meta[key] }
        func account(_ name: String) -> StoreAccount? { contents.accounts[name] }

        func accounts(after name: String?, limit: Int) -> [StoreAccount] {
            Array(contents.accounts.values.filter { name == nil || $0.name > name! }.sorted { $0.name < $1.name }.prefix(limit))
        }

        func accounts(matching text: String, after name: String?, limit: Int) -> [StoreAccount] {
            // ASCII case only, as SQLite's lower().
            let fold = { (text: String) in String(text.unicodeScalars.map { ("A"..."Z").contains($0) ? Character(Unicode.Scalar($0.value + 32)!) : Character($0) }) }
            let wanted = fold(text)
            return Array(accounts(after: name, limit: .max).lazy.filter { fold($0.name).contains(wanted) }.prefix(limit))
        }

        func accounts(familyGroup: String) -> [StoreAccount] {
            contents.accounts.values.filter { $0.familyGroup == familyGroup }.sorted { $0.name < $1.name }
        }

        func device(_ name: String) -> StoreDevice? { contents.devices[name] }

        func devices(account: String) -> [StoreDevice] {
            (contents.devicesByAccount[account] ?? []).sorted().compactMap { contents.devices[$0] }
        }

        func devices(after name: String?, limit: Int) -> [StoreDevice] {
            Array(contents.devices.values.filter { name == nil || $0.name > name! }.sorted { $0.name < $1.name }.prefix(limit))
        }

        func transaction(_ id: UInt64) -> LedgerTransaction? { contents.transactions[id] }

        func transactions(_ query: TransactionQuery) -> [LedgerTransaction] {
            let candidates: [UInt64]
            if let original = query.originalID {
                candidates = contents.transactionsByOriginal[original] ?? []
            } else if let source = query.familySourceID {
                candidates = contents.transactionsByFamilySource[source] ?? []
            } else if let account = query.account, query.entitlementCandidatesOnly {
                candidates = contents.entitlementCandidatesByAccount[account] ?? []
            } else if let account = query.account, query.unfinishedOnly {
                candidates = contents.unfinishedByAccount[account] ?? []
            } else if let account = query.account, let product = query.productID {
                candidates = contents.transactionsByAccountProduct[account + "\u{0}" + product] ?? []
            } else if let account = query.account {
                candidates = contents.transactionsByAccount[account] ?? []
            } else {
                candidates = contents.transactions.keys.sorted()
            }
            var result: [LedgerTransaction] = []
            let ordered: any Sequence<UInt64> = query.newestFirst ? AnySequence(candidates.reversed()) : AnySequence(candidates)
            for id in ordered {
                if let after = query.afterID, query.newestFirst ? id >= after : id <= after { continue }
                guard let transaction = contents.transactions[id], query.matches(transaction) else { continue }
                result.append(transaction)
                if result.count >= query.limit { break }
            }
            return result
        }

        func transactionKeys(_ source: TransactionListingSource, offset: Int) -> [TransactionListing.Key] {
            var unlimited = source
            unlimited.limit = Int.max
            let order = TransactionListing.SortKey(rawValue: source.order.rawValue) ?? .id
            let listing = TransactionListing(sort: order, descending: source.descending)
            return transactions(unlimited).dropFirst(offset).prefix(source.limit).map { transaction in
                // A source's sort values never depend on a state (no source is ordered by state).
                TransactionListing.Key(value: listing.sortValue(of: transaction, state: .purchased), id: transaction.id)
            }
        }

        func transactionCount(_ source: TransactionListingSource) -> Int { transactions(source).count }

        /// Every transaction, filtered and sorted: a memory store is small.
        func transactions(_ source: TransactionListingSource) -> [LedgerTransaction] {
            let listing = TransactionListing(account: source.account, productIDs: source.productID.map { [$0] },
                                             states: source.state.map { [$0] }, purchasedFrom: source.purchasedFrom,
                                             purchasedBefore: source.purchasedBefore, sort: TransactionListing.SortKey(rawValue: source.order.rawValue) ?? .id,
                                             descending: source.descending)
            var rows: [(transaction: LedgerTransaction, value: TransactionListing.SortValue)] = []
            for transaction in contents.transactions.values {
                let state = ListedState.of(transaction, subscription: contents.subscriptions[transaction.originalID], now: source.now)
                guard listing.matches(transaction, state: state) else { continue }
                let value = listing.sortValue(of: transaction, state: state)
                if let after = source.after, !listing.precedes(after, (value, transaction.id)) { continue }
                rows.append((transaction, value))
            }
            rows.sort { listing.precedes(($0.value, $0.transaction.id), ($1.value, $1.transaction.id)) }
            return rows.prefix(source.limit).map(\.transaction)
        }

        func listedProducts() -> [String: CatalogProduct.Kind] {
            var products: [String: CatalogProduct.Kind] = [:]
            for transaction in contents.transactions.values { products[transaction.productID] = transaction.productKind }
            return products
        }

        func subscription(_ originalTransactionID: UInt64) -> SubscriptionRecord? { contents.subscriptions[originalTransactionID] }

        func subscriptions(_ query: SubscriptionQuery) -> [SubscriptionRecord] {
            let candidates: any Sequence<UInt64>
            if let source = query.familySourceID {
                candidates = contents.subscriptionsByFamilySource[source] ?? []
            } else if let account = query.account {
                candidates = contents.subscriptionsByAccount[account] ?? []
            } else {
                candidates = contents.subscriptions.keys
            }
            return Array(candidates.sorted().lazy.filter { query.afterID == nil || $0 > query.afterID! }
                .compactMap { self.contents.subscriptions[$0] }.filter { query.matches($0) }.prefix(query.limit))
        }

        func nextEventDate(after: Date?, notAfter limit: Date) -> Date? {
            let instants = contents.dueInstants
            let start = after.map { after in instants.partitioningIndex { $0 > Contents.milliseconds(after) } } ?? 0
            guard start < instants.count, instants[start] <= Contents.milliseconds(limit) else { return nil }
            return AppStoreJSON.date(fromMilliseconds: instants[start])
        }

        func subscriptions(dueAt date: Date) -> [SubscriptionRecord] {
            (contents.dueAt[Contents.milliseconds(date)] ?? []).sorted().compactMap { contents.subscriptions[$0] }
        }

        func notification(sequence: Int64) -> NotificationRecord? {
            let index = contents.notifications.partitioningIndex { $0.sequence >= sequence }
            guard index < contents.notifications.count, contents.notifications[index].sequence == sequence else { return nil }
            return contents.notifications[index]
        }

        func testNotification(uuid: String) -> NotificationRecord? {
            contents.notifications.first { $0.type == .test && $0.notificationUUID == uuid }
        }

        func notificationBacklog() -> (count: Int, oldest: Date?) {
            let waiting = contents.notifications.filter { $0.delivery.nextAttemptDate != nil }
            return (waiting.count, waiting.map(\.date).min())
        }

        func notificationDelivery(sequence: Int64) -> NotificationDelivery? {
            notification(sequence: sequence)?.delivery
        }

        func notificationsDue(notAfter date: Date, unclaimedAt realTime: Date, limit: Int) -> [NotificationRecord] {
            let due = contents.notifications.filter {
                ($0.delivery.nextAttemptDate.map { $0 <= date } ?? false) && ($0.delivery.claimedUntil.map { $0 <= realTime } ?? true)
            }
            return Array(due.sorted { ($0.delivery.nextAttemptDate!, $0.sequence) < ($1.delivery.nextAttemptDate!, $1.sequence) }.prefix(limit))
        }

        func notifications(aboutTransactions ids: [UInt64]) -> [NotificationRecord] {
            let wanted = Set(ids)
            return contents.notifications.filter { $0.transactionID.map(wanted.contains) ?? false }
        }

        func notifications(from start: Date, to end: Date, after sequence: Int64, limit: Int) -> [NotificationRecord] {
            Array(contents.notifications.lazy.filter { $0.sequence > sequence && $0.date >= start && $0.date <= end }.prefix(limit))
        }

        func waitingUpdates(device: String, channel: LedgerUpdate.Channel, limit: Int) -> [LedgerUpdate] {
            Array((contents.waitingByDevice[device] ?? []).lazy.compactMap { self.contents.updates[$0] }.filter { $0.channel == channel }.prefix(limit))
        }
    }
}

extension Array {
    /// The first index whose element satisfies `predicate`, for a predicate that is false and then
    /// true along the array (a bisection).
    func partitioningIndex(where predicate: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if predicate(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
