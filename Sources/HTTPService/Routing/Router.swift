import Foundation
import ServiceLogging

/// The routes of a server, registered once, and the middleware in front of every one of them.
///
/// A route is a method and a path pattern whose `{name}` segments capture one decoded path segment
/// each (`"/v1/devices/{device}/transactions/{id}/finish"`); a last segment `{name...}` captures the
/// rest of the path, one segment or more, joined by `/` (an API that answers its own paths). The table answers `404` for a path no
/// route has and `405` (with `Allow`) for a path that exists under other methods. Middleware runs in
/// the order added, outermost first, in front of every route, 404 and 405 included: that is where
/// the checks that must cover a whole server live (hosts, origins, tokens, logging). A handler or
/// middleware that throws an ``HTTPResponseError`` answers with its response; anything else thrown
/// is a `500`. Every answer carries the request's id (`X-Request-ID`), and every `5xx` is logged
/// once, with that id and why.
///
/// ```swift
/// var router = Router()
/// router.add(middleware: HostCheck(allowed: ["localhost"]))
/// router.on("GET", "/v1/devices/{device}/storefront") { request, context in … }
/// let server = try HTTPServer(handler: router.handler)
/// ```
public struct Router: Sendable {
    /// Answers a request that reached its route.
    public typealias Responder = @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse

    /// How a route's query reaches it.
    public enum QueryDecoding: Sendable {
        /// Each name and value decoded once; a query that cannot be decoded (a stray `%`, bytes that
        /// are not UTF-8, a control character) is refused with a `400` before the route runs.
        case strict
        /// Each name and value decoded once when it can be and kept as sent when not, for an API that
        /// answers malformed parameters with errors of its own.
        case lenient
    }

    private var routes: [Route] = []
    private var middleware: [any HTTPMiddleware] = []

    /// Formats the router's own refusals (a path or query that cannot be decoded, no such path, a
    /// method the path does not take) for the request they refuse; by default the error's JSON. A
    /// server that hosts an API with an error format of its own answers those paths in that format.
    public var refusalResponse: @Sendable (RoutingError, HTTPRequest) -> HTTPResponse = { error, _ in error.response }

    /// Where each answer is counted and timed, when the server exports metrics.
    public var metrics: HTTPMetrics?

    /// Where failures are logged; each request's handlers get it with the request's id as metadata.
    public var logger: Logger = .disabled

    public init() {}

    /// Registers `responder` for `method` on `pattern`. A pattern is absolute, its segments literal
    /// or `{name}`; registering one method and pattern twice is a programming error.
    public mutating func on(_ method: String, _ pattern: String, query: QueryDecoding = .strict, _ responder: @escaping Responder) {
        let route = Route(method: method, pattern: pattern, queryDecoding: query, responder: responder)
        precondition(!routes.contains { $0.method == method && $0.segments == route.segments }, "\(method) \(pattern) is registered twice")
        routes.append(route)
    }

    /// Adds middleware in front of every route; middleware added first runs first.
    public mutating func add(middleware: any HTTPMiddleware) {
        self.middleware.append(middleware)
    }

    /// The server's handler: decodes the path, runs the middleware, then the route.
    public var handler: HTTPServer.Handler {
        let router = self
        return { request in await router.respond(to: request) }
    }

