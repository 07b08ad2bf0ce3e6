import Dispatch
import Foundation
import Synchronization

/// Hears about payment transactions, as `SKPaymentTransactionObserver`.
///
/// The queue calls its observers on the main queue (the main thread), in order, as StoreKit does;
/// the protocol itself is not tied to an actor, so a plain `NSObject` helper conforms. Every method
/// but the first is optional, as in StoreKit (a default does nothing).
public protocol SKPaymentTransactionObserver: AnyObject {
    /// Transactions changed state: purchasing, purchased, failed, restored or deferred.
    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction])
    /// Finished transactions left the queue.
    func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction])
    /// Every restorable transaction was delivered as `restored`.
    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue)
    /// Restoring failed.
    func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error)
    /// Hosted-content downloads changed: never called here (hosted content ended with iOS 18).
    func paymentQueue(_ queue: SKPaymentQueue, updatedDownloads downloads: [SKDownload])
    /// The customer started buying a promoted in-app purchase on the App Store (a purchase intent):
    /// `true` adds the payment to the queue now, `false` leaves it for the app to add later. The
    /// payment is added when any observer says `true`; by default an observer says `false`.
    func paymentQueue(_ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct) -> Bool
    /// The account's storefront changed (``SKPaymentQueue/storefront`` has the new one).
    func paymentQueueDidChangeStorefront(_ queue: SKPaymentQueue)
    /// The App Store revoked products (refunds, family sharing ending).
    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String])
}

extension SKPaymentTransactionObserver {
    public func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction]) {}
    public func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {}
    public func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) {}
    public func paymentQueue(_ queue: SKPaymentQueue, updatedDownloads downloads: [SKDownload]) {}
    public func paymentQueue(_ queue: SKPaymentQueue, shouldAddStorePayment payment: SKPayment, for product: SKProduct) -> Bool { false }
    public func paymentQueueDidChangeStorefront(_ queue: SKPaymentQueue) {}
    public func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]) {}
}

/// Decides for the payment queue, as `SKPaymentQueueDelegate`; called on the main queue.
public protocol SKPaymentQueueDelegate: AnyObject {
    /// The account's storefront changed while `transaction` was being bought: `false` ends it with
    /// `SKError.storeProductNotAvailable`. By default the purchase continues in the new storefront.
    func paymentQueue(_ paymentQueue: SKPaymentQueue, shouldContinue transaction: SKPaymentTransaction, in newStorefront: SKStorefront) -> Bool
    /// Whether ``SKPaymentQueue/showPriceConsentIfNeeded()`` shows a waiting price-increase consent
    /// sheet now; by default it does.
    func paymentQueueShouldShowPriceConsent(_ paymentQueue: SKPaymentQueue) -> Bool
}

extension SKPaymentQueueDelegate {
    public func paymentQueue(_ paymentQueue: SKPaymentQueue, shouldContinue transaction: SKPaymentTransaction, in newStorefront: SKStorefront) -> Bool {
        true
    }

    public func paymentQueueShouldShowPriceConsent(_ paymentQueue: SKPaymentQueue) -> Bool { true }
}

/// The original API's payment queue, on the same App Store as the StoreKit 2 API.
///
/// Not tied to an actor, as in StoreKit: payments are added, finished and restored from any thread,
/// and observers hear back on the main queue, in the order things happened. Adding the first observer
/// starts listening to the queue's device: `Transaction.updates` (unfinished transactions, Ask to
/// Buy approvals and purchases from other devices arrive as `purchased`, revocations through
/// `didRevokeEntitlementsForProductIdentifiers`), purchase intents (promoted purchases, offered to
/// `paymentQueue(_:shouldAddStorePayment:for:)`) and storefront changes
/// (`paymentQueueDidChangeStorefront`). Only verified transactions are ever reported as purchased or
/// restored.
open class SKPaymentQueue: NSObject, @unchecked Sendable {
    /// The queues handed out by ``default()``: one per client, and the one handed out before any
    /// client was set, which binds to the first client set.
    private struct Registry {
        var queues: [ObjectIdentifier: SKPaymentQueue] = [:]
        var unbound: SKPaymentQueue?

