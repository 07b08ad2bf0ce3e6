import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import SimulatorConnection
import StoreService
import Testing
import TestSupport

/// Retention Messaging from end to end: the developer sets up messages with Apple's Python client,
/// `storekit backend serve` answers the store's real-time requests from its rules, and four customers
/// cancel on the storefront in Chromium, each answering differently; the notifications, the
/// Transaction Manager and the backend's figures must all tell the same story.
@Suite(.timeLimit(.minutes(10)))
struct RetentionFlowBrowserTests {
    /// Who cancels, on what, and how they answer.
    struct Customer {
        var account: String
        var productID: String
        var answer: RetentionOfferAttempt.Outcome
        /// The customer's storefront, when not the store's (USA).
        var storefront: String? = nil
        var device: String { "\(account)-phone" }
    }

    /// In the order they subscribe: Bob, Carol and Erin on day 0, Alice and Dave on day 92.
    static let customers = [
        // A yearly subscriber since day 0: the rule for the yearly plan suggests the monthly one.
        Customer(account: "bob", productID: ExampleShop.premiumYearly, answer: .switched),
        // A monthly subscriber since day 0, in Germany: the rule for loyal customers makes a promotional offer, in euros.
        Customer(account: "carol", productID: ExampleShop.premiumMonthly, answer: .redeemed, storefront: "DEU"),
        // A standard subscriber in the United Kingdom, whom no rule matches: a plain explanation, prices in pounds.
        Customer(account: "erin", productID: ExampleShop.standardMonthly, answer: .cancelled, storefront: "GBR"),
        // Subscribed on day 92, the day they cancel: the rule for new customers shows the message with the image.
        Customer(account: "alice", productID: ExampleShop.premiumMonthly, answer: .cancelled),
        Customer(account: "dave", productID: ExampleShop.premiumMonthly, answer: .kept),
    ]

