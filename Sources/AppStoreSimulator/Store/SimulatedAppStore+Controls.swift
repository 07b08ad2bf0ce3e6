import AppStoreModels
import Foundation
import StoreKitCatalog

/// A transaction as `SKTestSession.allTransactions()` describes it.
public struct TestTransaction: Hashable, Sendable, Codable {
    /// The states of `SKPaymentTransactionState`.
    public enum State: String, Hashable, Sendable, Codable {
        case purchasing, purchased, failed, restored, deferred
    }

    public let identifier: UInt64
    public let originalTransactionIdentifier: UInt64
    public let productIdentifier: String
    public let state: State
    public let purchaseDate: Date
    /// When the transaction was refunded or revoked.
    public let cancelDate: Date?
    public let expirationDate: Date?
    public let autoRenewingEnabled: Bool
    /// An interrupted purchase waiting to be resolved.
    public let hasPurchaseIssue: Bool
    public let isPendingPriceIncreaseConsent: Bool
    public let pendingAskToBuyConfirmation: Bool
    public let isFinished: Bool
    public let account: String
    /// The purchase's custom options (`Product.PurchaseOption.custom(key:value:)`), in words; not in
    /// the signed transaction.
    public var customPurchaseOptions: [String: String]?
}

extension SimulatedAppStore {
    // MARK: Settings