        /// The queue of `client`: its own, or the unbound queue, which is bound to it now.
        mutating func queue(for client: StoreClient) -> SKPaymentQueue {
            if let queue = queues[ObjectIdentifier(client)] { return queue }
            let queue = unbound ?? SKPaymentQueue(bound: nil)
            unbound = nil
            queue.bound.withLock { $0 = client }
            queues[ObjectIdentifier(client)] = queue
            return queue
        }
    }

    private static let registry = Mutex(Registry())

    /// The queue of the active client (see ``StoreClient/active``).
    ///
    /// Called before any client is set (an app adds its observer in `application(_:didFinishLaunching…)`
    /// or a helper's `init`, before it connects), it returns a queue that binds to the first client
    /// set: its observer then hears that client's transactions, and later calls return the same queue.
    /// A subclass (a test double) gets a new instance of itself.
    open class func `default`() -> Self {
        guard self == SKPaymentQueue.self else { return self.init() }
        let client = StoreClient.active
        let queue = registry.withLock { registry -> SKPaymentQueue in
            guard !client.isDisconnected else {
                if let unbound = registry.unbound { return unbound }
                let queue = SKPaymentQueue(bound: nil)
                registry.unbound = queue
                return queue
            }
            return registry.queue(for: client)
        }
        return unsafeDowncast(queue, to: self)
    }

    /// Whether the customer may make payments (see ``AppStore/canMakePayments``).
    open class func canMakePayments() -> Bool { AppStore.canMakePayments }

    /// The client the queue buys through: the one it was made or bound for, else the active one.
    public var client: StoreClient { bound.withLock { $0 } ?? StoreClient.active }
    /// `nil` for the queue ``default()`` handed out before any client was set, until one is.
    private let bound: Mutex<StoreClient?>

    /// What the queue holds; guarded by ``lock``. Observers are the app's objects, called only on the main queue.
    private struct State {
        var transactions: [SKPaymentTransaction] = []
        var observers: [any SKPaymentTransactionObserver] = []
        weak var delegate: (any SKPaymentQueueDelegate)?
        var storefront: SKStorefront?
        var listeners: [Task<Void, Never>] = []
        /// Purchases, restores and finishes still running, by start order; each removes itself when done.
        var work: [Int: Task<Void, Never>] = [:]
        var nextWorkNumber = 0
    }

    private let lock = NSLock()
    private var state = State()

    /// A queue for an explicit client.
    public init(client: StoreClient) {
        self.bound = Mutex(client)
    }

    /// A queue of the active client, found when it is used (for subclasses: test doubles).
    public required override init() {
        self.bound = Mutex(nil)
    }

    private init(bound client: StoreClient?) {
        self.bound = Mutex(client)
    }

    /// The client to listen to: the bound one, or (for an unbound default queue) the first client set.
    private func listeningClient() async -> StoreClient? {
        if let client = bound.withLock({ $0 }) { return client }
        guard let client = await StoreClient.awaitingActive() else { return nil }
        return Self.registry.withLock { $0.queue(for: client) } === self ? client : bound.withLock { $0 }
    }

    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// The transactions not yet finished.
    open var transactions: [SKPaymentTransaction] { withState { $0.transactions } }

    /// The observers added, in the order they were added.
    open var transactionObservers: [any SKPaymentTransactionObserver] { withState { $0.observers } }

    /// Decides whether a purchase goes on when the storefront changed, and whether to show price
    /// consent now (held weakly, as in StoreKit).
    open weak var delegate: (any SKPaymentQueueDelegate)? {
        get { withState { $0.delegate } }
        set { withState { $0.delegate = newValue } }
    }

    /// The account's storefront, as the queue last heard it: read when the first observer is added,
    /// kept current by storefront changes; `nil` until then.
    open var storefront: SKStorefront? { withState { $0.storefront } }

