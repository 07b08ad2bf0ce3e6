import AppStoreModels
import Foundation
import HTTPClient
import StoreKitCatalog
import Synchronization

/// A ``StoreTransport`` to a store served over HTTP (`storekit serve`): apps in other processes,
/// on other machines of a test network, share one store with the command line and backends.
///
/// Every call is one request of the device API (`docs/device-api.md`); signed payloads arrive exactly
/// as the store signed them and are verified by the ``StoreClient`` as any others. `Transaction.updates`
/// and `Status.updates` are long polls that acknowledge what they received with the next poll, so
/// an entry whose response was lost is delivered again rather than never; when the server cannot be
/// reached they retry with back-off (a quarter second, doubling to five) until it answers.
///
/// With a cache directory the transport behaves as StoreKit does offline: it keeps the last signed
/// `currentEntitlements`, subscription statuses and verification context it received, and answers
/// from them (re-verified by the client like anything else, never trusted unsigned) when the
/// server is down. Purchases and other calls then fail with `StoreKitError.networkError`.
public final class HTTPStoreTransport: StoreTransport {
    /// The store's address, such as `http://127.0.0.1:8080`.
    public let server: URL
    private let cache: OfflineCache?
    /// The last feed position received per device and channel, acknowledged by the next poll.
    private let received = Mutex<[String: Int64]>([:])
    /// The store's `.storekit` configuration, by its fingerprint.
    private let configuration = Mutex<(version: String, configuration: StoreKitConfiguration)?>(nil)
    /// How long one poll for updates waits at the server, in seconds.
    let pollSeconds: Double
    /// What every request carries: the mark of a program (servers refuse changes that a web page could
    /// have made the browser send) and the server's access token, when it has one.
    private let headers: [(name: String, value: String)]

    /// A transport to the store at `server`.
    ///
    /// - Parameters:
    ///   - cacheDirectory: Where the offline cache lives; `nil` keeps none.
    ///   - pollSeconds: How long one poll for updates waits at the server before asking again.
    ///   - token: The server's access token (`storekit serve --token`, or printed by a server that
    ///     listens beyond loopback), sent as `Authorization: Bearer`.
    public init(server: URL, cacheDirectory: URL? = nil, pollSeconds: Double = 25, token: String? = nil) {
        self.server = server
        headers = [(DeviceAPI.programHeader, "1")] + (token.map { [("Authorization", "Bearer \($0)")] } ?? [])
        self.cache = cacheDirectory.map(OfflineCache.init)
        self.pollSeconds = pollSeconds
    }

    // MARK: Requests

