import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import OpenStoreKitTesting
import StoreKitCatalog
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

    /// Starts serving `store` on `host:port` (`port` 0 picks a free one).
    ///
    /// - Parameter authority: The store's certificate authority, with its keys: given, the server
    ///   answers OCSP requests about its certificates at `/ocsp` (verifiers with online checks ask there).
    public convenience init(store: SimulatedAppStore, authority: CertificateAuthority? = nil, host: String = "127.0.0.1",
                            port: UInt16 = 0) throws(HTTPServerError) {
        try self.init(store: store, authority: authority) { handler throws(HTTPServerError) in try HTTPServer(host: host, port: port, handler: handler) }
    }

    /// Starts serving `store` on a socket the caller bound and set listening (the server closes it
    /// when it stops): for a port that must be known before the server starts, such as the OCSP
    /// responder's address in the store's certificates.
    public convenience init(store: SimulatedAppStore, authority: CertificateAuthority? = nil, listeningSocket: Int32) throws(HTTPServerError) {
        try self.init(store: store, authority: authority) { handler throws(HTTPServerError) in try HTTPServer(listeningSocket: listeningSocket, handler: handler) }
    }

    private init(store: SimulatedAppStore, authority: CertificateAuthority?,
                 listen: (@escaping HTTPServer.Handler) throws(HTTPServerError) -> HTTPServer) throws(HTTPServerError) {
        self.store = store
        let progress = RequestProgress()
        let router = Router(store: store, devices: InProcessStoreTransport(store: store), authority: authority, progress: progress)
        let server = try listen { request in await router.route(request) }
        progress.started(server)
        http = server
        let deliverer = NotificationDeliverer(store: store)
        delivery = Task { await deliverer.run() }
    }

    /// `http://host:port`.
    public var url: URL { http.url }

    /// The port the server listens on.
    public var port: UInt16 { http.port }

    /// Requests whose handlers are working (long polls among them), or whose answers are being sent.
    public var requestsInProgress: Int { http.requestsInProgress }

    /// Stops serving, without blocking a thread: open long polls answer at once, other requests in
    /// progress get up to `grace` to finish (see ``HTTPServer/stop(grace:)``), and notification
    /// delivery ends (an attempt cut short is not recorded; it is tried again).
    public func stop(grace: Duration = .seconds(2)) async {
        delivery.cancel()
        await http.stop(grace: grace)
        await delivery.value
    }

    /// Runs `body` with a server for `store` that is stopped when `body` returns or throws.
    public static func serving<Result>(_ store: SimulatedAppStore, authority: CertificateAuthority? = nil,
                                       _ body: (StoreServer) async throws -> Result) async throws -> Result {
        let server = try StoreServer(store: store, authority: authority)
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

/// Maps requests to the device and admin APIs.
struct Router: Sendable {
    let store: SimulatedAppStore
    let devices: InProcessStoreTransport
    let authority: CertificateAuthority?
    /// How many requests the server is working on, for `/health`.
    let progress: RequestProgress

    func route(_ request: HTTPRequest) async -> HTTPResponse {
        let segments = request.pathSegments.map { $0.removingPercentEncoding ?? $0 }
        if segments.first == "inApps" { return await ServerAPIRoutes(store: store, wallClock: SystemStoreClock()).handle(request) }
        if segments.first == "ocsp" { return await ocsp(request, path: Array(segments.dropFirst())) }
        do {
            if WebRoutes.handles(segments) { return try await WebRoutes(store: store, devices: devices).handle(request, path: segments) }
            switch Array(segments.prefix(2)) {
            case ["v1", "devices"]:
                return try await DeviceRoutes(store: store, devices: devices).handle(request, path: Array(segments.dropFirst(2)))
            case ["v1", "admin"]:
                return try await AdminRoutes(store: store).handle(request, path: Array(segments.dropFirst(2)))
            case ["v1", "store"]:
                return try await storeInfo(request, path: Array(segments.dropFirst(2)))
            default:
                if segments == ["health"] {
                    return try APIResponse.json(HealthBody(status: "ok", requestsInProgress: progress.requestsInProgress))
                }
                throw APIError.notFound("no such path \(request.path)")
            }
        } catch let error as APIError {
            return error.response
        } catch let error as StoreTransportError {
            return APIError(error).response
        } catch let error as AppStoreError {
            return APIError(error).response
        } catch {
            return APIError(status: 500, family: "other", code: "failed", message: "\(error)").response
        }
    }

    /// The OCSP responder of the store's authority: `POST /ocsp` with a DER request, or
    /// `GET /ocsp/{base64 request}`; answers with real time (verifiers compare with their own clocks).
    private func ocsp(_ request: HTTPRequest, path: [String]) async -> HTTPResponse {
        guard let authority else { return .text(404, "this server has no OCSP responder") }
        let der: Data?
        switch (request.method, path.count) {
        case ("POST", 0): der = request.body
        case ("GET", 1): der = Data(base64Encoded: path[0])
        default: return .text(405, "OCSP requests are POSTed to /ocsp or sent as GET /ocsp/{base64}")
        }
        let revoked = (try? await store.revokedCertificates()) ?? []
        let answer = authority.ocspResponse(to: der ?? Data(), revoked: revoked, now: SystemStoreClock().now())
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/ocsp-response")], body: answer)
    }

    /// `GET /v1/store/configuration` (the `.storekit` file the store sells) and `GET /v1/store` (its identity).
    private func storeInfo(_ request: HTTPRequest, path: [String]) async throws -> HTTPResponse {
        try APIError.require(method: "GET", request)
        switch path {
        case ["configuration"]:
            return .json(200, await store.storeKitConfiguration.jsonData())
        case []:
            let identity = store.identity
            return try APIResponse.json(["bundleId": identity.bundleId, "environment": identity.environment.rawValue,
                                         "applicationVersion": identity.applicationVersion,
                                         "rootCertificate": store.rootCertificate.derRepresentation.base64EncodedString()])
        default:
            throw APIError.notFound("no such path \(request.path)")
        }
    }
}

/// `GET /health`: the server answers, and how many requests it is working on (open long polls
/// included, this one too).
struct HealthBody: Encodable {
    var status: String
    var requestsInProgress: Int
}

/// The server a router belongs to, known once it started, for what `/health` reports. Held weakly:
/// the server holds the router.
final class RequestProgress: Sendable {
    private struct Reference { weak var server: HTTPServer? }
    private let reference = Mutex(Reference())

    func started(_ server: HTTPServer) { reference.withLock { $0.server = server } }

    var requestsInProgress: Int { reference.withLock { $0.server }?.requestsInProgress ?? 0 }
}

/// A failure answered with a status and the JSON error body.
struct APIError: Error {
    var status: Int
    var body: DeviceAPI.ErrorBody

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
        case .other(let message): status = message.hasPrefix("storage:") ? 500 : 409
        }
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
        case .storage(let message): self.init(status: 500, family: "other", code: "storage", message: message)
        }
    }

    var response: HTTPResponse {
        .json(status, (try? APIResponse.encoder.encode(body)) ?? Data(#"{"error":{"family":"other","code":"failed","message":""}}"#.utf8))
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

/// A request's method and path segments, matched against patterns where `*` stands for any one segment.
struct Route {
    let method: String
    let path: [String]

    /// The segments the `*`s stand for, or `nil` when the method or the path does not match.
    func match(_ method: String, _ pattern: String...) -> [String]? {
        guard method == self.method, pattern.count == path.count else { return nil }
        var captured: [String] = []
        for (expected, segment) in zip(pattern, path) {
            if expected == "*" { captured.append(segment) } else if expected != segment { return nil }
        }
        return captured
    }
}
