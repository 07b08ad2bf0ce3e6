/// The payment mode of a subscription offer.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/offerdiscounttype)
public struct OfferDiscountType: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A free trial.
    public static let freeTrial = OfferDiscountType(rawValue: "FREE_TRIAL")
    /// A discounted price for each of several periods.
    public static let payAsYouGo = OfferDiscountType(rawValue: "PAY_AS_YOU_GO")
    /// One up-front payment for the whole offer duration.
    public static let payUpFront = OfferDiscountType(rawValue: "PAY_UP_FRONT")
    /// A one-time discount.
    public static let oneTime = OfferDiscountType(rawValue: "ONE_TIME")

    public static let knownValues: [OfferDiscountType] = [.freeTrial, .payAsYouGo, .payUpFront, .oneTime]
}
