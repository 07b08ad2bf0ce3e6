import AppStoreModels
@testable import AppStoreSigning
import Foundation
import Testing

@Suite(.timeLimit(.minutes(10)))
struct VerifiedChainCacheTests {
    static func transaction(at date: Date) -> JWSTransactionDecodedPayload {
        var payload = JWSTransactionDecodedPayload()
        payload.bundleId = "com.example.shop"
        payload.environment = .sandbox
        payload.signedDate = date
        return payload
    }

    @Test("a chain is validated once and then served from the cache")
    func chainIsCached() throws {
        let authority = try CertificateAuthority.make()
        let signer = try authority.makeSigner()
        let verifier = try SignedDataVerifier(rootCertificates: [authority.rootCertificate], bundleId: "com.example.shop", environment: .sandbox)
        for second in 0..<20 {
            _ = try verifier.verifyAndDecodeTransaction(signer.sign(Self.transaction(at: Date(timeIntervalSince1970: 1_750_000_000 + Double(second)))))
        }
        #expect(verifier.cache.count == 1)
    }

    @Test("a cached chain is not reused outside its certificates' validity")
    func cacheHonoursValidity() throws {
        let authority = try CertificateAuthority.make(signingCertificateValidFrom: Date(timeIntervalSince1970: 1_700_000_000))
        let signer = try authority.makeSigner()
        let verifier = try SignedDataVerifier(rootCertificates: [authority.rootCertificate], bundleId: "com.example.shop", environment: .sandbox)
        _ = try verifier.verifyAndDecodeTransaction(signer.sign(Self.transaction(at: Date(timeIntervalSince1970: 1_750_000_000))))
        let late = try signer.sign(Self.transaction(at: Date(timeIntervalSince1970: 1_900_000_000)))
        let error = #expect(throws: VerificationError.self) { try verifier.verifyAndDecodeTransaction(late) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.reason.contains("expired") == true)
    }

    @Test("the cache holds at most its capacity, forgetting the least recently used chain")
    func cacheIsBounded() throws {
        let authorities = try (0..<3).map { _ in try CertificateAuthority.make(name: "Shared") }
        var options = SignedDataVerifier.Options()
        options.chainCacheCapacity = 2
        let verifier = try SignedDataVerifier(rootCertificates: authorities.map(\.rootCertificate), bundleId: "com.example.shop",
                                              environment: .sandbox, options: options)
        for authority in authorities {
            _ = try verifier.verifyAndDecodeTransaction(authority.makeSigner().sign(Self.transaction(at: Date(timeIntervalSince1970: 1_750_000_000))))
        }
        #expect(verifier.cache.count == 2)
    }

    @Test("many threads verify through one verifier at once")
    func concurrentVerification() async throws {
        let authority = try CertificateAuthority.make()
        let signer = try authority.makeSigner()
        let verifier = try SignedDataVerifier(rootCertificates: [authority.rootCertificate], bundleId: "com.example.shop", environment: .sandbox)
        let jws = try (0..<64).map { try signer.sign(Self.transaction(at: Date(timeIntervalSince1970: 1_750_000_000 + Double($0)))) }
        let verified = try await withThrowingTaskGroup(of: Int.self) { group in
            for item in jws {
                group.addTask { try verifier.verifyAndDecodeTransaction(item).signedDate == nil ? 0 : 1 }
            }
            var total = 0
            for try await value in group { total += value }
            return total
        }
        #expect(verified == 64)
    }
}
