import Foundation

/// A NIST P-256 public key that checks ECDSA signatures over SHA-256.
public struct P256PublicKey: Sendable {
    package let key: EVPKey

    package init(key: EVPKey) { self.key = key }

    /// Reads a key from SubjectPublicKeyInfo DER.
    public init(derRepresentation der: Data) throws(SigningError) {
        let key: EVPKey
        do {
            key = try EVPKey.publicKey(subjectPublicKeyInfo: der)
        } catch {
            throw SigningError("not a public key: \(error.reason)")
        }
        guard key.isP256 else { throw SigningError("the public key is \(key.algorithmDescription), not P-256") }
        self.key = key
    }

    /// Reads a key from PEM (`PUBLIC KEY`).
    public init(pemRepresentation text: String) throws(SigningError) {
        guard let der = PEM.decode(text, labels: ["PUBLIC KEY"]) else { throw SigningError("no PEM public key found") }
        try self.init(derRepresentation: der)
    }

    /// The key as SubjectPublicKeyInfo DER.
    public var derRepresentation: Data {
        get throws(SigningError) {
            do { return try key.subjectPublicKeyInfoDER() } catch { throw SigningError(error) }
        }
    }

    /// The key as PEM (`-----BEGIN PUBLIC KEY-----`).
    public var pemRepresentation: String {
        get throws(SigningError) { PEM.encode(try derRepresentation, label: "PUBLIC KEY") }
    }

    /// Whether `signature` (raw `R || S`, 64 bytes) is valid for `message`.
    public func isValidSignature(_ signature: Data, for message: Data) -> Bool {
        guard signature.count == 64, let der = ECDSASignature.der(fromRaw: signature) else { return false }
        return key.verifySHA256(derSignature: der, message: message)
    }

    /// Whether `signature` (DER `ECDSA-Sig-Value`) is valid for `message`.
    public func isValidDERSignature(_ signature: Data, for message: Data) -> Bool {
        key.verifySHA256(derSignature: signature, message: message)
    }
}
