import AppStoreModels
import Foundation

/// Creates the JWS signatures StoreKit accepts for promotional offers and introductory-offer eligibility.
///
/// The header is `{"alg":"ES256","kid":keyId,"typ":"JWT"}`; the claims are ``OfferSignatureClaims``.
/// Nonce and issue time are arguments so callers decide where randomness and time come from.
public struct OfferSignatureCreator: Sendable {
    public let signingKey: P256PrivateKey
    public let keyId: String
    public let issuerId: String
    public let bundleId: String

    public init(signingKey: P256PrivateKey, keyId: String, issuerId: String, bundleId: String) {
        self.signingKey = signingKey
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    /// A promotional offer signature (V2) for `offerIdentifier` of `productId`.
    public func promotionalOfferSignature(productId: String, offerIdentifier: String, transactionId: String? = nil,
                                          nonce: UUID, issuedAt: Date) throws(SigningError) -> String {
        try sign(OfferSignatureClaims(
            iss: issuerId, bid: bundleId, aud: OfferSignatureClaims.promotionalOfferAudience,
            iat: Int64(issuedAt.timeIntervalSince1970.rounded(.down)), nonce: nonce.uuidString.lowercased(),
            productId: productId, offerIdentifier: offerIdentifier, transactionId: transactionId))
    }

    /// An introductory-offer eligibility signature for `productId`.
    public func introductoryOfferEligibilitySignature(productId: String, allowIntroductoryOffer: Bool, transactionId: String,
                                                      nonce: UUID, issuedAt: Date) throws(SigningError) -> String {
        try sign(OfferSignatureClaims(
            iss: issuerId, bid: bundleId, aud: OfferSignatureClaims.introductoryOfferEligibilityAudience,
            iat: Int64(issuedAt.timeIntervalSince1970.rounded(.down)), nonce: nonce.uuidString.lowercased(),
            productId: productId, transactionId: transactionId, allowIntroductoryOffer: allowIntroductoryOffer))
    }

    private func sign(_ claims: OfferSignatureClaims) throws(SigningError) -> String {
        try JWSSigner(key: signingKey, certificateChain: [], typ: "JWT", kid: keyId).sign(claims)
    }
}

/// Checks offer signatures made by ``OfferSignatureCreator`` (or by App Store Connect keys elsewhere).
public struct OfferSignatureVerifier: Sendable {
    /// The public half of the in-app purchase key.
    public let publicKey: P256PublicKey
    /// The key ID the signature's `kid` must name.
    public let keyId: String
    /// The bundle ID the claims must name.
    public let bundleId: String

    public init(publicKey: P256PublicKey, keyId: String, bundleId: String) {
        self.publicKey = publicKey
        self.keyId = keyId
        self.bundleId = bundleId
    }

    /// Why an offer signature was refused.
    public struct Rejection: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Verifies a compact JWS offer signature for `audience` and returns its claims.
    public func verify(_ jws: String, audience: String) throws(Rejection) -> OfferSignatureClaims {
        let compact: CompactJWS
        let header: JWSHeader
        let claims: OfferSignatureClaims
        do {
            compact = try CompactJWS(jws)
            header = try compact.header()
            claims = try compact.payload(as: OfferSignatureClaims.self)
        } catch {
            throw Rejection(description: error.description)
        }
        guard header.alg == "ES256" else { throw Rejection(description: "the algorithm is not ES256") }
        guard header.kid == keyId else { throw Rejection(description: "the key ID is \(header.kid ?? "missing"), not \(keyId)") }
        guard publicKey.isValidSignature(compact.signature, for: compact.signingInput) else {
            throw Rejection(description: "the signature does not verify with key \(keyId)")
        }
        guard claims.aud == audience else { throw Rejection(description: "the audience is \(claims.aud), not \(audience)") }
        guard claims.bid == bundleId else { throw Rejection(description: "the bundle ID is \(claims.bid), not \(bundleId)") }
        return claims
    }
}
