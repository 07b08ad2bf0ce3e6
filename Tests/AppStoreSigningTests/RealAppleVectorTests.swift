import AppStoreModels
import AppStoreSigning
import Foundation
import Testing
import TestSupport

/// Real JWS signed by Apple in the sandbox, verified against Apple Root CA G3 offline.
@Suite(.timeLimit(.minutes(10)), .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
struct RealAppleVectorTests {
    static let bundleId = "com.loki-project.loki-messenger"
    static let appAppleId: Int64 = 1_470_168_868
    static let vectors = SharedTestData.files(in: "apple-vectors/real-sandbox", withExtension: "jws")

    static func root() throws -> Certificate {
        try Certificate(contentsOf: SharedTestData.url("apple-vectors/apple-pki/AppleRootCA-G3.cer"))
    }

    static func verifier(environment: Environment = .sandbox, bundleId: String = bundleId, appAppleId: Int64? = appAppleId,
                         roots: [Certificate]? = nil, online: Bool = false,
                         options: SignedDataVerifier.Options = .init()) throws -> SignedDataVerifier {
        try SignedDataVerifier(rootCertificates: roots ?? [root()], bundleId: bundleId, appAppleId: appAppleId,
                               environment: environment, enableOnlineChecks: online, options: options)
    }

    static func kind(of file: URL) -> SignedDataKind {
        let name = file.lastPathComponent
        if name.contains("-notification-") { return .notification }
        if name.contains("-renewal-") { return .renewalInfo }
        return .transaction
    }

    static func verify(_ jws: String, kind: SignedDataKind, with verifier: SignedDataVerifier) throws(VerificationError) {
        switch kind {
        case .transaction: _ = try verifier.verifyAndDecodeTransaction(jws)
        case .renewalInfo: _ = try verifier.verifyAndDecodeRenewalInfo(jws)
        case .notification: _ = try verifier.verifyAndDecodeNotification(jws)
        case .appTransaction: _ = try verifier.verifyAndDecodeAppTransaction(jws)
        }
    }

    @Test("there are 43 real sandbox vectors")
    func vectorCount() {
        #expect(Self.vectors.count == 43)
    }

    @Test("every real sandbox vector verifies offline at its signedDate", arguments: vectors)
    func realVectorVerifies(file: URL) throws {
        let jws = try String(contentsOf: file, encoding: .utf8)
        let verifier = try Self.verifier()
        #expect(throws: Never.self) { try Self.verify(jws, kind: Self.kind(of: file), with: verifier) }
    }

    @Test("decoded fields match the vector index")
    func decodedFieldsMatchIndex() throws {
        let index = try JSONSerialization.jsonObject(with: SharedTestData.data("apple-vectors/real-sandbox/index.json")) as! [String: Any]
        let verifier = try Self.verifier()
        for entry in index["vectors"] as! [[String: Any]] {
            let jws = try SharedTestData.text("apple-vectors/real-sandbox/\(entry["file"] as! String)")
            switch entry["kind"] as! String {
            case "transaction":
                let transaction = try verifier.verifyAndDecodeTransaction(jws)
                #expect(transaction.transactionId == entry["transactionId"] as? String)
                #expect(transaction.originalTransactionId == entry["originalTransactionId"] as? String)
                #expect(transaction.productId == entry["productId"] as? String)
                #expect(transaction.transactionReason?.rawValue == entry["transactionReason"] as? String)
                #expect(transaction.signedDate.map(AppStoreJSON.milliseconds(from:)) == (entry["signedDate"] as? NSNumber)?.int64Value)
            case "renewal":
                let renewal = try verifier.verifyAndDecodeRenewalInfo(jws)
                #expect(renewal.originalTransactionId == entry["originalTransactionId"] as? String)
                #expect(renewal.autoRenewStatus?.rawValue == (entry["autoRenewStatus"] as? NSNumber)?.int32Value)
            default:
                let notification = try verifier.verifyAndDecodeNotification(jws)
                #expect(notification.notificationType?.rawValue == entry["notificationType"] as? String)
                #expect(notification.subtype?.rawValue == entry["subtype"] as? String)
                #expect(notification.notificationUUID == entry["notificationUUID"] as? String)
            }
        }
    }

    @Test("a notification's embedded transaction and renewal info verify too")
    func embeddedDataVerifies() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/00-notification-DID_RENEW.jws")
        let verifier = try Self.verifier()
        let notification = try verifier.verifyAndDecodeNotification(jws)
        let embedded = try verifier.verifyAndDecodeEmbeddedData(of: notification)
        #expect(embedded.transaction?.transactionId == "2000001024998954")
        #expect(embedded.renewalInfo?.originalTransactionId == "2000001024993299")
        #expect(notification.data?.status == .active)
    }

    @Test("a real notification checked as Production fails on the environment")
    func productionEnvironmentIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/00-notification-DID_RENEW.jws")
        let error = #expect(throws: VerificationError.self) { try Self.verifier(environment: .production).verifyAndDecodeNotification(jws) }
        #expect(error?.code == .invalidEnvironment)
    }

    @Test("a real notification checked as Production for another app fails on the app identifier")
    func productionOtherAppIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/00-notification-DID_RENEW.jws")
        let error = #expect(throws: VerificationError.self) {
            try Self.verifier(environment: .production, appAppleId: 1).verifyAndDecodeNotification(jws)
        }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test("a transaction for another bundle is rejected")
    func wrongBundleIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        let error = #expect(throws: VerificationError.self) {
            try Self.verifier(bundleId: "com.example").verifyAndDecodeTransaction(jws)
        }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test("a real transaction does not chain to the libraries' test root")
    func wrongRootIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        let testRoot = try Certificate(contentsOf: SharedTestData.url("apple-vectors/library-test-pki/testCA.der"))
        let error = #expect(throws: VerificationError.self) { try Self.verifier(roots: [testRoot]).verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.contains("certificate chain") == true)
    }

    @Test("no trusted root at all is an invalid certificate")
    func noRootIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        let error = #expect(throws: VerificationError.self) { try Self.verifier(roots: []).verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .invalidCertificate)
    }

    @Test("renewal info passed as a transaction fails on the missing bundle identifier")
    func renewalInfoAsTransaction() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/02-renewal-2000001024993299.jws")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test("a changed payload no longer matches the signature")
    func tamperedPayloadIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        let parts = jws.split(separator: ".").map(String.init)
        var payload = String(decoding: Base64URL.decode(parts[1])!, as: UTF8.self)
        payload = payload.replacingOccurrences(of: "\"price\":1990", with: "\"price\":990")
        let tampered = [parts[0], Base64URL.encode(Data(payload.utf8)), parts[2]].joined(separator: ".")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(tampered) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.contains("signature") == true)
    }

    @Test("a changed signature is rejected")
    func tamperedSignatureIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        var parts = jws.split(separator: ".").map(String.init)
        var signature = Base64URL.decode(parts[2])!
        signature[10] ^= 0x01
        parts[2] = Base64URL.encode(signature)
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(parts.joined(separator: ".")) }
        #expect(error?.code == .verificationFailure)
    }

    @Test("a truncated JWS is a format error", arguments: [10, 100, 1000, 2000])
    func truncatedIsRejected(length: Int) throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(String(jws.prefix(length))) }
        #expect(error?.code == .invalidJWTFormat)
    }

    @Test("alg none is a format error")
    func algorithmNoneIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        let parts = jws.split(separator: ".").map(String.init)
        var header = try JSONSerialization.jsonObject(with: Base64URL.decode(parts[0])!) as! [String: Any]
        header["alg"] = "none"
        let forged = [Base64URL.encode(try JSONSerialization.data(withJSONObject: header)), parts[1], ""].joined(separator: ".")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(forged) }
        #expect(error?.code == .invalidJWTFormat)
        #expect(error?.reason.contains("ES256") == true)
    }

    @Test("an x5c with two certificates is an invalid chain length")
    func twoCertificateChainIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        let parts = jws.split(separator: ".").map(String.init)
        var header = try JSONSerialization.jsonObject(with: Base64URL.decode(parts[0])!) as! [String: Any]
        header["x5c"] = Array((header["x5c"] as! [String]).prefix(2))
        let forged = [Base64URL.encode(try JSONSerialization.data(withJSONObject: header)), parts[1], parts[2]].joined(separator: ".")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(forged) }
        #expect(error?.code == .invalidChainLength)
    }

    @Test("an x5c entry that is not base64 DER is an invalid certificate")
    func garbageCertificateIsRejected() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        let parts = jws.split(separator: ".").map(String.init)
        var header = try JSONSerialization.jsonObject(with: Base64URL.decode(parts[0])!) as! [String: Any]
        var chain = header["x5c"] as! [String]
        chain[0] = Data("not a certificate".utf8).base64EncodedString()
        header["x5c"] = chain
        let forged = [Base64URL.encode(try JSONSerialization.data(withJSONObject: header)), parts[1], parts[2]].joined(separator: ".")
        let error = #expect(throws: VerificationError.self) { try Self.verifier().verifyAndDecodeTransaction(forged) }
        #expect(error?.code == .invalidCertificate)
    }

    @Test("online checks that cannot reach an OCSP responder are retryable")
    func unreachableOCSPIsRetryable() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws")
        var options = SignedDataVerifier.Options()
        options.ocspResponderOverride = "http://127.0.0.1:9/ocsp"
        options.ocspTimeoutSeconds = 5
        options.currentDate = { Date(timeIntervalSince1970: 1_790_000_000) } // 2026-09, leaf still valid
        let error = #expect(throws: VerificationError.self) { try Self.verifier(online: true, options: options).verifyAndDecodeTransaction(jws) }
        #expect(error?.code == .retryableVerificationFailure)
    }

    @Test("online checks validate at the current time, where the 2023 leaf has expired")
    func expiredLeafFailsOnline() throws {
        let jws = try SharedTestData.text("apple-vectors/real-sandbox/42-notification-TEST-oldleaf.jws")
        var options = SignedDataVerifier.Options()
        options.ocspResponderOverride = "http://127.0.0.1:9/ocsp"
        options.currentDate = { Date(timeIntervalSince1970: 1_790_000_000) }
        let offline = try Self.verifier()
        #expect(throws: Never.self) { try offline.verifyAndDecodeNotification(jws) }
        let error = #expect(throws: VerificationError.self) { try Self.verifier(online: true, options: options).verifyAndDecodeNotification(jws) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.contains("expired") == true)
    }
}
