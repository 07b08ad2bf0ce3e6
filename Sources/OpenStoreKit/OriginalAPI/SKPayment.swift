import Foundation
import Synchronization

/// A request to buy a product, as the original API's `SKPayment`.
///
/// Not tied to any actor, as in StoreKit: payments are made and read on any thread. Its members can
/// be overridden, so test doubles written for StoreKit compile unchanged.
open class SKPayment: NSObject, @unchecked Sendable {
    struct Fields {
        var productIdentifier: String
        var quantity = 1
        var applicationUsername: String?
        var requestData: Data?
        var simulatesAskToBuyInSandbox = false
        var paymentDiscount: SKPaymentDiscount?
    }

    let fields: Mutex<Fields>

    /// A payment for one of `product`.
    public init(product: SKProduct) {
        fields = Mutex(Fields(productIdentifier: product.productIdentifier))
    }

    /// An empty payment, for subclasses (test doubles) to override.
    public override init() {
        fields = Mutex(Fields(productIdentifier: ""))
    }

    init(productIdentifier: String, quantity: Int = 1, applicationUsername: String? = nil) {
        fields = Mutex(Fields(productIdentifier: productIdentifier, quantity: quantity, applicationUsername: applicationUsername))
    }

    /// A payment for a product known only by its identifier (deprecated by Apple in iOS 5, still
    /// compiled by code that kept it).
    open class func payment(withProductIdentifier identifier: String) -> Any {
        SKPayment(productIdentifier: identifier)
    }

    open var productIdentifier: String { fields.withLock { $0.productIdentifier } }
    /// How many of a consumable (1 to 10).
    open var quantity: Int { fields.withLock { $0.quantity } }
    /// The app's identifier for the customer; a UUID string becomes the transaction's `appAccountToken`.
    open var applicationUsername: String? { fields.withLock { $0.applicationUsername } }
    /// Reserved by Apple for future use; carried, never read.
    open var requestData: Data? { fields.withLock { $0.requestData } }
    /// Whether this payment asks a parent's approval in the sandbox, as if the account had Ask to Buy on.
    open var simulatesAskToBuyInSandbox: Bool { fields.withLock { $0.simulatesAskToBuyInSandbox } }
    /// A promotional offer to buy the subscription with, signed by the developer's server.
    open var paymentDiscount: SKPaymentDiscount? { fields.withLock { $0.paymentDiscount } }

    /// The fields as they are now (a payment added to the queue is bought as it was when added):
    /// read through the accessors, so a subclass's overrides count.
    var snapshot: Fields {
        Fields(productIdentifier: productIdentifier, quantity: quantity, applicationUsername: applicationUsername, requestData: requestData,
               simulatesAskToBuyInSandbox: simulatesAskToBuyInSandbox, paymentDiscount: paymentDiscount)
    }
}

/// A payment whose fields can be changed before it is added to the queue, as `SKMutablePayment`.
open class SKMutablePayment: SKPayment, @unchecked Sendable {
    public override init(product: SKProduct) {
        super.init(product: product)
    }

    public override init() {
        super.init()
    }

    open override var productIdentifier: String {
        get { fields.withLock { $0.productIdentifier } }
        set { fields.withLock { $0.productIdentifier = newValue } }
    }

    open override var quantity: Int {
        get { fields.withLock { $0.quantity } }
        set { fields.withLock { $0.quantity = newValue } }
    }

    open override var applicationUsername: String? {
        get { fields.withLock { $0.applicationUsername } }
        set { fields.withLock { $0.applicationUsername = newValue } }
    }

    open override var requestData: Data? {
        get { fields.withLock { $0.requestData } }
        set { fields.withLock { $0.requestData = newValue } }
    }

    open override var simulatesAskToBuyInSandbox: Bool {
        get { fields.withLock { $0.simulatesAskToBuyInSandbox } }
        set { fields.withLock { $0.simulatesAskToBuyInSandbox = newValue } }
    }

    open override var paymentDiscount: SKPaymentDiscount? {
        get { fields.withLock { $0.paymentDiscount } }
        set { fields.withLock { $0.paymentDiscount = newValue } }
    }
}

/// A signed promotional offer for a payment, as `SKPaymentDiscount`: the fields the developer's
/// server signed (offer, key, nonce, timestamp in milliseconds) and the base64 signature.
open class SKPaymentDiscount: NSObject, @unchecked Sendable {
    public let identifier: String
    public let keyIdentifier: String
    public let nonce: UUID
    /// The base64-encoded DER signature.
    public let signature: String
    /// Milliseconds since 1970, as signed.
    public let timestamp: NSNumber

