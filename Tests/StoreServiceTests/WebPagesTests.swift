import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import OpenStoreKit
import StoreService
import Testing
import TestSupport

/// The pages `storekit serve` shows people, at the HTTP level: what they answer, what they refuse,
/// and the admin calls the Transaction Manager's script relies on.
@Suite(.timeLimit(.minutes(10)))
struct WebPagesTests {
    static func text(_ exchange: Exchange) -> String { String(decoding: exchange.body, as: UTF8.self) }

    @Test("the Transaction Manager, its script and the stylesheet are served by the binary, with their types")
    func assets() async throws {
        try await withServedStore { _, server in
            let page = try await Exchange.send("GET", server.url.appendingPathComponent("/"))
            #expect(page.status == 200 && page.contentType?.hasPrefix("text/html") == true)
            #expect(Self.text(page).contains(#"src="/assets/manager.js""#))
            let script = try await Exchange.send("GET", server.url.appendingPathComponent("/assets/manager.js"))
            #expect(script.contentType?.hasPrefix("text/javascript") == true && Self.text(script).contains("/v1/admin/changes"))
            let style = try await Exchange.send("GET", server.url.appendingPathComponent("/assets/style.css"))
            #expect(style.contentType?.hasPrefix("text/css") == true)
            #expect(try await Exchange.send("GET", server.url.appendingPathComponent("/assets/nothing.js")).status == 404)
        }
    }

    @Test("the storefront: a device picker, a purchase by form that comes back with what happened, escaped names, refusals")
    func storefront() async throws {
        try await withServedStore { store, server in
            try await store.addDevice("<b>ipad</b>", account: "kid")
            let picker = Self.text(try await Exchange.send("GET", server.url.appendingPathComponent("/store")))
            #expect(picker.contains("alice — phone"))
            #expect(picker.contains("&lt;b&gt;ipad&lt;/b&gt;") && !picker.contains("<b>ipad</b>"), "names are escaped")

            // A plain form (no script) is answered with a 303 back to the page, which shows what it owns;
            // the page's script asks for JSON and shows the message in place. No message travels in the URL.
            let bought = try await Exchange.send("POST", server.url.appendingPathComponent("/store/buy"),
                                                 body: Data("account=alice&device=phone&product=\(ExampleShop.pro)".utf8))
            // The package's client follows no redirect (#53): the page the 303 leads to is asked for as a browser would.
            #expect(bought.status == 303, "the 303 leads back to the storefront")
            let location = try #require(bought.location)
            let followed = try await Exchange.send("GET", URL(string: server.url.absoluteString + location)!)
            #expect(Self.text(followed).contains(#"data-product-id="\#(ExampleShop.pro)" data-state="owned""#))
            #expect(try await store.ledgerTransactions(account: "alice").map(\.productID) == [ExampleShop.pro])
            let json = [(name: "Accept", value: "application/json")]
            let restored = try await Exchange.send("POST", server.url.appendingPathComponent("/store/restore"),
                                                   body: Data("account=alice&device=phone".utf8), headers: json)
            #expect(restored.status == 200 && restored.json?["kind"] as? String != "error")

            let wrongAccount = try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/store?account=bob&device=phone")!)
            #expect(wrongAccount.status == 404 && wrongAccount.contentType?.hasPrefix("text/html") == true, "an HTML page says the device is not bob's")
            let unknownDevice = try await Exchange.send("POST", server.url.appendingPathComponent("/store/buy"),
                                                        body: Data("account=alice&device=nowhere&product=\(ExampleShop.pro)".utf8))
            #expect(unknownDevice.status == 404 && unknownDevice.contentType?.hasPrefix("text/html") == true)
            let noProduct = try await Exchange.send("POST", server.url.appendingPathComponent("/store/buy"), body: Data("account=alice&device=phone".utf8),
                                                    headers: json)
            #expect(noProduct.status == 400 && noProduct.json?["kind"] as? String == "error")
            let badCode = try await Exchange.send("POST", server.url.appendingPathComponent("/store/redeem"),
                                                  body: Data("account=alice&device=phone&code=NO-SUCH-CODE".utf8), headers: json)
            #expect((badCode.json?["message"] as? String)?.contains("Offer code NO-SUCH-CODE not redeemed") == true)
            #expect(try await store.queuedCustomerResponses(device: "phone").isEmpty, "a failed redemption uses its response up")
            #expect(try await store.ledgerTransactions(account: "alice").count == 1, "nothing else was bought")

            // A pending purchase says what it is: interrupted for an adult, Ask to Buy only when the account asks.
            try await store.updateSettings { $0.interruptedPurchasesEnabled = true }
            let interrupted = try await Exchange.send("POST", server.url.appendingPathComponent("/store/buy"),
                                                      body: Data("account=alice&device=phone&product=\(ExampleShop.wizard)".utf8), headers: json)
            let interruptedMessage = interrupted.json?["message"] as? String ?? ""
            #expect(interruptedMessage.contains("was interrupted") && !interruptedMessage.contains("Ask to Buy"), "\(interruptedMessage)")
            try await store.updateSettings { $0.interruptedPurchasesEnabled = false }
            try await store.addDevice("kid-phone", account: "kid")
            try await store.configureAccount("kid", askToBuy: true)
            let asked = try await Exchange.send("POST", server.url.appendingPathComponent("/store/buy"),
                                                body: Data("account=kid&device=kid-phone&product=\(ExampleShop.wizard)".utf8), headers: json)
            #expect((asked.json?["message"] as? String)?.contains("waiting for approval (Ask to Buy)") == true, "\(asked.json ?? [:])")
        }
    }

