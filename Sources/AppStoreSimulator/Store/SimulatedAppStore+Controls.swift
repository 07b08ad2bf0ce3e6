import AppStoreModels
import Foundation
import StoreKitCatalog

/// A transaction as `SKTestSession.allTransactions()` describes it.
public struct TestTransaction: Hashable, Sendable {
    /// The states of `SKPaymentTransactionState`.
    public enum State: String, Hashable, Sendable {
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
}

extension SimulatedAppStore {
    // MARK: Settings

    /// Changes settings at runtime; what is set stays until ``resetToDefaultState()``.
    public func updateSettings(_ body: (inout SettingsOverrides) -> Void) throws(AppStoreError) {
        var overrides = self.overrides
        body(&overrides)
        var change = beginChange()
        change.overrides = overrides
        try commit(change)
    }

    /// Drops every runtime setting, back to the `.storekit` file's values.
    public func resetToDefaultState() throws(AppStoreError) {
        var change = beginChange()
        change.overrides = SettingsOverrides()
        try commit(change)
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
    public func simulatedError(forAPI api: FailableAPI) -> SimulatedFailure? {
        settings.simulatedErrors[api]
    }

    /// Throws the simulated failure of `api`, if one is set; clients call it for the APIs that are
    /// theirs alone (`AppStore.sync()`, the manage-subscriptions and offer-code sheets).
    public func checkSimulatedFailure(_ api: FailableAPI) throws(AppStoreError) {
        if let failure = settings.simulatedErrors[api] { throw failure.error(for: api) }
    }

    // MARK: Ask to Buy and interrupted purchases

    /// A parent approves a pending Ask to Buy purchase; it arrives through every device's updates.
    public func approveAskToBuyTransaction(_ id: UInt64) throws(AppStoreError) {
        try complete(id, expecting: .pendingApproval, kind: .approval)
    }

    /// A parent declines a pending Ask to Buy purchase; no transaction ever appears.
    public func declineAskToBuyTransaction(_ id: UInt64) throws(AppStoreError) {
        guard var transaction = transactions[id] else { throw .control(.noTransactionFound, "no transaction \(id)") }
        guard transaction.state == .pendingApproval else {
            throw .control(.invalidAction, "transaction \(id) is not waiting for Ask to Buy approval")
        }
        transaction.state = .declined
        var change = beginChange()
        change.record(transaction)
        try commit(change)
    }

    /// Resolves the issue of an interrupted purchase (or a billing problem of a subscription).
    public func resolveIssueForTransaction(_ id: UInt64) throws(AppStoreError) {
        guard let transaction = transactions[id] else { throw .control(.noTransactionFound, "no transaction \(id)") }
        if transaction.state == .interrupted {
            try complete(id, expecting: .interrupted, kind: .resolution)
        } else {
            try resolveBillingIssue(originalTransactionID: transaction.originalID)
        }
    }

    private func complete(_ id: UInt64, expecting state: LedgerTransaction.State, kind: LedgerUpdate.Kind) throws(AppStoreError) {
        guard var transaction = transactions[id] else { throw .control(.noTransactionFound, "no transaction \(id)") }
        guard transaction.state == state else {
            throw .control(.invalidAction, "transaction \(id) is not \(state == .pendingApproval ? "waiting for Ask to Buy approval" : "interrupted")")
        }
        let now = clock.now()
        var change = beginChange()
        transaction.state = .purchased
        transaction.purchaseDate = now
        transaction.originalPurchaseDate = now
        if transaction.productKind == .autoRenewable {
            try startSubscription(&transaction, at: now, updateKind: kind, change: &change)
        } else {
            change.record(transaction)
            try enqueueUpdateForAllDevices(transaction, kind: kind, at: now, change: &change)
            try shareWithFamily(transaction, at: now, change: &change)
            try appendNotification(.oneTimeCharge, subtype: nil, transaction: transaction, at: now, change: &change)
        }
        try commit(change)
    }

    // MARK: Refunds, deletion

    /// Refunds a transaction immediately, as a refund made outside the app in the test environment.
    ///
    /// The transaction gets its revocation date and reason and arrives again through every device's
    /// updates; family copies are revoked; the outbox gets `REFUND` (and `REVOKE` per family copy).
    public func refundTransaction(_ id: UInt64, reason: RevocationReason = .refundedForOtherReason) throws(AppStoreError) {
        var change = beginChange()
        try refund(id, reason: reason, change: &change)
        try commit(change)
    }

    func refund(_ id: UInt64, reason: RevocationReason, change: inout Change) throws(AppStoreError) {
        guard var transaction = change.ledger.transactions[id] ?? transactions[id] else {
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

    /// A refund the customer asks for in the app (`beginRefundRequest`): approved at once in the test
    /// environment. Consumables and subscriptions first send `CONSUMPTION_REQUEST`.
    public func requestRefund(_ id: UInt64, reason: ConsumptionRequestReason = .unintendedPurchase) throws(AppStoreError) {
        try checkSimulatedFailure(.refundRequest)
        guard let transaction = transactions[id] else { throw .refundRequest(.failed, "no transaction \(id)") }
        guard !transaction.isRevoked else { throw .refundRequest(.duplicateRequest, "transaction \(id) is already refunded") }
        var change = beginChange()
        if transaction.productKind == .consumable || transaction.productKind == .autoRenewable {
            try appendNotification(.consumptionRequest, subtype: nil, transaction: transaction,
                                   consumptionRequestReason: reason, at: clock.now(), change: &change)
        }
        let revocationReason: RevocationReason = reason == .fulfillmentIssue ? .refundedDueToIssue : .refundedForOtherReason
        try refund(id, reason: revocationReason, change: &change)
        try commit(change)
    }

    /// Deletes a transaction as if it never happened, with its dependants: renewals of an original
    /// subscription purchase and family copies. Re-enables one-time purchases and intro offers.
    public func deleteTransaction(_ id: UInt64) throws(AppStoreError) {
        guard let transaction = transactions[id] else { throw .control(.noTransactionFound, "no transaction \(id)") }
        var doomed: Set<UInt64> = [id]
        if transaction.id == transaction.originalID {
            for other in transactions.values where other.originalID == id { doomed.insert(other.id) }
        }
        var grew = true
        while grew {
            let before = doomed.count
            for other in transactions.values where other.familySourceID.map(doomed.contains) == true { doomed.insert(other.id) }
            grew = doomed.count != before
        }
        var change = beginChange()
        change.ledger.deletedTransactions = doomed
        for original in doomed where subscriptions[original] != nil { change.ledger.deletedSubscriptions.insert(original) }
        try commit(change)
    }

    /// Deletes every transaction; accounts and devices stay.
    public func clearTransactions() throws(AppStoreError) {
        var change = beginChange()
        change.ledger.deletedTransactions = Set(transactions.keys)
        change.ledger.deletedSubscriptions = Set(subscriptions.keys)
        try commit(change)
    }

    /// Sends a `TEST` notification to the outbox, as the App Store Server API's request does.
    @discardableResult
    public func requestTestNotification() throws(AppStoreError) -> String {
        var change = beginChange()
        try appendNotification(.test, subtype: nil, transaction: nil, at: clock.now(), change: &change)
        let uuid = change.ledger.appendedNotifications.last!.notificationUUID
        try commit(change)
        return uuid
    }

    // MARK: Accounts

    /// Adds or changes an account.
    public func configureAccount(_ name: String, storefront: String?? = nil, askToBuy: Bool? = nil) throws(AppStoreError) {
        var change = beginChange()
        var (account, _) = try register(account: name, device: nil, in: &change)
        if let storefront {
            if let code = storefront, Storefront(code: code) == nil { throw .control(.invalidAction, "unknown storefront \(code)") }
            account.storefront = storefront?.uppercased()
        }
        if let askToBuy { account.askToBuy = askToBuy }
        change.ledger.accounts[name] = account
        try commit(change)
    }

    /// Adds a device signed in to an account.
    public func addDevice(_ name: String, account: String) throws(AppStoreError) {
        var change = beginChange()
        _ = try register(account: account, device: name, in: &change)
        try commit(change)
    }

    /// The accounts, by name.
    /// A device by name, if registered.
    public func device(named name: String) -> StoreDevice? { devices[name] }

    /// The storefront an account buys in: its own, or the store's setting.
    public func storefront(forAccount name: String) -> Storefront {
        accounts[name].map { storefront(of: $0) } ?? Storefront(code: settings.storefront) ?? .unitedStates
    }

    /// The settings changed at runtime, without the configuration's defaults.
    public var settingsOverrides: SettingsOverrides { overrides }

    public var allAccounts: [StoreAccount] { accounts.values.sorted { $0.name < $1.name } }

    /// The devices, by name.
    public var allDevices: [StoreDevice] { devices.values.sorted { $0.name < $1.name } }

    // MARK: The transaction manager's view

    /// Every transaction in the store, pending and declined ones included, as `SKTestSession.allTransactions()`.
    public func allTestTransactions() -> [TestTransaction] {
        transactions.values.sorted { $0.id < $1.id }.map { transaction in
            let subscription = subscriptions[transaction.originalID]
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
                account: transaction.account)
        }
    }
}
