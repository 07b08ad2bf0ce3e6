import AppStoreBackend
import AppStoreSimulator
import Foundation
import HTTPService
import Testing
import TestSupport

/// The backend's dashboard in a real headless Chromium (Debian's, driven over WebDriver by
/// `Tests/Browser/dashboard_checks.py`), served over HTTP after a scripted year: sign-in, the figures
/// against `/v1/metrics`, the charts, the cohort heat map, phone width and axe-core. Its screenshots
/// are the README's (`docs/screenshots/dashboard*.png`).
@Suite(.timeLimit(.minutes(10)))
struct DashboardBrowserTests {
    static let chromium = URL(fileURLWithPath: "/usr/bin/chromium")
    static let chromedriver = URL(fileURLWithPath: "/usr/bin/chromedriver")
    static let available = FileManager.default.isExecutableFile(atPath: chromium.path)
        && FileManager.default.isExecutableFile(atPath: chromedriver.path)

    @Test("the dashboard in Chromium: sign-in, figures equal to the API, charts, cohorts, 390 px, no accessibility violation",
          .enabled(if: available, "Chromium or chromedriver is not installed (scripts/bootstrap installs Debian's chromium and chromium-driver)"))
    func dashboard() async throws {
        let axe: URL
        switch await AxeCore.script() {
        case .success(let script): axe = script
        case .failure(let reason):
            print("skipping the dashboard's browser check: \(reason)")
            withKnownIssue("axe-core could not be installed here") { throw reason }
            return
        }
        let year = try AnalyticsYear(subscribers: 200)
        try await year.play(seed: 390)
        let bodies = try await year.notificationBodies()
        // A subscriber with something bought: found on the customer page by token and by a purchase.
        let account = try #require(await year.subscriberWithPurchases())
        let original = try #require(try await year.store.ledgerTransactions(account: account).first?.originalID)
        try await BackendScenario.withStorage(engine: .sqlite) { storage in
            var service = try year.service(on: storage)
            // Every amount also in dollars, at a rate for pounds.
            service.reporting = try ReportingCurrency(currency: "USD", rates: ["GBP": 1.25, "EUR": 1.1])
            // The customer page links each transaction to the store's page of it (nothing answers there: only the links are checked).
            let storePages = "http://127.0.0.1:9"
            service.storePages = URL(string: storePages)
            try await AnalyticsYear.deliver(bodies, to: service)
            let server = try HTTPServer(host: "127.0.0.1", port: 0, handler: service.router(listeningAddress: "127.0.0.1").handler)
            let screenshots = SharedTestData.packageRoot.appendingPathComponent("docs/screenshots")
            let script = SharedTestData.packageRoot.appendingPathComponent("Tests/Browser/dashboard_checks.py")
            let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                 ["python3", "-u", script.path, server.url.absoluteString, BackendScenario.serviceKey, screenshots.path,
                                                  Self.chromium.path, Self.chromedriver.path, axe.path,
                                                  BackendScenario.token(account).uuidString.uppercased(), String(original), "GBP:1.25,EUR:1.1", storePages])
            await server.stop()
            let line = run.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
            let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let report = try #require(parsed, "the browser script (exit \(run.status)) said: \(run.standardOutput)\n\(run.standardError)")
            #expect(report["ok"] as? Bool == true, "\(report)")
            #expect((report["refusal"] as? String ?? "").contains("not one of this backend's keys"))
            let charts = report["charts"] as? [String] ?? []
            #expect(Set(charts) == ["mrr-all", "revenue-all", "mrr-movement-all", "mrr-eur", "mrr-gbp", "mrr-usd", "revenue-eur", "revenue-gbp", "revenue-usd",
                                    "mrr-movement-eur", "mrr-movement-gbp", "mrr-movement-usd", "active", "trials", "churn"],
                    "\(charts)")
            // Item 6: the reporting currency converts the cards and charts (first), the default range starts
            // with the first subscriber, the filters show one product or group, MRR after fits at 1400 px.
            #expect(report["firstChart"] as? String == "mrr-all", "\(report["firstChart"] ?? "")")
            #expect(report["mrrAll"] as? String != nil && report["arrAll"] as? String != nil, "\(report)")
            #expect(report["churnShown"] as? String != "—", "\(report["churnShown"] ?? "")")
            #expect(report["thinBars"] as? Int == 0, "no bar narrower than 2 px: \(report["thinBars"] ?? "")")
            let filtered = try #require(report["filtered"] as? [String: [String: String]], "\(report)")
            #expect(filtered.count == 2, "\(filtered)")
            #expect(filtered["product"]?["scope"]?.hasPrefix("Only ") == true, "\(filtered)")
            // Item 8: the customer page at 390 px.
            let phone = try #require(report["customerPhone"] as? [String: Any], "\(report)")
            #expect((phone["rows"] as? Int ?? 0) >= 1 && (phone["hidden"] as? [String])?.isEmpty == true, "\(phone)")
            #expect((phone["prices"] as? [String])?.allSatisfy { $0.range(of: #"^\d+\.\d\d [A-Z]{3}$"#, options: .regularExpression) != nil } == true, "\(phone)")
            #expect((phone["storefrontLine"] as? String)?.hasPrefix("Storefront: ") == true, "\(phone)")
            let money = try #require(report["money"] as? [String: [String: String]], "\(report)")
            #expect(Set(money.keys) == ["EUR", "GBP", "USD", "all in USD"], "\(money)")
            // The customer page: by token (upper case, as pages show it) and by a purchase, the same customer.
            let customer = try #require(report["customer"] as? [String: Any], "\(report)")
            let byTransaction = try #require(report["byTransaction"] as? [String: Any], "\(report)")
            #expect(customer["customer"] as? String == BackendScenario.token(account).uuidString.lowercased())
            #expect(byTransaction["customer"] as? String == customer["customer"] as? String)
            #expect((customer["transactions"] as? [String] ?? []).contains(String(original)), "\(customer)")
            #expect((report["nobody"] as? String ?? "").contains("No customer or purchase matches"), "\(report)")
            #expect((report["cohorts"] as? Int ?? 0) >= 6)
            #expect(report["signedOut"] as? Bool == true)
            // A server on another port caught the session cookie from Chromium; replayed, it opened nothing (#53).
            #expect((report["replayed"] as? [String: Int])?.count == 4, "\(report)")
            // Exports, presets, grouping and a range too long.
            let csv = try #require(report["csv"] as? [String: Any], "\(report)")
            #expect(csv["dailyStatus"] as? Int == 200 && (csv["dailyType"] as? String)?.hasPrefix("text/csv") == true, "\(csv)")
            #expect((csv["dailyHeader"] as? [String])?.prefix(3) == ["date", "active_subscriptions", "trials"], "\(csv)")
            #expect(csv["dailyRows"] as? Int == 14, "a row per day of the 14 days shown: \(csv)")
            #expect((csv["cohortRows"] as? Int ?? 0) >= 6, "\(csv)")
            #expect(csv["moneyRows"] as? Int == 4 && (csv["moneyHeader"] as? [String])?.prefix(3) == ["currency", "revenue", "proceeds"], "\(csv)")
            let preset = try #require(report["preset30"] as? [String])
            let range = try #require(report["range"] as? [String])
            let lastDay = try #require(range.last.flatMap(CalendarDay.init))
            #expect(preset == [lastDay.adding(days: -29).description, lastDay.description], "\(preset)")
            let byMonth = try #require(report["byMonth"] as? [String: Any])
            #expect((byMonth["desc"] as? String)?.hasPrefix("Sums by month") == true, "\(byMonth)")
            #expect((byMonth["ticks"] as? [String])?.contains { $0.range(of: #"^[A-Z][a-z]{2} 20\d\d$"#, options: .regularExpression) != nil } == true,
                    "month labels carry their year: \(byMonth)")
            let tooLong = try #require(report["tooLong"] as? [String: Any])
            #expect((tooLong["alert"] as? String)?.contains("at most") == true && tooLong["form"] as? Bool == true, "\(tooLong)")
            #expect((tooLong["presets"] as? Int ?? 0) == 4 && (tooLong["figures"] as? Int ?? 0) > 0, "the usual days instead, with a way on: \(tooLong)")
            let axeReport = report["axe"] as? [String: [[String: Any]]] ?? [:]
            #expect(Set(axeReport.keys) == ["sign-in", "dashboard-light", "dashboard-dark", "dashboard-phone", "dashboard-phone-dark", "customer-light",
                                            "customer-dark", "customer-phone", "customer-phone-dark", "customer-1400-light", "customer-1400-dark"])
            for (page, violations) in axeReport.sorted(by: { $0.key < $1.key }) {
                #expect(violations.isEmpty, "axe on \(page): \(violations)")
            }
            for name in ["dashboard.png", "dashboard-phone.png"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: screenshots.appendingPathComponent(name).path)
                #expect((attributes[.size] as? NSNumber)?.intValue ?? 0 > 10_000, "\(name) was written")
            }
        }
    }
}
