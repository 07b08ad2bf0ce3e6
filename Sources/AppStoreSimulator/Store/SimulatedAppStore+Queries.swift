import AppStoreModels
import Foundation
import StoreKitCatalog

extension SimulatedAppStore {
    /// The transactions of an account that count: completed ones, in identifier order.
    func completedTransactions(of account: String) -> [LedgerTransaction] {
        ledger.transactions(TransactionQuery(account: account)).filter(\.isPurchased)
    }

    func requireDevice(_ name: String) throws(AppStoreError) -> StoreDevice {
        guard let device = ledger.device(name.ledgerName) else { throw .control(.invalidAction, "no device \(name)") }
        return device
    }

    /// The account a query is about: the device's account when a device is named.
    func account(device: String?, account: String?) throws(AppStoreError) -> (String, StoreDevice?) {
        if let device {
            let record = try requireDevice(device)
            if let account, account.ledgerName != record.account {
                throw .control(.invalidAction, "device \(device) is signed in to account \(record.account), not \(account)")
            }
            return (record.account, record)
        }
        guard let account else { throw .control(.invalidAction, "name a device or an account") }
        return (account.ledgerName, nil)
    }

    /// `Transaction.all`: every completed transaction of the account, refunded and revoked ones included.
    ///
    /// Finished consumables are left out unless ``StoreSettings/includesConsumablesInHistory`` is on,
    /// as `SKIncludeConsumableInAppPurchaseHistory` does.
    public func allTransactions(device: String? = nil, account: String? = nil) throws(AppStoreError) -> [SignedTransaction] {
        try sign(try transactionsToSign(.all, device: device, account: account))
    }

    /// `Transaction.currentEntitlements`: what the account is entitled to now.
    ///
    /// The latest transaction of every non-consumable (bought or family-shared), every non-renewing
    /// subscription transaction (the app decides when they expire), and the latest transaction of each
    /// auto-renewable subscription that is subscribed or in its grace period. Never consumables, never
    /// refunded or revoked transactions, never upgraded-away subscriptions.
    public func currentEntitlements(device: String? = nil, account: String? = nil) throws(AppStoreError) -> [SignedTransaction] {
        try sign(try transactionsToSign(.currentEntitlements, device: device, account: account))
    }

    /// The ledger transactions behind ``currentEntitlements(device:account:)``, unsigned.
    public func entitledTransactions(of account: String) throws(AppStoreError) -> [LedgerTransaction] {
        try reading { currentEntitledTransactions(of: account) }
    }

    func currentEntitledTransactions(of account: String) -> [LedgerTransaction] {
        let candidates = ledger.transactions(TransactionQuery(account: account, entitlementCandidatesOnly: true))
            .filter(\.isPurchased).sorted { $0.id < $1.id }
        return EntitlementRules.currentEntitlements(candidates) { transaction in
            EntitlementRules.Candidate(productID: transaction.productID, type: transaction.productKind.transactionType,
                                       purchaseDate: transaction.purchaseDate, isRevoked: transaction.isRevoked,
                                       isUpgraded: transaction.isUpgraded,
                                       subscriptionEntitled: transaction.productKind == .autoRenewable && isEntitled(transaction))
        }
    }

    /// `Transaction.unfinished`: completed transactions the app has not finished.
    public func unfinishedTransactions(device: String? = nil, account: String? = nil) throws(AppStoreError) -> [SignedTransaction] {
        try sign(try transactionsToSign(.unfinished, device: device, account: account))
    }

    /// `Transaction.latest(for:)`: the most recent transaction of a product, refunded or not.
    public func latestTransaction(for productID: String, device: String? = nil, account: String? = nil) throws(AppStoreError) -> SignedTransaction? {
        try sign(try transactionsToSign(.latest(productID: productID), device: device, account: account)).first
    }

    /// One transaction by identifier, signed for a device or in server form.
    public func transaction(_ id: UInt64, device: String? = nil) throws(AppStoreError) -> SignedTransaction {
        try reading { () throws(AppStoreError) in
            guard let transaction = ledger.transaction(id) else { throw .control(.noTransactionFound, "no transaction \(id)") }
            return try signed(transaction, for: device.map { (name) throws(AppStoreError) in try requireDevice(name) })
        }
    }

