import AppStoreModels
import AppStoreSigning
import Foundation
import Synchronization
import Testing
import TestSupport

/// Untrusted JWS never crash the verifier: 100,000 crafted inputs (extreme and wrongly typed values in
/// every payload field, mutated headers and chains, bad signatures, broken structure), built from real
/// Apple-signed vectors and from the local authority's, each end in a result or a `VerificationError`.
@Suite(.timeLimit(.minutes(10)))
struct JWSFuzzTests {
    /// A signed item and the verifier that accepts it untouched.
    struct Seed {
        var jws: String
        var kind: SignedDataKind
        var verifier: SignedDataVerifier
    }

    static func seeds() throws -> [Seed] {
        var seeds: [Seed] = []
        let authority = try CertificateAuthority.make()
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = true
        let local = try SignedDataVerifier(rootCertificates: [authority.rootCertificate], bundleId: "com.example.shop", environment: .sandbox,
                                           options: options)
        var transaction = JWSTransactionDecodedPayload()
        transaction.bundleId = "com.example.shop"
        transaction.environment = .sandbox
        transaction.transactionId = "7"
        transaction.originalTransactionId = "7"
        transaction.productId = "com.example.shop.pro"
        transaction.purchaseDate = Date(timeIntervalSince1970: 1_767_225_600)
        transaction.signedDate = Date(timeIntervalSince1970: 1_767_225_600)
        seeds.append(Seed(jws: try authority.makeSigner().sign(transaction), kind: .transaction, verifier: local))
        if SharedTestData.isAvailable {
            let apple = try RealAppleVectorTests.verifier()
            for file in RealAppleVectorTests.vectors.prefix(6) {
                seeds.append(Seed(jws: try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
                                  kind: RealAppleVectorTests.kind(of: file), verifier: apple))
            }
        }
        return seeds
    }

    /// Values that have broken parsers and converters: out of every integer and date range, of the wrong JSON type.
    static let extremes = [
        "1e30", "-1e30", "1.79e308", "-1.79e308", "4.9e-324", "0", "-0", "-1", "9223372036854775807", "9223372036854775808",
        "-9223372036854775809", "18446744073709551616", "1.5", "253402300800000", "-62135596800001", "\"\"", "\"1e30\"",
        "\"\\u0000\"", "true", "false", "null", "[]", "{}", "[1e30]", "{\"a\": 1e30}", "\"" + String(repeating: "x", count: 10_000) + "\"",
    ]

