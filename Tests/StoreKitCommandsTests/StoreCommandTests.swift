import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreBackend
import AppStoreSimulatorSQL
import Foundation
import StoreService
import Testing
import TestSupport

/// The store commands, run in-process against a store directory.
@Suite(.timeLimit(.minutes(10)))
struct StoreCommandTests {
    static let shop = ExampleShop.file.path

    /// The n-th transaction ID of a Sandbox store: 16 digits, as Apple's.
    static func id(_ n: UInt64) -> String { String(2_000_000_000_000_000 + n) }

    static func makeStore(_ scratch: Scratch, environment: String = "Sandbox") async throws -> String {
        let directory = scratch.path("store")
        let run = await CommandRun.run(["store", "create", directory, "--config", shop, "--bundle-id", "com.example.shop",
                                        "--environment", environment, "--start", "2026-01-01"])
        #expect(run.status == 0, "\(run.standardError)")
        return directory
    }

    @Test("a Production store needs the app's Apple ID, which its data carries; --original-app-version reaches app transactions")
    func productionStoreAndOriginalVersion() async throws {
        let scratch = Scratch()
        let refused = await CommandRun.run(["store", "create", scratch.path("refused"), "--config", Self.shop, "--environment", "Production"])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("--app-apple-id"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("refused")))
        let xcode = await CommandRun.run(["store", "create", scratch.path("xcode"), "--config", Self.shop, "--app-apple-id", "1470168868"])
        #expect(xcode.status != 0, "Xcode's StoreKit Testing has no app Apple ID")

        let directory = scratch.path("production")
        let created = await CommandRun.run(["store", "create", directory, "--config", Self.shop, "--bundle-id", "com.example.shop",
                                            "--environment", "Production", "--app-apple-id", "1470168868", "--app-version", "2.0",
                                            "--original-app-version", "1.4", "--start", "2026-01-01"])
        #expect(created.status == 0, "\(created.standardError)")
        #expect(await CommandRun.run(["purchase", directory, "com.example.shop.pro", "--account", "alice", "--device", "phone"]).status == 0)
        let store = try await TestStores.open(URL(fileURLWithPath: directory))
        let root = store.rootCertificate
        let verifier = try SignedDataVerifier(rootCertificates: [root], bundleId: "com.example.shop", appAppleId: 1_470_168_868, environment: .production)
        let app = try await verifier.verifyAndDecodeAppTransaction(try await store.appTransaction(device: "phone").jws)
        #expect(app.originalApplicationVersion == "1.4")
        #expect(app.applicationVersion == "2.0")
        #expect(app.appAppleId == 1_470_168_868)
        let notification = try await verifier.verifyAndDecodeNotification(try #require(try await store.notifications().first).signedPayload)
        #expect(notification.data?.appAppleId == 1_470_168_868)
        #expect(notification.data?.environment == .production)
    }

    @Test("store create, purchase --json and the transaction views")
    func purchaseAndViews() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(scratch)
        let bought = await CommandRun.run(["purchase", store, "com.example.shop.gems.small", "--account", "alice", "--device", "phone",
                                           "--quantity", "2", "--app-account-token", "7E3FB20B-4CDB-47CC-936D-99D65F608138", "--json"])
        #expect(bought.status == 0, "\(bought.standardError)")
        let object = try #require(bought.jsonObject)
        #expect(object["result"] as? String == "success")
        let transaction = try #require(object["transaction"] as? [String: Any])
        #expect(transaction["transactionId"] as? String == Self.id(0))
        #expect(transaction["quantity"] as? Int == 2)
        #expect(transaction["appAccountToken"] as? String == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        // The printed JWS verifies against the store's exported root.
        let root = try Certificate(derRepresentation: await CommandRun.run(["ca", "export", store]).standardOutputData)
        let verifier = try SignedDataVerifier(rootCertificates: [root], bundleId: "com.example.shop", environment: .sandbox)
        #expect(try await verifier.verifyAndDecodeTransaction(try #require(object["jws"] as? String)).quantity == 2)