    @Test("the transaction list filters by product, kind and state, and refuses an unknown state")
    func filteredTransactions() async throws {
        try await withServedStore { store, server in
            for _ in 0..<30 { _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone")) }
            guard case .success(let pro) = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone")) else {
                throw TestFailure("expected a purchase")
            }
            try await store.refundTransaction(pro.transaction.id)
            let base = server.url.absoluteString
            let refunded = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/transactions?state=refunded")!)
            let rows = try #require(refunded.json?["transactions"] as? [[String: Any]])
            #expect(rows.map { $0["id"] as? Int } == [Int(pro.transaction.id)])
            let consumables = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/transactions?type=consumable&limit=20")!)
            #expect((consumables.json?["transactions"] as? [[String: Any]])?.count == 20)
            #expect(consumables.json?["next"] as? String != nil, "a full page names where the next begins")
            let byProduct = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/transactions?product=\(ExampleShop.pro)")!)
            #expect((byProduct.json?["transactions"] as? [[String: Any]])?.count == 1)
            #expect(try await Exchange.send("GET", URL(string: "\(base)/v1/admin/transactions?state=lost")!).status == 400)
        }
    }

    @Test("a plan shared through Family Sharing shows as shared on the member's storefront, and the group's other plans are theirs to subscribe to, not switches")
    func familySharedPlan() async throws {
        try await withServedStore { store, server in
            try await store.setFamilyGroup("smiths", for: "alice")
            try await store.addDevice("bob-phone", account: "bob")
            try await store.setFamilyGroup("smiths", for: "bob")
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: "alice", device: "phone"))
            let page = Self.text(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/store?account=bob&device=bob-phone")!))
            #expect(page.contains("Shared with you by alice (Family Sharing)"), "who shares it")
            #expect(page.contains(#"data-product-id="\#(ExampleShop.premiumMonthly)" data-state="current""#))
            for other in [ExampleShop.standardMonthly, ExampleShop.basicWeekly] {
                #expect(page.contains(#"data-product-id="\#(other)" data-state="subscribe""#), "\(other) is bob's own subscription to buy")
            }
            let alices = Self.text(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/store?account=alice&device=phone")!))
            #expect(!alices.contains("Family Sharing") && alices.contains(#"data-product-id="\#(ExampleShop.standardMonthly)" data-state="downgrade""#))
        }
    }