    /// Changes settings at runtime; what is set stays until ``resetToDefaultState()``.
    public func updateSettings(_ body: (inout SettingsOverrides) -> Void) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            var overrides = self.overrides
            body(&overrides)
            try overrides.validate()
            change.overrides = overrides
            enqueueStorefrontChanges(from: settings, to: overrides.applied(to: defaults), change: &change)
        }
    }

    /// Replaces every runtime setting at once (a test session's properties, applied together).
    public func replaceSettingsOverrides(_ overrides: SettingsOverrides) throws(AppStoreError) {
        try updateSettings { $0 = overrides }
    }

    /// Drops every runtime setting, back to the `.storekit` file's values.
    public func resetToDefaultState() throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            change.overrides = SettingsOverrides()
            enqueueStorefrontChanges(from: settings, to: defaults, change: &change)
        }
    }

    /// Takes a product off sale, or puts it back: unavailable products cannot be bought and their
    /// subscriptions expire at renewal (`EXPIRED` `PRODUCT_NOT_FOR_SALE`).
    public func setProductAvailable(_ productID: String, _ available: Bool) throws(AppStoreError) {
        guard catalog().product(id: productID) != nil else { throw .control(.invalidProductIdentifier, "no product \(productID)") }
        try updateSettings { overrides in
            var unavailable = overrides.unavailableProducts ?? self.defaults.unavailableProducts
            if available { unavailable.remove(productID) } else { unavailable.insert(productID) }
            overrides.unavailableProducts = unavailable
        }
    }

    /// Makes a StoreKit API throw `failure` from now on; `nil` stops it.
    public func setSimulatedError(_ failure: SimulatedFailure?, forAPI api: FailableAPI) throws(AppStoreError) {
        if let failure, !failure.applies(to: api) {
            throw .control(.invalidAction, "\(api.rawValue) cannot fail with \(failure)")
        }
        try updateSettings { overrides in
            var errors = overrides.simulatedErrors ?? [:]
            errors[api] = .some(failure)
            overrides.simulatedErrors = errors
        }
    }

    /// The failure an API currently throws.
    public func simulatedError(forAPI api: FailableAPI) throws(AppStoreError) -> SimulatedFailure? {
        try reading { settings.simulatedErrors[api] }
    }

    /// Throws the simulated failure of `api`, if one is set; clients call it for the APIs that are
    /// theirs alone (`AppStore.sync()`, the manage-subscriptions and offer-code sheets).
    public func checkSimulatedFailure(_ api: FailableAPI) throws(AppStoreError) {
        try reading { () throws(AppStoreError) in
            if let failure = settings.simulatedErrors[api] { throw failure.error(for: api) }
        }
    }

    // MARK: Ask to Buy and interrupted purchases

    /// A parent approves a pending Ask to Buy purchase; it arrives through every device's updates.
    public func approveAskToBuyTransaction(_ id: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in try complete(id, expecting: .pendingApproval, kind: .approval, change: &change) }
    }

    /// A parent declines a pending Ask to Buy purchase; no transaction ever appears.
    public func declineAskToBuyTransaction(_ id: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard var transaction = ledger.transaction(id) else { throw .control(.noTransactionFound, "no transaction \(id)") }
            guard transaction.state == .pendingApproval else {
                throw .control(.invalidAction, "transaction \(id) is not waiting for Ask to Buy approval")
            }
            transaction.state = .declined
            change.record(transaction)
        }
    }

    /// Resolves the issue of an interrupted purchase (or a billing problem of a subscription).
    public func resolveIssueForTransaction(_ id: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard let transaction = ledger.transaction(id) else { throw .control(.noTransactionFound, "no transaction \(id)") }
            if transaction.state == .interrupted {
                try complete(id, expecting: .interrupted, kind: .resolution, change: &change)
            } else {
                try resolveBillingIssue(originalTransactionID: transaction.originalID, change: &change)
            }
        }
    }

    private func complete(_ id: UInt64, expecting state: LedgerTransaction.State, kind: LedgerUpdate.Kind,
                          change: inout Change) throws(AppStoreError) {
        guard var transaction = ledger.transaction(id) else { throw .control(.noTransactionFound, "no transaction \(id)") }
        guard transaction.state == state else {
            throw .control(.invalidAction, "transaction \(id) is not \(state == .pendingApproval ? "waiting for Ask to Buy approval" : "interrupted")")
        }
        let now = clock.now()
        transaction.state = .purchased
        transaction.purchaseDate = now
        transaction.originalPurchaseDate = now
        if transaction.productKind == .autoRenewable {
            // A plan change waiting for approval changes the subscription it was asked for.
            if try approveChange(transaction, change: &change) { return }
            try startSubscription(&transaction, at: now, updateKind: kind, change: &change)
        } else {
            // A non-consumable is owned once: approving another request for it leaves the ownership
            // there is, as buying it again does, and the request goes.
            if transaction.productKind == .nonConsumable, ownedTransaction(productID: transaction.productID, account: transaction.account) != nil {
                change.ledger.deletedTransactions.insert(id)
                return
            }
            change.record(transaction)
            try enqueueUpdateForAllDevices(transaction, kind: kind, at: now, change: &change)
            try shareWithFamily(transaction, at: now, change: &change)
            try appendNotification(.oneTimeCharge, subtype: nil, transaction: transaction, at: now, change: &change)
        }
    }

    // MARK: Refunds, deletion

    /// Refunds a transaction immediately, as a refund made outside the app in the test environment.
    ///
    /// The transaction gets its revocation date and reason and arrives again through every device's
    /// updates; family copies are revoked; the outbox gets `REFUND` (and `REVOKE` per family copy).
    public func refundTransaction(_ id: UInt64, reason: RevocationReason = .refundedForOtherReason) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in try refund(id, reason: reason, change: &change) }
    }

    func refund(_ id: UInt64, reason: RevocationReason, change: inout Change) throws(AppStoreError) {
        guard var transaction = storedTransaction(id, in: change) else {
            throw .control(.noTransactionFound, "no transaction \(id)")
        }
        guard transaction.isPurchased else { throw .control(.invalidAction, "transaction \(id) was never completed") }
        guard transaction.ownership == .purchased else {
            throw .control(.invalidAction, "transaction \(id) was shared by a family member; refund the purchaser's transaction")
        }
        guard !transaction.isRevoked else { throw .refundRequest(.duplicateRequest, "transaction \(id) is already refunded") }
        let now = clock.now()
        transaction.revocation = .init(date: now, reason: reason, type: .refundFull)
        change.record(transaction)
        try enqueueUpdateForAllDevices(transaction, kind: .revocation, at: now, change: &change)
        if transaction.productKind == .autoRenewable {
            try refundSubscriptionPeriod(transaction, at: now, change: &change)
        } else {
            try appendNotification(.refund, subtype: nil, transaction: transaction, at: now, change: &change)
        }
        try revokeFamilyCopies(of: id, reason: reason, at: now, change: &change)
    }

    /// A refund the customer asks for in the app (`beginRefundRequest`): decided at once in the test
    /// environment, approved (`REFUND`) unless `declined` (`REFUND_DECLINED`, the purchase stands).
    /// Consumables and subscriptions first send `CONSUMPTION_REQUEST`.
    public func requestRefund(_ id: UInt64, reason: ConsumptionRequestReason = .unintendedPurchase, declined: Bool = false) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            try checkSimulatedFailure(.refundRequest)
            guard let transaction = ledger.transaction(id) else { throw .refundRequest(.failed, "no transaction \(id)") }
            guard !transaction.isRevoked else { throw .refundRequest(.duplicateRequest, "transaction \(id) is already refunded") }
            if transaction.productKind == .consumable || transaction.productKind == .autoRenewable {
                try appendNotification(.consumptionRequest, subtype: nil, transaction: transaction,
                                       consumptionRequestReason: reason, at: clock.now(), change: &change)
            }
            guard !declined else {
                try appendNotification(.refundDeclined, subtype: nil, transaction: transaction, at: clock.now(), change: &change)
                return
            }
            let revocationReason: RevocationReason = reason == .fulfillmentIssue ? .refundedDueToIssue : .refundedForOtherReason
            try refund(id, reason: revocationReason, change: &change)
        }
    }

    /// Reverses a refund, as the App Store does after a dispute (`REFUND_REVERSED`): the transaction
    /// and its family copies are entitled again and reach the account's devices through their updates.
    /// A refunded subscription period that has not ended is reinstated as subscribed, without
    /// automatic renewal (the refund turned it off; the customer turns it back on), and expires at its
    /// end; one that has ended is reinstated as expired.
    ///
    /// - Throws: `invalidAction` for a transaction that was not refunded.
    public func reverseRefund(_ id: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard var transaction = ledger.transaction(id) else { throw .control(.noTransactionFound, "no transaction \(id)") }
            guard let revocation = transaction.revocation, revocation.type != .familyRevoke, transaction.ownership == .purchased else {
                throw .control(.invalidAction, "transaction \(id) was not refunded")
            }
            let now = clock.now()
            transaction.revocation = nil
            change.record(transaction)
            try enqueueUpdateForAllDevices(transaction, kind: .purchase, at: now, change: &change)
            if transaction.productKind == .autoRenewable {
                try reinstateSubscription(of: transaction, at: now, change: &change)
                return
            }
            for var copy in ledger.transactions(TransactionQuery(familySourceID: id)) where copy.revocation?.type == .familyRevoke {
                copy.revocation = nil
                change.record(copy)
                try enqueueUpdateForAllDevices(copy, kind: .familyShare, at: now, change: &change)
            }
            try appendNotification(.refundReversed, subtype: nil, transaction: transaction, at: now, change: &change)
        }
    }

    /// Puts a subscription whose current period's refund was reversed back as it stood, with
    /// `REFUND_REVERSED` carrying its status and renewal info.
    private func reinstateSubscription(of transaction: LedgerTransaction, at now: Date, change: inout Change) throws(AppStoreError) {
        guard var record = storedSubscription(transaction.originalID, in: change) else {
            try appendNotification(.refundReversed, subtype: nil, transaction: transaction, at: now, change: &change)
            return
        }
        if record.latestTransactionID == transaction.id, record.state == .revoked {
            let running = (transaction.expirationDate ?? now) > now
            record.state = running ? .subscribed : .expired
            record.expirationIntent = running ? nil : .customerCancelled
            change.ledger.subscriptions[record.originalTransactionID] = record
            try enqueueStatusUpdates(record, change: &change)
        }
        try appendSubscriptionNotification(.refundReversed, subtype: nil, record: record, transaction: transaction, change: &change)
        try syncFamily(record, newTransaction: nil, change: &change)
    }

    /// Deletes a transaction as if it never happened, with its dependants: renewals of an original
    /// subscription purchase and family copies. Re-enables one-time purchases and intro offers.
    public func deleteTransaction(_ id: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard let transaction = ledger.transaction(id) else { throw .control(.noTransactionFound, "no transaction \(id)") }
            var doomed: Set<UInt64> = [id]
            if transaction.id == transaction.originalID {
                for other in ledger.transactions(TransactionQuery(originalID: id)) { doomed.insert(other.id) }
            }
            // Family copies of anything doomed (and copies of copies), found by index.
            var frontier = Array(doomed)
            while let source = frontier.popLast() {
                for copy in ledger.transactions(TransactionQuery(familySourceID: source)) where doomed.insert(copy.id).inserted {
                    frontier.append(copy.id)
                }
            }
            change.ledger.deletedTransactions = doomed
            for original in doomed where ledger.subscription(original) != nil { change.ledger.deletedSubscriptions.insert(original) }
        }
    }

    /// Deletes every transaction; accounts and devices stay.
    public func clearTransactions() throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in change.ledger.deletesEveryTransaction = true }
    }

    /// Sends a `TEST` notification to the outbox, as the App Store Server API's request does.
    @discardableResult
    public func requestTestNotification() throws(AppStoreError) -> String {
        try writing { (change) throws(AppStoreError) in
            try appendNotification(.test, subtype: nil, transaction: nil, at: clock.now(), change: &change)
            return change.ledger.appendedNotifications.last!.notificationUUID
        }
    }

    // MARK: Accounts

    /// Adds or changes an account; `appAccountToken: .some(nil)` removes the account's token.
    public func configureAccount(_ name: String, storefront: String?? = nil, askToBuy: Bool? = nil, appAccountToken: UUID?? = nil) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            var (account, _) = try register(account: name, device: nil, in: &change)
            if let storefront {
                if let code = storefront, Storefront(code: code) == nil { throw .control(.invalidAction, "unknown storefront \(code)") }
                let before = self.storefront(of: account)
                account.storefront = storefront?.uppercased()
                let after = self.storefront(of: account)
                if after != before { enqueueStorefrontChange(after, account: name, change: &change) }
            }
            if let askToBuy { account.askToBuy = askToBuy }
            if let appAccountToken { account.appAccountToken = appAccountToken }
            change.ledger.accounts[account.name] = account
        }
    }

    /// Adds a device signed in to an account.
    public func addDevice(_ name: String, account: String) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in _ = try register(account: account, device: name, in: &change) }
    }

    /// An account by name, if registered.
    public func account(named name: String) throws(AppStoreError) -> StoreAccount? {
        try reading { ledger.account(name.ledgerName) }
    }

    /// The devices signed in to an account, by name.
    public func devices(ofAccount name: String) throws(AppStoreError) -> [StoreDevice] {
        try reading { ledger.devices(account: name.ledgerName) }
    }

    /// A device by name, if registered.
    public func device(named name: String) throws(AppStoreError) -> StoreDevice? {
        try reading { ledger.device(name.ledgerName) }
    }

    /// The storefront an account buys in: its own, or the store's setting.
    public func storefront(forAccount name: String) throws(AppStoreError) -> Storefront {
        try reading { ledger.account(name).map { storefront(of: $0) } ?? Storefront(code: settings.storefront) ?? .unitedStates }
    }

    /// The settings changed at runtime, without the configuration's defaults.
    public func settingsOverrides() throws(AppStoreError) -> SettingsOverrides {
        try reading { overrides }
    }

    /// The accounts, by name: at most `limit` after the name `after` (the previous page's last).
    public func allAccounts(after: String? = nil, limit: Int = .max) throws(AppStoreError) -> [StoreAccount] {
        try reading { ledger.accounts(after: after, limit: limit) }
    }

    /// The accounts whose names contain `text` (ignoring ASCII case; every account when `nil`), by
    /// name: at most `limit` after the name `after`.
    public func allAccounts(matching text: String?, after: String? = nil, limit: Int = .max) throws(AppStoreError) -> [StoreAccount] {
        guard let text else { return try allAccounts(after: after, limit: limit) }
        return try reading { ledger.accounts(matching: text, after: after, limit: limit) }
    }

    /// The devices, by name: at most `limit` after the name `after`.
    public func allDevices(after: String? = nil, limit: Int = .max) throws(AppStoreError) -> [StoreDevice] {
        try reading { ledger.devices(after: after, limit: limit) }
    }

    // MARK: The transaction manager's view

    /// Every transaction in the store, pending and declined ones included, as `SKTestSession.allTransactions()`.
    public func allTestTransactions(account: String? = nil, after: UInt64? = nil, limit: Int = .max) throws(AppStoreError) -> [TestTransaction] {
        try reading { ledger.transactions(TransactionQuery(account: account, afterID: after, limit: limit)).map(testTransaction) }
    }

    private func testTransaction(_ transaction: LedgerTransaction) -> TestTransaction {
        let subscription = ledger.subscription(transaction.originalID)
        let state: TestTransaction.State
        switch transaction.state {
        case .purchased: state = .purchased
        case .pendingApproval: state = .deferred
        case .interrupted: state = .failed
        case .declined: state = .failed
        }
        return TestTransaction(
            identifier: transaction.id, originalTransactionIdentifier: transaction.originalID,
            productIdentifier: transaction.productID, state: state, purchaseDate: transaction.purchaseDate,
            cancelDate: transaction.revocation?.date, expirationDate: transaction.expirationDate,
            autoRenewingEnabled: subscription?.autoRenewEnabled ?? false, hasPurchaseIssue: transaction.state == .interrupted,
            isPendingPriceIncreaseConsent: subscription?.isPendingPriceIncreaseConsent ?? false,
            pendingAskToBuyConfirmation: transaction.state == .pendingApproval, isFinished: transaction.isFinished,
            account: transaction.account, customPurchaseOptions: transaction.customPurchaseOptions)
    }
}

