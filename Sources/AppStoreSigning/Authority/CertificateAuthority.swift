import Foundation

/// A local certificate authority shaped like Apple's App Store signing chain.
///
/// It holds a self-signed root, an intermediate carrying Apple's WWDR marker extension and a leaf
/// carrying the receipt-signing marker, all P-256 and signed with ECDSA-SHA256. Data signed with
/// ``makeSigner()`` carries the three certificates in `x5c` and verifies with Apple's own libraries
/// when they are configured to trust ``rootCertificate``.
///
/// Validity runs from 2000-01-01 to 9999-12-31 by default, so payloads signed at any simulated
/// time, past or future, validate at their own `signedDate`.
public struct CertificateAuthority: Sendable {
    public let rootCertificate: Certificate
    public let intermediateCertificate: Certificate
    public let signingCertificate: Certificate
    let rootKey: P256PrivateKey
    let intermediateKey: P256PrivateKey
    /// The key of the leaf certificate, which signs App Store data.
    public let signingKey: P256PrivateKey

    /// The default start of validity: 2000-01-01T00:00:00Z.
    public static let defaultNotBefore = Date(timeIntervalSince1970: 946_684_800)
    /// The default end of validity: 9999-12-31T23:59:59Z.
    public static let defaultNotAfter = Date(timeIntervalSince1970: 253_402_300_799)

    /// Makes a new authority with fresh keys.
    ///
    /// - Parameters:
    ///   - name: The common-name stem; the certificates are "`name` Root CA", "`name` Intermediate CA"
    ///     and "`name` Signing".
    ///   - notBefore: The start of validity of all three certificates.
    ///   - notAfter: The end of validity of all three certificates.
    ///   - ocspURL: The OCSP responder the intermediate and signing certificates name
    ///     (`authorityInfoAccess`), so verifiers with online checks can ask it (`storekit serve` answers at `/ocsp`).
    public static func make(name: String = "OpenStoreKit Local App Store",
                            notBefore: Date = defaultNotBefore,
                            notAfter: Date = defaultNotAfter, ocspURL: String? = nil) throws(SigningError) -> CertificateAuthority {
        guard notBefore < notAfter else { throw SigningError("the validity period ends before it starts") }
        let rootKey = try P256PrivateKey.generate()
        let intermediateKey = try P256PrivateKey.generate()
        let signingKey = try P256PrivateKey.generate()
        let organization = ("O", "OpenStoreKit")
        func template(_ role: CertificateTemplate.Role, _ commonName: String, key: P256PrivateKey,
                      markers: [String]) throws(SigningError) -> CertificateTemplate {
            CertificateTemplate(role: role, serialNumber: try serialNumber(for: key),
                                subject: [("CN", commonName), ("OU", "Local App Store"), organization, ("C", "US")],
                                notBefore: notBefore, notAfter: notAfter, markerExtensionOIDs: markers, ocspURL: ocspURL)
        }
        let rootTemplate = try template(.root, "\(name) Root CA", key: rootKey, markers: [])
        let intermediateTemplate = try template(.intermediate, "\(name) Intermediate CA", key: intermediateKey,
                                                markers: [AppleCertificateMarkers.worldwideDeveloperRelationsIntermediateOID])
        let leafTemplate = try template(.leaf, "\(name) Signing", key: signingKey,
                                        markers: [AppleCertificateMarkers.receiptSigningLeafOID])
        do {
            let root = try CertificateBuilder.issue(rootTemplate, subjectKey: rootKey.key, issuer: nil, issuerKey: rootKey.key)
            let intermediate = try CertificateBuilder.issue(intermediateTemplate, subjectKey: intermediateKey.key,
                                                            issuer: root, issuerKey: rootKey.key)
            let leaf = try CertificateBuilder.issue(leafTemplate, subjectKey: signingKey.key,
                                                    issuer: intermediate, issuerKey: intermediateKey.key)
            return CertificateAuthority(
                rootCertificate: Certificate(handle: root), intermediateCertificate: Certificate(handle: intermediate),
                signingCertificate: Certificate(handle: leaf), rootKey: rootKey, intermediateKey: intermediateKey,
                signingKey: signingKey)
        } catch {
            throw SigningError(error)
        }
    }

    /// The `x5c` chain: leaf, intermediate, root.
    public var certificateChain: [Certificate] { [signingCertificate, intermediateCertificate, rootCertificate] }

    /// A signer that produces App Store-shaped JWS: header `alg` and `x5c` with the full chain.
    public func makeSigner() throws(SigningError) -> JWSSigner {
        try JWSSigner(key: signingKey, certificateChain: certificateChain)
    }

    /// A serial number derived from the key: unique per authority, positive, never zero.
    private static func serialNumber(for key: P256PrivateKey) throws(SigningError) -> UInt64 {
        let digest = Digest.sha256(try key.publicKey.derRepresentation)
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (value & 0x7FFF_FFFF_FFFF_FFFF) | 1
    }
}