        _ = await CommandRun.run(["purchase", store, "com.example.shop.pro", "--account", "alice", "--device", "phone"])
        let entitlements = await CommandRun.run(["entitlements", store, "--account", "alice", "--json"])
        let entitled = try #require(try JSONSerialization.jsonObject(with: entitlements.standardOutputData) as? [[String: Any]])
        #expect(entitled.map { $0["productId"] as? String } == ["com.example.shop.pro"])
        #expect(await CommandRun.run(["finish", store, Self.id(1)]).status == 0)
        let unfinished = await CommandRun.run(["unfinished", store, "--device", "phone", "--json"])
        let waiting = try #require(try JSONSerialization.jsonObject(with: unfinished.standardOutputData) as? [[String: Any]])
        #expect(waiting.map { $0["transactionId"] as? String } == [Self.id(0)])
        let listed = await CommandRun.run(["transactions", store, "--json"])
        let all = try #require(try JSONSerialization.jsonObject(with: listed.standardOutputData) as? [[String: Any]])
        #expect(all.map { $0["finished"] as? Bool } == [false, true])
    }

    @Test("Ask to Buy, approve, refund, notifications and settings from the command line")
    func controls() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(scratch)
        #expect(await CommandRun.run(["settings", store, "askToBuyEnabled", "true"]).standardOutput.contains("askToBuyEnabled                   true"))
        let pending = await CommandRun.run(["purchase", store, "com.example.shop.pro", "--account", "kid", "--device", "ipad", "--json"])
        #expect(pending.jsonObject?["result"] as? String == "pending")
        #expect(pending.jsonObject?["transactionId"] as? String == Self.id(0))
        #expect(await CommandRun.run(["approve", store, Self.id(0)]).status == 0)
        #expect(await CommandRun.run(["refund", store, Self.id(0), "--reason", "developerIssue"]).status == 0)
        let notifications = await CommandRun.run(["notifications", store, "--json"])
        let outbox = try #require(try JSONSerialization.jsonObject(with: notifications.standardOutputData) as? [[String: Any]])
        #expect(outbox.compactMap { ($0["payload"] as? [String: Any])?["notificationType"] as? String } == ["ONE_TIME_CHARGE", "REFUND"])
        let refund = try #require((outbox.last?["payload"] as? [String: Any])?["data"] as? [String: Any])
        #expect((refund["transactionInfo"] as? [String: Any])?["revocationReason"] as? Int == 1)
        #expect(outbox.allSatisfy { ($0["signedPayload"] as? String)?.split(separator: ".").count == 3 })
        let reset = await CommandRun.run(["settings", store, "reset"])
        #expect(reset.standardOutput.contains("askToBuyEnabled                   false"))
        let failing = await CommandRun.run(["settings", store, "simulatedError.purchase", "purchase.productUnavailable"])
        #expect(failing.standardOutput.contains("simulatedError.purchase            purchase.productUnavailable"))
        let refused = await CommandRun.run(["purchase", store, "com.example.shop.gems.small"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("productUnavailable"))
    }

    @Test("customers from the command line: a purchase restriction, a purchase intent, a queued sheet response")
    func customerCommands() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(scratch)
        let restricted = await CommandRun.run(["account", store, "kid", "--purchases", "restricted", "--device", "ipad"])
        #expect(restricted.standardOutput.contains("purchases restricted"), "\(restricted.standardError)")
        let refused = await CommandRun.run(["purchase", store, "com.example.shop.pro", "--account", "kid", "--device", "ipad"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("purchaseNotAllowed"))

        let intent = await CommandRun.run(["purchase-intent", store, "ipad", "com.example.shop.pro"])
        #expect(intent.status == 0, "\(intent.standardError)")
        #expect(await CommandRun.run(["purchase-intent", store, "ipad", "no.such.product"]).status == 1)
        let queued = await CommandRun.run(["customer-response", store, "ipad", "offerCodeRedeem", "redeem-code", "FRIENDS-MONTH"])
        #expect(queued.standardOutput.contains("redeem offer code FRIENDS-MONTH"), "\(queued.standardError)")
        let misfit = await CommandRun.run(["customer-response", store, "ipad", "offerCodeRedeem", "cancel", "com.example.shop.pro"])
        #expect(misfit.status == 1)
        #expect(misfit.standardError.contains("not something a customer can do"))
        #expect(await CommandRun.run(["customer-response", store, "ipad", "nosuchsheet", "dismiss"]).status == 64)

        let opened = try await TestStores.open(URL(fileURLWithPath: store))
        let intents = try await opened.waitingUpdates(device: "ipad", channel: .purchaseIntents)
        #expect(intents.map { $0.detail?.productID } == ["com.example.shop.pro"])
        #expect(try await opened.queuedCustomerResponses(device: "ipad") == [.offerCodeRedeem: [.redeemOfferCode(referenceName: "FRIENDS-MONTH")]])
        #expect(try await opened.canMakePayments(device: "ipad") == false)
    }

    @Test("timeline writes a subscription's picture; a one-time purchase or a missing --svg is refused")
    func timelineCommand() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(scratch)
        #expect(await CommandRun.run(["purchase", store, "com.example.shop.plus.premium.monthly", "--account", "alice", "--device", "phone"]).status == 0)
        #expect(await CommandRun.run(["purchase", store, "com.example.shop.pro", "--account", "alice", "--device", "phone"]).status == 0)
        #expect(await CommandRun.run(["advance", store, "P2M"]).status == 0)
        let file = scratch.path("plan.svg")
        let drawn = await CommandRun.run(["timeline", store, Self.id(0), "--svg", file])
        #expect(drawn.status == 0, "\(drawn.standardError)")
        #expect(drawn.standardOutput.contains("3 periods"))
        let svg = try String(contentsOfFile: file, encoding: .utf8)
        #expect(svg.hasPrefix("<svg") && svg.components(separatedBy: #"class="period "#).count - 1 == 3)
        let oneTime = await CommandRun.run(["timeline", store, Self.id(1), "--svg", scratch.path("pro.svg")])
        #expect(oneTime.status == 1 && oneTime.standardError.contains("not a transaction of an auto-renewable subscription"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("pro.svg")))
        #expect(await CommandRun.run(["timeline", store, Self.id(0)]).status == 64)
    }

    @Test("backend key create and backend reconcile: a backend that heard nothing records the store's notifications from its history")
    func backendReconcile() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(scratch)
        #expect(await CommandRun.run(["purchase", store, "com.example.shop.pro", "--account", "alice", "--device", "phone",
                                      "--app-account-token", "0a1b2c3d-0000-4000-8000-000000000001"]).status == 0)
        #expect(await CommandRun.run(["purchase", store, "com.example.shop.plus.premium.monthly", "--account", "alice", "--device", "phone",
                                      "--app-account-token", "0a1b2c3d-0000-4000-8000-000000000001"]).status == 0)
        let keyFile = try scratch.write(await CommandRun.run(["api-key", "create", store, "--json"]).standardOutput, to: "key.json")
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(await CommandRun.run(["ca", "export", store, "--pem"]).standardOutput.utf8).write(to: root)
        let database = "sqlite:" + scratch.path("backend.sqlite")
        let key = await CommandRun.run(["backend", "key", "create", "--database", database])
        #expect(key.status == 0 && key.standardOutput.hasPrefix("osk_"))
        // Keys are listed by id and label, never shown again, and revoked by id.
        let spare = await CommandRun.run(["backend", "key", "create", "--database", database, "--label", "spare"])
        let listed = await CommandRun.run(["backend", "key", "list", "--database", database])
        #expect(listed.status == 0 && listed.standardOutput.contains("  service") && listed.standardOutput.contains("  spare"), "\(listed.standardOutput)")
        #expect(!listed.standardOutput.contains(key.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
        let spareID = try #require(listed.standardOutput.split(separator: "\n").first { $0.hasSuffix("spare") }?.split(separator: " ").first.map(String.init))
        #expect(await CommandRun.run(["backend", "key", "revoke", "--database", database, "00000000"]).status != 0, "no key has that id")
        let revoked = await CommandRun.run(["backend", "key", "revoke", "--database", database, spareID])
        #expect(revoked.status == 0 && revoked.standardOutput.contains("revoked \(spareID) (spare)"), "\(revoked.standardError)")
        let after = await CommandRun.run(["backend", "key", "list", "--database", database]).standardOutput
        #expect(after.contains("  service") && !after.contains("  spare"))
        #expect(!spare.standardOutput.isEmpty)
        // A password on the command line is readable in the process list by every local user for the
        // process's life: refused, naming the ways that keep it off the command line (#53).
        for url in ["postgres://user:secret@localhost/db?host=\(scratch.path("no-socket"))", "postgresql://user@localhost/db?password=secret"] {
            let exposed = await CommandRun.run(["backend", "key", "create", "--database", url])
            #expect(exposed.status == 64, "\(exposed.standardError)")
            #expect(["holds a password", "STOREKIT_BACKEND_DATABASE", "--database-file", "PGPASSFILE"].allSatisfy(exposed.standardError.contains),
                    "\(exposed.standardError)")
        }
        for arguments in [["store", "create", "--database", "postgres://u:secret@localhost/db", "--config", "x.storekit"],
                          ["serve", "--database", "postgres://u:secret@localhost/db"]] {
            let exposed = await CommandRun.run(arguments)
            #expect(exposed.status == 64 && ["holds a password", "STOREKIT_STORE_DATABASE", "--database-file", "PGPASSFILE"].allSatisfy(exposed.standardError.contains),
                    "\(arguments): \(exposed.standardError)")
        }
        let positional = await CommandRun.run(["purchase", "postgres://u:secret@localhost/db", "com.example.shop.pro", "--account", "a", "--device", "d"])
        #expect(positional.status != 0 && positional.standardError.contains("PGPASSFILE"), "\(positional.standardError)")
        // In a file only its owner can read, the URL (password and all) stays off the command line.
        let urlFile = try scratch.write("postgres://user:secret@localhost/db?host=\(scratch.path("no-socket"))\n", to: "database-url")
        #expect(chmod(urlFile, 0o644) == 0)
        let readable = await CommandRun.run(["backend", "key", "create", "--database-file", urlFile])
        #expect(readable.status != 0 && readable.standardError.contains("can be read by other users") && readable.standardError.contains("chmod 600"),
                "\(readable.standardError)")
        #expect(chmod(urlFile, 0o600) == 0)
        let fromFile = await CommandRun.run(["backend", "key", "create", "--database-file", urlFile])
        #expect(fromFile.status != 0, "no server listens there")
        #expect(!fromFile.standardError.contains("warning"), "\(fromFile.standardError)")
        let sqliteFile = try scratch.write(database + "\n", to: "sqlite-url")
        #expect(chmod(sqliteFile, 0o600) == 0)
        #expect(await CommandRun.run(["backend", "key", "list", "--database-file", sqliteFile]).standardOutput.contains("  service"))

        // A key file other users can read is refused, naming the chmod that fixes it (#53).
        let exposedKey = await CommandRun.run(["backend", "reconcile", "--database", database, "--bundle-id", "com.example.shop", "--root", root.path,
                                               "--key-file", keyFile])
        #expect(exposedKey.status == 64 && exposedKey.standardError.contains("can be read by other users") && exposedKey.standardError.contains("chmod 600"),
                "\(exposedKey.standardError)")
        #expect(chmod(keyFile, 0o600) == 0)
        let opened = try await TestStores.open(URL(fileURLWithPath: store))
        try await StoreServer.serving(opened) { server in
            let arguments = ["backend", "reconcile", "--database", database, "--bundle-id", "com.example.shop", "--environment", "Sandbox",
                             "--root", root.path, "--key-file", keyFile, "--api-url", server.url.absoluteString, "--until", "2026-01-02T00:00:00Z"]
            let first = await CommandRun.run(arguments)
            #expect(first.status == 0, "\(first.standardError)")
            #expect(first.standardOutput.contains("listed 2 notifications; recorded 2"))
            #expect(await CommandRun.run(arguments).standardOutput.contains("recorded 0"))
        }
        // On the store's clock (2026-01-02), not the machine's: the monthly plan has not expired there.
        let entitlements = try await CustomerLedger(storage: try await SQLBackendStorage.sqlite(path: scratch.path("backend.sqlite")),
                                                    now: { TestStores.start.addingTimeInterval(86_400) })
            .entitlements(customer: "0a1b2c3d-0000-4000-8000-000000000001")
        #expect(Set(entitlements.map(\.productId)) == ["com.example.shop.pro", "com.example.shop.plus.premium.monthly"])
        let notAKey = try scratch.write(try String(contentsOf: root, encoding: .utf8), to: "not-a-key.json")
        #expect(chmod(notAKey, 0o600) == 0)
        let badKey = await CommandRun.run(["backend", "reconcile", "--database", database, "--bundle-id", "com.example.shop", "--root", root.path,
                                           "--key-file", notAKey])
        #expect(badKey.status == 1 && badKey.standardError.contains("is not an API key file"))
        #expect(await CommandRun.run(["backend", "serve", "--database", database, "--bundle-id", "com.example.shop"]).status == 64)
    }

    @Test("subscription commands: advance, status, renewal, price increase, expire, force-renew, extend")
    func subscriptions() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(scratch)
        _ = await CommandRun.run(["purchase", store, "com.example.shop.news.lite", "--account", "alice", "--device", "phone"])
        let advanced = await CommandRun.run(["advance", store, "P1Y"])
        #expect(advanced.standardOutput == "now 2027-01-01T00:00:00Z; 12 events played\n")
        #expect(await CommandRun.run(["now", store]).standardOutput == "2027-01-01T00:00:00Z\n")
        let status = await CommandRun.run(["status", store, "21000002", "--account", "alice", "--json"])
        let statuses = try #require(try JSONSerialization.jsonObject(with: status.standardOutputData) as? [[String: Any]])
        #expect(statuses.first?["state"] as? String == "subscribed")
        #expect((statuses.first?["renewalInfo"] as? [String: Any])?["autoRenewStatus"] as? Int == 1)
        #expect(await CommandRun.run(["price-increase", store, Self.id(0), "request"]).status == 0)
        #expect(await CommandRun.run(["price-increase", store, Self.id(0), "agree"]).status == 0)
        #expect(await CommandRun.run(["extend", store, Self.id(0), "--days", "5"]).status == 0)
        #expect(await CommandRun.run(["force-renew", store, "com.example.shop.news.lite", "--account", "alice"]).status == 0)
        #expect(await CommandRun.run(["renewal", store, Self.id(0), "--auto-renew", "off"]).status == 0)
        #expect(await CommandRun.run(["expire", store, "com.example.shop.news.lite", "--account", "alice"]).status == 0)
        let human = await CommandRun.run(["status", store, "21000002", "--account", "alice"])
        #expect(human.standardOutput.hasPrefix("expired: "))
        let kinds = await CommandRun.run(["notifications", store])
        #expect(kinds.standardOutput.contains("PRICE_INCREASE/PENDING") && kinds.standardOutput.contains("RENEWAL_EXTENDED")
                && kinds.standardOutput.contains("EXPIRED/VOLUNTARY"))
        let backdated = await CommandRun.run(["purchase", store, "com.example.shop.news.plus", "--account", "bob", "--outside-app",
                                              "--purchase-date", "2026-10-01"])
        #expect(backdated.status == 0, "\(backdated.standardError)")
        let bobs = await CommandRun.run(["transactions", store, "--account", "bob"])
        #expect(bobs.standardOutput.split(separator: "\n").count == 4)
    }

    @Test("bad store directories and arguments: one clear line, non-zero status, nothing changed")
    func badInput() async throws {
        let scratch = Scratch()
        let missing = await CommandRun.run(["transactions", scratch.path("nope")])
        #expect(missing.status == 1)
        #expect(missing.standardError == "error: storage: \(scratch.path("nope")) does not exist or is not a directory\n")
        let plain = scratch.path("plain")
        try FileManager.default.createDirectory(atPath: plain, withIntermediateDirectories: true)
        let notStore = await CommandRun.run(["purchase", plain, "x"])
        #expect(notStore.status == 1 && notStore.standardError.contains("is not a store directory"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: plain).isEmpty)
        let corrupt = scratch.path("corrupt")
        try FileManager.default.createDirectory(atPath: corrupt, withIntermediateDirectories: true)
        let junk = Data(repeating: 7, count: 8192)
        try junk.write(to: URL(fileURLWithPath: corrupt).appendingPathComponent("store.sqlite"))
        let damaged = await CommandRun.run(["transactions", corrupt])
        #expect(damaged.status == 1 && damaged.standardError.contains("is not a store database"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: corrupt).appendingPathComponent("store.sqlite")) == junk)
        let store = try await Self.makeStore(scratch)
        #expect(await CommandRun.run(["store", "create", store, "--config", Self.shop]).standardError.contains("already holds a store"))
        #expect(await CommandRun.run(["refund", store, "abc"]).status == 64)
        let unknown = await CommandRun.run(["refund", store, "42"])
        #expect(unknown.status == 1 && unknown.standardError == "error: SKTestError.noTransactionFound: no transaction 42\n")
        #expect(await CommandRun.run(["purchase", store, "com.example.shop.gems.small", "--offer", "bogus"]).status == 64)
    }
}