    open func add(_ observer: any SKPaymentTransactionObserver) {
        let startsListening = withState { state -> Bool in
            guard !state.observers.contains(where: { $0 === observer }) else { return false }
            state.observers.append(observer)
            return state.listeners.isEmpty
        }
        guard startsListening else { return }
        let listeners: [Task<Void, Never>] = [
            Task { [weak self] in await self?.listenToTransactions() },
            Task { [weak self] in await self?.listenToPurchaseIntents() },
            Task { [weak self] in await self?.listenToStorefronts() },
        ]
        withState { $0.listeners = listeners }
    }

    open func remove(_ observer: any SKPaymentTransactionObserver) {
        withState { $0.observers.removeAll { $0 === observer } }
    }

    /// Buys the payment's product: observers see `purchasing`, then `purchased`, `deferred` or `failed`.
    open func add(_ payment: SKPayment) {
        let fields = payment.snapshot
        let transaction = SKPaymentTransaction(payment: payment, state: .purchasing)
        withState { $0.transactions.append(transaction) }
        report([transaction])
        track {
            var options: Set<Product.PurchaseOption> = [.quantity(fields.quantity)]
            if let username = fields.applicationUsername, let token = UUID(uuidString: username) { options.insert(.appAccountToken(token)) }
            if fields.simulatesAskToBuyInSandbox { options.insert(.simulatesAskToBuyInSandbox(true)) }
            if let discount = fields.paymentDiscount {
                guard let option = discount.purchaseOption else {
                    self.fail(transaction, SKError(.invalidSignature, message: "the payment discount's signature is not base64"))
                    return
                }
                options.insert(option)
            }
            do {
                guard try await self.storefrontAllows(transaction) else {
                    self.fail(transaction, SKError(.storeProductNotAvailable, message: "the queue's delegate stopped the purchase in the new storefront"))
                    return
                }
                switch try await self.client.purchase(productID: fields.productIdentifier, options: options) {
                case .success(.verified(let verified)):
                    self.complete(transaction, with: verified, state: .purchased)
                case .success(.unverified(_, let error)):
                    self.fail(transaction, SKError(.unknown, message: "the purchase did not verify: \(error)"))
                case .pending:
                    self.report([transaction]) { $0.transactionState = .deferred }
                case .userCancelled:
                    self.fail(transaction, SKError(.paymentCancelled))
                }
            } catch {
                self.fail(transaction, SKError(storeKitError: error))
            }
        }
    }

    /// Asks the delegate, on the main queue, whether a purchase goes on when the account's storefront
    /// is no longer the one the queue last reported (``storefront``); `true` without a delegate or a
    /// change.
    private func storefrontAllows(_ transaction: SKPaymentTransaction) async throws -> Bool {
        guard self.delegate != nil, let reported = storefront?.countryCode else { return true }
        guard let current = await client.storefront(), current.countryCode != reported else { return true }
        let newStorefront = SKStorefront(current)
        return await withCheckedContinuation { continuation in
            DispatchQueue.main.async {
                continuation.resume(returning: self.delegate?.paymentQueue(self, shouldContinue: transaction, in: newStorefront) ?? true)
            }
        }
    }

    /// Tells the App Store the purchase was delivered and removes the transaction from the queue.
    open func finishTransaction(_ transaction: SKPaymentTransaction) {
        withState { $0.transactions.removeAll { $0 === transaction } }
        deliver { queue, observers in
            for observer in observers { observer.paymentQueue(queue, removedTransactions: [transaction]) }
        }
        guard let finished = transaction.transaction, transaction.transactionState != .failed else { return }
        track { await finished.finish() }
    }

    /// Delivers every non-consumable and subscription purchase of the account again as `restored`,
    /// then reports `paymentQueueRestoreCompletedTransactionsFinished`.
    open func restoreCompletedTransactions() {
        restore(applicationUsername: nil)
    }

    /// Restores as ``restoreCompletedTransactions()`` does, for the customer the app knows by
    /// `username`: the restored transactions' payments carry it as their `applicationUsername`.
    open func restoreCompletedTransactions(withApplicationUsername username: String?) {
        restore(applicationUsername: username)
    }