extension SimulatedAppStore {
    /// Appends a long history to an account: `count` completed, finished purchases of a product, made
    /// `spacing` apart ending now, in large commits and without feed entries or notifications.
    ///
    /// For benchmarks and for load-testing a backend against a store with months of history; the
    /// transactions are ordinary ledger rows, with identifiers taken from the ledger's counters.
    ///
    /// - Returns: The identifiers of the first and last imported transaction.
    @discardableResult
    package func importHistory(productID: String, account: String, count: Int, spacing: TimeInterval = 60,
                              commitSize: Int = 50_000) throws(AppStoreError) -> ClosedRange<UInt64>? {
        guard count > 0 else { return nil }
        var first: UInt64?
        var last: UInt64 = 0
        var imported = 0
        while imported < count {
            let size = min(commitSize, count - imported)
            try writing { (change) throws(AppStoreError) in
                let (owner, _) = try register(account: account, device: nil, in: &change)
                guard let product = catalog(storefront: storefront(of: owner).countryCode).product(id: productID) else {
                    throw .control(.invalidProductIdentifier, "no product \(productID)")
                }
                guard product.kind != .autoRenewable else {
                    throw .control(.invalidProductType, "a history is imported for one-time purchases, not subscriptions")
                }
                let now = clock.now()
                for offset in imported..<(imported + size) {
                    let id = change.takeTransactionID()
                    let date = now.addingTimeInterval(-spacing * Double(count - offset))
                    var transaction = LedgerTransaction(
                        id: id, originalID: id, account: account, device: nil, productID: product.id, productKind: product.kind,
                        subscriptionGroupID: nil, purchaseDate: date, originalPurchaseDate: date, expirationDate: nil, quantity: 1,
                        ownership: .purchased, familySourceID: nil, webOrderLineItemID: nil, appAccountToken: nil,
                        storefront: storefront(of: owner), price: product.priceInMilliunits, reason: .purchase, offer: nil, state: .purchased)
                    transaction.appTransactionID = owner.appTransactionID
                    transaction.finishedDate = date
                    change.record(transaction)
                    if first == nil { first = id }
                    last = id
                }
            }
            imported += size
        }
        return first.map { $0...last }
    }
}

