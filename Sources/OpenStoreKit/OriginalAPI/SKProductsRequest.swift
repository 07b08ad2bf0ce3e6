import Foundation

/// A product of the original StoreKit API, as `SKProduct`: an `NSObject` subclass whose members
/// can be overridden, so test doubles written for StoreKit (`class MockProduct: SKProduct { override
/// var price: NSDecimalNumber { 4.99 } }`) compile unchanged.
///
/// A product from a request presents a StoreKit 2 ``Product`` (``product``); one made with `init()`
/// has empty values, for subclasses to override.
open class SKProduct: NSObject, @unchecked Sendable {
    /// The StoreKit 2 product this one presents; `nil` for a product made with `init()`.
    public let product: Product?

    public override init() {
        self.product = nil
    }

    init(_ product: Product) {
        self.product = product
    }

    open var productIdentifier: String { product?.id ?? "" }
    open var localizedTitle: String { product?.displayName ?? "" }
    open var localizedDescription: String { product?.description ?? "" }
    /// The price in the storefront's currency.
    open var price: NSDecimalNumber { NSDecimalNumber(decimal: product?.price ?? 0) }
    /// The locale prices are presented in, with the storefront's currency (`es_ES@currency=EUR`), as
    /// StoreKit's: format ``price`` with it to get what the store shows.
    open var priceLocale: Locale { product?.priceFormatStyle.locale ?? Locale(identifier: "en_US@currency=USD") }
    open var isFamilyShareable: Bool { product?.isFamilyShareable ?? false }
    /// Whether the App Store hosts content for it: never here, as hosted content ended with iOS 18.
    open var isDownloadable: Bool { false }
    open var downloadContentLengths: [NSNumber] { [] }
    open var contentVersion: String { "" }
    open var downloadContentVersion: String { "" }
    /// The subscription group, for auto-renewable subscriptions.
    open var subscriptionGroupIdentifier: String? { product?.subscription?.subscriptionGroupID }
    /// The period of an auto-renewable subscription.
    open var subscriptionPeriod: SKProductSubscriptionPeriod? {
        product?.subscription.map { SKProductSubscriptionPeriod($0.subscriptionPeriod) }
    }
    /// The introductory offer of an auto-renewable subscription, whether or not the customer may have it.
    open var introductoryPrice: SKProductDiscount? {
        guard let product, let offer = product.subscription?.introductoryOffer else { return nil }
        return SKProductDiscount(offer, product: product)
    }
    /// The promotional offers of an auto-renewable subscription.
    open var discounts: [SKProductDiscount] {
        guard let product, let offers = product.subscription?.promotionalOffers else { return [] }
        return offers.map { SKProductDiscount($0, product: product) }
    }

    open override var description: String {
        "<SKProduct: \(productIdentifier), \(product?.displayPrice ?? price.description)>"
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SKProduct else { return false }
        if let product, let otherProduct = other.product { return product == otherProduct }
        return self === other
    }

    open override var hash: Int { product?.hashValue ?? ObjectIdentifier(self).hashValue }
}

extension SKProduct {
    /// A unit of a subscription's period, with StoreKit's raw values.
    public enum PeriodUnit: UInt, Hashable, Sendable, CaseIterable {
        case day = 0
        case week = 1
        case month = 2
        case year = 3

        init(_ unit: Product.SubscriptionPeriod.Unit) {
            switch unit {
            case .day: self = .day
            case .week: self = .week
            case .month: self = .month
            case .year: self = .year
            }
        }
    }
}

/// The length of a subscription's or an offer's period, as `SKProductSubscriptionPeriod`.
open class SKProductSubscriptionPeriod: NSObject, @unchecked Sendable {
    private let period: Product.SubscriptionPeriod?

    public override init() {
        self.period = nil
    }

    init(_ period: Product.SubscriptionPeriod) {
        self.period = period
    }

    /// How many units a period lasts.
    open var numberOfUnits: Int { period?.value ?? 0 }
    open var unit: SKProduct.PeriodUnit { period.map { SKProduct.PeriodUnit($0.unit) } ?? .day }
}