    @Test("the storefront says where a plan stands: a trial's end and the price after it, an introductory price, and a price increase that asks for consent")
    func currentPlanTexts() async throws {
        try await withServedStore { store, server in
            try await store.addDevice("bob-phone", account: "bob")
            guard case .success(let yearly) = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumYearly, account: "alice",
                                                                                         device: "phone")) else { throw TestFailure("expected a purchase") }
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: "bob", device: "bob-phone"))
            func page(_ account: String, _ device: String) async throws -> String {
                Self.text(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/store?account=\(account)&device=\(device)")!))
            }
            #expect(try await page("alice", "phone").contains("Free trial (2 weeks free) until 2026-01-15, then $99.99/year"))
            #expect(try await page("bob", "bob-phone").contains("Introductory price ($4.99/month for 3 months) until 2026-02-01, and the next period at it too"))

            // Past the trial, a price increase asks for consent on the storefront, as the App Store's sheet does.
            _ = try await store.advanceTime(by: 15 * 86_400)
            try await store.requestPriceIncreaseConsent(transactionID: yearly.transaction.id)
            let asking = try await page("alice", "phone")
            // The store asks consent without changing the price: the sheet says so, and never that the price rises.
            #expect(asking.contains("confirm the price of Premium (Yearly): $99.99/year from the next renewal on 2027-01-15, the same as you pay now")
                    && !asking.contains("rises") && asking.contains(#"data-action="price-increase""#), "the consent sheet's choices")
            let current = try #require(try await store.subscriptionRecord(originalTransactionID: yearly.transaction.originalID))
            let answer = try await Exchange.send("POST", server.url.appendingPathComponent("/store/price-increase"),
                                                 body: Data("account=alice&device=phone&transaction=\(current.latestTransactionID)&answer=agree".utf8),
                                                 headers: [(name: "Accept", value: "application/json")])
            #expect(answer.status == 200 && (answer.json?["message"] as? String)?.contains("Agreed") == true, "\(answer.json ?? [:])")
            #expect(try await store.subscriptionRecord(originalTransactionID: yearly.transaction.originalID)?.priceIncrease == .agreed)
            #expect(!(try await page("alice", "phone")).contains("data-price-consent"))
            // Another account's subscription is not the page's to answer for.
            let foreign = try await Exchange.send("POST", server.url.appendingPathComponent("/store/price-increase"),
                                                  body: Data("account=bob&device=bob-phone&transaction=\(current.latestTransactionID)&answer=decline".utf8),
                                                  headers: [(name: "Accept", value: "application/json")])
            #expect(foreign.status == 400)
        }
    }

    @Test("a subscription in its billing grace period is listed in grace period, not expired, under its own state filter")
    func gracePeriodRow() async throws {
        try await withServedStore { store, server in
            try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true }
            guard case .success(let monthly) = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: "alice",
                                                                                          device: "phone")) else {
                throw TestFailure("expected a purchase")
            }
            _ = try await store.advanceTime(by: 31 * 86_400)
            #expect(try await store.subscriptionRecord(originalTransactionID: monthly.transaction.originalID)?.state == .inGracePeriod)
            let base = server.url.absoluteString
            let all = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/transactions")!)
            let row = try #require((all.json?["rows"] as? [String: [String: Any]])?[String(monthly.transaction.id)])
            #expect(row["state"] as? String == "inGracePeriod" && row["stateLabel"] as? String == "in grace period", "\(row)")
            let inGrace = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/transactions?state=inGracePeriod")!)
            #expect((inGrace.json?["transactions"] as? [[String: Any]])?.map { $0["id"] as? Int } == [Int(monthly.transaction.id)])
            let expired = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/transactions?state=expired")!)
            #expect((expired.json?["transactions"] as? [[String: Any]])?.isEmpty == true, "in grace is not expired")
        }
    }

    @Test("changes: the version at once when it differs, after the wait when nothing changes, soon after a change")
    func changes() async throws {
        try await withServedStore { store, server in
            let base = server.url.absoluteString
            let first = try #require(try await Exchange.send("GET", URL(string: "\(base)/v1/admin/changes?since=-1")!).json?["version"] as? Int)
            let started = ContinuousClock.now
            let idle = try await Exchange.send("GET", URL(string: "\(base)/v1/admin/changes?since=\(first)&wait=0.5")!)
            #expect(idle.json?["version"] as? Int == first)
            #expect(ContinuousClock.now - started >= .milliseconds(450))
            let waiting = Task { try await Exchange.send("GET", URL(string: "\(base)/v1/admin/changes?since=\(first)&wait=45")!) }
            try await eventually("the long poll waits in the store") { await store.changeWaiterCount == 1 }
            let purchased = ContinuousClock.now
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
            let changed = try await waiting.value
            // A wait that runs out answers the version it was given; a change answers the new one.
            #expect((changed.json?["version"] as? Int ?? 0) > first, "answered when the store changed, not at the end of the 45 s wait")
            #expect(ContinuousClock.now - purchased < .seconds(35), "answered soon after the change")
            #expect(try await Exchange.send("GET", URL(string: "\(base)/v1/admin/changes?since=x")!).status == 400)
        }
    }

    @Test("the newest notifications come with their delivery state")
    func latestNotifications() async throws {
        try await withServedStore { store, server in
            for _ in 0..<5 { _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone")) }
            let latest = try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/notifications?latest=2")!)
            let rows = try #require(latest.json?["notifications"] as? [[String: Any]])
            #expect(rows.map { $0["sequence"] as? Int } == [4, 5])
            #expect((rows.first?["delivery"] as? [String: Any])?["attempts"] as? [Any] != nil)
        }
    }

    @Test("a subscription's timeline shows its periods, its billing problem and its expiry; other transactions have none")
    func timeline() async throws {
        try await withServedStore { store, server in
            try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true }
            guard case .success(let monthly) = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: "alice", device: "phone")),
                  case .success(let pro) = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone")) else {
                throw TestFailure("expected purchases")
            }
            try await store.advanceTime(by: 100 * 86_400)
            let svg = Self.text(try await Exchange.send("GET", server.url.appendingPathComponent("/timeline/\(monthly.transaction.id).svg")))
            #expect(svg.hasPrefix("<svg"))
            #expect(svg.components(separatedBy: #"class="period "#).count - 1 == 1, "one period was billed")
            #expect(svg.contains(#"class="grace-period "#) && svg.contains(#"class="billing-retry "#))
            // Its colours are classes with a dark scheme of their own, not fixed fills.
            #expect(svg.contains("prefers-color-scheme: dark") && !svg.contains(#"fill="rgb("#), "the picture follows the colour scheme")
            #expect(svg.contains("DID_FAIL_TO_RENEW GRACE_PERIOD") && svg.contains("EXPIRED BILLING_RETRY"))
            #expect(try await Exchange.send("GET", server.url.appendingPathComponent("/timeline/\(pro.transaction.id).svg")).status == 404)
            let wrongID = try await Exchange.send("GET", server.url.appendingPathComponent("/timeline/abc.svg"))
            #expect(wrongID.status == 404 && wrongID.contentType?.hasPrefix("text/html") == true, "a wrong id is an HTML page, not JSON")
            let page = Self.text(try await Exchange.send("GET", server.url.appendingPathComponent("/timeline/\(monthly.transaction.id)")))
            #expect(page.contains("<h1") && page.contains(#"href="/""#) && page.contains(#"class="legend""#), "the page has a heading, a way back and a legend")
            // The page holds the picture drawn for a phone, a medium screen and a desktop; its stylesheet shows the one that fits.
            for layout in ["phone", "medium", "wide"] {
                #expect(page.contains(#"class="timeline-scroll timeline-\#(layout)""#), "\(layout)")
            }
            #expect(page.contains(#"viewBox="0 0 340 "#) && page.contains(#"viewBox="0 0 960 "#))
            // A purchase's page: the transaction decoded, the renewal info, the notifications; an unknown one is an HTML 404.
            let purchase = Self.text(try await Exchange.send("GET", server.url.appendingPathComponent("/transactions/\(monthly.transaction.id)")))
            #expect(purchase.contains(#"id="signed-transaction""#) && purchase.contains(#"id="signed-renewal-info""#) && purchase.contains("DID_FAIL_TO_RENEW"))
            let missing = try await Exchange.send("GET", server.url.appendingPathComponent("/transactions/999999"))
            #expect(missing.status == 404 && missing.contentType?.hasPrefix("text/html") == true)
        }
    }

    @Test("an app's review requests and custom purchase options reach the admin API and the purchase's page, never its signed transaction")
    func reviewRequestsAndCustomOptions() async throws {
        try await withServedStore { store, server in
            var request = PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone")
            request.customOptions = ["paywall": "onboarding"]
            guard case .success(let pro) = try await store.purchase(request) else { throw TestFailure("expected a purchase") }
            let app = try await StoreClient.connect(to: HTTPStoreTransport(server: server.url), device: "phone")
            #expect(try await app.requestReview())
            let device = try await Exchange.send("GET", server.url.appendingPathComponent("/v1/admin/devices/phone"))
            #expect(device.status == 200)
            let body = Self.text(device)
            #expect(body.contains(#""reviewRequests""#) && body.contains(#""shown":true"#), "\(body)")
            let page = Self.text(try await Exchange.send("GET", server.url.appendingPathComponent("/transactions/\(pro.transaction.id)")))
            #expect(page.contains("Custom purchase options") && page.contains("paywall = onboarding"))
            let signed = String(decoding: try Self.payload(of: pro.jws), as: UTF8.self)
            #expect(signed.contains(ExampleShop.pro) && !signed.contains("onboarding"))
            #expect(try await Exchange.send("GET", server.url.appendingPathComponent("/v1/admin/devices/nobody")).status == 404)
        }
    }

    /// The payload of a compact JWS, decoded.
    static func payload(of jws: String) throws -> Data {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { throw TestFailure("not a compact JWS") }
        var text = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { throw TestFailure("the payload is not base64url") }
        return data
    }
}
