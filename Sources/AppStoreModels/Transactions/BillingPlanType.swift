/// How a subscription with a commitment is billed.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/billingplantype)
public struct BillingPlanType: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The whole price is billed at the start of the period.
    public static let billedUpfront = BillingPlanType(rawValue: "BILLED_UPFRONT")
    /// The price is billed monthly over a 12-month commitment.
    public static let monthly = BillingPlanType(rawValue: "MONTHLY")

    public static let knownValues: [BillingPlanType] = [.billedUpfront, .monthly]
}
