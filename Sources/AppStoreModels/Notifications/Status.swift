/// The renewal state of an auto-renewable subscription.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/status)
public struct Status: AppStoreEnumeration {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The subscription is active.
    public static let active = Status(rawValue: 1)
    /// The subscription expired.
    public static let expired = Status(rawValue: 2)
    /// The subscription is in the billing retry period.
    public static let billingRetry = Status(rawValue: 3)
    /// The subscription is in the billing grace period.
    public static let billingGracePeriod = Status(rawValue: 4)
    /// The App Store revoked the subscription.
    public static let revoked = Status(rawValue: 5)

    public static let knownValues: [Status] = [.active, .expired, .billingRetry, .billingGracePeriod, .revoked]
}