/// An introductory or promotional offer of a subscription, as `SKProductDiscount`.
open class SKProductDiscount: NSObject, @unchecked Sendable {
    /// How the customer pays during the offer, with StoreKit's raw values.
    public enum PaymentMode: UInt, Hashable, Sendable, CaseIterable {
        case payAsYouGo = 0
        case payUpFront = 1
        case freeTrial = 2
    }

    /// Which kind of offer it is, with StoreKit's raw values.
    public enum `Type`: UInt, Hashable, Sendable, CaseIterable {
        case introductory = 0
        case subscription = 1
    }

    private let offer: Product.SubscriptionOffer?
    private let product: Product?

    public override init() {
        self.offer = nil
        self.product = nil
    }

    init(_ offer: Product.SubscriptionOffer, product: Product) {
        self.offer = offer
        self.product = product
    }

    /// The price per period (pay as you go) or for the whole offer (pay up front); 0 for free trials.
    open var price: NSDecimalNumber { NSDecimalNumber(decimal: offer?.price ?? 0) }
    open var priceLocale: Locale { product?.priceFormatStyle.locale ?? Locale(identifier: "en_US@currency=USD") }
    /// The offer's identifier; `nil` for an introductory offer.
    open var identifier: String? { offer?.id }
    open var subscriptionPeriod: SKProductSubscriptionPeriod {
        offer.map { SKProductSubscriptionPeriod($0.period) } ?? SKProductSubscriptionPeriod()
    }
    /// How many periods the offer runs.
    open var numberOfPeriods: Int { offer?.periodCount ?? 0 }
    open var paymentMode: PaymentMode {
        switch offer?.paymentMode {
        case .payUpFront?: return .payUpFront
        case .freeTrial?: return .freeTrial
        default: return .payAsYouGo
        }
    }
    open var type: `Type` { offer?.type == .introductory || offer == nil ? .introductory : .subscription }
}

/// What a products request found, as `SKProductsResponse`.
open class SKProductsResponse: NSObject, @unchecked Sendable {
    private let found: [SKProduct]
    private let invalid: [String]

    public override init() {
        self.found = []
        self.invalid = []
    }

    init(products: [SKProduct], invalidProductIdentifiers: [String]) {
        self.found = products
        self.invalid = invalidProductIdentifiers
    }

    /// The products the store sells, in the order of the identifiers asked for.
    open var products: [SKProduct] { found }
    /// Identifiers the store does not know.
    open var invalidProductIdentifiers: [String] { invalid }
}

/// Hears how a request ended, as `SKRequestDelegate`; called on the main queue.
public protocol SKRequestDelegate: AnyObject {
    /// The request finished (after its response was delivered).
    func requestDidFinish(_ request: SKRequest)
    /// The request failed; the error is an ``SKError``.
    func request(_ request: SKRequest, didFailWithError error: any Error)
}

extension SKRequestDelegate {
    public func requestDidFinish(_ request: SKRequest) {}
    public func request(_ request: SKRequest, didFailWithError error: any Error) {}
}

/// Receives the products an ``SKProductsRequest`` found, as `SKProductsRequestDelegate`; called on the main queue.
public protocol SKProductsRequestDelegate: SKRequestDelegate {
    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse)
}

/// A request to the App Store, as the original API's `SKRequest`: started once, cancelled at will,
/// reporting to its delegate on the main queue. Not tied to an actor.
open class SKRequest: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private weak var storedDelegate: (any SKRequestDelegate)?
    private var task: Task<Void, Never>?

    public override init() {}

    /// Who hears how the request ends (held weakly, as in StoreKit).
    public var delegate: (any SKRequestDelegate)? {
        get { lock.withLock { storedDelegate } }
        set { lock.withLock { storedDelegate = newValue } }
    }

    /// Starts the request; the delegate hears back on the main queue. Starting twice does nothing.
    open func start() {
        lock.withLock {
            guard task == nil else { return }
            task = Task { [self] in await self.perform() }
        }
    }

    /// Cancels the request; the delegate hears nothing more.
    open func cancel() {
        lock.withLock { task }?.cancel()
    }

    /// Waits until the started request has reported to its delegate (for scripted sessions and tests).
    public func waitUntilFinished() async {
        await lock.withLock { task }?.value
        await MainQueueDelivery.drained()
    }

    /// The request's work, run once by ``start()``; subclasses report through ``deliver(_:)``.
    func perform() async {}

    /// Calls the delegate on the main queue unless the request was cancelled.
    func deliver(_ body: @escaping @Sendable (any SKRequestDelegate) -> Void) {
        DispatchQueue.main.async { [self] in
            guard lock.withLock({ task?.isCancelled != true }), let delegate else { return }
            body(delegate)
        }
    }
}