    static func mutate(_ seed: Seed, using random: inout SplitMix64) -> String {
        let parts = seed.jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        switch random.next() % 6 {
        case 0, 1:
            // A payload field (or one inside `data`) set to an extreme value; the original signature kept or zeroed.
            guard let payloadData = Base64URL.decode(parts[1]),
                  var object = (try? JSONSerialization.jsonObject(with: payloadData)) as? [String: Any] else { return seed.jws }
            var keys = Array(object.keys) + ["signedDate", "purchaseDate", "expiresDate", "revocationDate", "price", "quantity"]
            if object["data"] is [String: Any] { keys.append("data.signedTransactionInfo") }
            let key = pick(keys)
            var text = String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
            if key.hasPrefix("data."), var data = object["data"] as? [String: Any] {
                data["signedTransactionInfo"] = "placeholder"
                object["data"] = data
                text = String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
                text = text.replacingOccurrences(of: "\"placeholder\"", with: pick(extremes))
            } else {
                object[key] = "PLACEHOLDER-VALUE"
                text = String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
                text = text.replacingOccurrences(of: "\"PLACEHOLDER-VALUE\"", with: pick(extremes))
            }
            let signature = random.next() % 2 == 0 ? parts[2] : Base64URL.encode(Data(count: 64))
            return [parts[0], Base64URL.encode(Data(text.utf8)), signature].joined(separator: ".")
        case 2:
            // The header: algorithm, chain and key ID replaced or broken.
            let headers = [
                #"{"alg":"none"}"#, #"{"alg":"ES256"}"#, #"{"alg":"ES256","x5c":[]}"#, #"{"alg":"ES256","x5c":["AA","BB","CC"]}"#,
                #"{"alg":"ES256","x5c":"not a list"}"#, #"{"alg":"ES256","x5c":[1e30,null,{}]}"#, #"{"alg":1e30,"x5c":null}"#,
                #"{"alg":"HS256","x5c":["MII","MII","MII"]}"#, "[]", "null", "1e30", "{",
            ]
            var header = pick(headers)
            if random.next() % 3 == 0, let original = Base64URL.decode(parts[0]),
               var object = (try? JSONSerialization.jsonObject(with: original)) as? [String: Any], var chain = object["x5c"] as? [String] {
                switch random.next() % 4 {
                case 0: chain.reverse()
                case 1: chain.removeLast()
                case 2: chain.append(chain[0])
                default: chain[0] = String(chain[0].dropLast(Int(random.next() % 40)))
                }
                object["x5c"] = chain
                header = String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
            }
            return [Base64URL.encode(Data(header.utf8)), parts[1], parts[2]].joined(separator: ".")
        case 3:
            // The signature: empty, short, long, zero, random.
            let signatures = [Data(), Data(count: 63), Data(count: 64), Data(count: 65), Data(count: 132),
                              Data((0..<64).map { _ in UInt8(truncatingIfNeeded: random.next()) }), Data(repeating: 0xFF, count: 64)]
            return [parts[0], parts[1], Base64URL.encode(pick(signatures))].joined(separator: ".")
        case 4:
            // Bytes flipped anywhere in the text.
            var bytes = Array(seed.jws.utf8)
            for _ in 0..<(1 + Int(random.next() % 4)) {
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next() % 128)
            }
            return String(decoding: bytes, as: UTF8.self)
        default:
            // Structure: truncated, dots added or removed, segments repeated.
            switch random.next() % 4 {
            case 0: return String(seed.jws.prefix(Int(random.next() % UInt64(seed.jws.count))))
            case 1: return parts.joined(separator: "..")
            case 2: return parts[0] + "." + parts[1]
            default: return ([parts[0]] + Array(repeating: parts[1], count: 1 + Int(random.next() % 3)) + [parts[2]]).joined(separator: ".")
            }
        }
    }

    @Test("100,000 crafted JWS: every one ends in a result or a VerificationError, never a crash")
    func fuzz() async throws {
        let seeds = try Self.seeds()
        // Four replayable streams of 25,000 cases, on threads of their own (not the pool other tests' servers use).
        let counts = try await withThrowingTaskGroup(of: (refused: Int, accepted: Int).self) { group in
            for stream in 0..<4 {
                group.addTask {
                    try await onThreadOfItsOwn {
                        var random = SplitMix64(state: 0xF022_5EED &+ UInt64(stream))
                        var refused = 0
                        var accepted = 0
                        for case_ in 0..<25_000 {
                            let seed = seeds[case_ % seeds.count]
                            let input = Self.mutate(seed, using: &random)
                            do {
                                try RealAppleVectorTests.verify(input, kind: seed.kind, with: seed.verifier)
                                accepted += 1
                            } catch {
                                refused += 1
                            }
                        }
                        return (refused, accepted)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let refused = counts.map(\.refused).reduce(0, +)
        let accepted = counts.map(\.accepted).reduce(0, +)
        #expect(refused + accepted == 100_000)
        #expect(refused > 90_000, "almost every mutation must be refused")
        print("JWS fuzz: \(refused) refused, \(accepted) accepted (mutations that kept the signed bytes) over \(seeds.count) seeds")
    }

    @Test("a payload whose signedDate is out of every range is refused, not a trap", arguments: ["1e30", "-1e30", "1.79e308"])
    func extremeSignedDate(_ value: String) throws {
        let seed = try #require(try Self.seeds().first)
        let parts = seed.jws.split(separator: ".").map(String.init)
        let payload = String(decoding: try #require(Base64URL.decode(parts[1])), as: UTF8.self)
        let crafted = payload.replacingOccurrences(of: #""signedDate":1767225600000"#, with: #""signedDate":\#(value)"#)
        #expect(crafted != payload)
        let jws = [parts[0], Base64URL.encode(Data(crafted.utf8)), Base64URL.encode(Data(count: 64))].joined(separator: ".")
        #expect(throws: VerificationError.self) { try seed.verifier.verifyAndDecodeTransaction(jws) }
    }
}

