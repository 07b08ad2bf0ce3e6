import BlockingWork
import Foundation

/// Delivers every purchase exactly once, takes back every revocation, and says why an account is entitled.
///
/// StoreKit hands the same transaction to an app through several doors: the purchase call,
/// `Transaction.updates`, `Transaction.unfinished` and, after a reinstall, only
/// `Transaction.currentEntitlements`. The center merges them into one ``DeliveryJournal`` keyed by
/// transaction and event (`grant:`, `upgrade:`, `revoke:`). For each verified transaction it
/// records the delivery durably, *then* finishes the transaction, so a crash in between means a
/// harmless re-finish, never a lost or doubled delivery. A refund or revocation has its own key, so
/// it always gets through even after the grant was recorded. Unverified transactions are never
/// recorded and never finished.
///
/// ```swift
/// let center = EntitlementCenter(journal: try DeliveryJournal(fileURL: journalURL))
/// await center.start()                      // unfinished + current entitlements, then updates
/// _ = try await center.purchase(gems)       // delivered once, then finished
/// center.balance(of: "gems")                // consumables counted from the journal
/// await center.explain("pro")               // "pro: entitled — non-consumable bought, transaction 3"
/// ```
///
/// The center runs on an executor of its own, off Swift's cooperative pool: recording a delivery
/// waits for the journal's file lock and `fsync`s.
public actor EntitlementCenter {
    /// What processing one transaction did.
    public enum Outcome: Hashable, Sendable {
        /// A new delivery was recorded and the transaction finished.
        case delivered(DeliveryJournal.Entry)
        /// A revocation was recorded: the product is taken back.
        case revoked(DeliveryJournal.Entry)
        /// An upgrade was recorded: the subscription is superseded.
        case upgraded(DeliveryJournal.Entry)
        /// The journal already had it; the transaction was finished again (harmless).
        case alreadyHandled(key: String)
        /// Verification failed; nothing was granted or finished.
        case rejected(transactionID: UInt64, reason: String)
        /// The journal could not record it; the transaction stays unfinished and comes back.
        case failed(transactionID: UInt64, reason: String)
    }

    public nonisolated let journal: DeliveryJournal
    private nonisolated let executor = SerialQueueExecutor(label: "EntitlementCenter")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let explicitClient: StoreClient?
    private var listener: Task<Void, Never>?
    private let outcomeStream: AsyncStream<Outcome>
    private let outcomeContinuation: AsyncStream<Outcome>.Continuation

    /// A center recording into `journal`, talking to `client` (or the active client at each call).
    public init(journal: DeliveryJournal, client: StoreClient? = nil) {
        self.journal = journal
        self.explicitClient = client
        (outcomeStream, outcomeContinuation) = AsyncStream.makeStream(of: Outcome.self)
    }

    private var client: StoreClient { explicitClient ?? StoreClient.active }

    /// Every outcome, as it happens, from every door (for UI refreshes and tests).
    public nonisolated var outcomes: AsyncStream<Outcome> { outcomeStream }

    // MARK: Doors

    /// Launch: processes unfinished transactions and current entitlements, then listens to `Transaction.updates`.
    public func start() async {
        for await result in client.unfinishedTransactions { _ = await process(result, source: "unfinished") }
        for await result in client.currentEntitlements { _ = await process(result, source: "currentEntitlements") }
        guard listener == nil else { return }
        let updates = client.transactionUpdates
        listener = Task { [weak self] in
            for await result in updates {
                guard let self else { return }
                _ = await self.process(result, source: "updates")
            }
        }
    }

    /// Stops listening to updates.
    public func stop() {
        listener?.cancel()
        listener = nil
    }

    /// Buys a product and processes the result.
    public func purchase(_ product: Product, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        let result = try await product.purchase(options: options)
        if case .success(let verification) = result { _ = await process(verification, source: "purchase") }
        return result
    }

    /// Processes one transaction from any door: records what it means once, then finishes it.
    @discardableResult
    public func process(_ result: VerificationResult<Transaction>, source: String) async -> Outcome {
        let outcome: Outcome
        switch result {
        case .unverified(let transaction, let error):
            outcome = .rejected(transactionID: transaction.id, reason: error.description)
        case .verified(let transaction):
            let entry = Self.entry(for: transaction, source: source)
            do {
                if try journal.append(entry) {
                    switch entry.kind {
                    case .revoke: outcome = .revoked(entry)
                    case .upgrade: outcome = .upgraded(entry)
                    default: outcome = .delivered(entry)
                    }
                    await transaction.finish()
                } else {
                    outcome = .alreadyHandled(key: entry.key)
                    // Recorded before: finish again in case a crash came between recording and
                    // finishing. Launch-time entitlements skip it: the unfinished door, read just
                    // before, already finished every transaction that needed it.
                    if source != "currentEntitlements" { await transaction.finish() }
                }
            } catch {
                outcome = .failed(transactionID: transaction.id, reason: error.description)
            }
        }
        outcomeContinuation.yield(outcome)
        return outcome
    }

    static func entry(for transaction: Transaction, source: String) -> DeliveryJournal.Entry {
        let kind: DeliveryJournal.Entry.Kind = transaction.revocationDate != nil ? .revoke : (transaction.isUpgraded ? .upgrade : .grant)
        return DeliveryJournal.Entry(
            key: "\(kind.rawValue):\(transaction.id)", kind: kind, productID: transaction.productID, productType: transaction.productType.rawValue,
            transactionID: transaction.id, originalTransactionID: transaction.originalID, subscriptionGroupID: transaction.subscriptionGroupID,
            ownership: transaction.ownershipType.rawValue, quantity: transaction.purchasedQuantity, purchaseDate: transaction.purchaseDate,
            expirationDate: transaction.expirationDate, revocationDate: transaction.revocationDate,
            revocationReason: transaction.revocationReason?.rawValue, source: source)
    }

    // MARK: Consumables

    /// How many of a consumable the customer has: delivered, minus refunded, minus used.
    public nonisolated func balance(of productID: String) -> Int {
        let entries = journal.entries.filter { $0.productID == productID }
        let revoked = Set(entries.filter { $0.kind == .revoke }.compactMap(\.transactionID))
        var balance = 0
        for entry in entries {
            switch entry.kind {
            case .grant where !revoked.contains(entry.transactionID ?? .max): balance += entry.quantity
            case .consume: balance -= entry.quantity
            default: break
            }
        }
        return balance
    }

    /// Uses up some of a consumable, once per `key`.
    ///
    /// - Returns: `false` when the balance is too low or `key` was already used.
    public nonisolated func consume(_ productID: String, quantity: Int = 1, key: String) throws -> Bool {
        guard quantity > 0, balance(of: productID) >= quantity else { return false }
        return try journal.append(DeliveryJournal.Entry(key: "consume:\(key)", kind: .consume, productID: productID,
                                                        productType: Product.ProductType.consumable.rawValue, quantity: quantity, source: "app"))
    }

    // MARK: Entitlements

    /// Explains the customer's entitlement to a product.
    ///
    /// Non-consumables and non-renewing subscriptions follow the journal (a grant not revoked).
    /// Auto-renewables follow the group's verified subscription statuses when the store answers, and
    /// otherwise the journal's signed expiration date compared with `now`.
    public func explain(_ productID: String, now: Date) async -> EntitlementExplanation {
        let entries = journal.entries.filter { $0.productID == productID }
        let revokedIDs = Set(entries.filter { $0.kind == .revoke }.compactMap(\.transactionID))
        let upgradedIDs = Set(entries.filter { $0.kind == .upgrade }.compactMap(\.transactionID))
        let grants = entries.filter { $0.kind == .grant }
        guard let latest = grants.last ?? entries.last else {
            return EntitlementExplanation(productID: productID, isEntitled: false, rule: .neverDelivered, transactionID: nil,
                                          subscriptionGroupID: nil, isConfirmedByStore: false)
        }
        let group = latest.subscriptionGroupID
        func answer(_ entitled: Bool, _ rule: EntitlementExplanation.Rule, _ id: UInt64?, confirmed: Bool = false) -> EntitlementExplanation {
            EntitlementExplanation(productID: productID, isEntitled: entitled, rule: rule, transactionID: id, subscriptionGroupID: group,
                                   isConfirmedByStore: confirmed)
        }
        switch Product.ProductType(rawValue: latest.productType) {
        case .consumable:
            return answer(false, .consumableBalance(balance(of: productID)), latest.transactionID)
        case .autoRenewable:
            if let group, let statuses = try? await client.subscriptionStatuses(groupID: group) {
                return explainSubscription(productID: productID, group: group, statuses: statuses)
            }
            if let id = latest.transactionID, revokedIDs.contains(id) {
                let revocation = entries.last { $0.kind == .revoke && $0.transactionID == id }
                return answer(false, .revoked(on: revocation?.revocationDate, reason: revocation?.revocationReason.map(Transaction.RevocationReason.init)), id)
            }
            if let id = latest.transactionID, upgradedIDs.contains(id) { return answer(false, .upgradedAway, id) }
            if let expires = latest.expirationDate, expires > now { return answer(true, .subscriptionActive(expires: expires), latest.transactionID) }
            return answer(false, .subscriptionExpired(on: latest.expirationDate), latest.transactionID)
        default:
            let live = grants.last { !revokedIDs.contains($0.transactionID ?? .max) }
            guard let live else {
                let revocation = entries.last { $0.kind == .revoke }
                return answer(false, .revoked(on: revocation?.revocationDate, reason: revocation?.revocationReason.map(Transaction.RevocationReason.init)),
                              revocation?.transactionID)
            }
            if live.ownership == Transaction.OwnershipType.familyShared.rawValue { return answer(true, .familyShared, live.transactionID) }
            let rule: EntitlementExplanation.Rule = Product.ProductType(rawValue: live.productType) == .nonRenewable ? .nonRenewingPurchased : .nonConsumablePurchased
            return answer(true, rule, live.transactionID)
        }
    }

    private func explainSubscription(productID: String, group: String, statuses: [Product.SubscriptionInfo.Status]) -> EntitlementExplanation {
        func answer(_ entitled: Bool, _ rule: EntitlementExplanation.Rule, _ id: UInt64?) -> EntitlementExplanation {
            EntitlementExplanation(productID: productID, isEntitled: entitled, rule: rule, transactionID: id, subscriptionGroupID: group,
                                   isConfirmedByStore: true)
        }
        // Only verified statuses count; an entitled status for this product wins, then any entitled status in the group.
        let verified = statuses.compactMap { status -> (Product.SubscriptionInfo.Status, Transaction)? in
            guard case .verified(let transaction) = status.transaction, case .verified = status.renewalInfo else { return nil }
            return (status, transaction)
        }
        if let (status, transaction) = verified.first(where: { $0.1.productID == productID && $0.0.state.isEntitled }) {
            if transaction.ownershipType == .familyShared { return answer(true, .familyShared, transaction.id) }
            if status.state == .inGracePeriod {
                let until = (try? status.renewalInfo.payloadValue)?.gracePeriodExpirationDate
                return answer(true, .subscriptionInGracePeriod(until: until), transaction.id)
            }
            return answer(true, .subscriptionActive(expires: transaction.expirationDate), transaction.id)
        }
        if let (_, transaction) = verified.first(where: { $0.0.state.isEntitled }) {
            return answer(false, .coveredByGroup(activeProductID: transaction.productID), transaction.id)
        }
        guard let (status, transaction) = verified.first(where: { $0.1.productID == productID }) ?? verified.first else {
            return answer(false, .neverDelivered, nil)
        }
        switch status.state {
        case .revoked: return answer(false, .revoked(on: transaction.revocationDate, reason: transaction.revocationReason), transaction.id)
        case .inBillingRetryPeriod: return answer(false, .subscriptionInBillingRetry, transaction.id)
        default:
            if transaction.isUpgraded { return answer(false, .upgradedAway, transaction.id) }
            return answer(false, .subscriptionExpired(on: transaction.expirationDate), transaction.id)
        }
    }

    /// Whether the customer is entitled to a product now (see ``explain(_:now:)``).
    public func isEntitled(to productID: String, now: Date) async -> Bool {
        await explain(productID, now: now).isEntitled
    }
}
