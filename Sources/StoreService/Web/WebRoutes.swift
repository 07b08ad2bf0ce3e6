import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import StoreKitCatalog
import SimulatorConnection
import Synchronization

/// The pages `storekit serve` shows people: the Transaction Manager at `/` (a page whose script
/// works through the admin API), the storefront at `/store`, a purchase's page at `/transactions/{id}`,
/// a subscription's timeline at
/// `/timeline/{originalTransactionID}` (its picture alone at `….svg`), a subscription's cancellation
/// page at `/store/cancellation/{attempt}` (``CancellationPage``), and their assets, which are
/// files in `Web/Assets/` built into the binary. A page that cannot be shown answers an HTML page
/// that says why, never JSON.
struct WebRoutes {
    let store: SimulatedAppStore
    let devices: InProcessStoreTransport
    /// What the storefront's Cancel Subscription asks and carries out.
    let cancellation: CancellationFlow
    /// The token the pages' forms carry (see ``CrossSiteCheck``).
    let formToken: String

    /// Registers the pages and their assets.
    static func register(on router: inout HTTPService.Router, store: SimulatedAppStore, devices: InProcessStoreTransport,
                         cancellation: CancellationFlow, formToken: String) {
        let routes = WebRoutes(store: store, devices: devices, cancellation: cancellation, formToken: formToken)
        router.on("GET", "/") { _, _ in Self.page(Self.transactionManager) }
        let scripts: [(String, [UInt8])] = [
            ("manager.js", PackageResources.manager_js), ("manager-page.js", PackageResources.manager_page_js),
            ("manager-transactions.js", PackageResources.manager_transactions_js), ("manager-accounts.js", PackageResources.manager_accounts_js),
            ("manager-settings.js", PackageResources.manager_settings_js), ("manager-notifications.js", PackageResources.manager_notifications_js),
        ]
        for (name, bytes) in scripts {
            router.on("GET", "/assets/\(name)") { _, _ in Self.asset(bytes, type: "text/javascript; charset=utf-8") }
        }
        router.on("GET", "/assets/storefront.js") { _, _ in Self.asset(PackageResources.storefront_js, type: "text/javascript; charset=utf-8") }
        router.on("GET", "/assets/transaction-page.js") { _, _ in Self.asset(PackageResources.transaction_page_js, type: "text/javascript; charset=utf-8") }
        router.on("GET", "/assets/style.css") { _, _ in Self.asset(PackageResources.style_css, type: "text/css; charset=utf-8") }
        for path in ["/favicon.svg", "/favicon.ico"] {
            router.on("GET", path) { _, _ in Self.asset(PackageResources.favicon_svg, type: "image/svg+xml") }
        }
        router.on("GET", "/store") { request, _ in await Self.asHTML { try await routes.storefront(request) } }
        router.on("POST", "/store/{action}") { request, context in
            let wantsJSON = request.header("Accept")?.contains("application/json") == true
            do {
                return try await routes.storeAction(context["action"], form: FormBody(request.body), answeringJSON: wantsJSON)
            } catch {
                let (status, message) = Self.describe(error)
                if wantsJSON { return try APIResponse.json(["message": message, "kind": "error"], status: status) }
                return Self.page(HTML.problemPage(title: "That did not work", message: message), status: status)
            }
        }
        router.on("GET", "/store/cancellation/{attempt}") { request, context in
            await Self.asHTML {
                guard let account = request.queryValue("account"), let device = request.queryValue("device") else {
                    throw APIError.badRequest("a cancellation page is /store/cancellation/{attempt}?account=A&device=D")
                }
                return Self.page(try await CancellationPage.load(store: store, id: context["attempt"], account: account, device: device,
                                                                 formToken: routes.formToken).html)
            }
        }
        router.on("POST", "/store/cancellation/{attempt}") { request, context in
            await Self.asHTML { try await routes.answerCancellation(context["attempt"], form: FormBody(request.body)) }
        }
        router.on("GET", "/transactions/{id}") { _, context in
            await Self.asHTML {
                guard let id = UInt64(context["id"]) else {
                    throw APIError.notFound("a purchase's page is /transactions/{transactionID}, and \(context["id"]) names no transaction")
                }
                return Self.page(try await TransactionPage.load(store: store, id: id).html)
            }
        }
        router.on("GET", "/timeline/{file}") { _, context in
            await Self.asHTML {
                let file = context["file"]
                let isPicture = file.hasSuffix(".svg")
                guard let id = UInt64(isPicture ? String(file.dropLast(4)) : file) else {
                    throw APIError.notFound("a timeline is /timeline/{originalTransactionID}, and \(file) names no transaction")
                }
                let timeline = try await SubscriptionTimeline.load(store: store, originalTransactionID: id)
                if isPicture {
                    return HTTPResponse(status: 200, headers: [("Content-Type", "image/svg+xml; charset=utf-8"), ("Cache-Control", "no-store")],
                                        body: Data(timeline.svg.utf8))
                }
                return Self.page(timeline.page)
            }
        }
    }

