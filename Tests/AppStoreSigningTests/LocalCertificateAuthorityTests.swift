import AppStoreModels
import AppStoreSigning
import Foundation
import Testing
import TestSupport

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
