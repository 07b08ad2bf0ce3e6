/// Details of a notification type.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/subtype)
public struct Subtype: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The first purchase of any subscription in the group.
    public static let initialBuy = Subtype(rawValue: "INITIAL_BUY")
    /// The customer subscribed again after expiry.
    public static let resubscribe = Subtype(rawValue: "RESUBSCRIBE")
    /// A downgrade or crossgrade that takes effect at the next renewal.
    public static let downgrade = Subtype(rawValue: "DOWNGRADE")
    /// An upgrade or crossgrade that takes effect immediately.
    public static let upgrade = Subtype(rawValue: "UPGRADE")
    /// Automatic renewal was turned on.
    public static let autoRenewEnabled = Subtype(rawValue: "AUTO_RENEW_ENABLED")
    /// Automatic renewal was turned off.
    public static let autoRenewDisabled = Subtype(rawValue: "AUTO_RENEW_DISABLED")
    /// Expired after the customer turned automatic renewal off.
    public static let voluntary = Subtype(rawValue: "VOLUNTARY")
    /// Expired because the billing retry period ended.
    public static let billingRetry = Subtype(rawValue: "BILLING_RETRY")
    /// Expired because the customer did not consent to a price increase.
    public static let priceIncrease = Subtype(rawValue: "PRICE_INCREASE")
    /// The renewal failed and the customer keeps service during a grace period.
    public static let gracePeriod = Subtype(rawValue: "GRACE_PERIOD")
    /// A price increase awaits the customer's response.
    public static let pending = Subtype(rawValue: "PENDING")
    /// The customer accepted the price increase.
    public static let accepted = Subtype(rawValue: "ACCEPTED")
    /// A renewal that had failed succeeded.
    public static let billingRecovery = Subtype(rawValue: "BILLING_RECOVERY")
    /// Expired because the product was not for sale at renewal.
    public static let productNotForSale = Subtype(rawValue: "PRODUCT_NOT_FOR_SALE")
    /// The renewal-date extension for all subscribers completed.
    public static let summary = Subtype(rawValue: "SUMMARY")
    /// The renewal-date extension failed for one subscription.
    public static let failure = Subtype(rawValue: "FAILURE")
    /// An external purchase token was not reported.
    public static let unreported = Subtype(rawValue: "UNREPORTED")

    public static let knownValues: [Subtype] = [.initialBuy, .resubscribe, .downgrade, .upgrade, .autoRenewEnabled, .autoRenewDisabled, .voluntary, .billingRetry, .priceIncrease, .gracePeriod, .pending, .accepted, .billingRecovery, .productNotForSale, .summary, .failure, .unreported]
}
