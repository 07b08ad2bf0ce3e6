import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import SimulatorConnection
import StoreKitCatalog
import ServiceLogging
import Synchronization

/// A local App Store as a network service: the device API that apps reach through
/// `HTTPStoreTransport`, and the admin API (the Transaction Manager's and `SKTestSession`'s controls)
/// that the web pages and scripts use, and the App Store Server API for backends (`/inApps/…`); it posts
/// the store's server notifications to its notification URL. `storekit serve` runs one.
///
/// Requests are JSON; failures are `4xx` with `{"error": {"family", "code", "message"}}` (a `5xx` only
/// when the store's storage fails). The server keeps no state of its own beyond the store, whose
/// ledger it shares with every other process that opens the same directory.
public final class StoreServer: Sendable {
    public let store: SimulatedAppStore
    let http: HTTPServer
    private let delivery: Task<Void, Never>
    private let progress: RequestProgress
    /// Who may use the server (see ``ServerAccess``).
    public let access: ServerAccess

    /// Starts serving `store` on `host:port` (`port` 0 picks a free one).
    ///
    /// - Parameters:
    ///   - authority: The store's certificate authority, with its keys: given, the server answers
    ///     OCSP requests about its certificates at `/ocsp` (verifiers with online checks ask there).
    ///   - access: The host names it answers for, and its access token.
    ///   - delivery: How notifications are posted (how many in flight at once).
    ///   - metrics: Whether `GET /metrics` answers Prometheus' text format (requests, long polls,
    ///     notification delivery), behind the access token like the rest.
    ///   - logger: Where failures are logged: every `5xx` answer, once, with its request's id, and
    ///     every failed delivery attempt.
    ///   - retentionAnswerLimit: How long the developer's Get Retention Message endpoint has to answer
    ///     when a customer cancels (Apple's 700 ms; a test on a loaded machine may give it longer).
    /// - Throws: ``HTTPServerError`` when the port is in use or the address is not this machine's.
    public convenience init(store: SimulatedAppStore, authority: CertificateAuthority? = nil, host: String = "127.0.0.1",
                            port: UInt16 = 0, access: ServerAccess = ServerAccess(),
                            delivery: NotificationDeliverer.Options = .init(), metrics: Bool = false, logger: Logger = .disabled,
                            retentionAnswerLimit: Duration = CancellationFlow.appleAnswerLimit) throws(HTTPServerError) {
        try self.init(store: store, authority: authority, host: host, access: access, delivery: delivery, metrics: metrics,
                      logger: logger, retentionAnswerLimit: retentionAnswerLimit) { handler throws(HTTPServerError) in
            try HTTPServer(host: host, port: port, requestDeadline: access.requestDeadline, connectionLimit: access.connectionLimit,
                           connectionsPerAddress: access.connectionsPerAddress, logger: logger, handler: handler)
        }
    }

    /// Starts serving `store` on a socket the caller bound and set listening (the server closes it
    /// when it stops): for a port that must be known before the server starts, such as the OCSP
    /// responder's address in the store's certificates.
    public convenience init(store: SimulatedAppStore, authority: CertificateAuthority? = nil, listeningSocket: Int32,
                            access: ServerAccess = ServerAccess(), delivery: NotificationDeliverer.Options = .init(),
                            metrics: Bool = false, logger: Logger = .disabled,
                            retentionAnswerLimit: Duration = CancellationFlow.appleAnswerLimit) throws(HTTPServerError) {
        try self.init(store: store, authority: authority, host: "127.0.0.1", access: access, delivery: delivery, metrics: metrics,
                      logger: logger, retentionAnswerLimit: retentionAnswerLimit) { handler throws(HTTPServerError) in
            try HTTPServer(listeningSocket: listeningSocket, requestDeadline: access.requestDeadline, connectionLimit: access.connectionLimit,
                           connectionsPerAddress: access.connectionsPerAddress, logger: logger, handler: handler)
        }
    }

    private init(store: SimulatedAppStore, authority: CertificateAuthority?, host: String, access: ServerAccess,
                 delivery deliveryOptions: NotificationDeliverer.Options, metrics: Bool, logger: Logger, retentionAnswerLimit: Duration,
                 listen: (@escaping HTTPServer.Handler) throws(HTTPServerError) -> HTTPServer) throws(HTTPServerError) {
        self.store = store
        self.access = access
        let progress = RequestProgress(longPolls: LongPollBudget(limit: access.longPollLimit))
        self.progress = progress
        let registry = metrics ? MetricsRegistry() : nil
        var router = StoreRoutes.router(store: store, authority: authority, listeningAddress: host, access: access, progress: progress,
                                        performanceTests: RetentionPerformanceTester(store: store, logger: logger),
                                        cancellation: CancellationFlow(store: store, answerLimit: retentionAnswerLimit))
        router.logger = logger
        if let registry { StoreMetrics.register(on: &router, registry: registry, store: store) }
        let server = try listen(router.handler)
        progress.started(server)
        http = server
        var options = deliveryOptions
        options.metrics = registry
        options.logger = logger
        let deliverer = NotificationDeliverer(store: store, options: options)
        delivery = Task { await deliverer.run() }
    }

