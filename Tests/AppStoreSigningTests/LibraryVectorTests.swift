import AppStoreModels
import AppStoreSigning
import Foundation
import Testing
import TestSupport

/// The App Store Server Library's own test vectors, with the outcomes its SOURCES.md lists.
@Suite(.timeLimit(.minutes(10)), .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
struct LibraryVectorTests {
    static func testRoot() throws -> Certificate {
        try Certificate(contentsOf: SharedTestData.url("apple-vectors/library-test-pki/testCA.der"))
    }

    static func verifier(bundleId: String = "com.example", environment: Environment = .sandbox,
                         appAppleId: Int64? = nil) throws -> SignedDataVerifier {
        try SignedDataVerifier(rootCertificates: [testRoot()], bundleId: bundleId, appAppleId: appAppleId, environment: environment)
    }

    static func mock(_ name: String) throws -> String {
        try SharedTestData.text("apple-vectors/library-mock-signed/\(name)")
    }

    @Test("the mock transaction verifies against the test root although it lacks AKI and SKI")
    func mockTransactionVerifies() throws {
        let transaction = try Self.verifier().verifyAndDecodeTransaction(Self.mock("transactionInfo"))
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.environment == .sandbox)
    }

    @Test("the mock transaction for another bundle is rejected")
    func mockTransactionOtherBundle() throws {
        let error = #expect(throws: VerificationError.self) {
            try Self.verifier(bundleId: "com.example.x").verifyAndDecodeTransaction(Self.mock("transactionInfo"))
        }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test("the mock renewal info verifies")
    func mockRenewalInfoVerifies() throws {
        let renewal = try Self.verifier().verifyAndDecodeRenewalInfo(Self.mock("renewalInfo"))
        #expect(renewal.environment == .sandbox)
    }

    @Test("the mock test notification verifies")
    func mockNotificationVerifies() throws {
        let notification = try Self.verifier().verifyAndDecodeNotification(Self.mock("testNotification"))
        #expect(notification.notificationType == .test)
        #expect(notification.data?.appAppleId == 1234)
    }

    @Test("the mock test notification checked as Production fails on the environment")
    func mockNotificationInProduction() throws {
        let error = #expect(throws: VerificationError.self) {
            try Self.verifier(environment: .production, appAppleId: 1234).verifyAndDecodeNotification(Self.mock("testNotification"))
        }
        #expect(error?.code == .invalidEnvironment)
    }

    @Test("the mock notification decoded as a transaction has no bundle identifier")
    func mockNotificationAsTransaction() throws {
        let error = #expect(throws: VerificationError.self) {
            try Self.verifier().verifyAndDecodeTransaction(Self.mock("testNotification"))
        }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test("the wrong-bundle notification is rejected")
    func mockWrongBundle() throws {
        let error = #expect(throws: VerificationError.self) {
            try Self.verifier().verifyAndDecodeNotification(Self.mock("wrongBundleId"))
        }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test("a header without x5c is a format error")
    func mockMissingX5C() throws {
        let error = #expect(throws: VerificationError.self) {
            try Self.verifier().verifyAndDecodeNotification(Self.mock("missingX5CHeaderClaim"))
        }
        #expect(error?.code == .invalidJWTFormat)
    }

    @Test("the legacy receipt is not a JWS")
    func legacyTransactionIsNotJWS() throws {
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(Self.mock("legacyTransaction")) }
        #expect(error?.code == .invalidJWTFormat)
    }

    /// A JWS with the given test-PKI leaf and intermediate, signed date 2025-11-01, and a signature
    /// that cannot matter: chain checks come first.
    static func forgedJWS(leaf: String, intermediate: String, signedDate: Int64 = 1_761_962_975_000) throws -> String {
        let chain = try [leaf, intermediate, "testCA.der"].map {
            try SharedTestData.data("apple-vectors/library-test-pki/\($0)").base64EncodedString()
        }
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "x5c": chain])
        let payload = Data(#"{"bundleId":"com.example","environment":"Sandbox","signedDate":\#(signedDate)}"#.utf8)
        return [Base64URL.encode(header), Base64URL.encode(payload), Base64URL.encode(Data(count: 64))].joined(separator: ".")
    }

    @Test("the test-PKI chain itself is accepted, and only the signature fails")
    func validTestChainReachesSignatureCheck() throws {
        let jws = try Self.forgedJWS(leaf: "leaf-cert.der", intermediate: "intermediate-ca.der")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.contains("signature") == true)
    }

    @Test("a leaf without the receipt-signing OID is rejected")
    func leafWithWrongOID() throws {
        let jws = try Self.forgedJWS(leaf: "leaf-cert-invalid-oid.der", intermediate: "intermediate-ca.der")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.contains(AppleCertificateMarkers.receiptSigningLeafOID) == true)
    }

    @Test("an intermediate without the WWDR OID is rejected")
    func intermediateWithWrongOID() throws {
        let jws = try Self.forgedJWS(leaf: "leaf-cert-for-intermediate-ca-invalid-oid.der", intermediate: "intermediate-ca-invalid-oid.der")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.contains(AppleCertificateMarkers.worldwideDeveloperRelationsIntermediateOID) == true)
    }

    @Test("a chain validated after it expired is rejected")
    func expiredChain() throws {
        let jws = try Self.forgedJWS(leaf: "leaf-cert.der", intermediate: "intermediate-ca.der", signedDate: 2_280_946_846_000)
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.contains("expired") == true)
    }

    @Test("Xcode-signed data decodes without crypto in the Xcode environment, as Apple's libraries do")
    func xcodeEnvironmentSkipsCrypto() throws {
        let jws = try SharedTestData.text("apple-vectors/library-xcode/xcode-signed-transaction")
        let verifier = try SignedDataVerifier(rootCertificates: [], bundleId: "com.example.naturelab.backyardbirds.example", environment: .xcode)
        let transaction = try verifier.verifyAndDecodeTransaction(jws)
        #expect(transaction.transactionId == "0")
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.offerType == .introductoryOffer)
    }

    @Test("Xcode-signed data checked as Sandbox has the wrong chain length")
    func xcodeDataInSandbox() throws {
        let jws = try SharedTestData.text("apple-vectors/library-xcode/xcode-signed-transaction")
        let verifier = try SignedDataVerifier(rootCertificates: [Self.testRoot()], bundleId: "com.example.naturelab.backyardbirds.example", environment: .sandbox)
        let error = #expect(throws: VerificationError.self) { try verifier.verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .invalidChainLength)
    }

    @Test("verifying local environments strictly checks the chain of Xcode data too")
    func strictLocalEnvironment() throws {
        let jws = try SharedTestData.text("apple-vectors/library-xcode/xcode-signed-app-transaction")
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = true
        let verifier = try SignedDataVerifier(rootCertificates: [Self.testRoot()], bundleId: "com.example.naturelab.backyardbirds.example",
                                              environment: .xcode, options: options)
        let error = #expect(throws: VerificationError.self) { try verifier.verifyAndDecodeAppTransaction(jws) }
        #expect(error?.code == .invalidChainLength)
    }

    @Test("Production without an app Apple ID is a configuration error")
    func productionNeedsAppAppleId() throws {
        #expect(throws: SignedDataVerifier.ConfigurationError.self) {
            try SignedDataVerifier(rootCertificates: [Self.testRoot()], bundleId: "com.example", environment: .production)
        }
    }
}
