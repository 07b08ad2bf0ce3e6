import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import StoreKitCatalog
import Testing
import TestSupport

/// `storekit backend metrics` and `metrics rebuild` over a backend that recorded a store's notifications.
struct BackendMetricsCommandTests {
    /// A backend database that recorded two subscribers' first two months (one in pounds, one refunded).
    static func recordedBackend(in scratch: Scratch) async throws -> String {
        let clock = ManualStoreClock(startingAt: TestStores.start)
        let store = try await SimulatedAppStore.create(configuration: TestStores.shop, identity: StoreIdentity(bundleId: "com.example.shop", environment: .sandbox),
                                                 authority: try CertificateAuthority.make(), storage: InMemoryLedgerStorage(), clock: clock)
        try await store.configureAccount("bob", storefront: "GBR")
        for account in ["alice", "bob"] {
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.newsLite, account: account, device: "\(account)-phone"))
        }
        _ = try await store.advanceTime(by: 40 * 86_400)
        if let bobs = try await store.ledgerTransactions(account: "bob").last { try await store.refundTransaction(bobs.id) }
        _ = try await store.advanceTime(by: 30 * 86_400)
        let path = scratch.url.appendingPathComponent("backend.sqlite").path
        let verifier = try SignedDataVerifier(rootCertificates: [store.rootCertificate], bundleId: "com.example.shop", environment: .sandbox)
        let backend = BackendService(storage: try await SQLBackendStorage.sqlite(path: path), intake: SignedDataIntake(verifier: verifier))
        for notification in try await store.notifications() {
            let answer = await backend.handle(HTTPRequest(method: "POST", path: "/apple/notifications",
                                                          body: Data(#"{"signedPayload":"\#(notification.signedPayload)"}"#.utf8)))
            #expect(answer.status == 200)
        }
        return path
    }

    @Test("backend metrics prints the days as a table and as JSON, the cohorts, and rebuild changes nothing")
    func metricsCommand() async throws {
        let scratch = Scratch()
        let database = "sqlite:" + (try await Self.recordedBackend(in: scratch))
        let table = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-31", "--to", "2026-02-02"])
        #expect(table.status == 0, "\(table.standardError)")
        let lines = table.standardOutput.split(separator: "\n")
        // The API's names, one set for the API, the command line and every CSV.
        #expect(lines.first?.hasPrefix("date") == true && lines.first?.contains("mrr.GBP") == true && lines.first?.contains("mrr.USD") == true
                && lines.first?.contains("refunds_reversed") == true && lines.first?.contains("paid_transactions") == true)
        // The rates at the foot, each with its definition; three days are too few for a churn rate per 30 days.
        #expect(lines.contains { $0.hasPrefix("churn_rate —: per 30 days") }, "\(table.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("trial_conversion_rate") } && lines.contains { $0.hasPrefix("refund_rate") })
        // News Lite, 0.99 a month, in dollars and pounds; both renewed on February 1.
        #expect(lines.contains { $0.hasPrefix("2026-02-01") && $0.contains(" 2 ") && $0.contains("0.99") }, "\(table.standardOutput)")

        let json = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-02-01", "--to", "2026-03-31", "--json"])
        let days = try #require(json.jsonObject?["days"] as? [[String: Any]])
        let february = try #require(days.first)
        #expect(february["date"] as? String == "2026-02-01" && february["renewals"] as? Int == 2 && february["active_subscriptions"] as? Int == 2)
        #expect((february["mrr"] as? [String: Double]) == ["USD": 0.99, "GBP": 0.99])
        // Bob's February period was refunded on February 10: one refund of 0.99 pounds, one subscription left.
        #expect(days.contains { ($0["refunds"] as? Int) == 1 && ($0["refunded"] as? [String: Double]) == ["GBP": 0.99] })
        #expect(days.last?["active_subscriptions"] as? Int == 1)

        let cohorts = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-03-31", "--cohorts"])
        // Two started in January; at the end of February only alice was active.
        #expect(cohorts.standardOutput.split(separator: "\n").contains { $0.hasPrefix("2026-01") && $0.contains(" 2 ") && $0.hasSuffix("50%") },
                "\(cohorts.standardOutput)")

        // The money: sales, refunds, revenue, proceeds (70% kept) and what moved MRR, a row per day and currency.
        let money = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-02-28", "--money"])
        #expect(money.status == 0, "\(money.standardError)")
        let rows = money.standardOutput.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.first == ["date", "currency", "sales", "refunded", "reversed", "prorated_refunded", "revenue", "proceeds", "mrr", "mrr_movement.new",
                               "mrr_movement.expansion", "mrr_movement.contraction", "mrr_movement.churned", "mrr_movement.reactivation"],
                "\(money.standardOutput)")
        #expect(rows.contains(["2026-01-01", "USD", "0.99", "0.00", "0.00", "0.00", "0.99", "0.69", "0.99", "0.99", "0.00", "0.00", "0.00", "0.00"]), "\(money.standardOutput)")
        #expect(rows.contains(["2026-02-01", "GBP", "0.99", "0.00", "0.00", "0.00", "0.99", "0.69", "0.99", "0.00", "0.00", "0.00", "0.00", "0.00"]), "\(money.standardOutput)")
        // Bob's refund takes the period's price off the revenue and ends his MRR the same day.
        #expect(rows.contains(["2026-02-10", "GBP", "0.00", "0.99", "0.00", "0.00", "-0.99", "-0.69", "0.00", "0.00", "0.00", "0.00", "-0.99", "0.00"]), "\(money.standardOutput)")
        let smallBusiness = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-01", "--json",
                                                  "--commission", "small-business"])
        let firstDay = try #require((smallBusiness.jsonObject?["days"] as? [[String: Any]])?.first, "\(smallBusiness.standardError)")
        #expect(firstDay["proceeds"] as? [String: Double] == ["USD": 0.84, "GBP": 0.84] && firstDay["sales"] as? [String: Double] == ["USD": 0.99, "GBP": 0.99])
        #expect((firstDay["mrr_movement"] as? [String: [String: Double]])?["new"] == ["USD": 0.99, "GBP": 0.99], "\(firstDay)")
        // Every currency added up in dollars, at a rate given on the command line or in a file.
        let inDollars = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-01", "--money",
                                              "--currency", "USD", "--rates", "GBP:1.25"])
        let dollarRows = inDollars.standardOutput.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(dollarRows.contains(["2026-01-01", "all:USD", "2.23", "0.00", "0.00", "0.00", "2.23", "1.56", "2.23", "2.23", "0.00", "0.00", "0.00", "0.00"]),
                "\(inDollars.standardOutput)\(inDollars.standardError)")
        let ratesFile = scratch.url.appendingPathComponent("rates.json")
        try Data(#"{"GBP": 1.25}"#.utf8).write(to: ratesFile)
        let fromFile = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-01", "--json",
                                             "--currency", "USD", "--rates", ratesFile.path])
        #expect((fromFile.jsonObject?["reporting"] as? [String: Any])?["rates"] as? [String: Double] == ["USD": 1, "GBP": 1.25], "\(fromFile.standardOutput)")
        let noRates = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-01", "--currency", "USD"])
        #expect(noRates.status == 64 && noRates.standardError.contains("--rates"), "\(noRates.standardError)")
        let missing = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-01", "--json",
                                            "--currency", "EUR", "--rates", "GBP:1.1"])
        #expect(missing.status != 0 && missing.standardError.contains("USD"), "\(missing.standardError)")
        // Rates are read strictly (#53): trailing text, a second colon, a repeated code or an exponent is refused, naming it.
        for (rates, named) in [("GBP:1.27abc", "GBP"), ("GBP:1:2", "GBP:1:2"), ("GBP:1.27,gbp:1.3", "twice"), ("GBP:1e120", "GBP"),
                               ("GBP:1.27,", "CODE:RATE"), (#"{"GBP": 1.2, "GBP": 1.3}"#, "twice"), (#"{"GBP": 1e120}"#, "GBP")] {
            let refused = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-01", "--money",
                                                "--currency", "USD", "--rates", rates])
            #expect(refused.status != 0 && refused.standardError.contains(named) && refused.standardOutput.isEmpty, "\(rates): \(refused.standardError)")
        }
        let both = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-01", "--cohorts", "--money"])
        #expect(both.status == 64 && both.standardError.contains("--cohorts and --money"), "\(both.standardError)")
        let program = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-01", "--commission", "indie"])
        #expect(program.status == 64 && program.standardError.contains("--commission"), "\(program.standardError)")

        let rebuild = await CommandRun.run(["backend", "metrics", "rebuild", "--database", database])
        #expect(rebuild.status == 0 && rebuild.standardOutput.hasPrefix("rebuilt the subscription rollups"), "\(rebuild.standardError)")
        let again = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-02-01", "--to", "2026-03-31", "--json"])
        #expect(again.standardOutput == json.standardOutput)

        // In Pacific days from now on: every backend on the database counts in them, and says so.
        let pacific = await CommandRun.run(["backend", "metrics", "rebuild", "--database", database, "--time-zone", "America/Los_Angeles"])
        #expect(pacific.status == 0 && pacific.standardOutput.contains("in America/Los_Angeles days"), "\(pacific.standardOutput)\(pacific.standardError)")
        let pacificTable = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-31", "--to", "2026-02-02"])
        #expect(pacificTable.standardOutput.contains("end of each day (America/Los_Angeles)"), "\(pacificTable.standardOutput)")
        // Alice and bob bought at midnight UTC on January 1: the last day of December in California.
        let december = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2025-12-31", "--to", "2025-12-31", "--json"])
        let lastOfDecember = try #require((december.jsonObject?["days"] as? [[String: Any]])?.first, "\(december.standardOutput)")
        #expect(december.jsonObject?["time_zone"] as? String == "America/Los_Angeles" && lastOfDecember["new_subscriptions"] as? Int == 2, "\(lastOfDecember)")
        let nowhere = await CommandRun.run(["backend", "metrics", "rebuild", "--database", database, "--time-zone", "Mars/Olympus_Mons"])
        #expect(nowhere.status != 0 && nowhere.standardError.contains("Mars/Olympus_Mons"), "\(nowhere.standardError)")
    }

    @Test("backend metrics refuses dates that are not days, a range backwards, and a missing --from, naming what is wrong")
    func badArguments() async throws {
        let scratch = Scratch()
        let database = "sqlite:" + scratch.url.appendingPathComponent("empty.sqlite").path
        for (arguments, words) in [(["--from", "2026-02-30", "--to", "2026-03-01"], "--from"), (["--from", "2026-03-01", "--to", "2026-02-01"], "after"),
                                   (["--to", "2026-03-01"], "--from")] {
            let run = await CommandRun.run(["backend", "metrics", "--database", database] + arguments)
            #expect(run.status == 64 && run.standardError.contains(words), "\(arguments): \(run.standardError)")
        }
        let empty = await CommandRun.run(["backend", "metrics", "--database", database, "--from", "2026-01-01", "--to", "2026-01-31"])
        #expect(empty.status == 0 && empty.standardOutput.contains("no notifications recorded yet"))
    }
}