    @Test("upload, approve, default and real-time URL with Apple's client; backend serve's rules choose; in Chromium one customer keeps, one redeems the offer (a discounted renewal follows), one switches, one cancels; notifications, Transaction Manager and the backend's figures agree",
          .enabled(if: BrowserPagesTests.available && Built.available, BrowserPagesTests.skipReason))
    func wholeFlowOnTheStorefront() async throws {
        let python = try await AppleLibraryOracle.prepare().get()
        let scratch = Scratch()
        let (directory, store) = try await TestStores.directory(in: scratch)
        // The developer's endpoint gets as long as it needs: a loaded two-core machine may miss Apple's
        // 700 ms (CancellationFlowTests checks the limit itself).
        let server = try StoreServer(store: store, retentionAnswerLimit: .seconds(60))
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        let offerKey = scratch.url.appendingPathComponent("offer-key.json")
        let printed = try await ChildProcess.run(Built.storekit, ["offer-key", directory.path])
        #expect(printed.status == 0, "\(printed.standardError)")
        try Data(printed.standardOutput.utf8).write(to: offerKey)
        #expect(chmod(offerKey.path, 0o600) == 0)
        let databasePath = scratch.url.appendingPathComponent("backend.sqlite").path
        let database = "sqlite:" + databasePath
        let backend = try await ServeProcess.start(command: ["backend", "serve", "--database", database, "--bundle-id", "com.example.shop",
                                                            "--environment", "Xcode", "--root", root.path, "--offer-key-file", offerKey.path,
                                                            "--port", "0"])
        try await store.updateSettings { $0.notificationURL = backend.url.absoluteString + "/apple/notifications" }

        var subscriptions: [String: UInt64] = [:]
        for customer in Self.customers {
            try await store.addDevice(customer.device, account: customer.account)
            if let storefront = customer.storefront { try await store.configureAccount(customer.account, storefront: .some(storefront)) }
            if customer.account == "alice" { try await store.advanceTime(by: 92 * 86_400) }
            guard case .success(let signed) = try await store.purchase(PurchaseRequest(productID: customer.productID, account: customer.account,
                                                                                       device: customer.device)) else {
                throw TestFailure("expected \(customer.account)'s subscription")
            }
            subscriptions[customer.account] = signed.transaction.originalID
        }
        let storage = try await SQLBackendStorage.sqlite(path: databasePath)
        try await eventually("the backend has every notification", within: .seconds(120)) {
            try await storage.notificationCount() >= store.notifications().count
        }

        // The backend's rules, added as a developer would, from the command line.
        let text = UUID().uuidString.lowercased(), plan = UUID().uuidString.lowercased(), offer = UUID().uuidString.lowercased()
        for rule in [["--product", ExampleShop.premiumYearly, "--message", plan, "--switch-to", ExampleShop.premiumMonthly, "--name", "A plan that fits"],
                     ["--product", ExampleShop.premiumMonthly, "--min-days", "31", "--message", offer, "--offer", "premium.monthly.firstmonth",
                      "--name", "Stay for less"],
                     ["--product", ExampleShop.premiumMonthly, "--max-days", "30", "--message", text]] {
            let added = try await ChildProcess.run(Built.storekit, ["backend", "retention-rule", "add", "--database", database] + rule)
            #expect(added.status == 0, "\(added.standardError)")
        }

        let backendKey = try await ChildProcess.run(Built.storekit, ["backend", "key", "create", "--database", database])
        #expect(backendKey.status == 0, "\(backendKey.standardError)")
        let keyFile = scratch.url.appendingPathComponent("api-key.json")
        try await store.writeNewAPIKeyFile(to: keyFile)
        let key = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: keyFile)) as? [String: String])
        let scenario = scratch.url.appendingPathComponent("scenario.json")
        try JSONSerialization.data(withJSONObject: [
            "store": server.url.absoluteString, "key": key, "bundleId": "com.example.shop",
            // The client's environment only picks Apple's address, which the script replaces; the store
            // is an Xcode one, whose uploads wait for review (a Sandbox store approves them at once).
            "environment": "Sandbox", "productId": ExampleShop.premiumMonthly, "image": UUID().uuidString.lowercased(),
            "messages": ["text": text, "plan": plan, "offer": offer], "realtimeURL": backend.url.absoluteString + "/apple/retention",
            "customers": Self.customers.map { ["account": $0.account, "device": $0.device, "answer": $0.answer.rawValue,
                                              "subscription": String(subscriptions[$0.account]!), "everyView": $0.storefront != nil] as [String: Any] },
            "backend": backend.url.absoluteString, "backendKey": backendKey.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines),
            // Erin's cancellation follows no message of the backend's.
            "acted": Self.customers.filter { $0.answer != .kept && $0.account != "erin" }.count,
            "screenshots": SharedTestData.packageRoot.appendingPathComponent("docs/screenshots").path,
        ] as [String: Any]).write(to: scenario)
        let axe = if case .success(let script) = await AxeCore.script() { script.path } else { "" }
        let report = try await BrowserPagesTests.runBrowserScript("cancel_on_storefront.py", [scenario.path, BrowserPagesTests.chromium.path,
                                                                                              BrowserPagesTests.chromedriver.path, axe], python: python)
        #expect(report["ok"] as? Bool == true, "\(report)")

        // Review: pending until approved, as App Store review would.
        #expect(report["statesBeforeReview"] as? [String] == Array(repeating: "PENDING", count: 4), "\(report)")
        #expect(report["statesAfterReview"] as? [String] == Array(repeating: "APPROVED", count: 4), "\(report)")
        // Each customer saw the rule's choice, came from the real-time URL, and answered.
        let expected: [String: (kind: String, message: String, header: String)] = [
            "alice": ("message", text, "Before you go"), "bob": ("switchPlan", plan, "A plan that fits"),
            "carol": ("promotionalOffer", offer, "Stay for less"), "dave": ("message", text, "Before you go"),
        ]
        // Erin: no rule matches, so the page says so in words (Apple's result name only in the attribute), and prices are in pounds.
        let erin = try #require(report["erin"] as? [String: Any], "\(report)")
        #expect(erin["source"] as? String == "none", "\(erin)")
        let erinFailure = try #require(erin["failure"] as? String, "\(erin)")
        #expect(erinFailure.hasPrefix("No special offer for this subscription") && !erinFailure.contains("UNSUCCESSFUL"), "\(erinFailure)")
        #expect((erin["accessEnds"] as? String)?.contains("until 1 July 2026, 00:00 UTC") == true, "when access ends, in words: \(erin)")
        #expect((erin["accessEnds"] as? String)?.contains("£4.99 per month") == true, "\(erin)")
        #expect(!((erin["pageText"] as? String) ?? "$").contains("$"), "\(erin)")
        #expect((erin["outcome"] as? String)?.contains("You keep it until 1 July 2026") == true, "\(erin)")
        #expect(erin["resubscribeOffered"] as? Bool == true, "after cancelling, the storefront offers to resubscribe: \(erin)")
        // Carol, in euros: the offer and, after redeeming it, the next renewal's price on the storefront.
        let carolSeen = try #require(report["carol"] as? [String: Any], "\(report)")
        #expect((carolSeen["offer"] as? String)?.contains("€0.99") == true && (carolSeen["offer"] as? String)?.contains("then €9.99") == true, "\(carolSeen)")
        #expect(!((carolSeen["pageText"] as? String) ?? "$").contains("$"), "\(carolSeen)")
        #expect((carolSeen["planAfter"] as? String)?.contains("at €0.99 with the offer, then €9.99/month") == true, "\(carolSeen)")
        for account in ["carol", "erin"] {
            let views = try #require((report[account] as? [String: Any])?["views"] as? [String: [String: Any]], "\(account): \(report)")
            #expect(Set(views.keys) == ["1400-light", "1400-dark", "390-light", "390-dark"], "\(views.keys)")
            for (view, seen) in views.sorted(by: { $0.key < $1.key }) {
                #expect((seen["axe"] as? [[String: Any]])?.isEmpty == true, "axe on \(account)'s cancellation page, \(view): \(seen)")
                #expect(seen["sideways"] as? Bool == false, "\(account), \(view)")
            }
        }
        for customer in Self.customers where customer.account != "erin" {
            let seen = try #require(report[customer.account] as? [String: Any], "\(customer.account): \(report)")
            let want = expected[customer.account]!
            #expect(seen["source"] as? String == "realtime", "\(customer.account): \(seen)")
            #expect(seen["kind"] as? String == want.kind, "\(customer.account): \(seen)")
            #expect(seen["message"] as? String == want.message, "\(customer.account): \(seen)")
            #expect(seen["header"] as? String == want.header, "\(customer.account): \(seen)")
            #expect((seen["answers"] as? [String])?.contains(customer.answer.rawValue) == true, "\(customer.account): \(seen)")
            #expect((seen["outcome"] as? String)?.isEmpty == false, "\(customer.account): \(seen)")
            if let violations = seen["axe"] as? [[String: Any]] { #expect(violations.isEmpty, "axe on \(customer.account)'s cancellation page: \(violations)") }
            // Only a confirmed cancellation takes Cancel Subscription away.
            #expect(seen["cancelOfferedAfter"] as? Bool == (customer.answer != .cancelled), "\(customer.account): \(seen)")
            // Before answering, the page says when access would end.
            #expect((seen["accessEnds"] as? String)?.contains(" UTC, the end of the period you have paid for") == true, "\(customer.account): \(seen)")
        }
        let alice = try #require(report["alice"] as? [String: Any])
        let image = try #require(alice["image"] as? [String: Any], "the text message shows its image: \(alice)")
        // Alice is in her introductory months: the renewal the page quotes is the introductory price, then the regular one.
        #expect((alice["accessEnds"] as? String)?.hasSuffix("it would renew then at $4.99 per month (the introductory price), then $9.99 per month.") == true,
                "\(alice)")
        #expect(image["loaded"] as? Bool == true && image["alt"] as? String == "Plans on a phone and a laptop", "\(image)")
        #expect((report["bob"] as? [String: Any])?["suggestion"] as? String != nil)
        #expect(((report["carol"] as? [String: Any])?["offer"] as? String)?.contains("Stay with") == true)
        // The Transaction Manager's page of each purchase lists its attempt with the outcome.
        let manager = try #require(report["transactionManager"] as? [String: [[String: Any]]], "\(report)")
        for customer in Self.customers {
            #expect(manager[customer.account]?.map { $0["outcome"] as? String } == [customer.answer.rawValue], "\(customer.account): \(manager)")
        }

        // The backend's dashboard shows what each message led to: shown, kept, switched, redeemed, cancelled, saved.
        let dashboard = try #require(report["dashboard"] as? [String: [String]], "\(report)")
        #expect(dashboard[text] == ["2", "1", "0", "0", "1", "50.0%"], "\(dashboard)")
        #expect(dashboard[plan] == ["1", "0", "1", "0", "0", "100.0%"], "\(dashboard)")
        #expect(dashboard[offer] == ["1", "0", "0", "1", "0", "100.0%"], "\(dashboard)")
        if let violations = report["dashboardAxe"] as? [[String: Any]] { #expect(violations.isEmpty, "axe on the dashboard: \(violations)") }
        // Messages by name: the rule's --name, else what the rule shows and to whom; never a bare UUID.
        let names = try #require(report["dashboardNames"] as? [String: String], "\(report)")
        #expect(names[plan] == "A plan that fits" && names[offer] == "Stay for less", "\(names)")
        #expect(names[text] == "A message for subscribers of \(ExampleShop.premiumMonthly), up to day 30", "\(names)")
        if let views = report["dashboardViews"] as? [String: [String: Any]] {
            #expect(views.count == 4, "\(views.keys)")
            for (view, seen) in views.sorted(by: { $0.key < $1.key }) {
                #expect((seen["axe"] as? [[String: Any]])?.isEmpty == true, "axe on the dashboard, \(view): \(seen)")
                #expect(seen["sideways"] as? Bool == false, "the dashboard, \(view)")
            }
        }

        // The store's notifications say what each customer did.
        func notifications(of account: String) async throws -> [(type: String, transaction: JWSTransactionDecodedPayload)] {
            try await store.notifications().compactMap { stored in
                guard let payload = try? CompactJWS(stored.signedPayload).payload(as: ResponseBodyV2DecodedPayload.self),
                      let transaction = payload.data?.signedTransactionInfo.flatMap({ try? CompactJWS($0).payload(as: JWSTransactionDecodedPayload.self) }),
                      transaction.originalTransactionId == String(subscriptions[account]!) else { return nil }
                return ([payload.notificationType?.rawValue, payload.subtype?.rawValue].compactMap { $0 }.joined(separator: "/"), transaction)
            }
        }
        let answerTypes: Set = ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "DID_CHANGE_RENEWAL_PREF/DOWNGRADE", "DID_CHANGE_RENEWAL_PREF",
                                "OFFER_REDEEMED", "OFFER_REDEEMED/UPGRADE", "OFFER_REDEEMED/DOWNGRADE"]
        func answers(of account: String) async throws -> [String] { try await notifications(of: account).map(\.type).filter(answerTypes.contains) }
        #expect(try await answers(of: "alice") == ["DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED"])
        let bobs = try await answers(of: "bob"), carols = try await answers(of: "carol")
        #expect(bobs.first?.hasPrefix("DID_CHANGE_RENEWAL_PREF") == true, "\(bobs)")
        #expect(carols.first?.hasPrefix("OFFER_REDEEMED") == true, "\(carols)")
        #expect(try await answers(of: "dave").isEmpty)

        // Carol's next renewal is at the offer's price.
        let regular = try #require(await store.catalog().product(id: ExampleShop.premiumMonthly)?.priceInMilliunits)
        try await store.advanceTime(by: 31 * 86_400)
        let renewal = try #require(try await notifications(of: "carol").last { $0.type == "DID_RENEW" }?.transaction)
        #expect(renewal.offerType == .promotionalOffer && renewal.offerIdentifier == "premium.monthly.firstmonth", "\(renewal)")
        #expect((renewal.price ?? .max) < regular, "the renewal after the offer: \(renewal.price ?? -1) against \(regular)")

        // The backend's figures, from the notifications it was sent.
        try await eventually("the backend has every notification", within: .seconds(120)) {
            try await storage.notificationCount() >= store.notifications().count
        }
        let figures = Dictionary(uniqueKeysWithValues: try await storage.retentionFigures().map { ($0.messageIdentifier, $0) })
        #expect(figures[text].map { [$0.shown, $0.kept, $0.cancelled] } == [2, 1, 1], "\(figures)")
        #expect(figures[plan].map { [$0.shown, $0.switched] } == [1, 1], "\(figures)")
        #expect(figures[offer].map { [$0.shown, $0.redeemed] } == [1, 1], "\(figures)")
        let api = try await Exchange.send("GET", backend.url.appendingPathComponent("v1/metrics/retention"),
                                          headers: [("Authorization", "Bearer \(backendKey.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))")])
        let messages = try #require(api.json?["messages"] as? [[String: Any]], "\(api.status): \(String(decoding: api.body, as: UTF8.self))")
        #expect(messages.first { $0["messageIdentifier"] as? String == offer }?["redeemed"] as? Int == 1, "\(messages)")
        #expect(messages.first { $0["messageIdentifier"] as? String == offer }?["messageName"] as? String == "Stay for less", "\(messages)")
        let listed = try await ChildProcess.run(Built.storekit, ["backend", "retention-rule", "list", "--database", database])
        #expect(listed.standardOutput.contains("message \(offer) (Stay for less): shown 1, kept 0, switched 0, redeemed 1, cancelled 0"), "\(listed.standardOutput)")

        await backend.stop()
        await server.stop()
    }
}
