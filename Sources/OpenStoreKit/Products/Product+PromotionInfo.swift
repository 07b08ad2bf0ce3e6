import Foundation

extension Product {
    /// A promoted in-app purchase as the App Store shows it on this device: the app may reorder its
    /// promotions and show or hide each, overriding App Store Connect for the customer (StoreKit's
    /// `Product.PromotionInfo`). The local store keeps the order per device; until the app sets one,
    /// it is the catalog's order, every product as App Store Connect says.
    public struct PromotionInfo: Equatable, Hashable, Sendable {
        /// Whether the App Store shows a promotion on this device.
        public enum Visibility: Equatable, Hashable, Sendable {
            /// As App Store Connect says.
            case appStoreConnectDefault
            case visible
            case hidden

            var name: String {
                switch self {
                case .appStoreConnectDefault: return "appStoreConnectDefault"
                case .visible: return "visible"
                case .hidden: return "hidden"
                }
            }

            init(name: String) {
                switch name {
                case "visible": self = .visible
                case "hidden": self = .hidden
                default: self = .appStoreConnectDefault
                }
            }
        }

        public let productID: Product.ID
        public var visibility: Product.PromotionInfo.Visibility

        public init(productID: Product.ID, visibility: Product.PromotionInfo.Visibility) {
            self.productID = productID
            self.visibility = visibility
        }

        /// Saves this promotion's visibility, keeping the order.
        public func update() async throws {
            try await Self.updateProductVisibility(visibility, for: productID)
        }

        /// The device's promotions, in the order the App Store shows them.
        public static var currentOrder: [Product.PromotionInfo] {
            get async throws { try await StoreClient.active.promotedProducts() }
        }

        /// Sets the order and visibility of every promotion at once: `promotions`, in order.
        public static func updateAll(_ promotions: some Collection<Product.PromotionInfo>) async throws {
            try await StoreClient.active.updatePromotedProducts(Array(promotions))
        }

        /// Puts the promotions in this order, each keeping its visibility; those left out follow.
        public static func updateProductOrder(byID order: some Collection<String>) async throws {
            let client = StoreClient.active
            let current = try await client.promotedProducts()
            let ordered = order.compactMap { id in current.first { $0.productID == id } ?? PromotionInfo(productID: id, visibility: .appStoreConnectDefault) }
            try await client.updatePromotedProducts(ordered + current.filter { !order.contains($0.productID) })
        }

        /// Shows or hides one promotion, keeping the order.
        public static func updateProductVisibility(_ visibility: Product.PromotionInfo.Visibility, for productID: Product.ID) async throws {
            let client = StoreClient.active
            var promotions = try await client.promotedProducts()
            if let index = promotions.firstIndex(where: { $0.productID == productID }) {
                promotions[index].visibility = visibility
            } else {
                promotions.append(PromotionInfo(productID: productID, visibility: visibility))
            }
            try await client.updatePromotedProducts(promotions)
        }
    }
}

extension StoreClient {
    /// `Product.PromotionInfo.currentOrder` for this device.
    public func promotedProducts() async throws -> [Product.PromotionInfo] {
        try await storeKitCall { try await transport.promotedProducts(device: device) }
            .map { Product.PromotionInfo(productID: $0.productID, visibility: .init(name: $0.visibility)) }
    }

    /// `Product.PromotionInfo.updateAll(_:)` for this device.
    public func updatePromotedProducts(_ promotions: [Product.PromotionInfo]) async throws {
        let sent = promotions.map { TransportPromotion(productID: $0.productID, visibility: $0.visibility.name) }
        try await storeKitCall { try await transport.updatePromotedProducts(sent, device: device) }
    }
}
