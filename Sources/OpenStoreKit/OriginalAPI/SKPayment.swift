import Foundation
import Synchronization

/// A request to buy a product, as the original API's `SKPayment`.
///
/// Not tied to any actor, as in StoreKit: payments are made and read on any thread.
open class SKPayment: NSObject, @unchecked Sendable {
    struct Fields {
        var productIdentifier: String
        var quantity = 1
        var applicationUsername: String?
        var simulatesAskToBuyInSandbox = false
    }

    let fields: Mutex<Fields>

    /// A payment for one of `product`.
    public init(product: SKProduct) {
        fields = Mutex(Fields(productIdentifier: product.productIdentifier))
    }

    init(productIdentifier: String, quantity: Int = 1, applicationUsername: String? = nil) {
        fields = Mutex(Fields(productIdentifier: productIdentifier, quantity: quantity, applicationUsername: applicationUsername))
    }

    open var productIdentifier: String { fields.withLock { $0.productIdentifier } }
    /// How many of a consumable (1 to 10).
    open var quantity: Int { fields.withLock { $0.quantity } }
    /// The app's identifier for the customer; a UUID string becomes the transaction's `appAccountToken`.
    open var applicationUsername: String? { fields.withLock { $0.applicationUsername } }
    /// Whether this payment asks a parent's approval in the sandbox, as if the account had Ask to Buy on.
    open var simulatesAskToBuyInSandbox: Bool { fields.withLock { $0.simulatesAskToBuyInSandbox } }

    /// The fields as they are now (a payment added to the queue is bought as it was when added).
    var snapshot: Fields { fields.withLock { $0 } }
}

/// A payment whose fields can be changed before it is added to the queue.
public final class SKMutablePayment: SKPayment, @unchecked Sendable {
    public override init(product: SKProduct) {
        super.init(product: product)
    }

    public override var productIdentifier: String {
        get { fields.withLock { $0.productIdentifier } }
        set { fields.withLock { $0.productIdentifier = newValue } }
    }

    public override var quantity: Int {
        get { fields.withLock { $0.quantity } }
        set { fields.withLock { $0.quantity = newValue } }
    }

    public override var applicationUsername: String? {
        get { fields.withLock { $0.applicationUsername } }
        set { fields.withLock { $0.applicationUsername = newValue } }
    }

    public override var simulatesAskToBuyInSandbox: Bool {
        get { fields.withLock { $0.simulatesAskToBuyInSandbox } }
        set { fields.withLock { $0.simulatesAskToBuyInSandbox = newValue } }
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
///
/// The queue changes it as the payment progresses; readers on any thread see a consistent state.
public final class SKPaymentTransaction: NSObject, @unchecked Sendable {
    struct State {
        var transactionState: SKPaymentTransactionState
        var transactionIdentifier: String?
        var transactionDate: Date?
        var error: (any Error)?
        var original: SKPaymentTransaction?
        var transaction: Transaction?
    }

    public let payment: SKPayment
    private let state: Mutex<State>

    init(payment: SKPayment, state: SKPaymentTransactionState) {
        self.payment = payment
        self.state = Mutex(State(transactionState: state))
    }

    public var transactionState: SKPaymentTransactionState { state.withLock { $0.transactionState } }
    /// The App Store transaction identifier once purchased or restored.
    public var transactionIdentifier: String? { state.withLock { $0.transactionIdentifier } }
    public var transactionDate: Date? { state.withLock { $0.transactionDate } }
    /// Why the payment failed (an ``SKError``, which bridges to `NSError` in ``SKErrorDomain``).
    public var error: (any Error)? { state.withLock { $0.error } }
    /// For restored transactions: the transaction that was restored.
    public var original: SKPaymentTransaction? { state.withLock { $0.original } }
    /// The verified StoreKit 2 transaction behind a purchased or restored one.
    public var transaction: Transaction? { state.withLock { $0.transaction } }

    func update(_ change: (inout State) -> Void) {
        state.withLock { change(&$0) }
    }
}