    /// Shows the offer-code redemption sheet (`AppStore.presentOfferCodeRedeemSheet()`); a code the
    /// customer redeems there arrives through the observers as a purchased transaction.
    open func presentCodeRedemptionSheet() {
        let client = self.client
        track {
            do {
                try await client.presentSheet("offerCodeRedeem")
            } catch {
                StoreDiagnostics.report("the offer-code redemption sheet failed: \(error)")
            }
        }
    }

    /// Shows a price-increase consent sheet the customer has waiting, unless the delegate says not
    /// now (`paymentQueueShouldShowPriceConsent`). What the customer does there is what the test
    /// controls queued for it.
    open func showPriceConsentIfNeeded() {
        let client = self.client
        track {
            if self.delegate != nil {
                let shows = await withCheckedContinuation { continuation in
                    DispatchQueue.main.async { continuation.resume(returning: self.delegate?.paymentQueueShouldShowPriceConsent(self) ?? true) }
                }
                guard shows else { return }
            }
            do {
                try await client.presentSheet(Message.Reason.priceIncreaseConsent.name)
            } catch {
                StoreDiagnostics.report("the price consent sheet failed: \(error)")
            }
        }
    }

    /// Hosted-content downloads ended with iOS 18: there are none to start, pause, resume or cancel.
    open func start(_ downloads: [SKDownload]) {}
    open func pause(_ downloads: [SKDownload]) {}
    open func resume(_ downloads: [SKDownload]) {}
    open func cancel(_ downloads: [SKDownload]) {}

    private func restore(applicationUsername: String?) {
        track {
            do {
                try await self.client.sync()
            } catch {
                let failure = SKError(storeKitError: error)
                self.deliver { queue, observers in
                    for observer in observers { observer.paymentQueue(queue, restoreCompletedTransactionsFailedWithError: failure) }
                }
                return
            }
            var restored: [SKPaymentTransaction] = []
            for await result in self.client.allTransactions {
                guard case .verified(let verified) = result, verified.revocationDate == nil, verified.productType != .consumable else { continue }
                let original = SKPaymentTransaction(payment: SKPayment(productIdentifier: verified.productID), state: .purchased)
                original.update {
                    $0.transactionIdentifier = String(verified.originalID)
                    $0.transactionDate = verified.originalPurchaseDate
                }
                let payment = SKPayment(productIdentifier: verified.productID, applicationUsername: applicationUsername)
                let transaction = SKPaymentTransaction(payment: payment, state: .restored)
                transaction.update {
                    $0.original = original
                    $0.transactionIdentifier = String(verified.id)
                    $0.transactionDate = verified.purchaseDate
                    $0.transaction = verified
                }
                restored.append(transaction)
            }
            self.withState { $0.transactions.append(contentsOf: restored) }
            if !restored.isEmpty { self.report(restored) }
            self.deliver { queue, observers in
                for observer in observers { observer.paymentQueueRestoreCompletedTransactionsFinished(queue) }
            }
        }
    }

    /// Waits until every purchase, restore and finish started so far has run and its observers have
    /// heard about it (for scripted sessions and tests).
    public func settle() async {
        while let (number, task) = withState({ $0.work.min(by: { $0.key < $1.key }) }) {
            await task.value
            withState { $0.work[number] = nil }
        }
        await MainQueueDelivery.drained()
    }

    /// Stops listening to the store.
    public func stop() {
        withState { state in
            for listener in state.listeners { listener.cancel() }
            state.listeners = []
        }
    }

    // MARK: Reporting

    private func track(_ body: @escaping @Sendable () async -> Void) {
        withState { state in
            let number = state.nextWorkNumber
            state.nextWorkNumber += 1
            // Registered under the lock before the task can finish and remove itself.
            state.work[number] = Task { [weak self] in
                await body()
                self?.withState { _ = $0.work.removeValue(forKey: number) }
            }
        }
    }

