import Foundation

/// A local certificate authority shaped like Apple's App Store signing chain.
///
/// As Apple's, it holds a self-signed P-384 root and a P-384 intermediate carrying Apple's WWDR marker
/// extension, each signed with ecdsa-with-SHA384, and P-256 signing leaves carrying the receipt-signing
/// marker, signed by the intermediate with ecdsa-with-SHA384. Data signed with ``makeSigner()`` carries
/// the three certificates in `x5c` and verifies with Apple's own libraries when they are configured to
/// trust ``rootCertificate``.
///
/// The root and the intermediate are valid for every time a store's clock can show (1970 to 9999). A
/// store signs with leaves of realistic validity (``signingCertificateLifetime``, as Apple rotates its
/// own) that it issues as its clock moves (``issueSigningCertificate(validFrom:)``, ``SigningCertificates``);
/// the leaf ``make(name:signingCertificateValidFrom:ocspURL:)`` issues spans the whole range unless told
/// otherwise, for signing data of any date with `storekit ca sign`.
public struct CertificateAuthority: Sendable {
    public let rootCertificate: Certificate
    public let intermediateCertificate: Certificate
    public let signingCertificate: Certificate
    let rootKey: AuthorityKey
    let intermediateKey: AuthorityKey
    /// The key of the leaf certificate, which signs App Store data.
    public let signingKey: P256PrivateKey
    /// The issuer name stem the certificates were made with (read back from the root's common name).
    let name: String
    let ocspURL: String?

    /// The start of the root's and the intermediate's validity: 1970-01-01T00:00:00Z, the earliest a store's clock shows.
    public static let defaultNotBefore = Date(timeIntervalSince1970: 0)
    /// The end of the root's and the intermediate's validity: 9999-12-31T23:59:59Z, the latest time a certificate can name.
    public static let defaultNotAfter = Date(timeIntervalSince1970: 253_402_300_799)
    /// How long a signing leaf a store issues is valid: two years, as Apple's receipt-signing leaves are
    /// (Apple rotates them before they expire; a store issues the next one when its clock leaves the last).
    public static let signingCertificateLifetime: TimeInterval = 730 * 86_400
    /// How long before the time it is issued for a leaf becomes valid, so a leaf issued "now" covers
    /// data signed a moment earlier too.
    public static let signingCertificateBackdating: TimeInterval = 86_400

    /// Makes a new authority with fresh keys.
    ///
    /// - Parameters:
    ///   - name: The common-name stem; the certificates are "`name` Root CA", "`name` Intermediate CA"
    ///     and "`name` Signing".
    ///   - signingCertificateValidFrom: When the first signing leaf becomes valid, for
    ///     ``signingCertificateLifetime``; by default it is valid over the whole range of the root. A store
    ///     directory gives its start time, so its first leaf is a realistic one.
    ///   - ocspURL: The OCSP responder the intermediate and signing certificates name
    ///     (`authorityInfoAccess`), so verifiers with online checks can ask it (`storekit serve` answers at `/ocsp`).
    public static func make(name: String = "OpenStoreKit Local App Store", signingCertificateValidFrom: Date? = nil,
                            ocspURL: String? = nil) throws(SigningError) -> CertificateAuthority {
        let validity = signingCertificateValidFrom.map(realisticValidity(from:)) ?? DateInterval(start: defaultNotBefore, end: defaultNotAfter)
        let rootKey = try AuthorityKey.generateP384()
        let intermediateKey = try AuthorityKey.generateP384()
        let rootTemplate = template(.root, "\(name) Root CA", serialNumber: try serialNumber(for: try rootKey.publicKeyDER),
                                    validity: DateInterval(start: defaultNotBefore, end: defaultNotAfter), markers: [], ocspURL: ocspURL)
        let intermediateTemplate = template(.intermediate, "\(name) Intermediate CA",
                                            serialNumber: try serialNumber(for: try intermediateKey.publicKeyDER),
                                            validity: DateInterval(start: defaultNotBefore, end: defaultNotAfter),
                                            markers: [AppleCertificateMarkers.worldwideDeveloperRelationsIntermediateOID], ocspURL: ocspURL)
        let root: X509Handle, intermediate: X509Handle
        do {
            root = try CertificateBuilder.issue(rootTemplate, subjectKey: rootKey.key, issuer: nil, issuerKey: rootKey.key)
            intermediate = try CertificateBuilder.issue(intermediateTemplate, subjectKey: intermediateKey.key, issuer: root, issuerKey: rootKey.key)
        } catch {
            throw SigningError(error)
        }
        let (leaf, signingKey) = try issueLeaf(name: name, validity: validity, intermediate: Certificate(handle: intermediate),
                                               intermediateKey: intermediateKey, ocspURL: ocspURL)
        return CertificateAuthority(rootCertificate: Certificate(handle: root), intermediateCertificate: Certificate(handle: intermediate),
                                    signingCertificate: leaf, rootKey: rootKey, intermediateKey: intermediateKey, signingKey: signingKey,
                                    name: name, ocspURL: ocspURL)
    }