    /// A view of an account's transactions, read in one unit of work and not yet signed: the signing,
    /// which is most of a read's cost, is left to ``sign(_:)`` on the caller's executor, so reads from
    /// many devices sign at once on every core while the store's executor reads the next.
    ///
    /// With a device, the view is its account's and the transactions are signed for it (its
    /// `deviceVerification`); an unknown device is StoreKit's `unknown`.
    public func transactionsToSign(_ view: LedgerView, device: String? = nil, account: String? = nil) throws(AppStoreError) -> TransactionsToSign {
        try reading { () throws(AppStoreError) -> TransactionsToSign in
            let (accountName, record): (String, StoreDevice?)
            if let device, account == nil {
                guard let found = ledger.device(device) else { throw .storeKit(.unknown, "no device \(device) in the store") }
                (accountName, record) = (found.account, found)
            } else {
                (accountName, record) = try self.account(device: device, account: account)
            }
            let transactions: [LedgerTransaction]
            switch view {
            case .all:
                transactions = settings.includesConsumablesInHistory ? completedTransactions(of: accountName)
                    : ledger.transactions(TransactionQuery(account: accountName, historyOnly: true))
            case .currentEntitlements:
                transactions = currentEntitledTransactions(of: accountName)
            case .unfinished:
                transactions = ledger.transactions(TransactionQuery(account: accountName, unfinishedOnly: true))
            case .latest(let productID):
                // Non-consumables are found by product through their own index; a consumable's among the account's transactions.
                let consumable = catalog().product(id: productID)?.kind == .consumable
                let query = TransactionQuery(account: accountName, productID: productID, entitlementCandidatesOnly: !consumable)
                transactions = ledger.transactions(query).filter(\.isPurchased)
                    .max(by: { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) }).map { [$0] } ?? []
            case .transaction(let id):
                transactions = ledger.transaction(id).map { $0.account == accountName ? [$0] : [] } ?? []
            }
            return TransactionsToSign(transactions: transactions, device: record, date: clock.now(), verificationFailure: verificationFailure)
        }
    }

    /// Signs what ``transactionsToSign(_:device:account:)`` read, on the caller's executor.
    public nonisolated func sign(_ pending: TransactionsToSign) throws(AppStoreError) -> [SignedTransaction] {
        let signer = storeSigner
        return try pending.transactions.map { (transaction) throws(AppStoreError) in
            SignedTransaction(transaction: transaction, jws: try signer.sign(transaction, for: pending.device, at: pending.date),
                              simulatedVerificationFailure: pending.verificationFailure)
        }
    }

    /// The ledger record of a transaction.
    public func ledgerTransaction(_ id: UInt64) throws(AppStoreError) -> LedgerTransaction? {
        try reading { ledger.transaction(id) }
    }

    /// The transactions of the store, or of one account, in identifier order (the transaction manager's
    /// list): at most `limit`, after the identifier `after` (the previous page's last); with
    /// `newestFirst`, in descending order, before `after`.
    public func ledgerTransactions(account: String? = nil, after: UInt64? = nil, limit: Int = .max,
                                   newestFirst: Bool = false) throws(AppStoreError) -> [LedgerTransaction] {
        try reading { ledger.transactions(TransactionQuery(account: account, afterID: after, newestFirst: newestFirst, limit: limit)) }
    }

    /// The account's purchases that wait for a parent's approval (Ask to Buy), oldest first.
    public func waitingRequests(account: String) throws(AppStoreError) -> [LedgerTransaction] {
        try reading { ledger.transactions(TransactionQuery(account: account.ledgerName)).filter { $0.state == .pendingApproval } }
    }

    /// `Product.products(for:)`: the products with these identifiers, presented in the account's
    /// storefront; unknown identifiers are simply absent.
    public func products(for ids: some Sequence<String>, account: String? = nil) throws(AppStoreError) -> [CatalogProduct] {
        try reading { () throws(AppStoreError) in
            try checkSimulatedFailure(.loadProducts)
            let storefront = account.flatMap { ledger.account($0) }.map { self.storefront(of: $0).countryCode }
            return catalog(storefront: storefront).products(for: ids)
        }
    }

    /// Marks a transaction finished, as `transaction.finish()` does; finishing twice is harmless.
    public func finish(_ id: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard var transaction = ledger.transaction(id) else { throw .control(.noTransactionFound, "no transaction \(id)") }
            guard transaction.isPurchased else { throw .control(.invalidAction, "transaction \(id) is not complete") }
            guard !transaction.isFinished else { return }
            transaction.finishedDate = clock.now()
            change.record(transaction)
        }
    }

    /// `AppTransaction.shared`: the account's purchase of the app, signed for the device.
    public func appTransaction(device name: String) throws(AppStoreError) -> (payload: AppTransaction, jws: String) {
        let (device, account) = try reading { () throws(AppStoreError) -> (StoreDevice, StoreAccount) in
            try checkSimulatedFailure(.appTransaction)
            let device = try requireDevice(name)
            guard let account = ledger.account(device.account) else { throw .control(.invalidAction, "no account \(device.account)") }
            return (device, account)
        }
        return try appTransaction(account: account, device: device)
    }

    /// The account's app transaction, signed for a device (with device verification) or in server form.
    func appTransaction(account: StoreAccount, device: StoreDevice?) throws(AppStoreError) -> (payload: AppTransaction, jws: String) {
        let now = clock.now()
        var payload = AppTransaction()
        payload.receiptType = identity.environment
        payload.appAppleId = identity.appAppleId
        payload.bundleId = identity.bundleId
        payload.applicationVersion = identity.applicationVersion
        payload.receiptCreationDate = now
        payload.requestDate = now
        payload.originalPurchaseDate = account.originalPurchaseDate
        payload.originalApplicationVersion = account.originalApplicationVersion
        payload.appTransactionId = account.appTransactionID
        payload.originalPlatform = .iOS
        if let device {
            let nonce = identifiers()
            payload.deviceVerificationNonce = nonce
            payload.deviceVerification = DeviceVerificationValue.of(nonce: nonce, device: device)
        }
        return (payload, try sign(payload, at: now))
    }

    /// The outbox, oldest first, after a sequence number.
    public func notifications(after sequence: Int64 = 0, limit: Int = .max) throws(AppStoreError) -> [StoredNotification] {
        try storage.notifications(after: sequence, limit: limit).map { (record) throws(AppStoreError) in try signed(record) }
    }

    /// Signs a notification of the outbox: its transaction into `signedTransactionInfo`, then the whole.
    nonisolated func signed(_ record: NotificationRecord) throws(AppStoreError) -> StoredNotification {
        var payload = record.payload
        // Everything in a notification is signed as of the notification's own date.
        if let transaction = record.transaction { payload.data?.signedTransactionInfo = try sign(transaction, at: record.date) }
        if let renewalInfo = record.renewalInfo { payload.data?.signedRenewalInfo = try sign(renewalInfo, at: record.date) }
        var stored = StoredNotification(sequence: record.sequence, notificationUUID: record.notificationUUID, type: record.type,
                                        subtype: record.subtype, transactionID: record.transactionID, signedPayload: try sign(payload, at: record.date),
                                        date: record.date)
        stored.delivery = record.delivery
        return stored
    }

    /// Problems a consistency check of the storage finds; empty when sound.
    public func integrityProblems() throws(AppStoreError) -> [String] {
        try storage.integrityProblems()
    }
}

