import AppStoreModels
import AppStoreSigning
import Foundation
import Testing
import TestSupport

/// What the local certificate authority signs must verify with Apple's own Python library.
@Suite(.timeLimit(.minutes(10)), AppleLibraryOracle.required)
struct AppleLibraryInteropTests {
    @Test("Apple's library verifies a transaction, renewal info, notification and app transaction from the local authority")
    func localAuthorityInterop() async throws {
        let authority = try CertificateAuthority.make()
        let signer = try authority.makeSigner()
        let signedDate = Date(timeIntervalSince1970: 1_760_000_000.123)
        var transaction = LocalCertificateAuthorityTests.transaction(signedAt: signedDate)
        transaction.type = .autoRenewableSubscription
        var renewal = JWSRenewalInfoDecodedPayload()
        renewal.environment = .sandbox
        renewal.originalTransactionId = "0"
        renewal.autoRenewStatus = .on
        renewal.signedDate = signedDate
        var notification = ResponseBodyV2DecodedPayload()
        notification.notificationType = .test
        notification.notificationUUID = "2f6a0c4e-0c3b-4a47-9a55-9a1a31c8f1d0"
        notification.version = "2.0"
        notification.signedDate = signedDate
        var data = NotificationData()
        data.bundleId = "com.example.shop"
        data.environment = .sandbox
        data.signedTransactionInfo = try signer.sign(transaction)
        notification.data = data
        var appTransaction = AppTransaction()
        appTransaction.receiptType = .sandbox
        appTransaction.bundleId = "com.example.shop"
        appTransaction.receiptCreationDate = signedDate
        appTransaction.originalPurchaseDate = signedDate
        appTransaction.applicationVersion = "1"
        appTransaction.originalApplicationVersion = "1.0"

        let items: [(kind: String, jws: String)] = [
            ("transaction", try signer.sign(transaction)), ("renewal", try signer.sign(renewal)),
            ("notification", try signer.sign(notification)), ("app-transaction", try signer.sign(appTransaction)),
        ]
        let verdicts = try await AppleLibraryOracle.verify(root: authority.rootCertificate.derRepresentation, environment: "Sandbox",
                                                     bundleId: "com.example.shop", appAppleId: nil, items: items)
        #expect(verdicts == ["OK", "OK", "OK", "OK"])

        let otherRoot = try CertificateAuthority.make().rootCertificate
        let rejected = try await AppleLibraryOracle.verify(root: otherRoot.derRepresentation, environment: "Sandbox",
                                                     bundleId: "com.example.shop", appAppleId: nil, items: [items[0]])
        #expect(rejected == ["VERIFICATION_FAILURE"])
    }
}
