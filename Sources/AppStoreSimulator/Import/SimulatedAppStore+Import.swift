import AppStoreModels
import Foundation
import StoreKitCatalog

extension SimulatedAppStore {
    /// How an import names what it makes.
    public struct ImportOptions: Sendable {
        /// The account the customer's history goes to; `nil` names each customer `customer-<appTransactionId>`.
        public var accountName: String?

        public init(accountName: String? = nil) {
            self.accountName = accountName
        }
    }

    /// What ``importSignedHistory(_:options:)`` did.
    public struct HistoryImport: Sendable {
        /// The accounts that received history, by name.
        public var accounts: [String]
        public var transactionCount: Int
        public var subscriptionCount: Int
        public var notificationCount: Int
        /// Copies of items that agreed with another and were merged into it, notifications the store held already included.
        public var mergedCopies: Int
        /// What in the data disagrees with the rest, item by item.
        public var contradictions: [ImportContradiction]
        /// The store's time after the import: the newest signed date of the data, or later.
        public var clock: Date
    }

    /// Rebuilds customers from data the App Store signed, in one unit of work: nothing of it is
    /// committed unless all of it is.
    ///
    /// Each customer (the items sharing an `appTransactionId`) becomes an account holding its
    /// transactions with Apple's identifiers, dates, prices, offers, revocations and upgrades; each
    /// auto-renewable subscription gets its renewal state from the newest renewal info and status in the
    /// data; notifications join the outbox as history, never posted again. The store's counters move
    /// past the imported identifiers, and a manual clock moves to the newest signed date (playing what
    /// other subscriptions have due on the way), so that the store continues the history by its own rules.
    ///
    /// - Throws: When an item is for another app or environment than the store's, names a product the
    ///   store does not sell, or would replace a transaction the store made itself.
    public func importSignedHistory(_ history: SignedHistory, options: ImportOptions = ImportOptions()) throws(AppStoreError) -> HistoryImport {
        for item in history.allTransactions {
            if let bundleId = item.payload.bundleId, bundleId != identity.bundleId {
                throw .control(.invalidAction, "\(item.source): the transaction is for \(bundleId); this store sells for \(identity.bundleId)")
            }
            if let environment = item.payload.environment, environment != identity.environment {
                throw .control(.invalidAction, "\(item.source): the transaction is from \(environment.rawValue); this store is \(identity.environment.rawValue)")
            }
        }
        let newest = history.signedDates.max()
        let asOf = max(try currentTime(), newest ?? .distantPast)
        let rules = HistoryReconstruction.Rules(
            period: { [catalog = catalog()] in catalog.product(id: $0)?.subscription?.period },
            billingRetryPeriod: { [schedule] in schedule.billingRetryPeriod(for: $0) })
        let plan = try HistoryReconstruction(history, accountName: options.accountName?.ledgerName, asOf: asOf, rules: rules)
        let missing = Set(plan.customers.flatMap { $0.transactions.map(\.productID) }).filter { catalog().product(id: $0) == nil }
        guard missing.isEmpty else {
            throw .control(.invalidProductIdentifier, "this store does not sell \(missing.sorted().joined(separator: ", ")); add them to its .storekit file, or import into a new store, which adds them")
        }
        var counts = (transactions: 0, subscriptions: 0, notifications: 0, alreadyHeld: 0)
        try writing { (change) throws(AppStoreError) in
            change.keepsImportedRenewalInfo = true
            for customer in plan.customers {
                try importCustomer(customer, into: &change)
                counts.transactions += customer.transactions.count
                counts.subscriptions += customer.subscriptions.count
            }
            // A notification the store already holds (an import done before) is not appended again.
            let dates = plan.notifications.map(\.date)
            let held = dates.isEmpty ? [] : Set(ledger.notifications(from: dates.min()!, to: dates.max()!, after: 0, limit: .max).map(\.notificationUUID))
            for var record in plan.notifications {
                if held.contains(record.notificationUUID) {
                    counts.alreadyHeld += 1
                    continue
                }
                record.sequence = change.counters.nextNotificationSequence
                change.counters.nextNotificationSequence += 1
                change.ledger.appendedNotifications.append(record)
                counts.notifications += 1
            }
        }
        if let newest, clock is ManualStoreClock, newest > (try currentTime()) { try advanceTime(to: newest) }
        return HistoryImport(accounts: plan.customers.map(\.name), transactionCount: counts.transactions, subscriptionCount: counts.subscriptions,
                             notificationCount: counts.notifications, mergedCopies: plan.mergedCopies + counts.alreadyHeld, contradictions: plan.contradictions,
                             clock: try currentTime())
    }

    private func importCustomer(_ customer: HistoryReconstruction.Customer, into change: inout Change) throws(AppStoreError) {
        var account: StoreAccount
        if let existing = storedAccount(customer.name, in: change) {
            if let id = customer.appTransactionID, existing.appTransactionID != id {
                throw .control(.invalidAction, "account \(customer.name) exists with app transaction \(existing.appTransactionID), not \(id); import it under another --account")
            }
            account = existing
        } else {
            account = StoreAccount(name: customer.name, appTransactionID: customer.appTransactionID ?? change.takeAppTransactionID(),
                                   originalPurchaseDate: customer.originalPurchaseDate,
                                   originalApplicationVersion: customer.originalApplicationVersion ?? identity.originalApplicationVersion)
        }
        if let storefront = customer.storefront, Storefront(code: storefront) != nil { account.storefront = storefront }
        if account.appAccountToken == nil { account.appAccountToken = customer.appAccountToken }
        change.ledger.accounts[account.name] = account
        if let id = UInt64(account.appTransactionID), id >= change.counters.nextAppTransactionID { change.counters.nextAppTransactionID = id + 1 }

        for transaction in customer.transactions {
            if let existing = storedTransaction(transaction.id, in: change) {
                guard existing.isImported else {
                    throw .control(.invalidAction, "transaction \(transaction.id) exists in this store and was made by it; an import never replaces the store's own transactions")
                }
                guard existing.account == transaction.account else {
                    throw .control(.invalidAction, "transaction \(transaction.id) was imported before into account \(existing.account), not \(transaction.account)")
                }
            }
            change.record(transaction)
            if transaction.id >= change.counters.nextTransactionID { change.counters.nextTransactionID = transaction.id + 1 }
            if let line = transaction.webOrderLineItemID.flatMap({ UInt64($0) }), line >= change.counters.nextWebOrderLineItemID {
                change.counters.nextWebOrderLineItemID = line + 1
            }
        }
        for record in customer.subscriptions {
            if let existing = storedSubscription(record.originalTransactionID, in: change), existing.account != record.account {
                throw .control(.invalidAction, "original transaction \(record.originalTransactionID) belongs to account \(existing.account) in this store, not \(record.account)")
            }
            change.record(record)
        }
    }
}
