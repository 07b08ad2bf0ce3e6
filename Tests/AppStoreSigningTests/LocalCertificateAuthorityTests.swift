import AppStoreModels
import AppStoreSigning
import Foundation
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(10)))
struct LocalCertificateAuthorityTests {
    static func transaction(signedAt date: Date = Date(timeIntervalSince1970: 1_750_000_000)) -> JWSTransactionDecodedPayload {
        var payload = JWSTransactionDecodedPayload()
        payload.transactionId = "0"
        payload.originalTransactionId = "0"
        payload.bundleId = "com.example.shop"
        payload.productId = "com.example.shop.gems"
        payload.type = .consumable
        payload.quantity = 1
        payload.environment = .sandbox
        payload.signedDate = date
        payload.purchaseDate = date
        payload.appAccountToken = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")
        return payload
    }

    static func verifier(trusting authority: CertificateAuthority) throws -> SignedDataVerifier {
        try SignedDataVerifier(rootCertificates: [authority.rootCertificate], bundleId: "com.example.shop", environment: .sandbox)
    }

    @Test("what the local authority signs verifies against its root")
    func signedTransactionVerifies() throws {
        let authority = try CertificateAuthority.make()
        let jws = try authority.makeSigner().sign(Self.transaction())
        let decoded = try Self.verifier(trusting: authority).verifyAndDecodeTransaction(jws)
        #expect(decoded == Self.transaction())
    }

    @Test("the header carries alg ES256 and the three certificates, leaf first")
    func headerShape() throws {
        let authority = try CertificateAuthority.make()
        let jws = try CompactJWS(authority.makeSigner().sign(Self.transaction()))
        let header = try jws.header()
        #expect(header.alg == "ES256")
        #expect(header.x5c == authority.certificateChain.map { $0.derRepresentation.base64EncodedString() })
        #expect(header.kid == nil)
        #expect(jws.signature.count == 64)
    }

    @Test("the chain carries Apple's marker extensions where Apple's does")
    func markerExtensions() throws {
        let authority = try CertificateAuthority.make()
        #expect(authority.signingCertificate.hasExtension(oid: AppleCertificateMarkers.receiptSigningLeafOID))
        #expect(!authority.signingCertificate.hasExtension(oid: AppleCertificateMarkers.worldwideDeveloperRelationsIntermediateOID))
        #expect(authority.intermediateCertificate.hasExtension(oid: AppleCertificateMarkers.worldwideDeveloperRelationsIntermediateOID))
        #expect(!authority.rootCertificate.hasExtension(oid: AppleCertificateMarkers.receiptSigningLeafOID))
        #expect(authority.rootCertificate.subject == authority.rootCertificate.issuer)
        #expect(authority.intermediateCertificate.issuer == authority.rootCertificate.subject)
    }

    @Test("the root and intermediate are P-384 signed with ecdsa-with-SHA384, and the P-256 leaf is signed with SHA-384, as Apple's chain is")
    func chainAlgorithmsMatchApple() throws {
        let authority = try CertificateAuthority.make()
        #expect(authority.rootCertificate.publicKeyDescription == "EC 384")
        #expect(authority.intermediateCertificate.publicKeyDescription == "EC 384")
        #expect(authority.signingCertificate.publicKeyDescription == "EC 256")
        for certificate in authority.certificateChain {
            #expect(certificate.signatureAlgorithm == "ecdsa-with-SHA384", "\(certificate.subject)")
        }
    }

