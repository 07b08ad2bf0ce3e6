import Foundation

/// A NIST P-256 private key for ECDSA signatures with SHA-256 (ES256).
public struct P256PrivateKey: Sendable {
    package let key: EVPKey

    package init(key: EVPKey) { self.key = key }

    /// Generates a new key from OpenSSL's cryptographically secure random source.
    public static func generate() throws(SigningError) -> P256PrivateKey {
        do {
            return P256PrivateKey(key: try EVPKey.generateP256())
        } catch {
            throw SigningError(error)
        }
    }

    /// Reads a key from PKCS#8 (or SEC1) DER.
    public init(derRepresentation der: Data) throws(SigningError) {
        let key: EVPKey
        do {
            key = try EVPKey.privateKey(der: der)
        } catch {
            throw SigningError("not a private key: \(error.reason)")
        }
        guard key.isP256 else { throw SigningError("the private key is \(key.algorithmDescription), not P-256") }
        self.key = key
    }

    /// Reads a key from PEM (`PRIVATE KEY` or `EC PRIVATE KEY`), or from bare base64 PKCS#8 as
    /// `.storekit` files and App Store Connect downloads hold it.
    public init(pemRepresentation text: String) throws(SigningError) {
        let der = PEM.decode(text, labels: ["PRIVATE KEY", "EC PRIVATE KEY"])
            ?? Data(base64Encoded: text.filter { !$0.isWhitespace })
        guard let der else { throw SigningError("no PEM private key found") }
        try self.init(derRepresentation: der)
    }

    /// The key as PKCS#8 DER.
    public var derRepresentation: Data {
        get throws(SigningError) {
            do { return try key.pkcs8DER() } catch { throw SigningError(error) }
        }
    }

    /// The key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public var pemRepresentation: String {
        get throws(SigningError) { PEM.encode(try derRepresentation, label: "PRIVATE KEY") }
    }

    /// The matching public key.
    public var publicKey: P256PublicKey {
        // Exporting and re-reading the public half of a valid key cannot fail short of memory exhaustion.
        P256PublicKey(key: key)
    }

    /// Signs `message` (hashed with SHA-256) and returns the raw 64-byte `R || S` form used by JWS.
    public func signature(for message: Data) throws(SigningError) -> Data {
        let der = try derSignature(for: message)
        guard let raw = ECDSASignature.raw(fromDER: der) else { throw SigningError("OpenSSL returned a malformed signature") }
        return raw
    }

    /// Signs `message` (hashed with SHA-256) and returns the DER `ECDSA-Sig-Value`.
    public func derSignature(for message: Data) throws(SigningError) -> Data {
        do { return try key.signSHA256(message) } catch { throw SigningError(error) }
    }
}
