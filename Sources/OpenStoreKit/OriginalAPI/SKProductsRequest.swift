import Foundation

/// A product of the original StoreKit API, as `SKProduct`.
public final class SKProduct: Sendable, Hashable, CustomStringConvertible {
    public let productIdentifier: String
    public let localizedTitle: String
    public let localizedDescription: String
    /// The price in the storefront's currency.
    public var price: NSDecimalNumber { NSDecimalNumber(decimal: product.price) }
    /// The locale prices are presented in, with the storefront's currency (`es_ES@currency=EUR`), as
    /// StoreKit's: format ``price`` with it to get what the store shows.
    public let priceLocale: Locale
    public let isFamilyShareable: Bool
    /// The subscription group, for auto-renewable subscriptions.
    public let subscriptionGroupIdentifier: String?
    /// The StoreKit 2 product this one presents.
    public let product: Product

    init(_ product: Product) {
        self.product = product
        self.productIdentifier = product.id
        self.localizedTitle = product.displayName
        self.localizedDescription = product.description
        self.priceLocale = product.priceFormatStyle.locale
        self.isFamilyShareable = product.isFamilyShareable
        self.subscriptionGroupIdentifier = product.subscription?.subscriptionGroupID
    }

    public static func == (lhs: SKProduct, rhs: SKProduct) -> Bool { lhs.product == rhs.product }
    public func hash(into hasher: inout Hasher) { hasher.combine(product) }
    public var description: String { "SKProduct(\(productIdentifier), \(product.displayPrice))" }
}

/// What a products request found.
public final class SKProductsResponse: Sendable {
    /// The products the store sells, in the order of the identifiers asked for.
    public let products: [SKProduct]
    /// Identifiers the store does not know.
    public let invalidProductIdentifiers: [String]

    init(products: [SKProduct], invalidProductIdentifiers: [String]) {
        self.products = products
        self.invalidProductIdentifiers = invalidProductIdentifiers
    }
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
public final class SKProductsRequest: SKRequest, @unchecked Sendable {
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