    private func request<Response: Decodable>(_ method: String, _ path: String, query: [(name: String, value: String)] = [], body: Data? = nil,
                                              as type: Response.Type) async throws -> Response {
        let data = try await send(HTTPClient.Request(method, server, path: path, query: query,
                                                     headers: headers + (body == nil ? [] : [("Content-Type", "application/json")]), body: body,
                                                     timeout: .seconds(pollSeconds + 15)))
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw StoreTransportError.other("the App Store at \(server) answered \(path) with a body that is not \(type): \(error)")
        }
    }

    /// Sends a request to the store: the body of a 2xx answer, the store's error for others, and
    /// `networkError` when the store cannot be reached.
    private func send(_ request: HTTPClient.Request) async throws -> Data {
        let answer: HTTPClient.Response
        do {
            answer = try await HTTPClient.shared.send(request)
        } catch let failure as HTTPClient.Failure {
            throw StoreTransportError.storeKit("networkError", message: "cannot reach the App Store at \(server): \(failure)")
        }
        guard answer.isSuccess else {
            if let failure = try? JSONDecoder().decode(DeviceAPI.ErrorBody.self, from: answer.body) { throw failure.transportError }
            throw StoreTransportError.other("the App Store at \(server) answered HTTP \(answer.status)")
        }
        return answer.body
    }

    private func devicePath(_ device: String, _ rest: String = "") -> String {
        DeviceAPI.devicePath(device) + rest
    }

    private static func encode<Body: Encodable>(_ body: Body) throws -> Data { try JSONEncoder().encode(body) }

    private struct Acknowledged: Decodable {}

    static func isNetworkError(_ error: any Error) -> Bool {
        if case StoreTransportError.storeKit("networkError", _)? = error as? StoreTransportError { return true }
        return false
    }

    /// Runs a read that has an offline answer: the server's answer is kept in the cache, and the
    /// cache answers when the server cannot be reached.
    private func cached<Value: Codable>(_ key: String, device: String, _ fetch: () async throws -> Value) async throws -> Value {
        do {
            let value = try await fetch()
            cache?.store(value, key: key, device: device)
            return value
        } catch where Self.isNetworkError(error) {
            guard let cache, let value = cache.load(Value.self, key: key, device: device) else { throw error }
            return value
        }
    }

    // MARK: Registering a device

    /// Signs a device in to an account at the store (the first launch of the app on it).
    public func register(device: String, account: String) async throws {
        _ = try await request("POST", devicePath(device), body: try Self.encode(DeviceAPI.RegistrationBody(account: account)),
                              as: Acknowledged.self)
    }

    // MARK: StoreTransport

    public func verificationContext(device: String) async throws -> VerificationContext {
        let body = try await cached("context", device: device) {
            try await request("GET", devicePath(device, "/verification-context"), as: DeviceAPI.VerificationContextBody.self)
        }
        guard let context = body.context else { throw StoreTransportError.other("the store's root certificates are not base64 DER") }
        return context
    }

    public func products(for identifiers: [String], device: String) async throws -> [CatalogProduct] {
        let body = try await request("GET", devicePath(device, "/products"), query: identifiers.map { ("ids", $0) },
                                     as: DeviceAPI.ProductsBody.self)
        let configuration = try await storeConfiguration(version: body.configurationVersion)
        let storefront = StoreKitCatalog.Storefront(code: body.storefront) ?? .unitedStates
        return Catalog(configuration: configuration, locale: body.locale, storefront: storefront).products(for: body.productIDs)
    }

    /// The store's configuration, fetched again only when its fingerprint changes.
    private func storeConfiguration(version: String) async throws -> StoreKitConfiguration {
        if let known = configuration.withLock({ $0 }), known.version == version { return known.configuration }
        let data = try await send(HTTPClient.Request("GET", server, path: "/v1/store/configuration", headers: headers))
        do {
            let read = try StoreKitConfiguration.read(data, fileName: "\(server)/v1/store/configuration").configuration
            configuration.withLock { $0 = (version, read) }
            return read
        } catch {
            throw StoreTransportError.other("the store's configuration cannot be read: \(error)")
        }
    }

    public func purchase(_ request: TransportPurchaseRequest) async throws -> TransportPurchaseOutcome {
        let body = try await self.request("POST", devicePath(request.device, "/purchases"), body: try Self.encode(DeviceAPI.PurchaseBody(request)),
                                          as: DeviceAPI.PurchaseOutcomeBody.self)
        guard let outcome = body.purchaseOutcome else { throw StoreTransportError.other("the store answered an unknown purchase outcome \(body.outcome)") }
        return outcome
    }

    public func transactions(_ view: TransactionView, device: String) async throws -> [SignedItem] {
        let query: [(name: String, value: String)]
        switch view {
        case .all: query = [("view", "all")]
        case .currentEntitlements: query = [("view", "currentEntitlements")]
        case .unfinished: query = [("view", "unfinished")]
        case .latest(let productID): query = [("view", "latest"), ("productID", productID)]
        case .transaction(let id): query = [("view", "transaction"), ("id", String(id))]
        }
        let fetch = { try await self.request("GET", self.devicePath(device, "/transactions"), query: query, as: DeviceAPI.ItemsBody.self) }
        let body = view == .currentEntitlements ? try await cached("currentEntitlements", device: device, fetch) : try await fetch()
        return body.items.map(\.item)
    }

    public func finish(transactionID: UInt64, device: String) async throws {
        _ = try await request("POST", devicePath(device, "/transactions/\(transactionID)/finish"), as: Acknowledged.self)
    }

    public func launch(device: String) async throws {
        do {
            _ = try await request("POST", devicePath(device, "/launch"), as: Acknowledged.self)
        } catch where Self.isNetworkError(error) && cache != nil {
            // An app starts offline too; the store queues its unfinished transactions at the next launch.
        }
    }

    public func nextUpdates(device: String, channel: TransportUpdate.Channel) async throws -> [TransportUpdate] {
        let key = device + "\u{0}" + channel.rawValue
        var backOff = 0.25
        while true {
            try Task.checkCancellation()
            let poll = DeviceAPI.UpdatesRequestBody(channel: channel.rawValue, wait: pollSeconds, ack: received.withLock { $0[key] })
            do {
                let body = try await request("POST", devicePath(device, "/updates"), body: try Self.encode(poll), as: DeviceAPI.UpdatesBody.self)
                backOff = 0.25
                if let last = body.updates.last {
                    received.withLock { $0[key] = last.sequence }
                    return body.updates.map(\.update)
                }
            } catch where Self.isNetworkError(error) {
                try await Task.sleep(for: .milliseconds(Int(backOff * 1000)))
                backOff = min(backOff * 2, 5)
            }
        }
    }

    public func subscriptionStatuses(groupID: String, device: String) async throws -> [TransportStatus] {
        let path = devicePath(device, "/subscriptions/\(Self.segment(groupID))/statuses")
        let body = try await cached("statuses-\(groupID)", device: device) { try await request("GET", path, as: DeviceAPI.StatusesBody.self) }
        return body.statuses.map(\.status)
    }

    public func isEligibleForIntroOffer(groupID: String, device: String) async throws -> Bool {
        try await request("GET", devicePath(device, "/subscriptions/\(Self.segment(groupID))/intro-offer-eligibility"),
                          as: DeviceAPI.EligibilityBody.self).eligible
    }

    public func appTransaction(device: String) async throws -> SignedItem {
        try await cached("appTransaction", device: device) {
            try await request("GET", devicePath(device, "/app-transaction"), as: DeviceAPI.SignedItemBody.self)
        }.item
    }

    public func storefront(device: String) async throws -> StoreKitCatalog.Storefront {
        let body = try await cached("storefront", device: device) {
            try await request("GET", devicePath(device, "/storefront"), as: DeviceAPI.StorefrontBody.self)
        }
        guard let storefront = StoreKitCatalog.Storefront(code: body.countryCode) else { throw StoreTransportError.other("unknown storefront \(body.countryCode)") }
        return storefront
    }

    public func sync(device: String) async throws {
        _ = try await request("POST", devicePath(device, "/sync"), as: Acknowledged.self)
    }

    public func requestRefund(transactionID: UInt64, device: String) async throws {
        _ = try await request("POST", devicePath(device, "/transactions/\(transactionID)/refund-request"), as: Acknowledged.self)
    }

    public func presentSheet(_ sheet: String, device: String, about transactionID: UInt64?) async throws {
        let query = transactionID.map { [(name: "about", value: String($0))] } ?? []
        _ = try await request("POST", devicePath(device, "/sheets/\(Self.segment(sheet))"), query: query, as: Acknowledged.self)
    }

    public func storePolicies(device: String) async throws -> StorePolicies {
        try await request("GET", devicePath(device, "/policies"), as: DeviceAPI.PoliciesBody.self).policies
    }

    public func canMakePayments(device: String) async throws -> Bool {
        try await request("GET", devicePath(device, "/payments"), as: DeviceAPI.PaymentsBody.self).canMakePayments
    }

    public func promotedProducts(device: String) async throws -> [TransportPromotion] {
        try await request("GET", devicePath(device, "/promotions"), as: DeviceAPI.PromotionsBody.self).promotions
    }

    public func updatePromotedProducts(_ promotions: [TransportPromotion], device: String) async throws {
        let body = try JSONEncoder().encode(DeviceAPI.PromotionsBody(promotions: promotions))
        _ = try await request("PUT", devicePath(device, "/promotions"), body: body, as: DeviceAPI.PromotionsBody.self)
    }

    public func requestReview(device: String) async throws -> Bool {
        try await request("POST", devicePath(device, "/review-requests"), as: DeviceAPI.ReviewRequestBody.self).shown
    }

    private static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? text
    }
}

