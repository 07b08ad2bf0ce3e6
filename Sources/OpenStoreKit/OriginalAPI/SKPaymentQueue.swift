import Foundation

/// A request to buy a product, as the original API's `SKPayment`.
@MainActor
public class SKPayment {
    struct Fields {
        var productIdentifier: String
        var quantity = 1
        var applicationUsername: String?
    }

    var fields: Fields

    /// A payment for one of `product`.
    public init(product: SKProduct) {
        fields = Fields(productIdentifier: product.productIdentifier)
    }

    init(productIdentifier: String) {
        fields = Fields(productIdentifier: productIdentifier)
    }

    public var productIdentifier: String { fields.productIdentifier }
    /// How many of a consumable (1 to 10).
    public var quantity: Int { fields.quantity }
    /// The app's identifier for the customer; a UUID string becomes the transaction's `appAccountToken`.
    public var applicationUsername: String? { fields.applicationUsername }
}

/// A payment whose fields can be changed before it is added to the queue.
@MainActor
public final class SKMutablePayment: SKPayment {
    public override init(product: SKProduct) {
        super.init(product: product)
    }

    public override var productIdentifier: String {
        get { fields.productIdentifier }
        set { fields.productIdentifier = newValue }
    }

    public override var quantity: Int {
        get { fields.quantity }
        set { fields.quantity = newValue }
    }

    public override var applicationUsername: String? {
        get { fields.applicationUsername }
        set { fields.applicationUsername = newValue }
    }
}

/// Where a payment stands, as `SKPaymentTransactionState` (with StoreKit's raw values).
public enum SKPaymentTransactionState: Int, Hashable, Sendable, CaseIterable {
    case purchasing = 0
    case purchased = 1
    case failed = 2
    case restored = 3
    case deferred = 4
}

/// A payment in the queue and what became of it, as `SKPaymentTransaction`.
@MainActor
public final class SKPaymentTransaction {
    public let payment: SKPayment
    public internal(set) var transactionState: SKPaymentTransactionState
    /// The App Store transaction identifier once purchased or restored.
    public internal(set) var transactionIdentifier: String?
    public internal(set) var transactionDate: Date?
    /// Why the payment failed (an ``SKError``).
    public internal(set) var error: (any Error)?
    /// For restored transactions: the transaction that was restored.
    public internal(set) var original: SKPaymentTransaction?
    /// The verified StoreKit 2 transaction behind a purchased or restored one.
    public internal(set) var transaction: Transaction?

    init(payment: SKPayment, state: SKPaymentTransactionState) {
        self.payment = payment
        self.transactionState = state
    }
}

/// Hears about payment transactions on the main actor, as `SKPaymentTransactionObserver`.
@MainActor
public protocol SKPaymentTransactionObserver: AnyObject {
    /// Transactions changed state: purchasing, purchased, failed, restored or deferred.
    func paymentQueue(_ queue: SKPaymentQueue, updatedTransactions transactions: [SKPaymentTransaction])
    /// Finished transactions left the queue.
    func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction])
    /// Every restorable transaction was delivered as `restored`.
    func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue)
    /// Restoring failed.
    func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error)
    /// The App Store revoked products (refunds, family sharing ending).
    func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String])
}

extension SKPaymentTransactionObserver {
    public func paymentQueue(_ queue: SKPaymentQueue, removedTransactions transactions: [SKPaymentTransaction]) {}
    public func paymentQueueRestoreCompletedTransactionsFinished(_ queue: SKPaymentQueue) {}
    public func paymentQueue(_ queue: SKPaymentQueue, restoreCompletedTransactionsFailedWithError error: any Error) {}
    public func paymentQueue(_ queue: SKPaymentQueue, didRevokeEntitlementsForProductIdentifiers productIdentifiers: [String]) {}
}

/// The original API's payment queue, on the same App Store as the StoreKit 2 API.
///
/// Adding the first observer starts listening to `Transaction.updates` of the queue's device, so
/// unfinished transactions, Ask to Buy approvals and purchases from other devices arrive as
/// `purchased`, and revocations through `didRevokeEntitlementsForProductIdentifiers`. Only verified
/// transactions are ever reported as purchased or restored.
@MainActor
public final class SKPaymentQueue {
    private static var queues: [ObjectIdentifier: SKPaymentQueue] = [:]

    /// The queue of the active client (see ``StoreClient/active``).
    public static func `default`() -> SKPaymentQueue {
        let client = StoreClient.active
        if let queue = queues[ObjectIdentifier(client)] { return queue }
        let queue = SKPaymentQueue(client: client)
        queues[ObjectIdentifier(client)] = queue
        return queue
    }

    /// Whether the customer may make payments.
    public static func canMakePayments() -> Bool { AppStore.canMakePayments }

    public let client: StoreClient
    /// The transactions not yet finished.
    public private(set) var transactions: [SKPaymentTransaction] = []
    private var observers: [any SKPaymentTransactionObserver] = []
    private var listener: Task<Void, Never>?
    /// Purchases, restores and finishes still running, by start order; each removes itself when done.
    private var work: [Int: Task<Void, Never>] = [:]
    private var nextWorkNumber = 0

    /// A queue for an explicit client.
    public init(client: StoreClient) {
        self.client = client
    }

    public func add(_ observer: any SKPaymentTransactionObserver) {
        guard !observers.contains(where: { $0 === observer }) else { return }
        observers.append(observer)
        if listener == nil { listener = Task { @MainActor [weak self] in await self?.listen() } }
    }

