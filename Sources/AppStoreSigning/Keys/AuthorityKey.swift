import Foundation

/// The private key of a certificate authority: P-384, as Apple's root and intermediate are.
///
/// Keys of authorities made before OpenStoreKit moved to P-384 are P-256; they still load and sign,
/// so an existing store keeps its chain.
public struct AuthorityKey: Sendable {
    package let key: EVPKey

    package init(key: EVPKey) { self.key = key }

    /// Generates a new P-384 key from OpenSSL's cryptographically secure random source.
    public static func generateP384() throws(SigningError) -> AuthorityKey {
        do { return AuthorityKey(key: try EVPKey.generateP384()) } catch { throw SigningError(error) }
    }

    /// Reads a P-384 or P-256 key from PEM (`PRIVATE KEY` or `EC PRIVATE KEY`).
    public init(pemRepresentation text: String) throws(SigningError) {
        guard let der = PEM.decode(text, labels: ["PRIVATE KEY", "EC PRIVATE KEY"]) else { throw SigningError("no PEM private key found") }
        let key: EVPKey
        do { key = try EVPKey.privateKey(der: der) } catch { throw SigningError("not a private key: \(error.reason)") }
        guard key.algorithmDescription == "EC 384" || key.algorithmDescription == "EC 256" else {
            throw SigningError("the private key is \(key.algorithmDescription), not P-384 or P-256")
        }
        self.key = key
    }

    /// The key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    public var pemRepresentation: String {
        get throws(SigningError) {
            do { return PEM.encode(try key.pkcs8DER(), label: "PRIVATE KEY") } catch { throw SigningError(error) }
        }
    }

    /// The public key as SubjectPublicKeyInfo DER, to derive serial numbers from.
    var publicKeyDER: Data {
        get throws(SigningError) {
            do { return try key.subjectPublicKeyInfoDER() } catch { throw SigningError(error) }
        }
    }
}