    /// The Transaction Manager: its content (`Assets/transaction-manager.html`) in the shared frame;
    /// `manager.js` fills it from the admin API.
    static let transactionManager = HTML.page(
        title: "Transaction Manager — OpenStoreKit", pageName: "Transaction Manager",
        otherPage: ("/store", "Open the storefront"),
        main: String(decoding: PackageResources.transaction_manager_html, as: UTF8.self),
        script: "/assets/manager.js", bodyClass: "manager", skipText: "Skip to the transactions", liveStatus: true,
        footer: "OpenStoreKit · changes made anywhere appear here live.")

    private static func asset(_ bytes: [UInt8], type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", type), ("Cache-Control", "no-cache")], body: Data(bytes))
    }

    private static func page(_ html: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")], body: Data(html.utf8))
    }

    /// Runs a page's handler; a failure is an HTML page saying what went wrong, with its status.
    private static func asHTML(_ body: () async throws -> HTTPResponse) async -> HTTPResponse {
        do {
            return try await body()
        } catch {
            let (status, message) = describe(error)
            let title = status == 404 ? "Not found" : status >= 500 ? "The store failed" : "That did not work"
            return page(HTML.problemPage(title: title, message: message), status: status)
        }
    }

    /// The status and words for a failure.
    private static func describe(_ error: any Error) -> (Int, String) {
        switch error {
        case let error as APIError: return (error.status, error.body.error.message)
        case let error as AppStoreError: let api = APIError(error); return (api.status, api.body.error.message)
        case let error as StoreTransportError: let api = APIError(error); return (api.status, api.body.error.message)
        default: return (500, String(describing: error))
        }
    }

    /// Every account with its devices, for the device picker (at most a thousand devices).
    private func accountsAndDevices() async throws -> [(account: String, devices: [String])] {
        let devices = try await store.allDevices(limit: 1_000)
        var byAccount: [String: [String]] = [:]
        for device in devices { byAccount[device.account, default: []].append(device.name) }
        return byAccount.keys.sorted().map { ($0, byAccount[$0] ?? []) }
    }

    private func storefront(_ request: HTTPRequest) async throws -> HTTPResponse {
        if let pick = request.queryValue("pick") {
            guard let (account, device) = StorefrontPage.parsePick(pick) else { throw APIError.badRequest("pick names an account and a device") }
            return Self.redirect(account: account, device: device)
        }
        guard let account = request.queryValue("account"), let device = request.queryValue("device"), !account.isEmpty, !device.isEmpty else {
            return Self.page(StorefrontPage.picker(accounts: try await accountsAndDevices()))
        }
        // A GET changes nothing: a device the store does not have gets a page that offers to sign it in.
        guard let known = try await store.device(named: device) else {
            return Self.page(StorefrontPage.signIn(account: account, device: device, formToken: formToken), status: 404)
        }
        guard known.account == account else {
            return Self.page(HTML.problemPage(title: "Not this account's device",
                                              message: "Device \(device) is signed in to \(known.account), not \(account)."), status: 404)
        }
        let client = try await StoreClient.attach(to: devices, device: device)
        let page = try await StorefrontPage.load(store: store, client: client, account: account, accounts: try await accountsAndDevices(),
                                                 formToken: formToken)
        return Self.page(page.html)
    }