    /// Calls the observers on the main queue, in the order of the calls to this method.
    private func deliver(_ body: @escaping @Sendable (SKPaymentQueue, [any SKPaymentTransactionObserver]) -> Void) {
        DispatchQueue.main.async {
            body(self, self.withState { $0.observers })
        }
    }

    /// Reports transactions to the observers; a state change is applied on the main queue just before,
    /// so each observer call sees the transaction in the state it reports, as in StoreKit.
    private func report(_ changed: [SKPaymentTransaction], applying change: (@Sendable (inout SKPaymentTransaction.State) -> Void)? = nil) {
        deliver { queue, observers in
            if let change { for transaction in changed { transaction.update(change) } }
            for observer in observers { observer.paymentQueue(queue, updatedTransactions: changed) }
        }
    }

    private func complete(_ transaction: SKPaymentTransaction, with verified: Transaction, state: SKPaymentTransactionState) {
        report([transaction]) {
            $0.transactionState = state
            $0.transactionIdentifier = String(verified.id)
            $0.transactionDate = verified.purchaseDate
            $0.transaction = verified
        }
    }

    private func fail(_ transaction: SKPaymentTransaction, _ error: SKError) {
        report([transaction]) {
            $0.transactionState = .failed
            $0.error = error
        }
    }

    // MARK: Listening

    /// Transactions arriving outside a payment: approvals, other devices, launches, renewals, revocations.
    private func listenToTransactions() async {
        guard let client = await listeningClient() else { return }
        for await result in client.transactionUpdates {
            guard case .verified(let verified) = result else {
                StoreDiagnostics.report("the payment queue ignored an unverified transaction")
                continue
            }
            if verified.revocationDate != nil {
                deliver { queue, observers in
                    for observer in observers {
                        observer.paymentQueue(queue, didRevokeEntitlementsForProductIdentifiers: [verified.productID])
                    }
                }
                await verified.finish()
                continue
            }
            let pending = withState { state -> (deferred: SKPaymentTransaction?, known: Bool) in
                (state.transactions.first { $0.transactionState == .deferred && $0.payment.productIdentifier == verified.productID },
                 state.transactions.contains { $0.transaction?.id == verified.id })
            }
            if let deferred = pending.deferred {
                complete(deferred, with: verified, state: .purchased)
                continue
            }
            guard !pending.known else { continue }
            let transaction = SKPaymentTransaction(payment: SKPayment(productIdentifier: verified.productID, quantity: verified.purchasedQuantity),
                                                   state: .purchasing)
            withState { $0.transactions.append(transaction) }
            complete(transaction, with: verified, state: .purchased)
        }
    }

    /// Promoted purchases: each is offered to the observers, and added to the queue when one says yes.
    private func listenToPurchaseIntents() async {
        guard let client = await listeningClient() else { return }
        for await intent in client.purchaseIntents {
            let product = SKProduct(intent.product)
            let payment = SKPayment(product: product)
            let accepted = await withCheckedContinuation { continuation in
                deliver { queue, observers in
                    var accepted = false
                    for observer in observers where observer.paymentQueue(queue, shouldAddStorePayment: payment, for: product) { accepted = true }
                    continuation.resume(returning: accepted)
                }
            }
            if accepted { add(payment) }
        }
    }

    /// Storefront changes: the queue's storefront follows, and the observers hear of it.
    private func listenToStorefronts() async {
        guard let client = await listeningClient() else { return }
        if let current = await client.storefront() {
            withState { $0.storefront = SKStorefront(current) }
        }
        for await storefront in client.storefrontUpdates {
            withState { $0.storefront = SKStorefront(storefront) }
            deliver { queue, observers in
                for observer in observers { observer.paymentQueueDidChangeStorefront(queue) }
            }
        }
    }
}

/// The original API calls its observers and delegates on the main queue, in order.
enum MainQueueDelivery {
    /// Returns once everything queued on the main queue before this call has been delivered.
    static func drained() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async { continuation.resume() }
        }
    }
}
