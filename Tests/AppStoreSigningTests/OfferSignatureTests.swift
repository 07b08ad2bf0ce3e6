import AppStoreSigning
import Foundation
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(10)))
struct OfferSignatureTests {
    static let nonce = UUID(uuidString: "A0C1B2D3-E4F5-4A6B-8C7D-9E0F1A2B3C4D")!

    static func appleTestKey() throws -> P256PrivateKey {
        if SharedTestData.isAvailable {
            return try P256PrivateKey(pemRepresentation: SharedTestData.text("apple-vectors/library-test-pki/testSigningKey.p8"))
        }
        return try P256PrivateKey.generate()
    }

    static let offer = PromotionalOfferSignature(
        bundleId: "com.example", keyId: "keyId", productIdentifier: "productId", subscriptionOfferID: "offerId",
        applicationUsername: "APPACCOUNTTOKEN", nonce: nonce, timestamp: 1_698_148_900_000)

    @Test("the legacy message joins the fields with U+2063 and lower-cases token and nonce")
    func legacyMessage() {
        let expected = "com.example\u{2063}keyId\u{2063}productId\u{2063}offerId\u{2063}appaccounttoken\u{2063}a0c1b2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d\u{2063}1698148900000"
        #expect(Self.offer.message == Data(expected.utf8))
    }

    @Test("a legacy signature is base64 DER that verifies, and only for the same fields")
    func legacySignature() throws {
        let key = try Self.appleTestKey()
        let signature = try Self.offer.sign(with: key)
        let der = try #require(Data(base64Encoded: signature))
        #expect(der.first == 0x30)
        #expect(Self.offer.isValidSignature(signature, publicKey: key.publicKey))
        var other = Self.offer
        other.subscriptionOfferID = "otherOffer"
        #expect(!other.isValidSignature(signature, publicKey: key.publicKey))
        #expect(!Self.offer.isValidSignature("not base64!", publicKey: key.publicKey))
    }

    @Test("a promotional offer V2 signature carries Apple's header and claims and verifies")
    func promotionalOfferV2() throws {
        let key = try Self.appleTestKey()
        let creator = OfferSignatureCreator(signingKey: key, keyId: "keyId", issuerId: "issuerId", bundleId: "com.example")
        let jws = try creator.promotionalOfferSignature(productId: "productId", offerIdentifier: "offerId", nonce: Self.nonce,
                                                        issuedAt: Date(timeIntervalSince1970: 1_698_148_900.7))
        let compact = try CompactJWS(jws)
        let header = try compact.header()
        #expect(header.alg == "ES256" && header.kid == "keyId" && header.typ == "JWT" && header.x5c == nil)
        let object = try JSONSerialization.jsonObject(with: compact.payloadData) as! [String: Any]
        #expect(object["aud"] as? String == "promotional-offer")
        #expect(object["iat"] as? Int == 1_698_148_900)
        #expect(object["transactionId"] == nil)
        #expect(object["exp"] == nil)
        let verifier = OfferSignatureVerifier(publicKey: key.publicKey, keyId: "keyId", bundleId: "com.example")
        let claims = try verifier.verify(jws, audience: OfferSignatureClaims.promotionalOfferAudience)
        #expect(claims.offerIdentifier == "offerId")
        #expect(claims.nonce == "a0c1b2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d")
        #expect(throws: OfferSignatureVerifier.Rejection.self) {
            try verifier.verify(jws, audience: OfferSignatureClaims.introductoryOfferEligibilityAudience)
        }
        let otherKey = OfferSignatureVerifier(publicKey: try P256PrivateKey.generate().publicKey, keyId: "keyId", bundleId: "com.example")
        #expect(throws: OfferSignatureVerifier.Rejection.self) { try otherKey.verify(jws, audience: OfferSignatureClaims.promotionalOfferAudience) }
    }

    @Test("an introductory-offer eligibility signature carries the eligibility claim")
    func introductoryOfferEligibility() throws {
        let key = try Self.appleTestKey()
        let creator = OfferSignatureCreator(signingKey: key, keyId: "keyId", issuerId: "issuerId", bundleId: "com.example")
        let jws = try creator.introductoryOfferEligibilitySignature(productId: "productId", allowIntroductoryOffer: true, transactionId: "42",
                                                                    nonce: Self.nonce, issuedAt: Date(timeIntervalSince1970: 1_698_148_900))
        let verifier = OfferSignatureVerifier(publicKey: key.publicKey, keyId: "keyId", bundleId: "com.example")
        let claims = try verifier.verify(jws, audience: OfferSignatureClaims.introductoryOfferEligibilityAudience)
        #expect(claims.allowIntroductoryOffer == true)
        #expect(claims.transactionId == "42")
        #expect(claims.iss == "issuerId")
    }
}
