/// Why a subscription expired.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/expirationintent)
public struct ExpirationIntent: AppStoreEnumeration {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The customer cancelled the subscription.
    public static let customerCancelled = ExpirationIntent(rawValue: 1)
    /// A billing error.
    public static let billingError = ExpirationIntent(rawValue: 2)
    /// The customer did not consent to a price increase.
    public static let customerDidNotConsentToPriceIncrease = ExpirationIntent(rawValue: 3)
    /// The product was not available for purchase at renewal.
    public static let productNotAvailable = ExpirationIntent(rawValue: 4)
    /// Another reason.
    public static let other = ExpirationIntent(rawValue: 5)

    public static let knownValues: [ExpirationIntent] = [.customerCancelled, .billingError, .customerDidNotConsentToPriceIncrease, .productNotAvailable, .other]
}