    /// Issues a new signing leaf with a fresh P-256 key, valid for ``signingCertificateLifetime`` from
    /// `start` (clamped to the root's validity), and returns the authority signing with it.
    ///
    /// The new leaf carries the same subject, marker and OCSP address as the first; the root and the
    /// intermediate stay the same, so everything signed before still verifies at its own `signedDate`.
    public func issueSigningCertificate(validFrom start: Date) throws(SigningError) -> CertificateAuthority {
        try issueSigningCertificate(validity: Self.realisticValidity(from: start))
    }

    /// Issues a new signing leaf with a fresh P-256 key for `validity` (clamped to the root's), and
    /// returns the authority signing with it.
    public func issueSigningCertificate(validity: DateInterval) throws(SigningError) -> CertificateAuthority {
        let start = max(Self.defaultNotBefore, validity.start), end = min(Self.defaultNotAfter, validity.end)
        let (leaf, key) = try Self.issueLeaf(name: name, validity: DateInterval(start: start, end: max(start, end)),
                                             intermediate: intermediateCertificate, intermediateKey: intermediateKey, ocspURL: ocspURL)
        return CertificateAuthority(rootCertificate: rootCertificate, intermediateCertificate: intermediateCertificate, signingCertificate: leaf,
                                    rootKey: rootKey, intermediateKey: intermediateKey, signingKey: key, name: name, ocspURL: ocspURL)
    }

    /// Whether the signing leaf may sign data dated `date`: the date lies in its validity and the leaf is
    /// one of realistic length (not the all-time leaf of a bare ``make(name:signingCertificateValidFrom:ocspURL:)``).
    public func hasRealisticSigningCertificate(covering date: Date) -> Bool {
        guard let notBefore = signingCertificate.notBefore, let notAfter = signingCertificate.notAfter else { return false }
        return notBefore <= date && date <= notAfter && notAfter.timeIntervalSince(notBefore) <= Self.signingCertificateLifetime + 1
    }

    /// ``signingCertificateLifetime`` from `start`, moved to lie within the root's validity.
    private static func realisticValidity(from start: Date) -> DateInterval {
        let from = max(defaultNotBefore, min(start, defaultNotAfter.addingTimeInterval(-signingCertificateLifetime)))
        return DateInterval(start: from, duration: signingCertificateLifetime)
    }

    private static func issueLeaf(name: String, validity: DateInterval, intermediate: Certificate, intermediateKey: AuthorityKey,
                                  ocspURL: String?) throws(SigningError) -> (Certificate, P256PrivateKey) {
        let key = try P256PrivateKey.generate()
        let leafTemplate = template(.leaf, "\(name) Signing", serialNumber: try serialNumber(for: try key.publicKey.derRepresentation),
                                    validity: validity, markers: [AppleCertificateMarkers.receiptSigningLeafOID], ocspURL: ocspURL)
        do {
            let leaf = try CertificateBuilder.issue(leafTemplate, subjectKey: key.key, issuer: intermediate.handle, issuerKey: intermediateKey.key)
            return (Certificate(handle: leaf), key)
        } catch {
            throw SigningError(error)
        }
    }

    private static func template(_ role: CertificateTemplate.Role, _ commonName: String, serialNumber: UInt64, validity: DateInterval,
                                 markers: [String], ocspURL: String?) -> CertificateTemplate {
        CertificateTemplate(role: role, serialNumber: serialNumber,
                            subject: [("CN", commonName), ("OU", "Local App Store"), ("O", "OpenStoreKit"), ("C", "US")],
                            notBefore: validity.start, notAfter: validity.end, markerExtensionOIDs: markers, ocspURL: ocspURL)
    }

    /// The `x5c` chain: leaf, intermediate, root.
    public var certificateChain: [Certificate] { [signingCertificate, intermediateCertificate, rootCertificate] }

    /// A signer that produces App Store-shaped JWS: header `alg` and `x5c` with the full chain.
    public func makeSigner() throws(SigningError) -> JWSSigner {
        try JWSSigner(key: signingKey, certificateChain: certificateChain)
    }

    /// A serial number derived from the public key: unique per key, positive, never zero.
    private static func serialNumber(for publicKeyDER: Data) throws(SigningError) -> UInt64 {
        let digest = Digest.sha256(publicKeyDER)
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return (value & 0x7FFF_FFFF_FFFF_FFFF) | 1
    }
}