    /// `http://host:port`.
    public var url: URL { http.url }

    /// The port the server listens on.
    public var port: UInt16 { http.port }

    /// Requests whose handlers are working (long polls among them), or whose answers are being sent.
    public var requestsInProgress: Int { http.requestsInProgress }

    /// Connections open now.
    public var openConnections: Int { http.openConnections }

    /// Long polls waiting for a change now, against ``ServerAccess/longPollLimit``.
    public var longPollsWaiting: Int { progress.longPolls.count }

    /// Connections that waited for a request and were closed to make room for new clients.
    public var connectionsDropped: Int { http.connectionsDropped }

    /// Stops serving, without blocking a thread: open long polls answer at once, other requests in
    /// progress get up to `grace` to finish (see ``HTTPServer/stop(grace:)``), and notification
    /// delivery ends (an attempt cut short is not recorded; it is tried again).
    public func stop(grace: Duration = .seconds(2)) async {
        delivery.cancel()
        await http.stop(grace: grace)
        await delivery.value
    }

    /// Runs `body` with a server for `store` that is stopped when `body` returns or throws.
    public static func serving<Result>(_ store: SimulatedAppStore, authority: CertificateAuthority? = nil, access: ServerAccess = ServerAccess(),
                                       _ body: (StoreServer) async throws -> Result) async throws -> Result {
        let server = try StoreServer(store: store, authority: authority, access: access)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// Who may use a served store, as the local developer servers people trust decide it (Jupyter's
/// server; Docker's and Kubernetes' local APIs): on loopback by default, answering only for its own
/// names, and behind a token when it is exposed.
public struct ServerAccess: Sendable {
    /// Host names clients reach the server by, beyond its address, `localhost` and `127.0.0.1`
    /// (`--allowed-host`); a request naming another host is refused, which stops DNS rebinding.
    public var allowedHosts: [String]
    /// The access token: required, when set, by the pages, the admin API and the device API (the App
    /// Store Server API checks its own tokens; OCSP and `/health` are open).
    public var token: String?
    /// Connections one client address may hold at once (long polls included); `nil` is none on
    /// loopback, where every local client shares one address and waiting connections give way to
    /// new ones instead, and 2,000 on other addresses (see ``HTTPServer``).
    public var connectionsPerAddress: Int?
    /// Connections open at once, long polls included.
    public var connectionLimit: Int
    /// Long polls for updates waiting at once; a poll beyond them is answered `503` with
    /// `Retry-After`, so long polls never take the room the pages, purchases and `/health` need.
    public var longPollLimit: Int
    /// How long a client has to send a whole request, headers and body; a connection still sending
    /// then is closed, however steadily it trickles (see ``HTTPServer``).
    public var requestDeadline: Duration

    public init(allowedHosts: [String] = [], token: String? = nil, connectionsPerAddress: Int? = nil, connectionLimit: Int = 10_000,
                longPollLimit: Int? = nil, requestDeadline: Duration = .seconds(30)) {
        self.allowedHosts = allowedHosts
        self.token = token
        self.connectionsPerAddress = connectionsPerAddress
        self.connectionLimit = connectionLimit
        self.longPollLimit = longPollLimit ?? connectionLimit * 4 / 5
        self.requestDeadline = requestDeadline
    }

    /// Whether `host` is a loopback address, reachable from this machine only.
    public static func isLoopback(_ host: String) -> Bool {
        HTTPServer.isLoopback(host)
    }

    /// A new random token (32 bytes, hexadecimal).
    public static func makeToken() -> String { FormToken.make() }
}

/// The store's routes and the checks in front of them.
enum StoreRoutes {
    static func router(store: SimulatedAppStore, authority: CertificateAuthority?, listeningAddress: String, access: ServerAccess,
                       progress: RequestProgress, performanceTests: RetentionPerformanceTester, cancellation: CancellationFlow) -> HTTPService.Router {
        let devices = InProcessStoreTransport(store: store)
        let formToken = ServerAccess.makeToken()
        var router = HTTPService.Router()
        router.add(middleware: HostCheck(listeningAddress: listeningAddress, names: access.allowedHosts))
        if let token = access.token {
            // The App Store Server API has tokens of its own; verifiers ask OCSP responders without any.
            router.add(middleware: AccessToken(token: token) { _, context in
                ["inApps", "ocsp"].contains(context.segments.first ?? "") || context.segments == ["health"]
            })
        }
        router.add(middleware: CrossSiteCheck(formToken: formToken) { request, context in
            context.segments.first == "ocsp" && request.header("Content-Type")?.lowercased() == "application/ocsp-request"
        })
        router.add(middleware: StoreErrorMapping())
        DeviceRoutes.register(on: &router, store: store, devices: devices, longPolls: progress.longPolls)
        AdminRoutes.register(on: &router, store: store)
        CancellationRoutes.register(on: &router, flow: cancellation)
        WebRoutes.register(on: &router, store: store, devices: devices, cancellation: cancellation, formToken: formToken)
        // The App Store Server API, with Apple's error bodies and codes (docs/server-api.md).
        ServerAPIRoutes(store: store, wallClock: SystemStoreClock(), performanceTests: performanceTests).register(on: &router)
        router.on("POST", "/ocsp") { request, _ in await Self.ocsp(request.body, store: store, authority: authority) }
        router.on("GET", "/ocsp/{request}") { _, context in
            await Self.ocsp(Data(base64Encoded: context["request"]) ?? Data(), store: store, authority: authority)
        }
        // Devices read the products from it; the offer-signing key stays with the store (signatures come
        // from the CLI, the admin API or the developer's server).
        router.on("GET", "/v1/store/configuration") { _, _ in .json(200, await store.storeKitConfiguration.withoutPrivateKeys.jsonData()) }
        router.on("GET", "/v1/store") { _, _ in
            let identity = store.identity
            return try APIResponse.json(["bundleId": identity.bundleId, "environment": identity.environment.rawValue,
                                         "applicationVersion": identity.applicationVersion,
                                         "rootCertificate": store.rootCertificate.derRepresentation.base64EncodedString()])
        }
        // Degraded (503) while the store's writes fail (a full disk, a database away), with the latest
        // reason and since when; purchases meanwhile get 5xx and nothing half-written.
        router.on("GET", "/health") { _, _ in
            guard let failing = store.writeFailure else {
                return try APIResponse.json(HealthBody(status: "ok", requestsInProgress: progress.requestsInProgress))
            }
            var response = try APIResponse.json(HealthBody(status: "degraded", requestsInProgress: progress.requestsInProgress,
                                                           reason: "writes fail (\(failing.failure.reason.rawValue)): \(failing.failure.message)",
                                                           failingSince: AppStoreJSON.milliseconds(from: failing.since)), status: 503)
            response.headers.append(("Cache-Control", "no-store"))
            return response
        }
        return router
    }

    /// The OCSP responder of the store's authority: `POST /ocsp` with a DER request, or
    /// `GET /ocsp/{base64 request}`; answers with real time (verifiers compare with their own clocks).
    private static func ocsp(_ der: Data, store: SimulatedAppStore, authority: CertificateAuthority?) async -> HTTPResponse {
        guard let authority else { return .text(404, "this server has no OCSP responder") }
        let revoked = (try? await store.revokedCertificates()) ?? []
        let answer = authority.ocspResponse(to: der, revoked: revoked, now: SystemStoreClock().now())
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/ocsp-response")], body: answer)
    }
}

/// Maps the engine's and the transport's failures to the API's answers, for every route.
struct StoreErrorMapping: HTTPMiddleware {
    func handle(_ request: HTTPRequest, context: RequestContext,
                next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        do {
            return try await next(request, context)
        } catch let error as StoreTransportError {
            throw APIError(error)
        } catch let error as AppStoreError {
            throw APIError(error)
        } catch let refusal as RetentionMessagingRefusal {
            throw APIError(status: refusal.status, family: "retentionMessaging", code: String(refusal.code), message: refusal.message)
        }
    }
}

/// `GET /health`: the server answers, and how many requests it is working on (open long polls
/// included, this one too).
struct HealthBody: Encodable {
    var status: String
    var requestsInProgress: Int
    /// While degraded: why, and since when (real time, milliseconds).
    var reason: String?
    var failingSince: Int64?
}

/// The server a router belongs to, known once it started, for what `/health` reports. Held weakly:
/// the server holds the router.
final class RequestProgress: Sendable {
    private struct Reference { weak var server: HTTPServer? }
    private let reference = Mutex(Reference())
    /// The long polls' budget of the server's device routes.
    let longPolls: LongPollBudget

    init(longPolls: LongPollBudget) { self.longPolls = longPolls }

    func started(_ server: HTTPServer) { reference.withLock { $0.server = server } }

    var requestsInProgress: Int { reference.withLock { $0.server }?.requestsInProgress ?? 0 }
}

/// Long polls waiting at once, against their own limit (``ServerAccess/longPollLimit``).
final class LongPollBudget: Sendable {
    let limit: Int
    private let waiting = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Polls holding a place now.
    var count: Int { min(waiting.load(ordering: .relaxed), limit) }

    /// Runs `poll` if a place is free; otherwise throws `503` with `Retry-After: 1`.
    func wait<Result: Sendable>(_ poll: () async throws -> Result) async throws -> Result {
        guard waiting.add(1, ordering: .relaxed).newValue <= limit else {
            waiting.subtract(1, ordering: .relaxed)
            var refusal = APIError(status: 503, family: "other", code: "tooManyLongPolls",
                                   message: "\(limit) polls for updates are waiting already; poll again in a second")
            refusal.headers = [("Retry-After", "1")]
            throw refusal
        }
        defer { waiting.subtract(1, ordering: .relaxed) }
        return try await poll()
    }
}

/// A failure answered with a status and the JSON error body.
struct APIError: HTTPResponseError {
    var status: Int
    var body: DeviceAPI.ErrorBody
    /// Headers the answer carries beside the body (`Retry-After`).
    var headers: [(name: String, value: String)] = []

    init(status: Int, family: String, code: String, message: String) {
        self.status = status
        body = DeviceAPI.ErrorBody(family: family, code: code, message: message)
    }

    static func notFound(_ message: String) -> APIError { APIError(status: 404, family: "other", code: "notFound", message: message) }
    static func badRequest(_ message: String) -> APIError { APIError(status: 400, family: "other", code: "badRequest", message: message) }

    static func require(method: String, _ request: HTTPRequest) throws(APIError) {
        guard request.method == method else {
            throw APIError(status: 405, family: "other", code: "methodNotAllowed", message: "\(request.path) takes \(method), not \(request.method)")
        }
    }

    /// A store-side failure: StoreKit's families keep their case names.
    init(_ error: StoreTransportError) {
        body = DeviceAPI.ErrorBody(error)
        switch error {
        case .storeKit(let code, _): status = code == "notEntitled" ? 403 : code == "unknown" ? 404 : 422
        case .purchase, .refundRequest: status = 422
        case .storage(let failure): status = Self.status(of: failure)
        case .other: status = 409
        }
        if case .storage(let failure) = error, failure.reason == .unavailable { headers.append((name: "Retry-After", value: "1")) }
    }

    init(_ error: AppStoreError) {
        switch error {
        case .storeKit(let code, let message): self.init(.storeKit(code.rawValue, message: message))
        case .purchase(let code, let message): self.init(.purchase(code.rawValue, message: message))
        case .refundRequest(let code, let message): self.init(.refundRequest(code.rawValue, message: message))
        case .verification(let code, let message): self.init(status: 422, family: "verification", code: code.rawValue, message: message)
        case .control(let code, let message):
            let status: Int
            switch code {
            case .noTransactionFound, .noSubscriptionFound, .invalidProductIdentifier, .fileNotFound: status = 404
            case .serviceUnavailable: status = 503
            default: status = 409
            }
            self.init(status: status, family: "control", code: code.rawValue, message: message)
        case .storage(let failure): self.init(StoreTransportError.storage(failure))
        }
    }

    /// A storage failure's status: `503` while the database is away (with `Retry-After`), `507` when
    /// the disk is full, `500` otherwise.
    static func status(of failure: StorageFailure) -> Int {
        switch failure.reason {
        case .unavailable: return 503
        case .full: return 507
        case .readOnly, .damaged, .failed: return 500
        }
    }

    var response: HTTPResponse {
        var response = HTTPResponse.json(status, (try? APIResponse.encoder.encode(body))
                                         ?? Data(#"{"error":{"family":"other","code":"failed","message":""}}"#.utf8))
        response.headers += headers
        return response
    }
}

/// Encoding and decoding of bodies.
enum APIResponse {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func json<Body: Encodable>(_ body: Body, status: Int = 200) throws -> HTTPResponse {
        .json(status, try encoder.encode(body))
    }

    static func json(_ object: [String: Any], status: Int = 200) throws -> HTTPResponse {
        .json(status, try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// A body decoded as `Body`; a malformed one is a `400` naming the problem.
    static func decode<Body: Decodable>(_ type: Body.Type, from request: HTTPRequest) throws(APIError) -> Body {
        do {
            return try JSONDecoder().decode(type, from: request.body.isEmpty ? Data("{}".utf8) : request.body)
        } catch let DecodingError.keyNotFound(key, _) {
            throw .badRequest("the body lacks \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            throw .badRequest("the body's \(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type")
        } catch {
            throw .badRequest("the body is not the JSON this call takes: \(error.localizedDescription)")
        }
    }
}
