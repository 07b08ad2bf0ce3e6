/// Whether the customer has responded to a subscription price increase.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/priceincreasestatus)
public struct PriceIncreaseStatus: AppStoreEnumeration {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The customer has not responded to a price increase that needs consent.
    public static let customerHasNotResponded = PriceIncreaseStatus(rawValue: 0)
    /// The customer consented, or was notified of an increase that needs no consent.
    public static let customerConsentedOrWasNotifiedWithoutClaimingConsent = PriceIncreaseStatus(rawValue: 1)

    public static let knownValues: [PriceIncreaseStatus] = [.customerHasNotResponded, .customerConsentedOrWasNotifiedWithoutClaimingConsent]
}
