import Foundation
import ServiceLogging

/// The bearer token of an App Store Server API request: an ES256 JWT signed with an In-App Purchase
/// key, with `kid` in its header and `iss`, `aud` (`appstoreconnect-v1`), `bid`, `exp` and optionally
/// `iat` in its claims, as Apple's libraries make it.
public enum ServerAPIToken {
    /// The audience every token names.
    public static let audience = "appstoreconnect-v1"

    /// The longest a token may live, in seconds: 60 minutes, as Apple's API allows.
    public static let longestLifetime: Int64 = 3_600

    public struct Claims: Codable, Hashable, Sendable {
        public var iss: String
        public var iat: Int64?
        public var exp: Int64
        public var aud: String
        public var bid: String

        public init(iss: String, iat: Int64?, exp: Int64, aud: String, bid: String) {
            self.iss = iss
            self.iat = iat
            self.exp = exp
            self.aud = aud
            self.bid = bid
        }
    }

    /// Makes a token valid for five minutes from `issuedAt`.
    public static func make(key: P256PrivateKey, keyId: String, issuerId: String, bundleId: String, issuedAt: Date) throws(SigningError) -> String {
        let now = Int64(issuedAt.timeIntervalSince1970)
        let claims = Claims(iss: issuerId, iat: now, exp: now + 300, aud: audience, bid: bundleId)
        return try JWSSigner(key: key, certificateChain: [], typ: "JWT", kid: keyId).sign(claims)
    }

    /// Why a token was refused.
    public struct Rejection: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// The key ID a token names in its header, read without checking anything else.
    public static func keyID(of token: String) throws(Rejection) -> String {
        do {
            guard let kid = try CompactJWS(token).header().kid else { throw Rejection("the token names no key (kid)") }
            return kid
        } catch let rejection as Rejection {
            throw rejection
        } catch {
            throw Rejection("the token is not a JWT: \(error)")
        }
    }

    /// Checks a token against the key its `kid` names: ES256, the signature, the issuer, the audience,
    /// the bundle ID, and that `now` is before `exp` (and not before `iat`, with a minute of leeway), and
    /// that the token lives at most ``longestLifetime``.
    public static func verify(_ token: String, publicKey: P256PublicKey, keyId: String, issuerId: String, bundleId: String,
                              now: Date) throws(Rejection) -> Claims {
        let compact: CompactJWS
        let header: JWSHeader
        let claims: Claims
        do {
            compact = try CompactJWS(token)
            header = try compact.header()
            claims = try compact.payload(as: Claims.self)
        } catch {
            throw Rejection("the token is not a JWT with the App Store Server API's claims: \(error)")
        }
        guard header.alg == "ES256" else { throw Rejection("the token's algorithm is \(header.alg.map { UntrustedText.excerpt($0) } ?? "missing"), not ES256") }
        guard header.kid == keyId else { throw Rejection("the token names key \(header.kid ?? "none"), not \(keyId)") }
        guard publicKey.isValidSignature(compact.signature, for: compact.signingInput) else {
            throw Rejection("the token's signature does not verify with key \(keyId)")
        }
        guard claims.aud == audience else { throw Rejection("the token's audience is \(claims.aud), not \(audience)") }
        guard claims.iss == issuerId else { throw Rejection("the token's issuer is \(claims.iss), not \(issuerId)") }
        guard claims.bid == bundleId else { throw Rejection("the token is for \(claims.bid), not \(bundleId)") }
        let seconds = now.timeIntervalSince1970
        guard Double(claims.exp) > seconds else { throw Rejection("the token expired") }
        if let iat = claims.iat, Double(iat) > seconds + 60 { throw Rejection("the token was issued in the future") }
        // A token lives an hour at most, as Apple's API allows: counted from `iat`, or from now for a token
        // without one (Apple's Python library leaves `iat` out, and Apple accepts its tokens).
        if let iat = claims.iat {
            guard claims.exp - iat <= Self.longestLifetime else { throw Rejection("the token lives longer than 60 minutes (exp - iat)") }
        } else {
            guard Double(claims.exp) <= seconds + Double(Self.longestLifetime) else { throw Rejection("the token expires more than 60 minutes from now") }
        }
        return claims
    }
}
