import AppStoreModels
import Foundation
import StoreKitCatalog

/// A product for sale, presented in the customer's storefront, as StoreKit's `Product`.
///
/// Products come from ``products(for:)``; a product remembers the ``StoreClient`` it was fetched
/// through, so ``purchase(options:)`` buys on that device.
public struct Product: Identifiable, Hashable, Sendable {
    public typealias ID = String

    /// The product identifier from the App Store configuration.
    public let id: String
    public let type: ProductType
    /// The localized name.
    public let displayName: String
    /// The localized description.
    public let description: String
    /// The price in the storefront's currency.
    public let price: Decimal
    /// The price formatted for the storefront, such as `$4.99`.
    public let displayPrice: String
    /// Whether family members share the purchase.
    public let isFamilyShareable: Bool
    /// Subscription details, for auto-renewable subscriptions.
    public let subscription: SubscriptionInfo?
    /// The ISO 4217 currency of ``price``.
    public let currencyCode: String
    /// How ``displayPrice`` is formatted: the storefront's currency in the locale the store presents
    /// products in. Use it to format other amounts (a per-month price) the way the store does.
    public let priceFormatStyle: Decimal.FormatStyle.Currency

    let client: StoreClient?
    /// The catalog's product this one presents (its billing plans, offers and identifiers).
    let catalogProduct: CatalogProduct

    init(_ product: CatalogProduct, client: StoreClient) {
        self.catalogProduct = product
        self.id = product.id
        self.type = ProductType(kind: product.kind)
        self.displayName = product.displayName
        self.description = product.description
        self.price = product.price
        self.displayPrice = product.displayPrice
        self.isFamilyShareable = product.isFamilyShareable
        self.subscription = product.subscription.map {
            SubscriptionInfo($0, currencyCode: product.currency, priceLocale: Locale(identifier: product.priceLocale), client: client)
        }
        self.currencyCode = product.currency
        self.priceFormatStyle = Decimal.FormatStyle.Currency(code: product.currency, locale: Locale(identifier: product.priceLocale))
        self.client = client
    }

    public static func == (lhs: Product, rhs: Product) -> Bool {
        lhs.id == rhs.id && lhs.type == rhs.type && lhs.displayName == rhs.displayName && lhs.description == rhs.description
            && lhs.price == rhs.price && lhs.displayPrice == rhs.displayPrice && lhs.isFamilyShareable == rhs.isFamilyShareable
            && lhs.subscription == rhs.subscription && lhs.currencyCode == rhs.currencyCode
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(price)
        hasher.combine(displayName)
    }

    /// The products with these identifiers that the store sells; unknown identifiers are left out.
    ///
    /// - Throws: `StoreKitError` when the store cannot be reached (or a test session makes loading fail).
    public static func products<Identifiers>(for identifiers: Identifiers) async throws -> [Product]
        where Identifiers: Collection, Identifiers.Element == String {
        try await StoreClient.active.products(for: identifiers)
    }

    /// The most recent transaction of this product, if any.
    public var latestTransaction: VerificationResult<Transaction>? {
        get async { await (client ?? StoreClient.active).latestTransaction(for: id) }
    }

    /// The current entitlements to this product.
    public var currentEntitlements: Transaction.Transactions {
        Transaction.Transactions(client: client ?? StoreClient.active, source: .view(.currentEntitlements, productID: id))
    }

    /// The current entitlement to this product: the first of ``currentEntitlements``. Not marked
    /// deprecated, as ``Transaction/currentEntitlement(for:)`` is not.
    public var currentEntitlement: VerificationResult<Transaction>? {
        get async {
            for await result in currentEntitlements { return result }
            return nil
        }
    }
}

extension Product: CustomDebugStringConvertible {
    public var debugDescription: String {
        "Product(id: \(id), type: \(type), displayName: \(displayName), displayPrice: \(displayPrice)\(subscription.map { ", period: \($0.subscriptionPeriod)" } ?? ""))"
    }
}

extension Product {
    /// The kind of a product.
    public struct ProductType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let consumable = ProductType(rawValue: "Consumable")
        public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
        public static let nonRenewable = ProductType(rawValue: "Non-Renewable")
        public static let autoRenewable = ProductType(rawValue: "Auto-Renewable")

        public var description: String { rawValue }

        init(kind: CatalogProduct.Kind) {
            switch kind {
            case .consumable: self = .consumable
            case .nonConsumable: self = .nonConsumable
            case .nonRenewable: self = .nonRenewable
            case .autoRenewable: self = .autoRenewable
            }
        }

        /// The product type of a signed transaction's `type` field.
        init(transactionType: AppStoreModels.ProductType?) {
            switch transactionType {
            case .consumable?: self = .consumable
            case .nonConsumable?: self = .nonConsumable
            case .nonRenewingSubscription?: self = .nonRenewable
            case .autoRenewableSubscription?: self = .autoRenewable
            default: self = ProductType(rawValue: transactionType?.rawValue ?? "")
            }
        }
    }
}

extension StoreClient {
    /// `Product.products(for:)` through this device.
    public func products(for identifiers: some Collection<String>) async throws -> [Product] {
        let unique = Array(Set(identifiers)).sorted()
        let products = try await storeKitCall { try await transport.products(for: unique, device: device) }
        return products.map { Product($0, client: self) }
    }
}
