import AppStoreModels
import Foundation
import StoreKitCatalog

/// What the App Store Server API answers about a customer, in server form (no device verification).
extension SimulatedAppStore {
    /// A subscription's status as the API reports it: group, state, and the signed pair.
    public struct ServerSubscriptionStatus: Sendable {
        public let groupID: String
        public let status: Status
        public let originalTransactionID: UInt64
        public let signedTransaction: String
        public let signedRenewalInfo: String
    }

    /// The completed transactions of the customer a transaction belongs to, or `nil` for an unknown transaction.
    public func customerTransactions(ofTransaction id: UInt64) throws(AppStoreError) -> [LedgerTransaction]? {
        try reading { () -> [LedgerTransaction]? in
            guard let transaction = ledger.transaction(id) else { return nil }
            return completedTransactions(of: transaction.account)
        }
    }

    /// The completed transactions of an account, in Get Transaction History's order (purchase date,
    /// then identifier); `nil` for an unknown account.
    public func customerTransactions(account: String) throws(AppStoreError) -> [LedgerTransaction]? {
        try reading { () -> [LedgerTransaction]? in
            guard ledger.account(account.ledgerName) != nil else { return nil }
            return completedTransactions(of: account.ledgerName).sorted {
                (AppStoreJSON.milliseconds(from: $0.purchaseDate), $0.id) < (AppStoreJSON.milliseconds(from: $1.purchaseDate), $1.id)
            }
        }
    }

    /// Signs transactions in server form, as the API hands them out.
    public func signedForServer(_ transactions: [LedgerTransaction]) throws(AppStoreError) -> [String] {
        let now = clock.now()
        return try transactions.map { (transaction) throws(AppStoreError) in try sign(transaction, for: nil, at: now) }
    }

    /// Every subscription of the customer a transaction belongs to, by group, in server form; `nil`
    /// for an unknown transaction.
    public func serverSubscriptionStatuses(ofTransaction id: UInt64) throws(AppStoreError) -> [ServerSubscriptionStatus]? {
        try reading { () throws(AppStoreError) -> [ServerSubscriptionStatus]? in
            guard let transaction = ledger.transaction(id) else { return nil }
            let now = clock.now()
            var statuses: [ServerSubscriptionStatus] = []
            for record in ledger.subscriptions(SubscriptionQuery(account: transaction.account)) {
                guard let latest = ledger.transaction(record.latestTransactionID) else { continue }
                let (_, renewal) = try signedRenewalInfo(for: record, device: nil, at: now)
                statuses.append(ServerSubscriptionStatus(groupID: record.groupID, status: record.state.status, originalTransactionID: record.originalTransactionID,
                                                         signedTransaction: try sign(latest, for: nil, at: now), signedRenewalInfo: renewal))
            }
            return statuses
        }
    }

    /// Get All Subscription Statuses' answer for the customer a transaction belongs to: their
    /// subscriptions by group, only those whose status is in `wanted` (every one when it is empty);
    /// `nil` for an unknown transaction.
    public func statusResponse(ofTransaction id: UInt64, statuses wanted: Set<Int32> = []) throws(AppStoreError) -> StatusResponse? {
        guard let statuses = try serverSubscriptionStatuses(ofTransaction: id) else { return nil }
        var groups: [String: [LastTransactionsItem]] = [:]
        for status in statuses where wanted.isEmpty || wanted.contains(Int32(status.status.rawValue)) {
            groups[status.groupID, default: []].append(LastTransactionsItem(
                status: Int32(status.status.rawValue), originalTransactionId: String(status.originalTransactionID),
                signedTransactionInfo: status.signedTransaction, signedRenewalInfo: status.signedRenewalInfo))
        }
        return StatusResponse(environment: identity.environment.rawValue, bundleId: identity.bundleId, appAppleId: identity.appAppleId,
                              data: groups.keys.sorted().map { SubscriptionGroupIdentifierItem(subscriptionGroupIdentifier: $0, lastTransactions: groups[$0]) })
    }

    /// The app transaction of the customer a transaction belongs to, in server form.
    public func serverAppTransaction(ofTransaction id: UInt64) throws(AppStoreError) -> String? {
        try reading { () throws(AppStoreError) -> String? in
            guard let transaction = ledger.transaction(id), let account = ledger.account(transaction.account) else { return nil }
            return try appTransaction(account: account, device: nil).jws
        }
    }

    /// The transactions of an order (`orderId`), or `nil` when no order has that identifier.
    public func orderTransactions(_ orderID: String) throws(AppStoreError) -> [LedgerTransaction]? {
        guard let residue = LedgerTransaction.orderResidue(fromOrderID: orderID) else { return nil }
        // The store's transaction IDs run from its environment's first ID, fewer than the order IDs can tell apart.
        let first = LedgerCounters(for: identity.environment).nextTransactionID
        let modulus = LedgerTransaction.orderModulus
        let id = first + (residue + modulus - first % modulus) % modulus
        return try reading { () -> [LedgerTransaction]? in
            guard let transaction = ledger.transaction(id), transaction.ownership == .purchased, transaction.isPurchased else { return nil }
            return [transaction]
        }
    }