    public init(identifier: String, keyIdentifier: String, nonce: UUID, signature: String, timestamp: NSNumber) {
        self.identifier = identifier
        self.keyIdentifier = keyIdentifier
        self.nonce = nonce
        self.signature = signature
        self.timestamp = timestamp
    }

    /// The StoreKit 2 purchase option with the same offer and signature; `nil` when the signature is not base64.
    var purchaseOption: Product.PurchaseOption? {
        guard let data = Data(base64Encoded: signature) else { return nil }
        return .promotionalOffer(offerID: identifier, keyID: keyIdentifier, nonce: nonce, signature: data, timestamp: timestamp.intValue)
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
/// Its members can be overridden, so test doubles written for StoreKit
/// (`class MockTransaction: SKPaymentTransaction { override var transactionState: … }`) compile.
open class SKPaymentTransaction: NSObject, @unchecked Sendable {
    struct State {
        var transactionState: SKPaymentTransactionState
        var transactionIdentifier: String?
        var transactionDate: Date?
        var error: (any Error)?
        var original: SKPaymentTransaction?
        var transaction: Transaction?
    }

    private let storedPayment: SKPayment
    private let state: Mutex<State>

    init(payment: SKPayment, state: SKPaymentTransactionState) {
        self.storedPayment = payment
        self.state = Mutex(State(transactionState: state))
    }

    /// An empty transaction (an empty payment, `purchasing`), for subclasses to override.
    public override init() {
        self.storedPayment = SKPayment()
        self.state = Mutex(State(transactionState: .purchasing))
    }

    open var payment: SKPayment { storedPayment }
    open var transactionState: SKPaymentTransactionState { state.withLock { $0.transactionState } }
    /// The App Store transaction identifier once purchased or restored.
    open var transactionIdentifier: String? { state.withLock { $0.transactionIdentifier } }
    open var transactionDate: Date? { state.withLock { $0.transactionDate } }
    /// Why the payment failed (an ``SKError``, which bridges to `NSError` in ``SKErrorDomain``).
    open var error: (any Error)? { state.withLock { $0.error } }
    /// For restored transactions: the transaction that was restored.
    open var original: SKPaymentTransaction? { state.withLock { $0.original } }
    /// Content the App Store hosts for the product: none here (hosted content ended with iOS 18).
    open var downloads: [SKDownload] { [] }
    /// The verified StoreKit 2 transaction behind a purchased or restored one.
    public var transaction: Transaction? { state.withLock { $0.transaction } }

    func update(_ change: (inout State) -> Void) {
        state.withLock { change(&$0) }
    }
}

/// Content the App Store hosted for a product, as `SKDownload`. Apple ended hosted content with
/// iOS 18; the type is here so observers that implement `paymentQueue(_:updatedDownloads:)`
/// compile, and the queue never reports a download.
open class SKDownload: NSObject, @unchecked Sendable {
    open var contentIdentifier: String { "" }
    open var contentLength: Int64 { 0 }
    open var contentVersion: String { "" }
    open var contentURL: URL? { nil }
    open var error: (any Error)? { nil }
    open var progress: Float { 0 }
    open var timeRemaining: TimeInterval { 0 }
    open var state: SKDownloadState { .waiting }
    open var transaction: SKPaymentTransaction { SKPaymentTransaction() }
}

/// Where a hosted-content download stands, with StoreKit's raw values.
public enum SKDownloadState: Int, Hashable, Sendable, CaseIterable {
    case waiting = 0
    case active = 1
    case paused = 2
    case finished = 3
    case failed = 4
    case cancelled = 5
}

/// The App Store country or region of the customer, as the original API's `SKStorefront`.
open class SKStorefront: NSObject, @unchecked Sendable {
    private let storefront: Storefront

    init(_ storefront: Storefront) {
        self.storefront = storefront
    }

    /// The United States storefront, for subclasses (test doubles) to override.
    public override init() {
        self.storefront = Storefront(countryCode: "USA", id: "143441", currencyCode: "USD")
    }

    /// The ISO 3166-1 alpha-3 country code, such as `USA`.
    open var countryCode: String { storefront.countryCode }
    /// Apple's numeric storefront identifier, such as `143441`.
    open var identifier: String { storefront.id }
}