    /// Answers one request (also the way tests call a router without a socket).
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        var routed = route(request)
        routed.context.requestID = request.id
        routed.context.logger = logger.with(["request_id": request.id])
        var response: HTTPResponse
        if let metrics {
            let pattern = routed.route?.pattern ?? HTTPMetrics.unmatched
            metrics.started(route: pattern)
            let started = ContinuousClock.now
            response = await run(routed)
            let elapsed = ContinuousClock.now - started
            metrics.finished(route: pattern, method: request.method, status: response.status,
                             seconds: elapsed / .seconds(1))
        } else {
            response = await run(routed)
        }
        if response.status >= 500 { Self.logFailure(response, to: request, logger: routed.context.logger) }
        response.headers.append(("X-Request-ID", request.id))
        return response
    }

    /// The one log line of a `5xx` answer: the request, the status and why.
    static func logFailure(_ response: HTTPResponse, to request: HTTPRequest, logger: Logger) {
        logger.log(level: response.failsBecauseStopping ? .notice : .error,
                   "\(request.method) \(request.path) → \(response.status)\(response.failure.map { ": \($0)" } ?? "")")
    }

    /// A request with its decoded path and query, the route that takes it (if any) and what answers
    /// it; or the refusal of a path or query that cannot be decoded.
    private struct Routed {
        var request: HTTPRequest
        var context: RequestContext
        var route: Route?
        var responder: Responder
        var refusal: HTTPResponse?
    }

    private func route(_ request: HTTPRequest) -> Routed {
        var request = request
        let segments: [String]
        do {
            segments = try PathDecoding.segments(of: request.rawPath)
        } catch {
            return Routed(request: request, context: RequestContext(segments: []), route: nil, responder: { _, _ in throw error },
                          refusal: refusalResponse(error, request))
        }
        var context = RequestContext(segments: segments)
        let resolved = resolve(request.method, segments, into: &context)
        var refusal: HTTPResponse?
        if let route = resolved.route, route.queryDecoding == .strict {
            do { request.query = try PathDecoding.strictly(request.rawQuery) } catch { refusal = refusalResponse(error, request) }
        }
        return Routed(request: request, context: context, route: resolved.route, responder: resolved.responder, refusal: refusal)
    }

    /// The middleware, then the route; what they throw as the answer it stands for.
    private func run(_ routed: Routed) async -> HTTPResponse {
        if let refusal = routed.refusal { return refusal }
        let request = routed.request
        let responder = routed.responder
        var next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse = { request, context in
            try await responder(request, context)
        }
        for layer in middleware.reversed() {
            let inner = next
            next = { request, context in try await layer.handle(request, context: context, next: inner) }
        }
        do {
            return try await next(request, routed.context)
        } catch let error as RoutingError {
            return refusalResponse(error, request)
        } catch let error as any HTTPResponseError {
            var response = error.response
            if response.status >= 500, response.failure == nil { response.failure = String(describing: error) }
            return response
        } catch is CancellationError {
            return .stopping("the server stopped while the request was answered")
        } catch {
            var response = HTTPResponse.json(500, Data(#"{"error":{"family":"other","code":"failed","message":"the server failed"}}"#.utf8))
            response.failure = String(describing: error)
            return response
        }
    }

    /// The route for a method and path, with its captures in `context`; a 404 or 405 thrower and no
    /// route when none takes them.
    private func resolve(_ method: String, _ segments: [String], into context: inout RequestContext) -> (route: Route?, responder: Responder) {
        var allowed: [String] = []
        for route in routes {
            guard let captures = route.match(segments) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                context.parameters = captures
                context.routePattern = route.pattern
                return (route, route.responder)
            }
            allowed.append(route.method)
        }
        let path = "/" + segments.joined(separator: "/")
        if allowed.isEmpty {
            return (nil, { _, _ in throw RoutingError(status: 404, code: "notFound", message: "no such path \(path)") })
        }
        let methods = Array(Set(allowed)).sorted()
        return (nil, { _, _ in
            throw RoutingError(status: 405, code: "methodNotAllowed", message: "\(path) takes \(methods.joined(separator: ", ")), not \(method)",
                               headers: [("Allow", methods.joined(separator: ", "))])
        })
    }
}

/// What a handler and the middleware know about a request beyond the request itself.
public struct RequestContext: Sendable {
    /// The path, split on `/` and each segment percent-decoded once (empty segments dropped).
    public let segments: [String]
    /// The captures of the route's `{name}` segments.
    public var parameters: [String: String] = [:]
    /// The pattern of the route that answers (`/v1/devices/{device}/purchases`), for logs and
    /// metrics whose labels must not grow with the paths people send; `nil` when none does.
    public var routePattern: String?
    /// The request's id, as its answer's `X-Request-ID` carries it.
    public var requestID = ""
    /// The router's logger with the request's id as metadata.
    public var logger = Logger.disabled

    public init(segments: [String], parameters: [String: String] = [:]) {
        self.segments = segments
        self.parameters = parameters
    }

    /// A capture of the route (its pattern names it, so it is there).
    public subscript(_ name: String) -> String { parameters[name] ?? "" }
}

/// One route: a method, a pattern's segments, and its responder.
struct Route: Sendable {
    enum Segment: Equatable, Sendable {
        case literal(String)
        case capture(String)
        /// The rest of the path: one segment or more.
        case rest(String)
    }

    let method: String
    let pattern: String
    let segments: [Segment]
    let queryDecoding: Router.QueryDecoding
    let responder: Router.Responder

    init(method: String, pattern: String, queryDecoding: Router.QueryDecoding, responder: @escaping Router.Responder) {
        self.method = method
        self.pattern = pattern
        self.queryDecoding = queryDecoding
        self.responder = responder
        segments = pattern.split(separator: "/").map { part in
            guard part.hasPrefix("{"), part.hasSuffix("}") else { return .literal(String(part)) }
            let name = part.dropFirst().dropLast()
            return name.hasSuffix("...") ? .rest(String(name.dropLast(3))) : .capture(String(name))
        }
    }

    /// The captures when `path` fits the pattern.
    func match(_ path: [String]) -> [String: String]? {
        let takesRest: Bool
        if case .rest? = segments.last { takesRest = true } else { takesRest = false }
        guard takesRest ? path.count >= segments.count : path.count == segments.count else { return nil }
        var captures: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .literal(let text): guard text == path[index] else { return nil }
            case .capture(let name): captures[name] = path[index]
            case .rest(let name): captures[name] = path[index...].joined(separator: "/")
            }
        }
        return captures
    }
}

/// An error that knows the response it is answered with.
public protocol HTTPResponseError: Error {
    var response: HTTPResponse { get }
}

/// The router's own refusals: no such path, a method the path does not take, a path that cannot be
/// decoded. Answered as JSON errors in the device API's shape.
public struct RoutingError: HTTPResponseError, CustomStringConvertible {
    public var status: Int
    public var code: String
    public var message: String
    public var headers: [(name: String, value: String)]

    public init(status: Int, code: String, message: String, headers: [(name: String, value: String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status) \(code): \(message)" }

    public var response: HTTPResponse {
        let body = (try? JSONSerialization.data(withJSONObject: ["error": ["family": "other", "code": code, "message": message]], options: [.sortedKeys]))
            ?? Data()
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }
}
