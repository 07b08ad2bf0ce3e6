import AppStoreModels
import Foundation

/// The products of a StoreKit configuration as StoreKit presents them in one storefront and locale.
///
/// A catalog is a value: changing the storefront or locale at runtime means building a new one, which
/// takes microseconds per product. Products keep the file's order: consumables and non-consumables,
/// then non-renewing subscriptions, then auto-renewable subscriptions group by group.
public struct Catalog: Sendable {
    public let configuration: StoreKitConfiguration
    /// The locale names, descriptions and prices are presented in, such as `en_US`.
    public let locale: String
    public let storefront: Storefront
    public let products: [CatalogProduct]
    public let subscriptionGroups: [SubscriptionGroup]
    private let index: [String: Int]

    /// A subscription group and its subscriptions, highest level first.
    public struct SubscriptionGroup: Hashable, Sendable, Identifiable {
        public let id: String
        /// The group's reference name.
        public let referenceName: String?
        /// The group's display name in the catalog's locale, if the file has one.
        public let displayName: String?
        public let subscriptions: [CatalogProduct]
    }

    /// Builds the catalog of `configuration`.
    ///
    /// - Parameters:
    ///   - locale: Overrides the file's `_locale` (default `en_US`).
    ///   - storefront: Overrides the file's `_storefront` (default USA).
    public init(configuration: StoreKitConfiguration, locale: String? = nil, storefront: Storefront? = nil) {
        let settings = configuration.settings
        let locale = Self.normalize(locale ?? settings?.locale ?? "en_US")
        let storefront = storefront ?? settings?.storefront.flatMap { Storefront(code: $0) } ?? .unitedStates
        let builder = CatalogBuilder(locale: locale, fileLocale: settings?.locale.map(Self.normalize), storefront: storefront)
        var products: [CatalogProduct] = []
        for product in configuration.products ?? [] {
            if let built = builder.oneTimeProduct(product, nonRenewing: false) { products.append(built) }
        }
        for product in configuration.nonRenewingSubscriptions ?? [] {
            if let built = builder.oneTimeProduct(product, nonRenewing: true) { products.append(built) }
        }
        var groups: [SubscriptionGroup] = []
        for group in configuration.subscriptionGroups ?? [] {
            guard let groupID = group.id else { continue }
            let displayName = builder.localization(in: group.localizations)?.displayName
            let subscriptions = (group.subscriptions ?? []).compactMap {
                builder.subscription($0, groupID: groupID, groupDisplayName: displayName)
            }
            products += subscriptions
            let ordered = subscriptions.enumerated().sorted {
                ($0.element.subscription!.groupLevel, $0.offset) < ($1.element.subscription!.groupLevel, $1.offset)
            }.map(\.element)
            groups.append(SubscriptionGroup(id: groupID, referenceName: group.name, displayName: displayName, subscriptions: ordered))
        }
        self.configuration = configuration
        self.locale = locale
        self.storefront = storefront
        self.products = products
        self.subscriptionGroups = groups
        var index: [String: Int] = [:]
        for (position, product) in products.enumerated() where index[product.id] == nil { index[product.id] = position }
        self.index = index
    }

    /// The product with this identifier.
    public func product(id: String) -> CatalogProduct? {
        index[id].map { products[$0] }
    }

    /// The products with these identifiers, in catalog order; unknown identifiers are simply absent,
    /// as with `Product.products(for:)`.
    public func products(for ids: some Sequence<String>) -> [CatalogProduct] {
        let wanted = Set(ids)
        return products.filter { wanted.contains($0.id) }
    }

    /// The subscription group with this identifier.
    public func subscriptionGroup(id: String) -> SubscriptionGroup? {
        subscriptionGroups.first { $0.id == id }
    }

    /// The same configuration in another storefront or locale.
    public func presented(locale: String? = nil, storefront: Storefront? = nil) -> Catalog {
        Catalog(configuration: configuration, locale: locale ?? self.locale, storefront: storefront ?? self.storefront)
    }

    /// `en-US` and `en_us` become `en_US`.
    static func normalize(_ locale: String) -> String {
        let parts = locale.replacingOccurrences(of: "-", with: "_").split(separator: "_")
        guard let language = parts.first else { return locale }
        return ([language.lowercased()] + parts.dropFirst().map { $0.count == 2 ? $0.uppercased() : String($0) }).joined(separator: "_")
    }
}