extension StoreClient {
    /// Connects to a store served over HTTP (`storekit serve`) as the app on `device`.
    ///
    /// - Parameters:
    ///   - account: Signs the device in to this account first (the app's first launch on it).
    ///   - cacheDirectory: Where the client keeps what it needs offline (see ``HTTPStoreTransport``).
    /// - Throws: `StoreKitError.networkError` when the server cannot be reached and nothing is cached.
    public static func connect(server: URL, device: String, account: String? = nil, cacheDirectory: URL? = nil) async throws -> StoreClient {
        let transport = HTTPStoreTransport(server: server, cacheDirectory: cacheDirectory)
        if let account { try await storeKitCall { try await transport.register(device: device, account: account) } }
        return try await connect(to: transport, device: device)
    }
}

/// The signed answers kept for offline use, one JSON file per device and kind, written atomically.
final class OfflineCache: Sendable {
    let directory: URL

    init(directory: URL) { self.directory = directory }

    private func file(_ key: String, device: String) -> URL {
        let name = "\(device)-\(key)".map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }
        return directory.appendingPathComponent(String(name) + ".json")
    }

    func store<Value: Encodable>(_ value: Value, key: String, device: String) {
        guard let data = try? JSONEncoder().encode(value) else { return }
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? data.write(to: file(key, device: device), options: .atomic)
    }

    func load<Value: Decodable>(_ type: Value.Type, key: String, device: String) -> Value? {
        guard let data = try? Data(contentsOf: file(key, device: device)) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }
}
