import AppStoreModels
import AppStoreSigning
import Foundation
import StoreKitCommands

/// `storekit bench verify`: verification throughput against the raw OpenSSL limit of the same run.
///
/// The limit is what `openssl speed ecdsap256` measures: P-256 ECDSA verification of a digest computed
/// beforehand, with a context prepared once. Against it runs full JWS verification (split, base64,
/// payload decoding, chain from the warm cache, hashing, signature, post-checks) of a transaction whose
/// payload is a real Apple sandbox transaction's, signed by a local authority so the chain is cached.
/// The two windows alternate over several rounds (which one goes first alternates too), so a machine
/// that speeds up or slows down during the run moves both alike; each round gives a ratio, and the
/// report gives their min, median and max. The headline, `warm_cache_to_openssl_ratio_median`, should be
/// at least 0.75. A last figure verifies the real Apple-signed vector with the chain cache off (two
/// P-384 chain checks each time).
struct BenchVerify: Command {
    static let declaration = CommandDeclaration("bench verify", group: .benchmarks, abstract: "Measure JWS verification rates against raw OpenSSL (build with -c release).", arguments: [
        .flag("--json", "print JSON"),
        .option("--seconds", "S", "how long each measurement runs"),
        .option("--rounds", "N", "how many rounds"),
        .option("--apple-vector", "FILE", "a real Apple-signed JWS to verify too"),
        .option("--apple-root", "CERT", "Apple's root, for --apple-vector"),
    ])

    var json: Bool
    var seconds: Double
    var rounds: Int
    var appleVector: String?
    var appleRoot: String?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        seconds = try arguments.value("--seconds", expected: "a positive number of seconds per window") { Double($0).flatMap { $0 > 0 && $0 <= 3_600 ? $0 : nil } } ?? 1
        rounds = try arguments.value("--rounds", expected: "a number of rounds from 1 to 100") { Int($0).flatMap { (1...100).contains($0) ? $0 : nil } } ?? 5
        appleVector = try arguments.value("--apple-vector")
        appleRoot = try arguments.value("--apple-root")
    }

    func run(console: Console) async throws {
        let authority = try CertificateAuthority.make()
        let apple = try appleInputs()
        let (payload, payloadSource) = try Self.benchmarkPayload(apple: apple)
        let jws = try authority.makeSigner().sign(payload: payload)
        let compact = try CompactJWS(jws)
        let signed = try compact.payload(as: JWSTransactionDecodedPayload.self)
        let digest = [UInt8](Digest.sha256(compact.signingInput))
        guard let derSignature = ECDSASignature.der(fromRaw: compact.signature), let leafKey = authority.signingCertificate.p256PublicKey,
              leafKey.key.verifyDigest(derSignature: derSignature, sha256Digest: digest) else {
            throw CommandFailure("could not prepare the benchmark signature")
        }
        let verifier = try SignedDataVerifier(rootCertificates: [authority.rootCertificate], bundleId: signed.bundleId ?? "",
                                              environment: signed.environment ?? .sandbox)
        _ = try await verifier.verifyAndDecodeTransaction(jws)

        var raws: [Double] = []
        var warms: [Double] = []
        var ratios: [Double] = []
        for round in 0..<rounds {
            let measureRaw = {
                BenchmarkTimer.rate(seconds: seconds) {
                    precondition(leafKey.key.verifyDigest(derSignature: derSignature, sha256Digest: digest))
                }
            }
            let measureWarm = { () throws -> Double in
                try BenchmarkTimer.rate(seconds: seconds) { _ = try verifier.verifyAndDecodeTransaction(jws) }
            }
            let raw: Double
            let warm: Double
            if round.isMultiple(of: 2) {
                raw = measureRaw()
                warm = try measureWarm()
            } else {
                warm = try measureWarm()
                raw = measureRaw()
            }
            raws.append(raw)
            warms.append(warm)
            ratios.append(warm / raw)
        }

        var report = BenchmarkReport(name: "bench verify")
        report.add("payload", payloadSource)
        report.add("rounds", rounds)
        report.add("openssl_p256_verify_per_second", raws.median.rounded())
        report.add("jws_verify_warm_cache_per_second", warms.median.rounded())
        report.add("warm_cache_to_openssl_ratio_min", (ratios.min() ?? 0).thousandths)
        report.add("warm_cache_to_openssl_ratio_median", ratios.median.thousandths)
        report.add("warm_cache_to_openssl_ratio_max", (ratios.max() ?? 0).thousandths)
        report.add("warm_cache_to_openssl_ratio", ratios.median.thousandths)
        report.add("warm_cache_ratio_limit", 0.75)

        if let (vector, root) = apple {
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

    /// The payload to sign: a real Apple transaction's payload bytes when the vector is at hand, else a
    /// synthetic transaction of the same shape.
    private static func benchmarkPayload(apple: (vector: (jws: String, bundleId: String), root: Certificate)?) throws -> (Data, String) {
        if let apple {
            let compact = try CompactJWS(apple.vector.jws)
            return (compact.payloadData, "a real Apple sandbox transaction's payload (\(compact.payloadData.count) bytes)")
        }
        let transaction = BenchmarkSample.transaction
        let data = try AppStoreJSON.encode(transaction)
        return (data, "a synthetic transaction (\(data.count) bytes; no Apple vector at hand)")
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
