import Foundation

/// The legacy promotional-offer signature of the original StoreKit API.
///
/// The signed message is bundle ID, key ID, product ID, offer ID, application username (the
/// lower-cased app account token, or empty), lower-cased nonce and timestamp in milliseconds, joined
/// by U+2063 INVISIBLE SEPARATOR and UTF-8 encoded. The signature is ECDSA P-256 with SHA-256 in DER,
/// base64 encoded (standard alphabet, padded).
public struct PromotionalOfferSignature: Hashable, Sendable {
    public var bundleId: String
    public var keyId: String
    public var productIdentifier: String
    public var subscriptionOfferID: String
    /// The app account token (or SK1 application username); lower-cased in the message.
    public var applicationUsername: String
    public var nonce: UUID
    /// Milliseconds since 1970.
    public var timestamp: Int64

    public init(bundleId: String, keyId: String, productIdentifier: String, subscriptionOfferID: String,
                applicationUsername: String, nonce: UUID, timestamp: Int64) {
        self.bundleId = bundleId
        self.keyId = keyId
        self.productIdentifier = productIdentifier
        self.subscriptionOfferID = subscriptionOfferID
        self.applicationUsername = applicationUsername
        self.nonce = nonce
        self.timestamp = timestamp
    }

    /// The exact bytes that are signed.
    public var message: Data {
        let parts = [bundleId, keyId, productIdentifier, subscriptionOfferID, applicationUsername.lowercased(),
                     nonce.uuidString.lowercased(), String(timestamp)]
        return Data(parts.joined(separator: "\u{2063}").utf8)
    }

    /// Signs the message and returns base64 DER, as `Product.PurchaseOption.promotionalOffer(…signature:…)` expects.
    public func sign(with key: P256PrivateKey) throws(SigningError) -> String {
        try key.derSignature(for: message).base64EncodedString()
    }

    /// Whether `signature` (base64 DER) signs this message with `key`.
    public func isValidSignature(_ signature: String, publicKey key: P256PublicKey) -> Bool {
        guard let der = Data(base64Encoded: signature) else { return false }
        return key.isValidDERSignature(der, for: message)
    }
}