extension SimulatedAppStore {
    /// What ``importSubscribers(productID:accountPrefix:count:commitSize:)`` made.
    package struct ImportedSubscribers: Sendable {
        /// How many subscribers were made.
        package let count: Int
        /// When the last of them comes up for renewal: advancing the clock to this date renews each once.
        package let lastRenewalDate: Date
        let renewalDates: @Sendable (Int) -> Date

        /// When the subscriber numbered `index` (0 the earliest purchase, `count - 1` the latest)
        /// first comes up for renewal. They renew in the order of their numbers, so advancing the clock
        /// to `renewalDate(ofSubscriber: k - 1)` renews exactly the first `k`, each once.
        package func renewalDate(ofSubscriber index: Int) -> Date {
            renewalDates(min(max(0, index), count - 1))
        }
    }

    /// The span over which imported subscribers' purchases are spread: shorter than the shortest
    /// month, so that advancing to the last first renewal renews every subscriber exactly once.
    static let importedSubscriberSpread: TimeInterval = 27 * 86_400

    /// Makes `count` subscribers of an auto-renewable product at once, for benchmarks and load tests:
    /// new accounts `accountPrefix0`, `accountPrefix1`, …, each with one purchase of the product (its own
    /// original transaction, an app account token derived from its number) whose purchase dates are
    /// spread evenly over the 27 days before now, so every subscriber renews once in the coming period.
    ///
    /// Like ``importHistory(productID:account:count:spacing:commitSize:)`` this is history: committed
    /// `commitSize` subscribers at a time, without notifications or feed entries, in memory bounded by
    /// one commit whatever `count` is.
    @discardableResult
    package func importSubscribers(productID: String, accountPrefix: String, count: Int,
                                  commitSize: Int = 10_000) throws(AppStoreError) -> ImportedSubscribers {
        guard count > 0 else { throw .control(.invalidAction, "import at least one subscriber") }
        let now = clock.now()
        var lastRenewal = now
        var imported = 0
        while imported < count {
            let size = min(commitSize, count - imported)
            let chunkLast = try writing { (change) throws(AppStoreError) -> Date in
                guard let product = catalog().product(id: productID), let info = product.subscription, product.kind == .autoRenewable else {
                    throw .control(.invalidProductIdentifier, "no auto-renewable subscription \(productID) in the catalog")
                }
                var last = now
                for index in imported..<(imported + size) {
                    let name = "\(accountPrefix)\(index)".ledgerName
                    guard storedAccount(name, in: change) == nil else {
                        throw .control(.invalidAction, "account \(name) exists: imported subscribers are new accounts")
                    }
                    let (owner, _) = try register(account: name, device: nil, in: &change)
                    let start = Self.importedPurchaseDate(of: index, among: count, before: now)
                    let expiration = schedule.end(of: info.period, count: 1, from: start)
                    let id = change.takeTransactionID()
                    let token = UUID(uuidString: String(format: "00000000-0000-4000-8000-%012llx", UInt64(index)))
                    var transaction = LedgerTransaction(
                        id: id, originalID: id, account: owner.name, device: nil, productID: product.id, productKind: .autoRenewable,
                        subscriptionGroupID: info.groupID, purchaseDate: start, originalPurchaseDate: start, expirationDate: expiration,
                        quantity: 1, ownership: .purchased, familySourceID: nil, webOrderLineItemID: change.takeWebOrderLineItemID(),
                        appAccountToken: token, storefront: storefront(of: owner), price: product.priceInMilliunits, reason: .purchase,
                        offer: nil, state: .purchased)
                    transaction.appTransactionID = owner.appTransactionID
                    transaction.finishedDate = start
                    change.record(transaction)
                    change.ledger.subscriptions[id] = SubscriptionRecord(
                        originalTransactionID: id, account: owner.name, groupID: info.groupID, productID: product.id,
                        autoRenewProductID: product.id, autoRenewEnabled: true, state: .subscribed, latestTransactionID: id,
                        expirationDate: expiration, anchorDate: start, anchorPeriod: info.period, periodsSinceAnchor: 1,
                        gracePeriodExpirationDate: nil, billingRetryEndDate: nil, expirationIntent: nil, priceIncrease: nil,
                        currentOffer: nil, queuedOffer: nil, recentSubscriptionStartDate: start, appAccountToken: token, familySourceID: nil)
                    last = max(last, expiration)
                }
                return last
            }
            lastRenewal = max(lastRenewal, chunkLast)
            imported += size
        }
        let renewalSchedule = schedule
        let period = catalog().product(id: productID)?.subscription?.period
        let last = lastRenewal
        return ImportedSubscribers(count: count, lastRenewalDate: last) { index in
            period.map { renewalSchedule.end(of: $0, count: 1, from: Self.importedPurchaseDate(of: index, among: count, before: now)) } ?? last
        }
    }

