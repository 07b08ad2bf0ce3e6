import Foundation

/// The claims of a JWS that App Store Connect's in-app purchase key signs for StoreKit.
///
/// Shared by promotional offers (V2) and introductory-offer eligibility: issuer, bundle ID,
/// audience, issued-at (whole seconds) and a fresh nonce. There is no expiry claim.
public struct OfferSignatureClaims: Codable, Hashable, Sendable {
    /// The audience of a promotional-offer signature.
    public static let promotionalOfferAudience = "promotional-offer"
    /// The audience of an introductory-offer eligibility signature.
    public static let introductoryOfferEligibilityAudience = "introductory-offer-eligibility"

    /// The issuer ID from App Store Connect.
    public var iss: String
    /// The bundle ID of the app.
    public var bid: String
    /// What the signature is for.
    public var aud: String
    /// When it was issued, in seconds since 1970.
    public var iat: Int64
    /// A unique nonce (a UUID string).
    public var nonce: String
    /// The product the offer applies to.
    public var productId: String
    /// The promotional offer's identifier (promotional offers only).
    public var offerIdentifier: String?
    /// The transaction the offer is tied to, if any.
    public var transactionId: String?
    /// Whether the customer may have the introductory offer (eligibility only).
    public var allowIntroductoryOffer: Bool?

    public init(iss: String, bid: String, aud: String, iat: Int64, nonce: String, productId: String,
                offerIdentifier: String? = nil, transactionId: String? = nil, allowIntroductoryOffer: Bool? = nil) {
        self.iss = iss
        self.bid = bid
        self.aud = aud
        self.iat = iat
        self.nonce = nonce
        self.productId = productId
        self.offerIdentifier = offerIdentifier
        self.transactionId = transactionId
        self.allowIntroductoryOffer = allowIntroductoryOffer
    }
}