@Suite(.timeLimit(.minutes(10)))
struct OfferSignatureCommandTests {
    @Test("offer-signature prints arguments that purchase accepts, in both signature forms")
    func signAndRedeem() async throws {
        let scratch = Scratch()
        let store = try await StoreCommandTests.makeStore(scratch)
        _ = await CommandRun.run(["purchase", store, "com.example.shop.plus.premium.monthly", "--account", "alice", "--device", "phone"])
        _ = await CommandRun.run(["expire", store, "com.example.shop.plus.premium.monthly", "--account", "alice"])
        for form in [[], ["--jws"]] {
            let signed = await CommandRun.run(["offer-signature", store, "com.example.shop.plus.premium.monthly", "premium.monthly.firstmonth"] + form)
            #expect(signed.status == 0, "\(signed.standardError)")
            let arguments = signed.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ").map(String.init)
            let bought = await CommandRun.run(["purchase", store, "com.example.shop.plus.premium.monthly", "--account", "alice", "--device", "phone", "--json"] + arguments)
            #expect(bought.status == 0, "\(bought.standardError)")
            #expect((bought.jsonObject?["transaction"] as? [String: Any])?["offerIdentifier"] as? String == "premium.monthly.firstmonth")
            _ = await CommandRun.run(["expire", store, "com.example.shop.plus.premium.monthly", "--account", "alice"])
        }
        let tampered = await CommandRun.run(["purchase", store, "com.example.shop.plus.premium.monthly", "--account", "alice", "--device", "phone",
                                             "--offer", "promotional:premium.monthly.firstmonth", "--signature", "MEUCIQ==", "--key-id", "9C3B1A77",
                                             "--nonce", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "--timestamp", "1"])
        #expect(tampered.status == 1 && tampered.standardError.contains("invalidOfferSignature"))
    }
}