    @Test("Apple's real chain has the algorithms ours copies", .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
    func appleChainAlgorithms() throws {
        let jws = try CompactJWS(SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws").trimmingCharacters(in: .whitespacesAndNewlines))
        let chain = try (jws.header().x5c ?? []).map { try Certificate(derRepresentation: Data(base64Encoded: $0) ?? Data()) }
        #expect(chain.map(\.publicKeyDescription) == ["EC 256", "EC 384", "EC 384"])
        #expect(chain.map(\.signatureAlgorithm) == ["ecdsa-with-SHA384", "ecdsa-with-SHA384", "ecdsa-with-SHA384"])
    }

    @Test("a newly issued signing leaf is valid for two years from the time it is issued for, and keeps the root and intermediate")
    func issuedLeafHasRealisticValidity() throws {
        let authority = try CertificateAuthority.make()
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let next = try authority.issueSigningCertificate(validFrom: start)
        #expect(next.signingCertificate.notBefore == start)
        #expect(next.signingCertificate.notAfter == start.addingTimeInterval(CertificateAuthority.signingCertificateLifetime))
        #expect(next.signingCertificate != authority.signingCertificate)
        #expect(next.rootCertificate == authority.rootCertificate && next.intermediateCertificate == authority.intermediateCertificate)
        #expect(next.hasRealisticSigningCertificate(covering: start.addingTimeInterval(86_400)))
        #expect(!next.hasRealisticSigningCertificate(covering: start.addingTimeInterval(CertificateAuthority.signingCertificateLifetime + 1)))
        #expect(!authority.hasRealisticSigningCertificate(covering: start), "the all-time leaf of a bare authority is not realistic")
    }

    @Test("signing across the years rotates leaves, and everything signed verifies at its own date", arguments: [
        Date(timeIntervalSince1970: 86_400 * 3), // 1970, the earliest a store's clock shows
        Date(timeIntervalSince1970: 1_767_225_600), // 2026
        Date(timeIntervalSince1970: 253_370_764_800), // 9999-01-01
    ])
    func leavesRotateWithTime(start: Date) throws {
        let authority = try CertificateAuthority.make()
        let leaves = try SigningCertificates(authority: authority)
        let verifier = try Self.verifier(trusting: authority)
        var seen: Set<Certificate> = []
        for step in 0..<4 {
            let date = start.addingTimeInterval(Double(step) * 100 * 86_400)
            let signer = try leaves.signer(at: date)
            seen.insert(signer.certificateChain[0])
            #expect(signer.certificateChain[0].notAfter!.timeIntervalSince(signer.certificateChain[0].notBefore!) <= CertificateAuthority.signingCertificateLifetime)
            #expect(throws: Never.self) { try verifier.verifyAndDecodeTransaction(signer.sign(Self.transaction(signedAt: date))) }
        }
        // 300 days fit one leaf; 9999's leaf is clamped to end with the root, so it still covers that year.
        #expect(seen.count == 1)
        let later = start.addingTimeInterval(800 * 86_400)
        if later <= CertificateAuthority.defaultNotAfter {
            let rotated = try leaves.signer(at: later)
            #expect(!seen.contains(rotated.certificateChain[0]))
            #expect(throws: Never.self) { try verifier.verifyAndDecodeTransaction(rotated.sign(Self.transaction(signedAt: later))) }
        }
    }

    @Test("data signed long before or after today still verifies at its signedDate", arguments: [
        Date(timeIntervalSince1970: 978_307_200), // 2001
        Date(timeIntervalSince1970: 4_102_444_800), // 2100
    ])
    func validityCoversSimulatedTime(date: Date) throws {
        let authority = try CertificateAuthority.make()
        let jws = try authority.makeSigner().sign(Self.transaction(signedAt: date))
        #expect(throws: Never.self) { try Self.verifier(trusting: authority).verifyAndDecodeTransaction(jws) }
    }

    @Test("another authority's root does not verify this one's data")
    func otherRootIsRejected() throws {
        let jws = try CertificateAuthority.make().makeSigner().sign(Self.transaction())
        let error = #expect(throws: VerificationError.self) { try Self.verifier(trusting: CertificateAuthority.make()).verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .verificationFailure)
    }

    @Test("an authority saved to a directory loads back and keeps signing verifiably")
    func saveAndLoad() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let authority = try CertificateAuthority.make()
        try authority.save(to: directory)
        let loaded = try CertificateAuthority.load(from: directory)
        #expect(loaded.rootCertificate == authority.rootCertificate)
        #expect(loaded.signingCertificate == authority.signingCertificate)
        let jws = try loaded.makeSigner().sign(Self.transaction())
        #expect(throws: Never.self) { try Self.verifier(trusting: authority).verifyAndDecodeTransaction(jws) }
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("signing-key.pem").path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("saving over an existing authority is refused")
    func saveRefusesOverwrite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try CertificateAuthority.make().save(to: directory)
        let original = try Data(contentsOf: directory.appendingPathComponent("root.pem"))
        #expect(throws: SigningError.self) { try CertificateAuthority.make().save(to: directory) }
        #expect(try Data(contentsOf: directory.appendingPathComponent("root.pem")) == original)
    }

    @Test("loading from a directory that is not an authority names the missing file")
    func loadFromEmptyDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = #expect(throws: SigningError.self) { try CertificateAuthority.load(from: directory) }
        #expect(error?.message.contains("root.pem") == true)
    }

    @Test("a signing key that does not match the signing certificate is refused on load")
    func loadDetectsMismatchedKey() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ca-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try CertificateAuthority.make().save(to: directory)
        try P256PrivateKey.generate().pemRepresentation.write(to: directory.appendingPathComponent("signing-key.pem"), atomically: true, encoding: .utf8)
        let error = #expect(throws: SigningError.self) { try CertificateAuthority.load(from: directory) }
        #expect(error?.message.contains("does not match") == true)
    }
}
