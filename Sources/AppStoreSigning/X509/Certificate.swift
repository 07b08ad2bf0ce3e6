import Foundation

/// An X.509 certificate.
///
/// Parsing happens once, in the initializer; a value that exists is a well-formed certificate.
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    package let handle: X509Handle
    /// The certificate's DER bytes.
    public let derRepresentation: Data

    package init(handle: X509Handle) {
        self.handle = handle
        self.derRepresentation = handle.der
    }

    /// Parses a DER certificate.
    public init(derRepresentation der: Data) throws(SigningError) {
        guard let handle = X509Handle.parse(der: der) else { throw SigningError("not a DER X.509 certificate") }
        self.handle = handle
        self.derRepresentation = der
    }

    /// Parses the first `CERTIFICATE` block of PEM text.
    public init(pemRepresentation text: String) throws(SigningError) {
        guard let der = PEM.decode(text, labels: ["CERTIFICATE"]) else { throw SigningError("no PEM certificate found") }
        try self.init(derRepresentation: der)
    }

    /// Reads a certificate file in DER or PEM.
    public init(contentsOf url: URL) throws(SigningError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SigningError("cannot read certificate \(url.path): \(error.localizedDescription)")
        }
        if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
            do { try self.init(pemRepresentation: text) } catch {
                throw SigningError("\(url.path): \(error.message)")
            }
        } else {
            do { try self.init(derRepresentation: data) } catch {
                throw SigningError("\(url.path): \(error.message)")
            }
        }
    }

    /// The certificate as PEM.
    public var pemRepresentation: String { PEM.encode(derRepresentation, label: "CERTIFICATE") }

    /// The subject, RFC 2253 style.
    public var subject: String { handle.subject }
    /// The issuer, RFC 2253 style.
    public var issuer: String { handle.issuer }
    /// The start of the validity period.
    public var notBefore: Date? { handle.notBefore }
    /// The end of the validity period.
    public var notAfter: Date? { handle.notAfter }
    /// The serial number in upper-case hexadecimal.
    public var serialNumber: String { handle.serialNumberHex }
    /// The algorithm the issuer signed this certificate with, such as `ecdsa-with-SHA384`.
    public var signatureAlgorithm: String { handle.signatureAlgorithmName }
    /// The certified key's type and size, such as `EC 384` (Apple's root and intermediate) or `EC 256` (a signing leaf).
    public var publicKeyDescription: String { handle.publicKeyDescription }
    /// The SHA-256 fingerprint of the DER bytes, as upper-case hexadecimal pairs joined by colons.
    public var sha256Fingerprint: String {
        Digest.sha256(derRepresentation).map { String(format: "%02X", $0) }.joined(separator: ":")
    }

    /// The certificate's public key when it is P-256, else `nil`.
    public var p256PublicKey: P256PublicKey? {
        guard let key = handle.publicKey(), key.isP256 else { return nil }
        return P256PublicKey(key: key)
    }

    /// Whether the certificate carries an extension with this dotted OID.
    public func hasExtension(oid: String) -> Bool { handle.hasExtension(oid: oid) }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.derRepresentation == rhs.derRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(derRepresentation) }
    public var description: String { "Certificate(\(subject))" }
}
