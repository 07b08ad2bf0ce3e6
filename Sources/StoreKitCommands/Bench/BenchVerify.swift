import AppStoreModels
import AppStoreSigning
import Foundation

/// `storekit bench verify`: verification throughput against the raw OpenSSL limit of the same run.
///
/// Three single-threaded rates: raw OpenSSL P-256 ECDSA verification of a JWS signing input, full
/// JWS verification (parse, decode, chain from the warm cache, signature, post-checks) of a
/// transaction from a local authority, and full verification of a real Apple-signed vector with the
/// chain cache off (two P-384 chain checks each time). The headline is the warm-cache ratio, which
/// should be at least 0.70.
struct BenchVerify: Command {
    static let name = "bench verify"
    static let abstract = "Measure JWS verification rates against raw OpenSSL (build with -c release)."
    static let usage = "[--json] [--seconds S] [--apple-vector FILE --apple-root CERT]"

    var json: Bool
    var seconds: Double
    var appleVector: String?
    var appleRoot: String?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        seconds = try arguments.value("--seconds", expected: "a positive number of seconds") { Double($0).flatMap { $0 > 0 ? $0 : nil } } ?? 2
        appleVector = try arguments.value("--apple-vector")
        appleRoot = try arguments.value("--apple-root")
    }

    func run(console: Console) async throws {
        let authority = try CertificateAuthority.make()
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "2000000000000001"
        transaction.originalTransactionId = "2000000000000001"
        transaction.bundleId = "com.example.bench"
        transaction.productId = "com.example.bench.monthly"
        transaction.type = .autoRenewableSubscription
        transaction.environment = .sandbox
        transaction.purchaseDate = Date(timeIntervalSince1970: 1_760_000_000)
        transaction.signedDate = Date(timeIntervalSince1970: 1_760_000_000)
        transaction.storefront = "USA"
        transaction.storefrontId = "143441"
        transaction.price = 9_990
        transaction.currency = "USD"
        let jws = try authority.makeSigner().sign(transaction)
        let compact = try CompactJWS(jws)
        let signingInput = compact.signingInput
        guard let derSignature = ECDSASignature.der(fromRaw: compact.signature), let leafKey = authority.signingCertificate.p256PublicKey else {
            throw CommandFailure("could not prepare the benchmark signature")
        }
        let verifier = try SignedDataVerifier(rootCertificates: [authority.rootCertificate], bundleId: "com.example.bench", environment: .sandbox)

        var report = BenchmarkReport(name: "bench verify")
        let raw = BenchmarkTimer.rate(seconds: seconds) {
            precondition(leafKey.isValidDERSignature(derSignature, for: signingInput))
        }
        let warm = try BenchmarkTimer.rate(seconds: seconds) { _ = try verifier.verifyAndDecodeTransaction(jws) }
        report.add("openssl_p256_verify_per_second", raw.rounded())
        report.add("jws_verify_warm_cache_per_second", warm.rounded())
        report.add("warm_cache_to_openssl_ratio", (warm / raw * 1000).rounded() / 1000)
        report.add("warm_cache_ratio_limit", 0.7)

        if let (vector, root) = try appleInputs() {
            var options = SignedDataVerifier.Options()
            options.chainCacheCapacity = 0
            let cold = try SignedDataVerifier(rootCertificates: [root], bundleId: vector.bundleId, appAppleId: nil,
                                              environment: .sandbox, options: options)
            let rate = try BenchmarkTimer.rate(seconds: seconds) { _ = try cold.verifyAndDecodeTransaction(vector.jws) }
            report.add("apple_vector_cold_cache_per_second", rate.rounded())
        } else {
            report.add("apple_vector_cold_cache_per_second", "skipped: no Apple vector (pass --apple-vector and --apple-root, or keep ../shared beside the checkout)")
        }
        console.print(try report.render(json: json))
    }

    /// A real Apple-signed transaction and Apple Root CA G3, from the arguments or from `../shared`.
    private func appleInputs() throws -> (vector: (jws: String, bundleId: String), root: Certificate)? {
        let vectorPath = appleVector ?? "../shared/apple-vectors/real-sandbox/01-transaction-2000001024998954.jws"
        let rootPath = appleRoot ?? "../shared/apple-vectors/apple-pki/AppleRootCA-G3.cer"
        guard FileManager.default.fileExists(atPath: vectorPath), FileManager.default.fileExists(atPath: rootPath) else {
            if appleVector != nil || appleRoot != nil { throw CommandFailure("cannot read \(vectorPath) or \(rootPath)") }
            return nil
        }
        let jws = String(decoding: FileManager.default.contents(atPath: vectorPath) ?? Data(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let bundleId = (try? CompactJWS(jws).payload(as: JWSTransactionDecodedPayload.self).bundleId) ?? nil
        guard let bundleId else { throw CommandFailure("\(vectorPath) is not a signed transaction") }
        return ((jws, bundleId), try Certificate(contentsOf: URL(fileURLWithPath: rootPath)))
    }
}