    /// Sets the app account token of a subscription or one-time purchase (`setAppAccountToken`):
    /// on the original transaction and every transaction that shares it.
    public func setAppAccountToken(_ token: UUID, originalTransactionID: UInt64) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard let original = ledger.transaction(originalTransactionID) else {
                throw .control(.noTransactionFound, "no transaction \(originalTransactionID)")
            }
            guard original.ownership == .purchased else {
                throw .control(.invalidProductType, "transaction \(originalTransactionID) is shared by a family member")
            }
            guard original.originalID == original.id else {
                throw .control(.invalidAction, "transaction \(originalTransactionID) is not an original transaction; its original is \(original.originalID)")
            }
            for var transaction in ledger.transactions(TransactionQuery(originalID: originalTransactionID)) {
                transaction.appAccountToken = token
                change.record(transaction)
            }
            if var record = ledger.subscription(originalTransactionID) {
                record.appAccountToken = token
                change.record(record)
            }
        }
    }

    /// The result of extending every active subscriber of a product.
    public struct MassExtension: Codable, Hashable, Sendable {
        public var requestIdentifier: String
        public var productID: String
        public var completeDate: Date
        public var succeededCount: Int
        public var failedCount: Int
    }

    static let massExtensionsKey = "massExtensions"

    /// Extends the renewal date of every active subscriber of `productID` (in `storefronts`, if given),
    /// as `extendRenewalDateForAllActiveSubscribers` does, and records the outcome under `requestIdentifier`.
    @discardableResult
    public func extendAllActiveSubscribers(productID: String, days: Int, storefronts: Set<String>?,
                                           requestIdentifier: String) throws(AppStoreError) -> MassExtension {
        try writing { (change) throws(AppStoreError) -> MassExtension in
            guard (1...Self.maximumExtensionDays).contains(days) else { throw .control(.invalidAction, "an extension is 1 to 90 days, not \(days)") }
            var all = try massExtensions()
            guard all[requestIdentifier] == nil else { throw .control(.invalidAction, "request \(requestIdentifier) was already made") }
            guard let group = catalog().product(id: productID)?.subscription?.groupID else {
                throw .control(.invalidProductIdentifier, "\(productID) is not an auto-renewable subscription")
            }
            var succeeded = 0
            var failed = 0
            var after: UInt64?
            while true {
                let page = ledger.subscriptions(SubscriptionQuery(afterID: after, limit: 500))
                guard let last = page.last else { break }
                after = last.originalTransactionID
                for record in page where record.groupID == group && record.productID == productID && record.familySourceID == nil
                    && record.state == .subscribed {
                    if let storefronts, let latest = storedTransaction(record.latestTransactionID, in: change),
                       !storefronts.contains(latest.storefront) { continue }
                    let current = storedSubscription(record.originalTransactionID, in: change) ?? record
                    do {
                        _ = try extendRenewal(current, days: days, change: &change)
                        succeeded += 1
                    } catch {
                        failed += 1
                        try appendSubscriptionNotification(.renewalExtension, subtype: .failure, record: current,
                                                           transaction: latestTransaction(of: current, in: change), change: &change)
                    }
                }
            }
            let result = MassExtension(requestIdentifier: requestIdentifier, productID: productID, completeDate: clock.now(),
                                       succeededCount: succeeded, failedCount: failed)
            // RENEWAL_EXTENSION/SUMMARY tells the server the request is complete, with its counts.
            var summary = Summary()
            summary.environment = identity.environment
            summary.appAppleId = identity.appAppleId
            summary.bundleId = identity.bundleId
            summary.productId = productID
            summary.requestIdentifier = requestIdentifier
            summary.storefrontCountryCodes = storefronts?.sorted()
            summary.succeededCount = Int64(succeeded)
            summary.failedCount = Int64(failed)
            try appendNotification(.renewalExtension, subtype: .summary, transaction: nil, summary: summary, at: clock.now(), change: &change)
            all[requestIdentifier] = result
            change.ledger.meta[Self.massExtensionsKey] = try Self.encode(all)
            return result
        }
    }

    /// A mass extension's outcome by request identifier.
    public func massExtension(_ requestIdentifier: String) throws(AppStoreError) -> MassExtension? {
        try reading { () throws(AppStoreError) in try massExtensions()[requestIdentifier] }
    }

    private func massExtensions() throws(AppStoreError) -> [String: MassExtension] {
        guard let text = ledger.meta(Self.massExtensionsKey) else { return [:] }
        return try Self.decode([String: MassExtension].self, text)
    }
}

extension LedgerTransaction {
    /// The order a purchase belongs to, as on the customer's receipt (`MK5TTTVWJH`-shaped): family
    /// copies carry their purchaser's order.
    public var orderID: String { Self.orderID(forTransactionID: familySourceID ?? id) }

    static let orderAlphabet = Array("0123456789ABCDEFGHJKLMNPQRSTVWXYZ")

    /// How many transaction identifiers the nine characters of an order ID tell apart (33⁹).
    static let orderModulus: UInt64 = (0..<9).reduce(1) { product, _ in product * UInt64(orderAlphabet.count) }

    /// `M` and nine characters that encode the purchase's transaction identifier (modulo
    /// ``orderModulus``; a store's identifiers span fewer than that).
    static func orderID(forTransactionID id: UInt64) -> String {
        var value = id % orderModulus
        var characters: [Character] = []
        for _ in 0..<9 {
            characters.append(orderAlphabet[Int(value % UInt64(orderAlphabet.count))])
            value /= UInt64(orderAlphabet.count)
        }
        return "M" + String(characters.reversed())
    }

    /// The transaction identifier an order ID encodes, modulo ``orderModulus``, or `nil` for text that is not one.
    static func orderResidue(fromOrderID text: String) -> UInt64? {
        guard text.count == 10, text.first == "M" else { return nil }
        var value: UInt64 = 0
        for character in text.dropFirst() {
            guard let digit = orderAlphabet.firstIndex(of: character) else { return nil }
            value = value * UInt64(orderAlphabet.count) + UInt64(digit)
        }
        return value
    }
}
