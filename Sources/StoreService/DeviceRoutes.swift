import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import SimulatorConnection
import StoreKitCatalog

/// The device API, `/v1/devices/{device}/…`: every `StoreTransport` call, answered for the device
/// with payloads exactly as the store signed them. Documented in `docs/device-api.md`.
struct DeviceRoutes {
    let store: SimulatedAppStore
    let devices: InProcessStoreTransport
    let longPolls: LongPollBudget

    /// The longest a poll for updates waits, in seconds.
    static let longestWait = 60.0

    /// Registers every route of the device API.
    static func register(on router: inout HTTPService.Router, store: SimulatedAppStore, devices: InProcessStoreTransport, longPolls: LongPollBudget) {
        let routes = DeviceRoutes(store: store, devices: devices, longPolls: longPolls)
        let prefix = "/v1/devices/{device}"
        router.on("POST", prefix) { request, context in try await routes.registerDevice(request, device: context["device"]) }
        // Every other route is about a device the store has.
        func on(_ method: String, _ path: String, _ respond: @escaping @Sendable (HTTPRequest, RequestContext, String) async throws -> HTTPResponse) {
            router.on(method, prefix + path) { request, context in
                let device = context["device"]
                try await routes.requireDevice(device)
                return try await respond(request, context, device)
            }
        }
        on("GET", "/verification-context") { _, _, device in
            try APIResponse.json(DeviceAPI.VerificationContextBody(try await devices.verificationContext(device: device)))
        }
        on("GET", "/products") { request, _, device in try await routes.products(request, device: device) }
        on("POST", "/purchases") { request, _, device in
            let body = try APIResponse.decode(DeviceAPI.PurchaseBody.self, from: request)
            guard let purchase = body.request(device: device) else { throw APIError.badRequest("the purchase's offer is incomplete or of an unknown kind") }
            guard (1...100).contains(purchase.quantity) else { throw APIError.badRequest("quantity must be 1 to 100, not \(purchase.quantity)") }
            return try APIResponse.json(DeviceAPI.PurchaseOutcomeBody(try await devices.purchase(purchase)))
        }
        on("GET", "/transactions") { request, _, device in
            let items = try await devices.transactions(try Self.view(request), device: device)
            return try APIResponse.json(DeviceAPI.ItemsBody(items: items.map(DeviceAPI.SignedItemBody.init)))
        }
        on("POST", "/transactions/{id}/finish") { _, context, device in
            try await devices.finish(transactionID: try Self.transactionID(context["id"]), device: device)
            return try APIResponse.json(["finished": true])
        }
        on("POST", "/transactions/{id}/refund-request") { _, context, device in
            try await devices.requestRefund(transactionID: try Self.transactionID(context["id"]), device: device)
            return try APIResponse.json(["refunded": true])
        }
        on("POST", "/launch") { _, _, device in
            try await devices.launch(device: device)
            return try APIResponse.json(["launched": true])
        }
        on("GET", "/updates") { request, _, device in
            guard request.queryValue("ack") == nil else {
                throw APIError.badRequest("a GET changes nothing: acknowledge updates with POST /v1/devices/{device}/updates")
            }
            return try await routes.updates(request, device: device, acknowledging: nil)
        }
        on("POST", "/updates") { request, _, device in
            let body = try APIResponse.decode(DeviceAPI.UpdatesRequestBody.self, from: request)
            return try await routes.updates(request, device: device, acknowledging: body)
        }
        on("GET", "/subscriptions/{group}/statuses") { _, context, device in
            let statuses = try await devices.subscriptionStatuses(groupID: context["group"], device: device)
            return try APIResponse.json(DeviceAPI.StatusesBody(statuses: statuses.map(DeviceAPI.StatusBody.init)))
        }
        on("GET", "/subscriptions/{group}/intro-offer-eligibility") { _, context, device in
            try APIResponse.json(DeviceAPI.EligibilityBody(eligible: try await devices.isEligibleForIntroOffer(groupID: context["group"], device: device)))
        }
        on("GET", "/app-transaction") { _, _, device in
            try APIResponse.json(DeviceAPI.SignedItemBody(try await devices.appTransaction(device: device)))
        }
        on("GET", "/storefront") { _, _, device in
            try APIResponse.json(DeviceAPI.StorefrontBody(countryCode: try await devices.storefront(device: device).countryCode))
        }
        on("POST", "/sync") { _, _, device in
            try await devices.sync(device: device)
            return try APIResponse.json(["synced": true])
        }
        on("POST", "/sheets/{sheet}") { request, context, device in
            let sheet = context["sheet"]
            guard CustomerSheet(rawValue: sheet) != nil else {
                throw APIError.notFound("no sheet \(sheet); sheets are \(CustomerSheet.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let about = try request.queryValue("about").map { text throws(APIError) in try Self.transactionID(text) }
            try await devices.presentSheet(sheet, device: device, about: about)
            return try APIResponse.json(["closed": true])
        }
        on("GET", "/policies") { _, _, device in try APIResponse.json(DeviceAPI.PoliciesBody(try await devices.storePolicies(device: device))) }
        on("GET", "/payments") { _, _, device in
            try APIResponse.json(DeviceAPI.PaymentsBody(canMakePayments: try await devices.canMakePayments(device: device)))
        }
        on("GET", "/promotions") { _, _, device in
            try APIResponse.json(DeviceAPI.PromotionsBody(promotions: try await devices.promotedProducts(device: device)))
        }
        on("PUT", "/promotions") { request, _, device in
            let body = try APIResponse.decode(DeviceAPI.PromotionsBody.self, from: request)
            try await devices.updatePromotedProducts(body.promotions, device: device)
            return try APIResponse.json(DeviceAPI.PromotionsBody(promotions: try await devices.promotedProducts(device: device)))
        }
        on("POST", "/review-requests") { _, _, device in
            try APIResponse.json(DeviceAPI.ReviewRequestBody(shown: try await devices.requestReview(device: device)))
        }
    }

    /// `POST /v1/devices/{device}`: signs a device in to an account.
    private func registerDevice(_ request: HTTPRequest, device: String) async throws -> HTTPResponse {
        let body = try APIResponse.decode(DeviceAPI.RegistrationBody.self, from: request)
        let account = body.account.precomposedStringWithCanonicalMapping
        try await store.addDevice(device, account: account)
        return try APIResponse.json(["device": device, "account": account])
    }

    private func requireDevice(_ device: String) async throws {
        guard try await devices.accountOfDevice(device) != nil else {
            throw APIError(status: 404, family: "storeKit", code: "unknown", message: "no device \(device) in the store; register it with POST /v1/devices/\(device)")
        }
    }

    private func products(_ request: HTTPRequest, device: String) async throws -> HTTPResponse {
        let identifiers = request.query["ids"] ?? []
        let products = try await devices.products(for: identifiers, device: device)
        let storefront = try await devices.storefront(device: device)
        let configuration = await store.storeKitConfiguration
        return try APIResponse.json(DeviceAPI.ProductsBody(
            productIDs: products.map(\.id), storefront: storefront.countryCode, locale: try await store.currentSettings().locale,
            configurationVersion: Self.fingerprint(configuration.jsonData())))
    }

    /// A long poll: acknowledges what the client received (`POST` only: its body's `ack`), then answers
    /// the waiting entries of the channel at once, or as soon as one arrives, or empty after `wait`
    /// seconds. A `GET` reads the same without acknowledging anything.
    private func updates(_ request: HTTPRequest, device: String, acknowledging body: DeviceAPI.UpdatesRequestBody?) async throws -> HTTPResponse {
        let name = body?.channel ?? request.queryValue("channel") ?? "transactions"
        guard let transportChannel = TransportUpdate.Channel(rawValue: name) else {
            throw APIError.badRequest("channel is \(TransportUpdate.Channel.allCases.map(\.rawValue).joined(separator: ", ")), not \(name)")
        }
        let channel = LedgerUpdate.Channel(transportChannel)
        if let ack = body?.ack {
            try await store.acknowledgeUpdates(device: device, channel: channel, through: ack)
        }
        let waitText = body?.wait.map { String($0) } ?? request.queryValue("wait") ?? "25"
        guard let wait = Double(waitText), wait >= 0, wait.isFinite else { throw APIError.badRequest("wait must be a number of seconds, not \(waitText)") }
        let deadline = ContinuousClock.now + .milliseconds(Int64(min(wait, Self.longestWait) * 1000))
        var waiting = try await store.waitingUpdates(device: device, channel: channel)
        if waiting.isEmpty, ContinuousClock.now < deadline {
            // Only a poll that waits counts against the long polls' budget.
            waiting = try await longPolls.wait {
                var waiting: [LedgerUpdate] = []
                while waiting.isEmpty, ContinuousClock.now < deadline {
                    await LongPoll.wait(until: deadline) { await store.waitForUpdates(device: device, channel: channel) }
                    // A stopping server cancels its handlers: the poll answers at once with what it has (nothing),
                    // without waiting for the store, which may be busy.
                    if Task.isCancelled { break }
                    waiting = try await store.waitingUpdates(device: device, channel: channel)
                }
                return waiting
            }
        }
        var failure: String?
        if !waiting.isEmpty, case .verification(let code)? = try await store.simulatedError(forAPI: .verification) { failure = code.rawValue }
        let updates = waiting.prefix(100).map { DeviceAPI.UpdateBody(sequence: $0.sequence, TransportUpdate($0, simulatedVerificationFailure: failure)) }
        return try APIResponse.json(DeviceAPI.UpdatesBody(updates: updates))
    }

    private static func view(_ request: HTTPRequest) throws(APIError) -> TransactionView {
        switch request.queryValue("view") ?? "all" {
        case "all": return .all
        case "currentEntitlements": return .currentEntitlements
        case "unfinished": return .unfinished
        case "latest":
            guard let product = request.queryValue("productID") else { throw .badRequest("view=latest needs productID") }
            return .latest(productID: product)
        case "transaction":
            guard let id = request.queryValue("id") else { throw .badRequest("view=transaction needs id") }
            return .transaction(id: try transactionID(id))
        case let other: throw .badRequest("view is all, currentEntitlements, unfinished, latest or transaction, not \(other)")
        }
    }

    static func transactionID(_ text: String) throws(APIError) -> UInt64 {
        guard let id = UInt64(text) else { throw .badRequest("a transaction identifier is a number, not \"\(text)\"") }
        return id
    }

    /// A fingerprint of the configuration's bytes (FNV-1a), for clients that cache it.
    static func fingerprint(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
