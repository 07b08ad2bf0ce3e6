import Foundation

/// A product of the original StoreKit API, as `SKProduct`.
public final class SKProduct: Sendable, Hashable, CustomStringConvertible {
    public let productIdentifier: String
    public let localizedTitle: String
    public let localizedDescription: String
    /// The price in the storefront's currency.
    public var price: NSDecimalNumber { NSDecimalNumber(decimal: product.price) }
    /// A locale whose currency is the storefront's.
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
        self.priceLocale = Locale(identifier: "en_US@currency=\(product.currencyCode)")
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

/// Receives the outcome of an ``SKProductsRequest`` on the main actor.
@MainActor
public protocol SKProductsRequestDelegate: AnyObject {
    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse)
    func request(_ request: SKProductsRequest, didFailWithError error: any Error)
    func requestDidFinish(_ request: SKProductsRequest)
}

extension SKProductsRequestDelegate {
    public func request(_ request: SKProductsRequest, didFailWithError error: any Error) {}
    public func requestDidFinish(_ request: SKProductsRequest) {}
}

/// Fetches products by identifier, reporting to a delegate, as the original API's `SKProductsRequest`.
@MainActor
public final class SKProductsRequest {
    public let productIdentifiers: Set<String>
    public weak var delegate: (any SKProductsRequestDelegate)?
    private let client: StoreClient
    private var task: Task<Void, Never>?

    /// A request through the active client (see ``StoreClient/active``).
    public convenience init(productIdentifiers: Set<String>) {
        self.init(productIdentifiers: productIdentifiers, client: StoreClient.active)
    }

    /// A request through an explicit client.
    public init(productIdentifiers: Set<String>, client: StoreClient) {
        self.productIdentifiers = productIdentifiers
        self.client = client
    }

    /// Starts the request; the delegate hears back on the main actor.
    public func start() {
        guard task == nil else { return }
        task = Task { @MainActor in
            do {
                let products = try await client.products(for: productIdentifiers)
                guard !Task.isCancelled else { return }
                let found = Set(products.map(\.id))
                let response = SKProductsResponse(products: products.map(SKProduct.init),
                                                  invalidProductIdentifiers: productIdentifiers.subtracting(found).sorted())
                delegate?.productsRequest(self, didReceive: response)
                delegate?.requestDidFinish(self)
            } catch {
                guard !Task.isCancelled else { return }
                delegate?.request(self, didFailWithError: SKError(storeKitError: error))
            }
        }
    }

    /// Cancels the request; the delegate hears nothing more.
    public func cancel() {
        task?.cancel()
    }

    /// Waits until the started request has reported (for scripted sessions and tests).
    public func waitUntilFinished() async {
        await task?.value
    }
}
