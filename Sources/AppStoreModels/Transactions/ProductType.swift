/// The type of an in-app purchase product.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/type)
public struct ProductType: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// An auto-renewable subscription.
    public static let autoRenewableSubscription = ProductType(rawValue: "Auto-Renewable Subscription")
    /// A non-consumable in-app purchase.
    public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
    /// A consumable in-app purchase.
    public static let consumable = ProductType(rawValue: "Consumable")
    /// A non-renewing subscription.
    public static let nonRenewingSubscription = ProductType(rawValue: "Non-Renewing Subscription")

    public static let knownValues: [ProductType] = [.autoRenewableSubscription, .nonConsumable, .consumable, .nonRenewingSubscription]
}
