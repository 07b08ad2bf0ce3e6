import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import BlockingWork
import Foundation
import HTTPService
import StoreKitCatalog
import StoreService
import Testing
import TestSupport

/// Online checks work against a local store: its certificates name the OCSP responder `storekit serve`
/// runs, verifiers with online checks accept what it signs, and refuse it once a certificate is revoked.
@Suite(.timeLimit(.minutes(10)))
struct OCSPTests {
    /// A served Sandbox store whose certificates name the server's own `/ocsp`, and one signed purchase,
    /// for the length of `body`.
    ///
    /// Online checks verify at the real time (as Apple's library does), so the store's manual clock starts
    /// near it (`daysAgo` before): its signing leaf, valid two years from the store's start, must cover today.
    static func withServed(startingDaysAgo daysAgo: Double = 0,
                           _ body: (Scratch, SimulatedAppStore, StoreServer, String) async throws -> Void) async throws {
        // The port is reserved first, so the certificates can name the responder before the server starts.
        let port = try ReservedPort()
        let scratch = Scratch()
        defer { withExtendedLifetime(scratch) {} }
        let (directory, store) = try await TestStores.directory(in: scratch, environment: .sandbox,
                                                                start: SystemStoreClock().now().addingTimeInterval(-daysAgo * 86_400),
                                                                ocspURL: "http://127.0.0.1:\(port.port)/ocsp")
        let server = try StoreServer(store: store, authority: try StoreDirectory.authority(at: directory), listeningSocket: try port.listeningSocket())
        do {
            guard case .success(let signed) = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: nil)) else {
                throw TestFailure("expected a purchase")
            }
            try await body(scratch, store, server, signed.jws)
            await server.stop()
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Verifies with online checks, off the cooperative pool: the OCSP request blocks its thread until
    /// the responder (this process's own server) answers.
    static func verifyOnline(_ jws: String, store: SimulatedAppStore) async throws -> JWSTransactionDecodedPayload {
        let verifier = try onlineVerifier(store)
        return try await BlockingWork.run("OCSPTests.verify") { () throws(VerificationError) in try verifier.verifyAndDecodeTransaction(jws) }
    }

    static func onlineVerifier(_ store: SimulatedAppStore) throws -> SignedDataVerifier {
        try SignedDataVerifier(rootCertificates: [store.rootCertificate], bundleId: "com.example.shop", environment: .sandbox,
                               enableOnlineChecks: true)
    }

    @Test("our verifier with online checks accepts the store's data, and refuses it once the signing or intermediate certificate is revoked",
          arguments: CertificateAuthority.Member.allCases)
    func swiftVerifier(revoking member: CertificateAuthority.Member) async throws {
        try await Self.withServed { _, store, _, jws in
            #expect(try await Self.verifyOnline(jws, store: store).productId == ExampleShop.pro)
            try await store.revokeCertificate(member)
            await #expect(throws: VerificationError.self) { try await Self.verifyOnline(jws, store: store) }
        }
    }

    @Test("a leaf the store issued later, as its clock moved on, is answered for by the same responder")
    func rotatedLeaf() async throws {
        // Ten days ago, then three years on: past the two years a leaf lasts beyond the real time.
        try await Self.withServed(startingDaysAgo: 10) { _, store, _, first in
            try await store.advanceTime(by: 3 * 365 * 86_400)
            guard case .success(let signed) = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: nil)) else {
                throw TestFailure("expected a purchase")
            }
            let leaf = { (jws: String) throws -> String? in try CompactJWS(jws).header().x5c?.first }
            #expect(try leaf(signed.jws) != leaf(first), "three years on, the store signs with a new leaf")
            #expect(try await Self.verifyOnline(signed.jws, store: store).productId == ExampleShop.gems)
            try await store.revokeCertificate(.leaf)
            await #expect(throws: VerificationError.self) { try await Self.verifyOnline(signed.jws, store: store) }
        }
    }

    @Test("Apple's Python verifier with online checks accepts the store's data, and refuses it after a revocation",
          AppleLibraryOracle.required)
    func appleVerifier() async throws {
        try await Self.withServed { scratch, store, _, jws in
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
            let python = try await AppleLibraryOracle.prepare().get()
            let before = try await ChildProcess.run(python, ["-c", script, root.path, jws])
            #expect(before.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == ExampleShop.pro, "\(before.standardError)")
            try await store.revokeCertificate(.intermediate)
            let after = try await ChildProcess.run(python, ["-c", script, root.path, jws])
            #expect(after.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == "REFUSED VERIFICATION_FAILURE", "\(after.standardError)")
        }
    }

    @Test("a malformed OCSP request gets an OCSP error response, not a crash")
    func malformedRequest() async throws {
        try await Self.withServed { _, _, server, _ in
            let answer = try await Exchange.send("POST", server.url.appendingPathComponent("/ocsp"), body: Data("not der".utf8))
            #expect(answer.status == 200)
            #expect(answer.contentType == "application/ocsp-response")
            // OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED malformedRequest (1) }
            #expect([UInt8](answer.body) == [0x30, 0x03, 0x0A, 0x01, 0x01])
        }
    }
}
