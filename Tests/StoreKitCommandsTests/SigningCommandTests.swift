import AppStoreModels
import AppStoreSigning
import Foundation
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(10)))
struct SigningCommandTests {
    @Test("storekit with no arguments prints the command list")
    func help() async {
        let run = await CommandRun.run([])
        #expect(run.status == 0)
        for command in ["verify", "decode", "ca init", "ca export", "ca sign", "bench verify"] {
            #expect(run.standardOutput.contains("  \(command) "))
        }
    }

    @Test("an unknown command is a usage error")
    func unknownCommand() async {
        let run = await CommandRun.run(["frobnicate"])
        #expect(run.status == 64)
        #expect(run.standardError.hasPrefix("error: unknown command frobnicate"))
    }

    @Test("ca init, ca sign and verify work together, and ca export prints the root in DER and PEM")
    func certificateAuthorityRoundTrip() async throws {
        let scratch = Scratch()
        let authority = scratch.path("ca")
        let created = await CommandRun.run(["ca", "init", authority])
        #expect(created.status == 0)
        #expect(created.standardOutput.contains("root SHA-256:"))

        let der = await CommandRun.run(["ca", "export", authority])
        #expect(der.status == 0)
        let root = try Certificate(derRepresentation: der.standardOutputData)
        let pem = await CommandRun.run(["ca", "export", authority, "--pem"])
        #expect(try Certificate(pemRepresentation: pem.standardOutput) == root)
        let rootFile = try scratch.write(der.standardOutputData, to: "root.der")

        let payload = try scratch.write(#"{"transactionId":"0","bundleId":"com.example.shop","environment":"Sandbox","signedDate":1760000000000,"productId":"gems"}"#, to: "payload.json")
        let signed = await CommandRun.run(["ca", "sign", authority, payload])
        #expect(signed.status == 0)
        let jwsFile = try scratch.write(signed.standardOutput, to: "signed.jws")

        let verified = await CommandRun.run(["verify", "--root", rootFile, "--bundle-id", "com.example.shop", "--environment", "Sandbox", jwsFile])
        #expect(verified.status == 0, "\(verified.standardError)")
        #expect(verified.jsonObject?["productId"] as? String == "gems")

        let inline = await CommandRun.run(["verify", "--root", rootFile, "--bundle-id", "com.other", "--environment", "Sandbox",
                                           signed.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(inline.status == 1)
        #expect(inline.standardError.hasPrefix("error: INVALID_APP_IDENTIFIER: "))
    }

    @Test("local (Xcode) data is checked against --root: a forged JWS fails; --unchecked-local accepts it and says nothing was checked")
    func localDataIsChecked() async throws {
        let scratch = Scratch()
        let authority = scratch.path("ca")
        #expect(await CommandRun.run(["ca", "init", authority]).status == 0)
        let rootFile = try scratch.write(await CommandRun.run(["ca", "export", authority]).standardOutputData, to: "root.der")
        let payload = try scratch.write(#"{"transactionId":"0","bundleId":"com.example.shop","environment":"Xcode","signedDate":1760000000000,"productId":"gems"}"#, to: "payload.json")
        let signed = await CommandRun.run(["ca", "sign", authority, payload]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = signed.split(separator: ".")
        let forgedPayload = Base64URL.encode(Data(#"{"transactionId":"0","bundleId":"com.example.shop","environment":"Xcode","signedDate":1760000000000,"productId":"gem.chest"}"#.utf8))
        let forged = "\(parts[0]).\(forgedPayload).\(parts[2])"
        let arguments = ["verify", "--root", rootFile, "--bundle-id", "com.example.shop", "--environment", "Xcode"]

        let genuine = await CommandRun.run(arguments + [signed])
        #expect(genuine.status == 0, "\(genuine.standardError)")
        #expect(genuine.standardError.isEmpty)
        let refused = await CommandRun.run(arguments + [forged])
        #expect(refused.status == 1)
        #expect(refused.standardError.hasPrefix("error: VERIFICATION_FAILURE"), "\(refused.standardError)")
        let unchecked = await CommandRun.run(arguments + ["--unchecked-local", forged])
        #expect(unchecked.status == 0)
        #expect(unchecked.standardError.contains("nothing but the format was checked"))
        let sandbox = await CommandRun.run(["verify", "--root", rootFile, "--bundle-id", "com.example.shop", "--environment", "Sandbox",
                                            "--unchecked-local", signed])
        #expect(sandbox.status != 0)
        #expect(sandbox.standardError.contains("--unchecked-local applies to Xcode and LocalTesting data only"))
    }

    @Test("ca init refuses a directory that already holds an authority")
    func caInitRefusesOverwrite() async throws {
        let scratch = Scratch()
        #expect(await CommandRun.run(["ca", "init", scratch.path("ca")]).status == 0)
        let again = await CommandRun.run(["ca", "init", scratch.path("ca")])
        #expect(again.status == 1)
        #expect(again.standardError.contains("already holds a certificate authority"))
    }

    @Test("bad input gives one clear error line and a non-zero status", arguments: [
        ("empty", Data(), "is empty"),
        ("junk", Data([0xFF, 0x00, 0xFE, 0x41, 0x2E]), "INVALID_JWT_FORMAT"),
        ("truncated", Data("eyJhbGciOiJFUzI1NiJ9.eyJ4Ijox".utf8), "INVALID_JWT_FORMAT"),
    ])
    func badInput(name: String, contents: Data, expected: String) async throws {
        let scratch = Scratch()
        #expect(await CommandRun.run(["ca", "init", scratch.path("ca")]).status == 0)
        let root = try scratch.write(await CommandRun.run(["ca", "export", scratch.path("ca")]).standardOutputData, to: "root.der")
        let file = try scratch.write(contents, to: name)
        let run = await CommandRun.run(["verify", "--root", root, "--bundle-id", "x", "--environment", "Sandbox", "--kind", "transaction", file])
        #expect(run.status == 1)
        #expect(run.standardError.contains(expected))
        #expect(run.standardError.split(separator: "\n").count == 1)
    }

    @Test("a missing file, a missing root and an unknown environment are reported, not crashed on")
    func missingThings() async throws {
        let scratch = Scratch()
        let missingFile = await CommandRun.run(["decode", scratch.path("nothing.jws")])
        #expect(missingFile.status == 1)
        #expect(missingFile.standardError.contains("neither a file nor a compact JWS"))
        let missingRoot = await CommandRun.run(["verify", "--root", scratch.path("none.cer"), "--bundle-id", "x", "--environment", "Sandbox", "a.b.c"])
        #expect(missingRoot.status == 1)
        #expect(missingRoot.standardError.contains("none.cer"))
        let badEnvironment = await CommandRun.run(["verify", "--root", "r", "--bundle-id", "x", "--environment", "Staging", "a.b.c"])
        #expect(badEnvironment.status == 64)
        #expect(badEnvironment.standardError.contains("--environment must be one of"))
        let missingDirectory = await CommandRun.run(["ca", "export", scratch.path("nowhere")])
        #expect(missingDirectory.status == 1)
        #expect(missingDirectory.standardError.contains("does not exist"))
    }

    @Test("decode prints header and payload and says they are unverified")
    func decode() async throws {
        let authority = try CertificateAuthority.make()
        var transaction = JWSTransactionDecodedPayload()
        transaction.productId = "gems"
        let jws = try authority.makeSigner().sign(transaction)
        let run = await CommandRun.run(["decode", "-"], input: Data(jws.utf8))
        #expect(run.status == 0)
        #expect(run.jsonObject?["verified"] as? Bool == false)
        #expect((run.jsonObject?["payload"] as? [String: Any])?["productId"] as? String == "gems")
        #expect(((run.jsonObject?["header"] as? [String: Any])?["x5c"] as? [String])?.count == 3)
    }

    @Test("verify detects the kind of each real vector and prints its payload", .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
    func verifyDetectsKind() async throws {
        let root = SharedTestData.url("apple-vectors/apple-pki/AppleRootCA-G3.cer").path
        for (file, key) in [("00-notification-DID_RENEW.jws", "notificationType"), ("02-renewal-2000001024993299.jws", "autoRenewStatus"),
                            ("01-transaction-2000001024998954.jws", "transactionId")] {
            let run = await CommandRun.run(["verify", "--root", root, "--bundle-id", "com.loki-project.loki-messenger",
                                            "--environment", "Sandbox", SharedTestData.url("apple-vectors/real-sandbox/\(file)").path])
            #expect(run.status == 0, "\(file): \(run.standardError)")
            #expect(run.jsonObject?[key] != nil)
        }
    }

    @Test("bench verify reports the rates, the warm-cache ratio's min, median and max over rounds, on a real Apple payload",
          .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
    func benchVerify() async throws {
        let run = await CommandRun.run(["bench", "verify", "--json", "--seconds", "0.05", "--rounds", "3",
                                        "--apple-vector", SharedTestData.url("apple-vectors/real-sandbox/01-transaction-2000001024998954.jws").path,
                                        "--apple-root", SharedTestData.url("apple-vectors/apple-pki/AppleRootCA-G3.cer").path])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try #require(run.jsonObject)
        for key in ["openssl_p256_verify_per_second", "jws_verify_warm_cache_per_second", "apple_vector_cold_cache_per_second", "warm_cache_to_openssl_ratio",
                    "warm_cache_to_openssl_ratio_min", "warm_cache_to_openssl_ratio_median", "warm_cache_to_openssl_ratio_max"] {
            #expect((report[key] as? Double ?? 0) > 0, "\(key)")
        }
        let ratios = ["min", "median", "max"].map { report["warm_cache_to_openssl_ratio_\($0)"] as? Double ?? 0 }
        #expect(ratios == ratios.sorted(), "min ≤ median ≤ max: \(ratios)")
        #expect(report["rounds"] as? Int == 3)
        #expect((report["payload"] as? String)?.contains("real Apple sandbox transaction") == true)
    }

    @Test("bench renewals reports its rate beside the same run's single-thread signing rate")
    func benchRenewals() async throws {
        let run = await CommandRun.run(["bench", "renewals", "--json", "--subscribers", "20", "--storage", "memory"])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try #require(run.jsonObject)
        // 20 monthly subscribers renew 11 times in the year; the first, bought at its very start, renews
        // a twelfth time at its last instant.
        #expect(report["renewals"] as? Int == 20 * 11 + 1)
        for key in ["renewals_per_second", "sign_per_second", "renewals_to_sign_ratio"] {
            #expect((report[key] as? Double ?? 0) > 0, "\(key)")
        }
        let ratios = ["_min", "", "_max"].map { report["renewals_to_sign_ratio\($0)"] as? Double ?? 0 }
        #expect(ratios == ratios.sorted(), "min ≤ median ≤ max: \(ratios)")
        #expect(report["rounds"] as? Int == 3)
    }

    @Test("bench purchase reports one-at-a-time and concurrent rates, over rounds, beside the limit of the same rows' commit")
    func benchPurchase() async throws {
        let run = await CommandRun.run(["bench", "purchase", "--json", "--seconds", "0.05", "--rounds", "2", "--history", "10"])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try #require(run.jsonObject)
        for key in ["purchases_per_second", "concurrent_purchases_per_second", "purchase_rows_durable_commit_per_second", "ecdsa_p256_sign_per_second"] {
            #expect((report[key] as? Double ?? 0) > 0, "\(key)")
        }
        for name in ["concurrent_to_sequential_ratio", "purchase_cost_in_sign_plus_commit"] {
            let values = ["min", "median", "max"].map { report["\(name)_\($0)"] as? Double ?? 0 }
            #expect(values.allSatisfy { $0 > 0 } && values == values.sorted(), "\(name): \(values)")
        }
        #expect(report["rounds"] as? Int == 2)
        #expect(report["concurrent_purchases_in_flight"] as? Int == 8)
    }

    @Test("bench backend ingests every notification once and reports its rates beside the verification rate")
    func benchBackend() async throws {
        let run = await CommandRun.run(["bench", "backend", "--json", "--notifications", "100", "--subscribers", "300"])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try #require(run.jsonObject)
        #expect(report["notifications"] as? Int == 100)
        #expect(report["metrics_subscribers"] as? Int == 300)
        for key in ["verify_per_second", "notifications_per_second_sqlite", "sqlite_to_verify_ratio", "entitlement_reads_per_second_sqlite",
                    "metrics_year_query_ms", "metrics_cohorts_query_ms"] {
            #expect((report[key] as? Double ?? 0) > 0, "\(key)")
        }
        #expect(await CommandRun.run(["bench", "backend", "--notifications", "5"]).status == 64)
    }

    @Test("bench backend measures PostgreSQL with one and two instances when given a database",
          .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)))
    func benchBackendPostgres() async throws {
        try await PostgresCluster.with { cluster in
            let run = await CommandRun.run(["bench", "backend", "--json", "--notifications", "300", "--subscribers", "300", "--postgres", cluster.url])
            #expect(run.status == 0, "\(run.standardError)")
            let report = try #require(run.jsonObject)
            for key in ["notifications_per_second_postgres", "notifications_per_second_postgres_2", "postgres_2_to_1_ratio_median",
                        "metrics_year_query_ms_postgres"] {
                #expect((report[key] as? Double ?? 0) > 0, "\(key)")
            }
        }
    }

    @Test("bench verify refuses meaningless rounds and windows")
    func benchVerifyArguments() async throws {
        for arguments in [["--rounds", "0"], ["--rounds", "x"], ["--seconds", "-1"], ["--seconds", "1e9"]] {
            let run = await CommandRun.run(["bench", "verify"] + arguments)
            #expect(run.status != 0, "\(arguments)")
        }
    }
}
