import Foundation

/// What the SwiftUI environment gives StoreKit's views, as a value: the client they buy through,
/// `.inAppPurchaseOptions`, `.onInAppPurchaseStart`, `.onInAppPurchaseCompletion` and
/// `.subscriptionStorePolicyDestination`.
public struct StoreViewEnvironment: Sendable {
    /// The client the views read and buy through; `nil` for the active one.
    public var client: StoreClient?
    /// `.inAppPurchaseOptions { product in … }`: options for each purchase started in a view.
    public var purchaseOptions: @Sendable (Product) -> Set<Product.PurchaseOption>
    /// `.onInAppPurchaseStart { product in … }`.
    public var onPurchaseStart: @Sendable (Product) -> Void
    /// `.onInAppPurchaseCompletion { product, result in … }`: the purchase's result (the transaction
    /// also reaches the app through `Transaction.updates`).
    public var onPurchaseCompletion: @Sendable (Product, Result<Product.PurchaseResult, any Error>) -> Void
    /// The app's own policy links; `nil` uses the store's.
    public var policies: StorePolicies?

    public init(client: StoreClient? = nil,
                purchaseOptions: @escaping @Sendable (Product) -> Set<Product.PurchaseOption> = { _ in [] },
                onPurchaseStart: @escaping @Sendable (Product) -> Void = { _ in },
                onPurchaseCompletion: @escaping @Sendable (Product, Result<Product.PurchaseResult, any Error>) -> Void = { _, _ in },
                policies: StorePolicies? = nil) {
        self.client = client
        self.purchaseOptions = purchaseOptions
        self.onPurchaseStart = onPurchaseStart
        self.onPurchaseCompletion = onPurchaseCompletion
        self.policies = policies
    }

    /// The client in effect.
    var resolvedClient: StoreClient { client ?? StoreClient.active }

    /// Buys a product as a view does: start and completion handlers around the purchase, the
    /// environment's options, and the transaction delivered through `Transaction.updates` as well as
    /// to the completion handler. Returns nothing, as a view's button does.
    public func buy(_ product: Product, options extra: Set<Product.PurchaseOption> = []) async {
        onPurchaseStart(product)
        let result: Result<Product.PurchaseResult, any Error>
        do {
            let client = product.client ?? resolvedClient
            result = .success(try await client.purchase(productID: product.id, options: purchaseOptions(product).union(extra),
                                                        deliveringThroughUpdates: true))
        } catch {
            result = .failure(error)
        }
        onPurchaseCompletion(product, result)
    }
}

/// `@Environment(\.purchase)`'s type: buys a product, returning StoreKit's result, as SwiftUI code does
/// outside the store views. Unlike a view's button, the transaction comes back as the result (and not
/// through `Transaction.updates`), as with `product.purchase(options:)`.
public struct PurchaseAction: Sendable {
    let client: StoreClient?

    /// A purchase action buying through `client` (the active client when `nil`).
    public init(client: StoreClient? = nil) {
        self.client = client
    }

    public func callAsFunction(_ product: Product, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        let client = product.client ?? self.client ?? StoreClient.active
        return try await client.purchase(productID: product.id, options: options)
    }
}