import AppStoreSigning

enum DeviceVerificationValue {
    static func of(nonce: UUID, device: StoreDevice) -> String {
        DeviceVerification.value(nonce: nonce, deviceVerificationID: device.deviceVerificationID)
    }
}

extension SimulatedAppStore {
    /// The ledger's change counter: it grows with every committed change, made by any process, so a
    /// page or tool that saw one value knows something changed when it reads another.
    public func ledgerVersion() throws(AppStoreError) -> Int64 {
        try reading { ledger.version }
    }
}

extension SimulatedAppStore {
    /// The outbox as the store keeps it, unsigned: what happened and when, for timelines and reports
    /// that need no signature (``notifications(after:limit:)`` signs each one).
    public func notificationRecords(after sequence: Int64 = 0, limit: Int = .max) throws(AppStoreError) -> [NotificationRecord] {
        try storage.notifications(after: sequence, limit: limit)
    }
}

extension SimulatedAppStore {
    /// The notifications about a subscription's transactions (every period of it), or about one
    /// purchase, oldest first, unsigned, with their delivery attempts.
    public func notificationRecords(aboutOriginalTransaction originalID: UInt64) throws(AppStoreError) -> [NotificationRecord] {
        try reading {
            let ids = ledger.transactions(TransactionQuery(originalID: originalID)).map(\.id)
            return ledger.notifications(aboutTransactions: ids.isEmpty ? [originalID] : ids)
        }
    }

    /// A subscription's renewal info as the App Store signs it now (`nil` for a transaction that is not a subscription's).
    public func signedRenewalInfo(originalTransactionID: UInt64) throws(AppStoreError) -> (payload: JWSRenewalInfoDecodedPayload, jws: String)? {
        try reading { () throws(AppStoreError) -> (payload: JWSRenewalInfoDecodedPayload, jws: String)? in
            guard let record = ledger.subscription(originalTransactionID) else { return nil }
            let (info, jws) = try signedRenewalInfo(for: record, device: nil, at: clock.now())
            return (info, jws)
        }
    }
}

extension SimulatedAppStore {
    /// The newest notifications of the outbox (at most `limit`), oldest of them first, signed.
    public func latestNotifications(limit: Int) throws(AppStoreError) -> [StoredNotification] {
        let next = try reading { counters.nextNotificationSequence }
        return try notifications(after: max(0, next - 1 - Int64(limit)), limit: limit)
    }
}
