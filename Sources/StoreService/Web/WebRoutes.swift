import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import OpenStoreKitTesting
import Synchronization

/// The pages `storekit serve` shows people: the Transaction Manager at `/` (a page whose script
/// works through the admin API), the storefront at `/store`, subscription timelines at
/// `/timeline/{originalTransactionID}.svg`, and the shared assets. Served by the binary itself.
struct WebRoutes {
    let store: SimulatedAppStore
    let devices: InProcessStoreTransport
    /// The token the pages' forms carry (see ``CrossSiteCheck``).
    let formToken: String

    /// Registers the pages and their assets.
    static func register(on router: inout HTTPService.Router, store: SimulatedAppStore, devices: InProcessStoreTransport, formToken: String) {
        let routes = WebRoutes(store: store, devices: devices, formToken: formToken)
        router.on("GET", "/") { _, _ in Self.page(TransactionManagerPage.html) }
        router.on("GET", "/assets/manager.js") { _, _ in .text(200, TransactionManagerPage.script, contentType: "text/javascript; charset=utf-8") }
        router.on("GET", "/assets/style.css") { _, _ in .text(200, TransactionManagerPage.style, contentType: "text/css; charset=utf-8") }
        router.on("GET", "/store") { request, _ in try await routes.storefront(request) }
        router.on("POST", "/store/{action}") { request, context in try await routes.storeAction(context["action"], form: FormBody(request.body)) }
        router.on("GET", "/timeline/{file}") { _, context in
            let file = context["file"]
            guard file.hasSuffix(".svg"), let id = UInt64(file.dropLast(4)) else {
                throw APIError.badRequest("a timeline is /timeline/{originalTransactionID}.svg, not \(file)")
            }
            let timeline = try await SubscriptionTimeline.load(store: store, originalTransactionID: id)
            return HTTPResponse(status: 200, headers: [("Content-Type", "image/svg+xml; charset=utf-8"), ("Cache-Control", "no-store")],
                                body: Data(timeline.svg.utf8))
        }
    }

    private static func page(_ html: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")], body: Data(html.utf8))
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
            return Self.redirect(account: account, device: device, message: nil)
        }
        let message = request.queryValue("message")
        guard let account = request.queryValue("account"), let device = request.queryValue("device"), !account.isEmpty, !device.isEmpty else {
            return Self.page(StorefrontPage.picker(accounts: try await accountsAndDevices(), message: message))
        }
        // A GET changes nothing: a device the store does not have gets a page that offers to sign it in.
        guard let known = try await store.device(named: device) else {
            return Self.page(StorefrontPage.signIn(account: account, device: device, formToken: formToken), status: 404)
        }
        guard known.account == account else {
            return Self.page(StorefrontPage.problem("Device \(device) is signed in to \(known.account), not \(account).", title: "Not this account's device"),
                             status: 400)
        }
        let client = try await StoreClient.attach(to: devices, device: device)
        let page = await StorefrontPage.load(store: store, client: client, account: account, message: message,
                                             accounts: try await accountsAndDevices(), formToken: formToken)
        return Self.page(page.html)
    }

    /// A storefront form: buy, restore or redeem on the form's device, then back to the storefront
    /// with what happened (303, so reloading does not buy twice).
    private func storeAction(_ action: String, form: FormBody) async throws -> HTTPResponse {
        guard let account = form["account"].map(\.precomposedStringWithCanonicalMapping), let device = form["device"].map(\.precomposedStringWithCanonicalMapping)
        else { throw APIError.badRequest("the form names no account and device") }
        if action == "sign-in" {
            // Signs the device in to the account, as opening the App Store app there would.
            try await store.addDevice(device, account: account)
            return Self.redirect(account: account, device: device, message: nil)
        }
        guard try await store.device(named: device)?.account == account else {
            throw APIError.badRequest("device \(device) is not signed in to \(account); open /store?account=\(account)&device=\(device) first")
        }
        let client = try await StoreClient.attach(to: devices, device: device)
        let message: String
        switch action {
        case "buy":
            guard let productID = form["product"] else { throw APIError.badRequest("the form names no product") }
            message = await buy(productID, client: client)
        case "restore":
            do {
                try await client.sync()
                message = "Purchases restored."
            } catch {
                message = "Not restored: \(error)"
            }
        case "redeem":
            guard let code = form["code"] else { return Self.redirect(account: account, device: device, message: "Enter an offer code to redeem.") }
            do {
                // The customer types the code into the sheet: queued, then shown.
                try await store.queueCustomerResponse(.redeemOfferCode(referenceName: code), in: .offerCodeRedeem, device: device)
                try await devices.presentSheet(CustomerSheet.offerCodeRedeem.rawValue, device: device, about: nil)
                message = "Redeemed offer code \(code)."
            } catch {
                message = "Offer code \(code) not redeemed: \(error)"
            }
        default:
            throw APIError.notFound("no storefront action \(action)")
        }
        return Self.redirect(account: account, device: device, message: message)
    }

    /// Buys through the store views' button (the device hears it through its updates) and says how it went.
    private func buy(_ productID: String, client: StoreClient) async -> String {
        guard let product = try? await client.products(for: [productID]).first else { return "\(productID) is not for sale." }
        let outcome = Mutex<Result<Product.PurchaseResult, any Error>?>(nil)
        let environment = StoreViewEnvironment(client: client, onPurchaseCompletion: { _, result in outcome.withLock { $0 = result } })
        await environment.buy(product)
        switch outcome.withLock({ $0 }) {
        case .success(.success(.verified))?: return "Bought \(product.displayName)."
        case .success(.success(.unverified(_, let error)))?: return "Bought \(product.displayName), but the transaction did not verify: \(error)."
        case .success(.pending)?: return "\(product.displayName) is waiting for approval (Ask to Buy)."
        case .success(.userCancelled)?: return "The purchase of \(product.displayName) was cancelled."
        case .failure(let error)?: return "\(product.displayName) was not bought: \(error)"
        default: return "\(product.displayName): the purchase ended without an answer."
        }
    }

    private static func redirect(account: String, device: String, message: String?) -> HTTPResponse {
        var components = URLComponents()
        components.path = "/store"
        components.queryItems = [URLQueryItem(name: "account", value: account), URLQueryItem(name: "device", value: device)]
            + (message.map { [URLQueryItem(name: "message", value: $0)] } ?? [])
        return HTTPResponse(status: 303, headers: [("Location", components.string ?? "/store")])
    }
}
