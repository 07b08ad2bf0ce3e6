import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
import HTTPService
import StoreKitCatalog
import StoreService
import Testing
import TestSupport

/// Online checks work against a local store: its certificates name the OCSP responder `storekit serve`
/// runs, verifiers with online checks accept what it signs, and refuse it once a certificate is revoked.
struct OCSPTests {
    /// A served Sandbox store whose certificates name the server's own `/ocsp`, and one signed purchase.
    static func served() async throws -> (Scratch, SimulatedAppStore, StoreServer, String) {
        // A free port, so the certificates can name the responder before the server starts.
        let probe = try HTTPServer { _ in .text(200, "") }
        let port = probe.port
        probe.stop()
        let scratch = Scratch()
        let directory = scratch.url.appendingPathComponent("store")
        let store = try StoreDirectory.create(at: directory, configuration: try StoreKitConfiguration.load(contentsOf: ExampleShop.file).configuration,
                                              identity: StoreIdentity(bundleId: "com.example.shop", environment: .sandbox), clockMode: .manual,
                                              start: Date(timeIntervalSince1970: 1_767_225_600), ocspURL: "http://127.0.0.1:\(port)/ocsp")
        let server = try StoreServer(store: store, authority: try StoreDirectory.authority(at: directory), port: port)
        guard case .success(let signed) = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: nil)) else {
            throw TestFailure("expected a purchase")
        }
        return (scratch, store, server, signed.jws)
    }

    static func onlineVerifier(_ store: SimulatedAppStore) throws -> SignedDataVerifier {
        try SignedDataVerifier(rootCertificates: [store.rootCertificate], bundleId: "com.example.shop", environment: .sandbox,
                               enableOnlineChecks: true)
    }

    @Test("our verifier with online checks accepts the store's data, and refuses it once the signing or intermediate certificate is revoked",
          arguments: CertificateAuthority.Member.allCases)
    func swiftVerifier(revoking member: CertificateAuthority.Member) async throws {
        let (scratch, store, server, jws) = try await Self.served()
        defer { server.stop(); _ = scratch }
        #expect(try Self.onlineVerifier(store).verifyAndDecodeTransaction(jws).productId == ExampleShop.pro)
        try await store.revokeCertificate(member)
        #expect(throws: VerificationError.self) { try Self.onlineVerifier(store).verifyAndDecodeTransaction(jws) }
    }

    @Test("Apple's Python verifier with online checks accepts the store's data, and refuses it after a revocation",
          .enabled(if: AppleLibraryOracle.isAvailable, AppleLibraryOracle.skipReason))
    func appleVerifier() async throws {
        let (scratch, store, server, jws) = try await Self.served()
        defer { server.stop() }
        let root = scratch.url.appendingPathComponent("root.der")
        try store.rootCertificate.derRepresentation.write(to: root)
        let script = """
            import sys
            from appstoreserverlibrary.models.Environment import Environment
            from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
            verifier = SignedDataVerifier([open(sys.argv[1], 'rb').read()], True, Environment.SANDBOX, 'com.example.shop', None)
            try:
                print(verifier.verify_and_decode_signed_transaction(sys.argv[2]).productId)
            except VerificationException as error:
                print('REFUSED', error.status.name)
            """
        let python = try AppleLibraryOracle.prepare().get()
        let before = try await ChildProcess.run(python, ["-c", script, root.path, jws])
        #expect(before.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == ExampleShop.pro, "\(before.standardError)")
        try await store.revokeCertificate(.intermediate)
        let after = try await ChildProcess.run(python, ["-c", script, root.path, jws])
        #expect(after.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "REFUSED VERIFICATION_FAILURE", "\(after.standardError)")
    }

    @Test("a malformed OCSP request gets an OCSP error response, not a crash")
    func malformedRequest() async throws {
        let (scratch, _, server, _) = try await Self.served()
        defer { server.stop(); _ = scratch }
        let answer = try await Exchange.send("POST", server.url.appendingPathComponent("/ocsp"), body: Data("not der".utf8))
        #expect(answer.status == 200)
        #expect(answer.contentType == "application/ocsp-response")
        // OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED malformedRequest (1) }
        #expect([UInt8](answer.body) == [0x30, 0x03, 0x0A, 0x01, 0x01])
    }
}
