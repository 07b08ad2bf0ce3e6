import AppStoreBackend
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import StoreService
import Synchronization
import Testing
import TestSupport

/// The storefront and the Transaction Manager in a real headless Chromium (Debian's, driven over
/// WebDriver by `Tests/Browser/store_pages.py`), against a served store with an app connected over
/// HTTP: what is bought and refunded in the browser reaches the app through `Transaction.updates`.
/// The screenshots it takes are the README's (`docs/screenshots/`).
@Suite(.timeLimit(.minutes(10)))
struct BrowserPagesTests {
    static let chromium = URL(fileURLWithPath: "/usr/bin/chromium")
    static let chromedriver = URL(fileURLWithPath: "/usr/bin/chromedriver")
    static let available = FileManager.default.isExecutableFile(atPath: chromium.path)
        && FileManager.default.isExecutableFile(atPath: chromedriver.path)
    static let skipReason: Comment = "Chromium or chromedriver is not installed (scripts/bootstrap installs Debian's chromium and chromium-driver)"

    @Test("buy on the storefront, refund and approve in the Transaction Manager, advance the clock, open a timeline — in Chromium",
          .enabled(if: available, skipReason))
    func storefrontAndTransactionManager() async throws {
        try await withServedStore(phoneAccount: nil) { store, server in
            try await store.configureAccount("kid", askToBuy: true)
            try await store.addDevice("ipad", account: "kid")

            // The app on alice's phone, in this process, listening as a StoreKit app does.
            let phone = try await StoreClient.connect(server: server.url, device: "phone", account: "alice")
            let heard = Mutex<[(id: UInt64, product: String, revoked: Bool)]>([])
            let listener = Task {
                for await result in phone.transactionUpdates {
                    let transaction = result.unsafePayloadValue
                    heard.withLock { $0.append((transaction.id, transaction.productID, transaction.revocationDate != nil)) }
                }
            }
            defer { listener.cancel() }

            let script = SharedTestData.packageRoot.appendingPathComponent("Tests/Browser/store_pages.py")
            let screenshots = SharedTestData.packageRoot.appendingPathComponent("docs/screenshots")
            let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                 ["python3", "-u", script.path, server.url.absoluteString, screenshots.path, Self.chromium.path, Self.chromedriver.path])
            let line = run.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
            let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let report = try #require(parsed, "the browser script (exit \(run.status)) said: \(run.standardOutput)\n\(run.standardError)")
            #expect(report["ok"] as? Bool == true, "\(report)")
            #expect(report["storefrontMessage"] as? String == "Bought Pro Unlock.")
            #expect((report["renewals"] as? Int ?? 0) >= 1)
            #expect((report["timelinePeriods"] as? Int ?? 0) >= 3)
            #expect((report["timelineStretches"] as? Int ?? 0) >= 1, "the billing problem shows as a grace or retry stretch")
            #expect(report["liveTransaction"] as? Int != nil, "a purchase made through the admin API appeared in the open page")
            let pro = try #require(report["proTransaction"] as? Int)

            // The app heard the storefront's purchase and the Transaction Manager's refund.
            try await eventually("the app heard the refund") { heard.withLock { $0.contains { $0.id == UInt64(pro) && $0.revoked } } }
            let updates = heard.withLock { $0 }.filter { $0.id == UInt64(pro) }
            #expect(updates.map(\.revoked) == [false, true], "the purchase, then its refund, through Transaction.updates: \(updates)")
            for name in ["storefront.png", "transaction-manager.png", "timeline.png"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: screenshots.appendingPathComponent(name).path)
                #expect((attributes[.size] as? NSNumber)?.intValue ?? 0 > 10_000, "\(name) was written")
            }
        }
    }

    @Test("a page of another origin in Chromium changes nothing in the store or the backend, and neither answers to its address under another name",
          .enabled(if: available, skipReason))
    func attackFromAnotherOrigin() async throws {
        try await withServedStore { store, server in
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
            let before = try await store.ledgerTransactions()
            let clock = try await store.currentTime()
            // The backend, trusting the store, and a real notification of the store's that the page tries to deliver.
            let scratch = Scratch()
            let storage = try await SQLBackendStorage.sqlite(path: scratch.url.appendingPathComponent("backend.sqlite").path)
            let identity = store.identity
            let backend = BackendService(storage: storage, intake: SignedDataIntake(verifier: try SignedDataVerifier(
                rootCertificates: [store.rootCertificate], bundleId: identity.bundleId, environment: identity.environment)))
            let notification = try #require(try await store.notifications().first.map { #"{"signedPayload":"\#($0.signedPayload)"}"# },
                                            "the purchase left a notification in the outbox")
            let backendServer = try HTTPServer(handler: backend.router(listeningAddress: "127.0.0.1").handler)
            // The attacker's site: another port on 127.0.0.1, serving Tests/Browser/attack.html.
            let page = try Data(contentsOf: SharedTestData.packageRoot.appendingPathComponent("Tests/Browser/attack.html"))
            try await HTTPServer.serving(handler: { _ in HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: page) }) { attacker in
                var address = URLComponents(string: "\(attacker.url.absoluteString)/attack.html")!
                address.queryItems = [URLQueryItem(name: "store", value: server.url.absoluteString),
                                      URLQueryItem(name: "backend", value: backendServer.url.absoluteString),
                                      URLQueryItem(name: "notification", value: notification)]
                let script = SharedTestData.packageRoot.appendingPathComponent("Tests/Browser/attack_pages.py")
                let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                     ["python3", "-u", script.path, Self.chromium.path, Self.chromedriver.path, address.url!.absoluteString,
                                                      "http://rebind.attacker.test:\(server.port)", "http://rebind.attacker.test:\(backendServer.port)", notification])
                let line = run.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
                let report = try #require(try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                                          "the attack script (exit \(run.status)) said: \(run.standardOutput)\n\(run.standardError)")
                #expect(report["ok"] as? Bool == true, "\(report)")
                #expect(report["attackFinished"] as? Bool == true)
                #expect((report["rebindPage"] as? String)?.contains("forbiddenHost") == true, "\(report)")
                #expect(report["rebindDelete"] as? Int == 403, "\(report)")
                #expect(report["backendRebindNotification"] as? Int == 403, "\(report)")
            }
            await backendServer.stop()
            #expect(try await store.ledgerTransactions() == before, "nothing deleted, refunded or bought")
            #expect(try await store.currentTime() == clock, "the clock did not move")
            #expect(try await storage.notificationCount() == 0, "the backend recorded nothing")
            // The notification was one the backend takes from the store itself: only where it came from stopped it.
            let delivered = await backend.handle(HTTPRequest(method: "POST", path: "/apple/notifications",
                                                             headers: ["content-type": "application/json"], body: Data(notification.utf8)))
            #expect(delivered.status == 200, "\(String(decoding: delivered.body, as: UTF8.self))")
            #expect(try await storage.notificationCount() == 1)
        }
    }

    /// Runs a script of `Tests/Browser` and returns its last line's JSON report.
    /// Runs a `Tests/Browser` script (with `python`, such as the one Apple's library is installed in,
    /// or the system's) and answers the JSON object of its last line.
    static func runBrowserScript(_ name: String, _ arguments: [String], python: URL? = nil) async throws -> [String: Any] {
        let script = SharedTestData.packageRoot.appendingPathComponent("Tests/Browser/\(name)")
        let run = try await ChildProcess.run(python ?? URL(fileURLWithPath: "/usr/bin/env"),
                                             (python == nil ? ["python3"] : []) + ["-u", script.path] + arguments)
        let line = run.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
        let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return try #require(parsed, "\(name) (exit \(run.status)) said: \(run.standardOutput)\n\(run.standardError)")
    }

    @Test("the pages show what people open them for: subscription states, filters, search, Ask to Buy, live storefront, error pages, a readable timeline; axe finds nothing, light and dark",
          .enabled(if: available, skipReason))
    func pagesShowWhatTheyAreFor() async throws {
        let axe: URL
        switch await AxeCore.script() {
        case .success(let script): axe = script
        case .failure(let reason):
            print("skipping the accessibility check: \(reason)")
            withKnownIssue("axe-core could not be installed here") { throw reason }
            return
        }
        try await withServedStore { store, server in
            try await store.configureAccount("kid", askToBuy: true)
            try await store.addDevice("ipad", account: "kid")
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone"))
            let screenshots = SharedTestData.packageRoot.appendingPathComponent("docs/screenshots")
            let report = try await Self.runBrowserScript("page_checks.py", [server.url.absoluteString, screenshots.path, Self.chromium.path,
                                                                            Self.chromedriver.path, axe.path])
            #expect(report["ok"] as? Bool == true, "\(report)")
            #expect((report["renewalOffText"] as? String)?.contains("Will not renew") == true)
            #expect((report["priceIncreaseText"] as? String)?.contains("waiting for the customer's consent") == true)
            #expect((report["refundText"] as? String)?.contains("Refunded") == true)
            #expect((report["refundText"] as? String)?.contains("other reason") == true)
            #expect((report["refundedActions"] as? [String])?.contains("refund") == false, "a refunded row offers no second refund")
            #expect((report["expiredText"] as? String)?.contains("expired") == true)
            #expect((report["offerText"] as? String)?.contains("introductory offer") == true)
            #expect((report["graceText"] as? String)?.contains("in grace period") == true)
            #expect((report["billingRetryText"] as? String)?.contains("in billing retry") == true)
            let counts = try #require(report["stateFilterCounts"] as? [String: Int])
            for state in ["purchased", "pendingApproval", "declined", "interrupted", "refunded", "revoked", "upgraded", "expired"] {
                #expect((counts[state] ?? 0) >= 1, "the \(state) filter shows rows: \(counts)")
            }
            #expect((report["searchByID"] as? [Int])?.count == 1)
            #expect(report["searchByProduct"] as? [String] == [ExampleShop.potion])
            #expect(report["waitingBadge"] as? String == "Waiting for approval")
            #expect((report["waitingButtonName"] as? String)?.hasPrefix("Requested") == true, "the accessible name starts with the visible label")
            #expect(report["pendingRequestsForPro"] as? Int == 1, "asking twice makes one request")
            let unknown = try #require(report["unknownDevicePage"] as? [String])
            #expect(unknown == ["text/html", "No such device"])
            #expect(report["nobodyCreated"] as? Bool == false, "a GET created nothing")
            // The account form: a device of another account is refused beside the field, and nothing is made.
            let formError = try #require(report["accountFormError"] as? [Any?])
            #expect((formError.first as? String)?.contains("device phone is signed in to account alice") == true, "\(formError)")
            #expect(formError.count == 3 && formError[1] as? String == "true" && formError[2] as? String == "account-devices", "\(formError)")
            #expect(report["carolCreated"] as? Bool == false, "no account without its devices")
            #expect((report["unknownTimelinePage"] as? [String])?.first == "text/html")
            let timeline = try #require(report["timeline"] as? [String: Any])
            #expect((timeline["smallest"] as? Double ?? 0) >= 11, "labels stay readable at 390 px: \(timeline)")
            #expect(timeline["viewport"] as? Int == 390)
            #expect((timeline["legend"] as? Int ?? 0) >= 5)
            #expect((timeline["fits"] as? Bool) == true, "the picture fits its box at 390 px: \(timeline)")
            // The picture follows the scheme.
            #expect(report["timelineBackground-light"] as? String == "rgb(255, 255, 255)")
            #expect(report["timelineBackground-dark"] as? String == "rgb(26, 32, 41)", "\(report["timelineBackground-dark"] ?? "")")
            // Dense rows: one line of buttons, the rest in a menu; price and storefront shown.
            let dense = try #require(report["denseRows"] as? [String: Any])
            #expect((dense["medianHeight"] as? Double ?? 999) <= 80, "rows are compact (they were 217 px): \(dense)")
            #expect((dense["tallest"] as? Double ?? 999) <= 160, "\(dense)")
            #expect(dense["menuClosed"] as? Bool == true && (dense["visibleButtons"] as? [String])?.contains("More") == true, "\(dense)")
            #expect((dense["visibleButtons"] as? [String])?.contains("Refund") == false, "the refund waits in the menu: \(dense)")
            #expect((dense["price"] as? String)?.contains("USD") == true && dense["storefront"] as? String == "USA", "\(dense)")
            // A purchase's page tells its whole story.
            let purchase = try #require(report["purchasePage"] as? [String: Any])
            #expect((purchase["transaction"] as? String)?.contains("\"transactionId\"") == true, "\(purchase)")
            #expect((purchase["renewal"] as? String)?.contains("\"autoRenewStatus\"") == true, "\(purchase)")
            #expect((purchase["notifications"] as? [String])?.contains { $0.hasPrefix("DID_FAIL_TO_RENEW") } == true, "\(purchase)")
            #expect(purchase["timeline"] as? Bool == true)
            // At 390 px: a visible way to sort, and Tab lands only on what a person can see.
            #expect(report["sortVisibleAt390"] as? Bool == true)
            #expect((report["sortedAt390"] as? [String])?.isEmpty == false)
            #expect((report["invisibleFocus"] as? [String]) == [], "\(report["invisibleFocus"] ?? "")")
            let axeReport = try #require(report["axe"] as? [String: [[String: Any]]])
            #expect(axeReport.count == 12)
            for (page, violations) in axeReport.sorted(by: { $0.key < $1.key }) {
                #expect(violations.isEmpty, "axe on \(page): \(violations)")
            }
            // The approval reached alice's family member through the store, and kid owns Pro once.
            #expect(try await store.ledgerTransactions(account: "kid").filter { $0.productID == ExampleShop.pro && $0.isPurchased }.count == 1)
            for page in ["transaction-manager", "storefront"] {
                for variant in ["1400-light", "1400-dark", "390-light", "390-dark"] {
                    let path = screenshots.appendingPathComponent("\(page)-\(variant).png").path
                    #expect(((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0 > 10_000, "\(path)")
                }
            }
        }
    }

    @Test("what customers read, in Chromium at 1400 and 390 px, light and dark, axe clean: prices in pounds and euros, the introductory amount, the consent after a trial, a switch by its name, Resubscribe, and a purchase's page with dates in words and its actions",
          .enabled(if: available, skipReason))
    func customerFacingPages() async throws {
        let axe: URL
        switch await AxeCore.script() {
        case .success(let script): axe = script
        case .failure(let reason):
            print("skipping the customer pages' browser check: \(reason)")
            withKnownIssue("axe-core could not be installed here") { throw reason }
            return
        }
        try await withServedStore(phoneAccount: nil) { store, server in
            func subscribe(_ account: String, storefront: String?, _ product: String) async throws -> [String: String] {
                try await store.addDevice("\(account)-phone", account: account)
                if let storefront { try await store.configureAccount(account, storefront: .some(storefront)) }
                guard case .success(let signed) = try await store.purchase(PurchaseRequest(productID: product, account: account, device: "\(account)-phone")) else {
                    throw TestFailure("expected \(account)'s subscription")
                }
                return ["account": account, "device": "\(account)-phone", "transaction": String(signed.transaction.id),
                        "original": String(signed.transaction.originalID)]
            }
            // In pounds at the introductory price; in euros in a free trial, asked to consent to a price;
            // a switch of plan; a cancelled subscription to subscribe to again.
            let intro = try await subscribe("gb", storefront: "GBR", ExampleShop.premiumMonthly)
            let trial = try await subscribe("de", storefront: "DEU", ExampleShop.premiumYearly)
            try await store.requestPriceIncreaseConsent(transactionID: UInt64(trial["transaction"]!)!)
            let switcher = try await subscribe("sam", storefront: nil, ExampleShop.premiumMonthly)
            let resubscriber = try await subscribe("ria", storefront: "GBR", ExampleShop.premiumMonthly)
            try await store.setAutoRenew(originalTransactionID: UInt64(resubscriber["original"]!)!, enabled: false)
            let scratch = Scratch()
            let scenario = scratch.url.appendingPathComponent("scenario.json")
            try JSONSerialization.data(withJSONObject: ["intro": intro, "trialConsent": trial, "switcher": switcher, "resubscriber": resubscriber,
                                                        "premiumMonthly": ExampleShop.premiumMonthly, "standardMonthly": ExampleShop.standardMonthly])
                .write(to: scenario)
            let report = try await Self.runBrowserScript("customer_pages.py", [server.url.absoluteString, scenario.path, Self.chromium.path,
                                                                               Self.chromedriver.path, axe.path, scratch.url.appendingPathComponent("shots").path])
            #expect(report["ok"] as? Bool == true, "\(report)")
            // Item 5: the storefront in the customer's currency, with the offer's amount and period.
            let introPlan = try #require(report["introPlan"] as? String, "\(report)")
            #expect(introPlan.contains("Introductory price (£4.99/month for 3 months) until 2026-02-01"), "\(introPlan)")
            #expect(!(introPlan + ((report["introPrices"] as? [String]) ?? []).joined()).contains("$"), "no dollars for a pound customer: \(report)")
            let consent = try #require(report["trialConsent"] as? String, "\(report)")
            #expect(consent.contains("free trial of Premium (Yearly) ends on 2026-01-15; after it, you pay €99.99/year"), "\(consent)")
            #expect(!consent.contains("$") && !consent.contains("rises"), "\(consent)")
            let switched = try #require(report["switchPlan"] as? String, "\(report)")
            #expect(switched.contains("then renews as Standard (Monthly) at $4.99/month"), "\(switched)")
            #expect(!switched.contains(ExampleShop.standardMonthly), "a plan switch names the plan, not its id: \(switched)")
            let before = try #require(report["beforeResubscribe"] as? [String: Any], "\(report)")
            #expect((before["plan"] as? String)?.contains("until 2026-02-01; it will not renew") == true && before["cancelOffered"] as? Bool == false, "\(before)")
            #expect((before["label"] as? String)?.contains("£9.99/month") == true, "\(before)")
            let after = try #require(report["afterResubscribe"] as? [String: Any], "\(report)")
            #expect((after["banner"] as? String)?.hasPrefix("Resubscribed to Premium (Monthly): it renews on 1 February 2026") == true, "\(after)")
            #expect(after["resubscribeOffered"] as? Bool == false, "\(after)")
            #expect(try await store.subscriptionRecord(originalTransactionID: UInt64(resubscriber["original"]!)!)?.autoRenewEnabled == true)
            // Item 9: the purchase's page — dates in words, actions through the admin API.
            let dates = try #require(report["payloadDates"] as? [String: Any], "\(report)")
            #expect((dates["bare"] as? [String])?.isEmpty == true, "every millisecond date has its words: \(dates)")
            #expect((dates["count"] as? Int ?? 0) >= 6, "\(dates)")
            #expect((dates["words"] as? [String])?.contains { $0.contains("\"purchaseDate\"") && $0.contains("2026-01-01 00:00:00 UTC (1 January 2026)") } == true,
                    "\(dates)")
            let facts = try #require(report["facts"] as? [String: String], "\(report)")
            #expect(facts["Purchased"] == "2026-01-01 00:00:00 UTC (1 January 2026)" && facts["Price"] == "4.99 GBP", "\(facts)")
            #expect(Set(report["actions"] as? [String] ?? []).isSuperset(of: ["refund", "expire", "renew", "auto-renew-off", "price-increase", "extend"]),
                    "\(report["actions"] ?? "")")
            let off = try #require(report["afterRenewalOff"] as? [String: Any], "\(report)")
            #expect((off["status"] as? String)?.hasPrefix("Automatic renewal is off") == true && off["renewal"] as? Int == 1, "\(off)")
            #expect(report["refundConfirm"] as? String == "Confirm refund")
            let refunded = try #require(report["afterRefund"] as? [String: Any], "\(report)")
            #expect(refunded["state"] as? String == "refunded" && (refunded["actions"] as? [String])?.contains("refund") == false, "\(refunded)")
            #expect(try await store.ledgerTransaction(UInt64(intro["transaction"]!)!)?.revocation != nil, "the refund reached the store")
            #expect(report["crossSiteStatuses"] as? [Int] == [403, 403], "what another site could send is refused: \(report)")
            let axeReport = try #require(report["axe"] as? [String: [[String: Any]]], "\(report)")
            #expect(axeReport.count == 16, "four pages at two widths in two schemes: \(axeReport.keys.sorted())")
            for (page, violations) in axeReport.sorted(by: { $0.key < $1.key }) {
                #expect(violations.isEmpty, "axe on \(page): \(violations)")
            }
        }
    }

    @Test("at ten thousand transactions the Transaction Manager's filters, searches, dates and orders show the store's own pages, page after page — in Chromium",
          .enabled(if: available, skipReason))
    func largeStoreListing() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        try await ListingStore.build(store)
        try await StoreServer.serving(store) { server in
            let report = try await Self.runBrowserScript("large_store.py", [server.url.absoluteString, Self.chromium.path, Self.chromedriver.path])
            #expect(report["ok"] as? Bool == true, "\(report)")
            let pages = try #require(report["pages"] as? [String: [Int]], "\(report)")
            #expect(pages.count == 8, "\(pages)")
            for (name, sizes) in pages where name != "State: Refunded" {
                #expect(sizes.first == 50, "\(name): the first page is full: \(sizes)")
            }
            #expect(pages["State: Refunded"] == [32], "the refunded transactions of the whole store, on one page: \(pages)")
        }
    }

    @Test("make run end to end: alice buys on the storefront in Chromium, and the backend make run starts has the purchase under her app account token",
          .enabled(if: available && Built.available, skipReason))
    func makeRunEndToEnd() async throws {
        let scratch = Scratch()
        let storeDirectory = scratch.url.appendingPathComponent("run-store")
        let output = scratch.url.appendingPathComponent("run-store.out")
        let run = try Subprocess(URL(fileURLWithPath: "/bin/bash"), [SharedTestData.packageRoot.appendingPathComponent("scripts/run-store").path],
                                 output: .file(output.path), error: .sameAsOutput,
                                 environment: ["STORE_DIR": storeDirectory.path, "PORT": "0"], newProcessGroup: true)
        defer { run.signalGroup(SIGKILL) }
        let printed = { (String(data: (try? Data(contentsOf: output)) ?? Data(), encoding: .utf8) ?? "") }
        let storefront = try await eventually(orNil: "make run's storefront address") {
            printed().split(separator: "\n").first { $0.hasPrefix("storefront: ") }.map { String($0.dropFirst("storefront: ".count)) }
        }
        let backend = try #require(printed().split(separator: "\n").first { $0.hasPrefix("entitlement backend: ") }
            .flatMap { $0.dropFirst("entitlement backend: ".count).split(separator: " ").first.map(String.init) })
        let report = try await Self.runBrowserScript("buy_on_storefront.py", [storefront, "alice", "phone", "com.example.shop.character.wizard",
                                                                             Self.chromium.path, Self.chromedriver.path])
        #expect(report["ok"] as? Bool == true, "\(report)")
        let key = try String(contentsOf: storeDirectory.appendingPathComponent("backend-key"), encoding: .utf8)
            .split(separator: "\n").last.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
        let alice = "0a1b2c3d-0000-4000-8000-00000000a11c"
        let entitlements = try await eventually(orNil: "the purchase in the backend") { () -> [String]? in
            let answer = try await Exchange.send("GET", URL(string: "\(backend)/v1/customers/\(alice)/entitlements")!,
                                                 headers: [("Authorization", "Bearer \(key)")])
            let body = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
            let products = (body?["entitlements"] as? [[String: Any]])?.compactMap { $0["productId"] as? String } ?? []
            return products.contains("com.example.shop.character.wizard") ? products : nil
        }
        #expect(entitlements.contains("com.example.shop.pro"), "make run's own purchases are alice's too: \(entitlements)")
        run.signalGroup(SIGTERM)
        _ = await run.termination()
    }
}