    /// A storefront form: buy, restore or redeem on the form's device. The page's script asks for
    /// JSON (`{"message", "kind"}`) and shows it in place; a plain form gets a 303 back to the
    /// storefront, which shows the result in the products' states.
    private func storeAction(_ action: String, form: FormBody, answeringJSON: Bool) async throws -> HTTPResponse {
        guard let account = form["account"].map(\.precomposedStringWithCanonicalMapping), let device = form["device"].map(\.precomposedStringWithCanonicalMapping)
        else { throw APIError.badRequest("the form names no account and device") }
        func answer(_ message: String, kind: String) throws -> HTTPResponse {
            answeringJSON ? try APIResponse.json(["message": message, "kind": kind]) : Self.redirect(account: account, device: device)
        }
        if action == "sign-in" {
            // Signs the device in to the account, as opening the App Store app there would.
            try await store.addDevice(device, account: account)
            return try answer("Signed \(device) in to \(account).", kind: "ok")
        }
        guard let known = try await store.device(named: device) else {
            throw APIError.notFound("the store has no device \(device); open /store?account=\(account)&device=\(device) to sign it in")
        }
        guard known.account == account else { throw APIError.notFound("device \(device) is signed in to \(known.account), not \(account)") }
        let client = try await StoreClient.attach(to: devices, device: device)
        switch action {
        case "buy":
            guard let productID = form["product"] else { throw APIError.badRequest("the form names no product") }
            let buyer = try await store.account(named: account)
            let askToBuyForEveryone = try await store.currentSettings().askToBuyEnabled
            let asksToBuy = buyer?.askToBuy == true || askToBuyForEveryone
            let (message, kind) = await buy(productID, client: client, appAccountToken: buyer?.appAccountToken, asksToBuy: asksToBuy)
            return try answer(message, kind: kind)
        case "price-increase":
            // The customer's answer on the price consent sheet, for a subscription of their own.
            guard let id = form["transaction"].flatMap(UInt64.init), let transaction = try await store.ledgerTransaction(id),
                  transaction.account == account.precomposedStringWithCanonicalMapping else {
                throw APIError.badRequest("the form names no subscription of \(account)")
            }
            switch form["answer"] {
            case "agree":
                try await store.consentToPriceIncrease(transactionID: id)
                return try answer("Agreed to the new price: the subscription renews at it.", kind: "ok")
            case "decline":
                try await store.declinePriceIncrease(transactionID: id)
                return try answer("Declined the new price: the subscription ends when this period does.", kind: "info")
            default:
                throw APIError.badRequest("answer is agree or decline")
            }
        case "cancel":
            // Cancel Subscription on the current plan: the store asks the developer's real-time URL,
            // and the cancellation page shows what was chosen.
            guard let id = form["transaction"].flatMap(UInt64.init), let transaction = try await store.ledgerTransaction(id),
                  transaction.account == account.precomposedStringWithCanonicalMapping else {
                throw APIError.badRequest("the form names no subscription of \(account)")
            }
            let attempt = try await cancellation.start(originalTransactionID: id, locale: form["locale"] ?? "en-US")
            let location = CancellationPage.path(attempt: attempt.id, account: account, device: device)
            if answeringJSON { return try APIResponse.json(["message": "Opened the cancellation page.", "kind": "info", "location": location]) }
            return HTTPResponse(status: 303, headers: [("Location", location)])
        case "resubscribe":
            // Subscribe again while a cancelled subscription's period lasts: automatic renewal back on,
            // as the App Store's subscription page does (DID_CHANGE_RENEWAL_STATUS, AUTO_RENEW_ENABLED).
            guard let id = form["transaction"].flatMap(UInt64.init), let transaction = try await store.ledgerTransaction(id),
                  transaction.account == account.precomposedStringWithCanonicalMapping else {
                throw APIError.badRequest("the form names no subscription of \(account)")
            }
            try await store.setAutoRenew(originalTransactionID: transaction.originalID, enabled: true)
            let storefront = try await store.storefront(forAccount: account)
            let product = await store.catalog(storefront: storefront.countryCode).product(id: transaction.productID)
            let expires = try await store.subscriptionRecord(originalTransactionID: transaction.originalID)?.expirationDate
            return try answer("Resubscribed to \(product?.displayName ?? transaction.productID): it renews"
                              + (expires.map { " on \(HTML.dateInWords($0))" } ?? "") + (product.map { " at \($0.displayPrice)" } ?? "") + ".", kind: "ok")
        case "restore":
            do {
                try await client.sync()
                return try answer("Purchases restored.", kind: "ok")
            } catch {
                return try answer("Not restored: \(error)", kind: "error")
            }
        case "redeem":
            guard let code = form["code"]?.trimmingCharacters(in: .whitespaces), !code.isEmpty else {
                return try answer("Enter an offer code to redeem.", kind: "error")
            }
            do {
                // The customer types the code into the sheet: queued, then shown.
                try await store.queueCustomerResponse(.redeemOfferCode(referenceName: code), in: .offerCodeRedeem, device: device)
                try await devices.presentSheet(CustomerSheet.offerCodeRedeem.rawValue, device: device, about: nil)
                return try answer("Redeemed offer code \(code).", kind: "ok")
            } catch {
                return try answer("Offer code \(code) not redeemed: \(error)", kind: "error")
            }
        default:
            throw APIError.notFound("no storefront action \(action)")
        }
    }

