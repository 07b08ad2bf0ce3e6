import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import OpenStoreKitTesting
import StoreKitCatalog

/// The device API, `/v1/devices/{device}/…`: every `StoreTransport` call, answered for the device
/// with payloads exactly as the store signed them. Documented in `docs/device-api.md`.
struct DeviceRoutes {
    let store: SimulatedAppStore
    let devices: InProcessStoreTransport

    /// The longest a poll for updates waits, in seconds.
    static let longestWait = 60.0

    func handle(_ request: HTTPRequest, path: [String]) async throws -> HTTPResponse {
        guard let device = path.first, !device.isEmpty else { throw APIError.notFound("name a device: /v1/devices/{device}/…") }
        let rest = Array(path.dropFirst())
        let route = Route(method: request.method, path: rest)
        if rest.isEmpty {
            try APIError.require(method: "POST", request)
            let body = try APIResponse.decode(DeviceAPI.RegistrationBody.self, from: request)
            try await store.addDevice(device, account: body.account)
            return try APIResponse.json(["device": device, "account": body.account])
        }
        guard try await devices.accountOfDevice(device) != nil else {
            throw APIError(status: 404, family: "storeKit", code: "unknown", message: "no device \(device) in the store; register it with POST /v1/devices/\(device)")
        }
        if route.match("GET", "verification-context") != nil {
            return try APIResponse.json(DeviceAPI.VerificationContextBody(try await devices.verificationContext(device: device)))
        }
        if route.match("GET", "products") != nil {
            let identifiers = request.query["ids"] ?? []
            let products = try await devices.products(for: identifiers, device: device)
            let storefront = try await devices.storefront(device: device)
            let configuration = await store.storeKitConfiguration
            return try APIResponse.json(DeviceAPI.ProductsBody(
                productIDs: products.map(\.id), storefront: storefront.countryCode, locale: try await store.currentSettings().locale,
                configurationVersion: Self.fingerprint(configuration.jsonData())))
        }
        if route.match("POST", "purchases") != nil {
            let body = try APIResponse.decode(DeviceAPI.PurchaseBody.self, from: request)
            guard let purchase = body.request(device: device) else { throw APIError.badRequest("the purchase's offer is incomplete or of an unknown kind") }
            guard (1...100).contains(purchase.quantity) else { throw APIError.badRequest("quantity must be 1 to 100, not \(purchase.quantity)") }
            return try APIResponse.json(DeviceAPI.PurchaseOutcomeBody(try await devices.purchase(purchase)))
        }
        if route.match("GET", "transactions") != nil {
            let items = try await devices.transactions(try Self.view(request), device: device)
            return try APIResponse.json(DeviceAPI.ItemsBody(items: items.map(DeviceAPI.SignedItemBody.init)))
        }
        if let captured = route.match("POST", "transactions", "*", "finish") {
            let id = captured[0]
            try await devices.finish(transactionID: try Self.transactionID(id), device: device)
            return try APIResponse.json(["finished": true])
        }
        if let captured = route.match("POST", "transactions", "*", "refund-request") {
            let id = captured[0]
            try await devices.requestRefund(transactionID: try Self.transactionID(id), device: device)
            return try APIResponse.json(["refunded": true])
        }
        if route.match("POST", "launch") != nil {
            try await devices.launch(device: device)
            return try APIResponse.json(["launched": true])
        }
        if route.match("GET", "updates") != nil {
            return try await updates(request, device: device)
        }
        if let captured = route.match("GET", "subscriptions", "*", "statuses") {
            let group = captured[0]
            let statuses = try await devices.subscriptionStatuses(groupID: group, device: device)
            return try APIResponse.json(DeviceAPI.StatusesBody(statuses: statuses.map(DeviceAPI.StatusBody.init)))
        }
        if let captured = route.match("GET", "subscriptions", "*", "intro-offer-eligibility") {
            let group = captured[0]
            return try APIResponse.json(DeviceAPI.EligibilityBody(eligible: try await devices.isEligibleForIntroOffer(groupID: group, device: device)))
        }
        if route.match("GET", "app-transaction") != nil {
            return try APIResponse.json(DeviceAPI.SignedItemBody(try await devices.appTransaction(device: device)))
        }
        if route.match("GET", "storefront") != nil {
            return try APIResponse.json(DeviceAPI.StorefrontBody(countryCode: try await devices.storefront(device: device).countryCode))
        }
        if route.match("POST", "sync") != nil {
            try await devices.sync(device: device)
            return try APIResponse.json(["synced": true])
        }
        if let captured = route.match("POST", "sheets", "*") {
            let sheet = captured[0]
            guard CustomerSheet(rawValue: sheet) != nil else {
                throw APIError.notFound("no sheet \(sheet); sheets are \(CustomerSheet.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let about = try request.queryValue("about").map { text throws(APIError) in try Self.transactionID(text) }
            try await devices.presentSheet(sheet, device: device, about: about)
            return try APIResponse.json(["closed": true])
        }
        if route.match("GET", "policies") != nil {
            return try APIResponse.json(DeviceAPI.PoliciesBody(try await devices.storePolicies(device: device)))
        }
        if route.match("GET", "payments") != nil {
            return try APIResponse.json(DeviceAPI.PaymentsBody(canMakePayments: try await devices.canMakePayments(device: device)))
        }
        if Self.knownPaths.contains(where: { $0.matches(rest) }) {
            throw APIError(status: 405, family: "other", code: "methodNotAllowed", message: "\(request.path) does not take \(request.method)")
        }
        throw APIError.notFound("no such path \(request.path)")
    }

    /// A long poll: acknowledges what the client received (`ack`), then answers the waiting entries
    /// of the channel at once, or as soon as one arrives, or empty after `wait` seconds.
    private func updates(_ request: HTTPRequest, device: String) async throws -> HTTPResponse {
        let name = request.queryValue("channel") ?? "transactions"
        guard let transportChannel = TransportUpdate.Channel(rawValue: name) else {
            throw APIError.badRequest("channel is \(TransportUpdate.Channel.allCases.map(\.rawValue).joined(separator: ", ")), not \(name)")
        }
        let channel = LedgerUpdate.Channel(transportChannel)
        if let ackText = request.queryValue("ack") {
            guard let ack = Int64(ackText) else { throw APIError.badRequest("ack must be a sequence number, not \(ackText)") }
            try await store.acknowledgeUpdates(device: device, channel: channel, through: ack)
        }
        let waitText = request.queryValue("wait") ?? "25"
        guard let wait = Double(waitText), wait >= 0, wait.isFinite else { throw APIError.badRequest("wait must be a number of seconds, not \(waitText)") }
        let deadline = ContinuousClock.now + .milliseconds(Int64(min(wait, Self.longestWait) * 1000))
        var waiting = try await store.waitingUpdates(device: device, channel: channel)
        while waiting.isEmpty, ContinuousClock.now < deadline {
            await LongPoll.wait(until: deadline) { await store.waitForUpdates(device: device, channel: channel) }
            // A stopping server cancels its handlers: the poll answers at once with what it has (nothing),
            // without waiting for the store, which may be busy.
            if Task.isCancelled { break }
            waiting = try await store.waitingUpdates(device: device, channel: channel)
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

    /// The paths the device API knows, to tell a wrong method from an unknown path.
    private static let knownPaths: [PathPattern] = [
        ["verification-context"], ["products"], ["purchases"], ["transactions"], ["transactions", "*", "finish"],
        ["transactions", "*", "refund-request"], ["launch"], ["updates"], ["subscriptions", "*", "statuses"],
        ["subscriptions", "*", "intro-offer-eligibility"], ["app-transaction"], ["storefront"], ["sync"], ["sheets", "*"], ["payments"], ["policies"],
    ].map(PathPattern.init)
}

/// A path with `*` for one segment of any value.
struct PathPattern {
    let segments: [String]
    init(_ segments: [String]) { self.segments = segments }

    func matches(_ path: [String]) -> Bool {
        path.count == segments.count && zip(segments, path).allSatisfy { $0 == "*" || $0 == $1 }
    }
}