    public func remove(_ observer: any SKPaymentTransactionObserver) {
        observers.removeAll { $0 === observer }
    }

    /// Buys the payment's product: observers see `purchasing`, then `purchased`, `deferred` or `failed`.
    public func add(_ payment: SKPayment) {
        let transaction = SKPaymentTransaction(payment: payment, state: .purchasing)
        transactions.append(transaction)
        report([transaction])
        track { @MainActor in
            var options: Set<Product.PurchaseOption> = [.quantity(payment.quantity)]
            if let username = payment.applicationUsername, let token = UUID(uuidString: username) { options.insert(.appAccountToken(token)) }
            do {
                switch try await self.client.purchase(productID: payment.productIdentifier, options: options) {
                case .success(.verified(let verified)):
                    self.complete(transaction, with: verified, state: .purchased)
                case .success(.unverified(_, let error)):
                    self.fail(transaction, SKError(.unknown, message: "the purchase did not verify: \(error)"))
                case .pending:
                    transaction.transactionState = .deferred
                    self.report([transaction])
                case .userCancelled:
                    self.fail(transaction, SKError(.paymentCancelled))
                }
            } catch {
                self.fail(transaction, SKError(storeKitError: error))
            }
        }
    }

    /// Tells the App Store the purchase was delivered and removes the transaction from the queue.
    public func finishTransaction(_ transaction: SKPaymentTransaction) {
        transactions.removeAll { $0 === transaction }
        for observer in observers { observer.paymentQueue(self, removedTransactions: [transaction]) }
        guard let finished = transaction.transaction, transaction.transactionState != .failed else { return }
        track { @MainActor in await finished.finish() }
    }

    /// Delivers every non-consumable and subscription purchase of the account again as `restored`,
    /// then reports `paymentQueueRestoreCompletedTransactionsFinished`.
    public func restoreCompletedTransactions() {
        track { @MainActor in
            do {
                try await self.client.sync()
            } catch {
                for observer in self.observers {
                    observer.paymentQueue(self, restoreCompletedTransactionsFailedWithError: SKError(storeKitError: error))
                }
                return
            }
            var restored: [SKPaymentTransaction] = []
            for await result in self.client.allTransactions {
                guard case .verified(let verified) = result, verified.revocationDate == nil, verified.productType != .consumable else { continue }
                let original = SKPaymentTransaction(payment: SKPayment(productIdentifier: verified.productID), state: .purchased)
                original.transactionIdentifier = String(verified.originalID)
                original.transactionDate = verified.originalPurchaseDate
                let transaction = SKPaymentTransaction(payment: SKPayment(productIdentifier: verified.productID), state: .restored)
                transaction.original = original
                transaction.transactionIdentifier = String(verified.id)
                transaction.transactionDate = verified.purchaseDate
                transaction.transaction = verified
                restored.append(transaction)
            }
            self.transactions.append(contentsOf: restored)
            if !restored.isEmpty { self.report(restored) }
            for observer in self.observers { observer.paymentQueueRestoreCompletedTransactionsFinished(self) }
        }
    }

    /// Waits until every purchase, restore and finish started so far has reported (for scripted sessions and tests).
    public func settle() async {
        while let (number, task) = work.min(by: { $0.key < $1.key }) {
            await task.value
            work[number] = nil
        }
    }

    /// Stops listening to the store.
    public func stop() {
        listener?.cancel()
        listener = nil
    }

    // MARK: Reporting

    private func track(_ body: @escaping @MainActor () async -> Void) {
        let number = nextWorkNumber
        nextWorkNumber += 1
        // The task cannot start before this main-actor method returns, so it is registered first.
        work[number] = Task { @MainActor [weak self] in
            await body()
            self?.work[number] = nil
        }
    }

    private func report(_ changed: [SKPaymentTransaction]) {
        for observer in observers { observer.paymentQueue(self, updatedTransactions: changed) }
    }

    private func complete(_ transaction: SKPaymentTransaction, with verified: Transaction, state: SKPaymentTransactionState) {
        transaction.transactionState = state
        transaction.transactionIdentifier = String(verified.id)
        transaction.transactionDate = verified.purchaseDate
        transaction.transaction = verified
        report([transaction])
    }

    private func fail(_ transaction: SKPaymentTransaction, _ error: SKError) {
        transaction.transactionState = .failed
        transaction.error = error
        report([transaction])
    }

    /// Transactions arriving outside a payment: approvals, other devices, launches, renewals, revocations.
    private func listen() async {
        for await result in client.transactionUpdates {
            guard case .verified(let verified) = result else {
                StoreDiagnostics.report("the payment queue ignored an unverified transaction")
                continue
            }
            if verified.revocationDate != nil {
                for observer in observers {
                    observer.paymentQueue(self, didRevokeEntitlementsForProductIdentifiers: [verified.productID])
                }
                await verified.finish()
                continue
            }
            if let deferred = transactions.first(where: { $0.transactionState == .deferred && $0.payment.productIdentifier == verified.productID }) {
                complete(deferred, with: verified, state: .purchased)
                continue
            }
            guard !transactions.contains(where: { $0.transaction?.id == verified.id }) else { continue }
            let transaction = SKPaymentTransaction(payment: SKPayment(productIdentifier: verified.productID), state: .purchasing)
            transaction.payment.fields.quantity = verified.purchasedQuantity
            transactions.append(transaction)
            complete(transaction, with: verified, state: .purchased)
        }
    }
}