    /// Buys through the store views' button (the device hears it through its updates) and says how it
    /// went. The purchase carries the account's app account token, as the app would set it. A pending
    /// purchase is told as what it is: a request to the parent when the account asks to buy, else an
    /// interrupted purchase (the customer has something to do first).
    private func buy(_ productID: String, client: StoreClient, appAccountToken: UUID?, asksToBuy: Bool) async -> (String, String) {
        guard let product = try? await client.products(for: [productID]).first else { return ("\(productID) is not for sale.", "error") }
        let outcome = Mutex<Result<Product.PurchaseResult, any Error>?>(nil)
        let environment = StoreViewEnvironment(client: client, purchaseOptions: { _ in appAccountToken.map { [.appAccountToken($0)] } ?? [] },
                                               onPurchaseCompletion: { _, result in outcome.withLock { $0 = result } })
        await environment.buy(product)
        switch outcome.withLock({ $0 }) {
        case .success(.success(.verified))?: return ("Bought \(product.displayName).", "ok")
        case .success(.success(.unverified(_, let error)))?: return ("Bought \(product.displayName), but the transaction did not verify: \(error).", "error")
        case .success(.pending)? where asksToBuy: return ("\(product.displayName) is waiting for approval (Ask to Buy).", "info")
        case .success(.pending)?:
            return ("The purchase of \(product.displayName) was interrupted: the customer has something to do first (such as agreeing to terms or "
                    + "updating payment); it completes through Transaction.updates when they have.", "info")
        case .success(.userCancelled)?: return ("The purchase of \(product.displayName) was cancelled.", "info")
        case .failure(let error)?: return ("\(product.displayName) was not bought: \(error)", "error")
        default: return ("\(product.displayName): the purchase ended without an answer.", "error")
        }
    }

    /// The customer's answer on a cancellation page, for the account's own attempt; back to the page,
    /// which then says what followed.
    private func answerCancellation(_ attemptID: String, form: FormBody) async throws -> HTTPResponse {
        guard let account = form["account"].map(\.precomposedStringWithCanonicalMapping), let device = form["device"],
              let outcome = form["outcome"].flatMap(RetentionOfferAttempt.Outcome.init(rawValue:)) else {
            throw APIError.badRequest("the form names an account, a device and an outcome (kept, switched, redeemed or cancelled)")
        }
        // Only the account's own attempt (the page's load refuses another's).
        let page = try await CancellationPage.load(store: store, id: attemptID, account: account, device: device, formToken: formToken)
        _ = try await cancellation.answer(page.attempt.id, outcome: outcome)
        return HTTPResponse(status: 303, headers: [("Location", CancellationPage.path(attempt: page.attempt.id, account: account, device: device))])
    }

    private static func redirect(account: String, device: String) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("Location", StorefrontPage.address(account: account, device: device))])
    }
}