/// Fetches products by identifier, reporting to a delegate, as the original API's `SKProductsRequest`.
open class SKProductsRequest: SKRequest, @unchecked Sendable {
    public let productIdentifiers: Set<String>
    private let client: StoreClient?

    /// A request through the active client (see ``StoreClient/active``), found when it starts.
    public init(productIdentifiers: Set<String>) {
        self.productIdentifiers = productIdentifiers
        self.client = nil
    }

    /// A request through an explicit client.
    public init(productIdentifiers: Set<String>, client: StoreClient) {
        self.productIdentifiers = productIdentifiers
        self.client = client
    }

    override func perform() async {
        let client = self.client ?? StoreClient.active
        do {
            let products = try await client.products(for: productIdentifiers)
            guard !Task.isCancelled else { return }
            let found = Set(products.map(\.id))
            let response = SKProductsResponse(products: products.map(SKProduct.init),
                                              invalidProductIdentifiers: productIdentifiers.subtracting(found).sorted())
            deliver { delegate in
                (delegate as? any SKProductsRequestDelegate)?.productsRequest(self, didReceive: response)
                delegate.requestDidFinish(self)
            }
        } catch {
            guard !Task.isCancelled else { return }
            let failure = SKError(storeKitError: error)
            deliver { delegate in delegate.request(self, didFailWithError: failure) }
        }
    }
}

/// Asks the App Store for the app's receipt again, as `SKReceiptRefreshRequest`; on a device this
/// asks the customer to sign in. Here the request syncs the account (as `AppStore.sync()` does) and
/// reports to its delegate: `requestDidFinish` when the store answered, `request(_:didFailWithError:)`
/// otherwise. There is no receipt file on this platform: read the signed transactions instead.
open class SKReceiptRefreshRequest: SKRequest, @unchecked Sendable {
    private let properties: ReceiptProperties

    private final class ReceiptProperties: @unchecked Sendable {
        let values: [String: Any]?
        init(_ values: [String: Any]?) { self.values = values }
    }

    /// A request for a receipt; in the sandbox, `properties` (``SKReceiptPropertyIsExpired`` and the
    /// others) ask for a test receipt with those traits.
    public init(receiptProperties properties: [String: Any]?) {
        self.properties = ReceiptProperties(properties)
    }

    public override init() {
        self.properties = ReceiptProperties(nil)
    }

    open var receiptProperties: [String: Any]? { properties.values }

    override func perform() async {
        do {
            try await StoreClient.active.sync()
            guard !Task.isCancelled else { return }
            deliver { delegate in delegate.requestDidFinish(self) }
        } catch {
            guard !Task.isCancelled else { return }
            let failure = SKError(storeKitError: error)
            deliver { delegate in delegate.request(self, didFailWithError: failure) }
        }
    }
}

/// A sandbox receipt property: the receipt has expired.
public let SKReceiptPropertyIsExpired = "expired"
/// A sandbox receipt property: the receipt was revoked.
public let SKReceiptPropertyIsRevoked = "revoked"
/// A sandbox receipt property: the receipt is a volume purchase.
public let SKReceiptPropertyIsVolumePurchase = "vpp"

/// Ends the app so the system can fetch a valid receipt, as `SKTerminateForInvalidReceipt()` does on
/// macOS: the process exits with status 173, the code Apple's launcher reads as "invalid receipt".
public func SKTerminateForInvalidReceipt() {
    exit(173)
}