    /// The purchase date of imported subscriber `index` of `count`: evenly spread over the span
    /// before `now`, the earliest first.
    private static func importedPurchaseDate(of index: Int, among count: Int, before now: Date) -> Date {
        now.addingTimeInterval(-importedSubscriberSpread * Double(count - index) / Double(count))
    }
}

extension SimulatedAppStore {
    /// Makes `count` subscribers with months of history at once, for measuring the Transaction
    /// Manager at a size no test plays through: new accounts `accountPrefix0`, … whose subscriptions
    /// to the product began `periods` periods before now (staggered over 27 days), one transaction per
    /// period. Every fourth subscriber turned renewal off and its last period has ended (expired, the
    /// customer cancelled); every fiftieth period was refunded. Committed `commitSize` subscribers at
    /// a time, without notifications or feed entries.
    ///
    /// - Returns: How many transactions were made.
    @discardableResult
    package func importSubscriberHistories(productID: String, accountPrefix: String, count: Int, periods: Int,
                                          commitSize: Int = 5_000) throws(AppStoreError) -> Int {
        guard count > 0, periods > 0 else { throw .control(.invalidAction, "import at least one subscriber with at least one period") }
        let now = clock.now()
        var imported = 0
        var made = 0
        while imported < count {
            let size = min(commitSize, count - imported)
            made += try writing { (change) throws(AppStoreError) -> Int in
                guard let product = catalog().product(id: productID), let info = product.subscription, product.kind == .autoRenewable else {
                    throw .control(.invalidProductIdentifier, "no auto-renewable subscription \(productID) in the catalog")
                }
                var made = 0
                for index in imported..<(imported + size) {
                    let name = "\(accountPrefix)\(index)".ledgerName
                    guard storedAccount(name, in: change) == nil else {
                        throw .control(.invalidAction, "account \(name) exists: imported subscribers are new accounts")
                    }
                    let (owner, _) = try register(account: name, device: nil, in: &change)
                    let ends = index % 4 == 0
                    // Back from a date in the last 27 days, so the last period began then and ends after now
                    // (or, for one that ended, ended then).
                    var start = now.addingTimeInterval(-Self.importedSubscriberSpread * Double(count - index) / Double(count))
                    for _ in 0..<(periods - 1 + (ends ? 1 : 0)) { start = schedule.end(of: info.period, count: -1, from: start) }
                    var original: UInt64 = 0
                    let token = UUID(uuidString: String(format: "00000000-0000-4000-8000-%012llx", UInt64(index)))
                    var latest: LedgerTransaction?
                    for period in 0..<periods {
                        let expiration = schedule.end(of: info.period, count: 1, from: start)
                        let id = change.takeTransactionID()
                        if period == 0 { original = id }
                        var transaction = LedgerTransaction(
                            id: id, originalID: original, account: owner.name, device: nil, productID: product.id, productKind: .autoRenewable,
                            subscriptionGroupID: info.groupID, purchaseDate: start, originalPurchaseDate: start, expirationDate: expiration,
                            quantity: 1, ownership: .purchased, familySourceID: nil, webOrderLineItemID: change.takeWebOrderLineItemID(),
                            appAccountToken: token, storefront: storefront(of: owner), price: product.priceInMilliunits,
                            reason: period == 0 ? .purchase : .renewal, offer: nil, state: .purchased)
                        transaction.appTransactionID = owner.appTransactionID
                        transaction.finishedDate = start
                        if id % 50 == 0 { transaction.revocation = .init(date: start.addingTimeInterval(86_400), reason: .refundedForOtherReason, type: .refundFull) }
                        change.record(transaction)
                        latest = transaction
                        start = expiration
                        made += 1
                    }
                    guard let latest, let expiration = latest.expirationDate else { continue }
                    change.ledger.subscriptions[original] = SubscriptionRecord(
                        originalTransactionID: original, account: owner.name, groupID: info.groupID, productID: product.id,
                        autoRenewProductID: product.id, autoRenewEnabled: !ends, state: ends ? .expired : .subscribed, latestTransactionID: latest.id,
                        expirationDate: expiration, anchorDate: latest.originalPurchaseDate, anchorPeriod: info.period, periodsSinceAnchor: periods,
                        gracePeriodExpirationDate: nil, billingRetryEndDate: nil, expirationIntent: ends ? .customerCancelled : nil, priceIncrease: nil,
                        currentOffer: nil, queuedOffer: nil, recentSubscriptionStartDate: latest.originalPurchaseDate, appAccountToken: token,
                        familySourceID: nil)
                }
                return made
            }
            imported += size
        }
        return made
    }
}
