/// The kind of subscription offer a transaction or renewal uses.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/offertype)
public struct OfferType: AppStoreEnumeration {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// An introductory offer.
    public static let introductoryOffer = OfferType(rawValue: 1)
    /// A promotional offer.
    public static let promotionalOffer = OfferType(rawValue: 2)
    /// An offer with a subscription offer code.
    public static let subscriptionOfferCode = OfferType(rawValue: 3)
    /// A win-back offer.
    public static let winBackOffer = OfferType(rawValue: 4)

    public static let knownValues: [OfferType] = [.introductoryOffer, .promotionalOffer, .subscriptionOfferCode, .winBackOffer]
}
