import Foundation
import ServiceLogging
import Synchronization

/// The routes of a server, registered once, with the middleware in front of them.
///
/// A route is a method and a path pattern whose `{name}` segments capture one decoded path segment
/// each (`"/v1/devices/{device}/transactions/{id}/finish"`); a last segment `{name...}` captures the
/// rest of the path, one segment or more, joined by `/`. Routes are found through a tree of their
/// segments (literal segments before captures, captures before a rest), not by trying each in turn.
/// The table answers `404` for a path no route has and `405` (with `Allow`) for a path that exists
/// under other methods.
///
/// Middleware runs in the order added, outermost first, in front of every route, 404 and 405
/// included: that is where the checks that must cover a whole server live (hosts, origins, tokens).
/// A ``group(_:middleware:refusalResponse:_:)`` adds routes under a prefix with middleware of their
/// own (inside the router's) and, when an API has its own error format, its own refusals. Each
/// route's chain is composed once, when the router is compiled into its ``handler``.
///
/// A handler or middleware that throws an ``HTTPResponseError`` answers with its response; anything
/// else thrown is a `500`. Every answer carries the request's id (`X-Request-ID`), and every `5xx`
/// is logged once, with that id and why.
///
/// ```swift
/// var router = Router()
/// router.add(middleware: HostCheck(allowed: ["localhost"]))
/// router.on("GET", "/v1/devices/{device}/storefront") { request, context in … }
/// router.group("/inApps", middleware: [APIKeyCheck()]) { api in
///     api.on("GET", "/v1/transactions/{transactionId}") { request, context in … }
/// }
/// let server = try HTTPServer(handler: router.handler)
/// ```
public struct Router: Sendable {
    /// Answers a request that reached its route.
    public typealias Responder = @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse
    /// Formats the router's own refusals (a path or query that cannot be decoded, no such path, a
    /// method the path does not take) for the request they refuse.
    public typealias RefusalFormatter = @Sendable (RoutingError, HTTPRequest) -> HTTPResponse

    /// How a route's query reaches it.
    public enum QueryDecoding: Sendable {
        /// Each name and value decoded once; a query that cannot be decoded (a stray `%`, bytes that
        /// are not UTF-8, a control character) is refused with a `400` before the route runs.
        case strict
        /// Each name and value decoded once when it can be and kept as sent when not, for an API that
        /// answers malformed parameters with errors of its own.
        case lenient
    }

    /// A route as registered: its group (if any) says what middleware and refusals are its own.
    struct Registration: Sendable {
        let method: String
        let pattern: String
        let queryDecoding: QueryDecoding
        let responder: Responder
        let group: Int?
    }

    /// A prefix with middleware and refusals of its own.
    struct GroupRegistration: Sendable {
        let segments: [String]
        let middleware: [any HTTPMiddleware]
        let refusalResponse: RefusalFormatter?
    }

    private var registrations: [Registration] = []
    private var groups: [GroupRegistration] = []
    private var middleware: [any HTTPMiddleware] = []

    /// Formats the router's own refusals for the request they refuse; by default the error's JSON.
    /// A group may format those of its paths its own way.
    public var refusalResponse: RefusalFormatter = { error, _ in error.response }

    /// Where each answer is counted and timed, by route pattern, when the server exports metrics.
    public var metrics: HTTPMetrics?

    /// Where failures are logged; each request's handlers get it with the request's id as metadata.
    public var logger: Logger = .disabled

    public init() {}

    /// Registers `responder` for `method` on `pattern`. A pattern is absolute, its segments literal
    /// or `{name}`; registering one method and pattern twice is a programming error.
    public mutating func on(_ method: String, _ pattern: String, query: QueryDecoding = .strict, _ responder: @escaping Responder) {
        register(Registration(method: method, pattern: pattern, queryDecoding: query, responder: responder, group: nil))
    }

    /// Adds middleware in front of every route; middleware added first runs first.
    public mutating func add(middleware: any HTTPMiddleware) {
        self.middleware.append(middleware)
    }

    /// Registers routes under `prefix` (`"/inApps"`): their patterns are relative to it, and
    /// `middleware` runs for them (and for the refusals of paths under the prefix) inside the
    /// router's own. `refusalResponse`, when given, formats those refusals.
    public mutating func group(_ prefix: String, middleware: [any HTTPMiddleware] = [], refusalResponse: RefusalFormatter? = nil,
                               _ body: (inout RouteGroup) -> Void) {
        let segments = prefix.split(separator: "/").map(String.init)
        groups.append(GroupRegistration(segments: segments, middleware: middleware, refusalResponse: refusalResponse))
        var group = RouteGroup(prefix: "/" + segments.joined(separator: "/"), index: groups.count - 1)
        body(&group)
        for registration in group.registrations { register(registration) }
    }

    private mutating func register(_ registration: Registration) {
        let segments = RouteTable.segments(of: registration.pattern)
        precondition(!registrations.contains { $0.method == registration.method && RouteTable.segments(of: $0.pattern) == segments },
                     "\(registration.method) \(registration.pattern) is registered twice")
        registrations.append(registration)
    }

    /// The routes and middleware, compiled: the tree, and every route's chain composed.
    public func compiled() -> RouteTable {
        RouteTable(registrations: registrations, groups: groups, middleware: middleware, refusalResponse: refusalResponse,
                   metrics: metrics, logger: logger)
    }

    /// The server's handler: the router compiled once, answering every request.
    public var handler: HTTPServer.Handler {
        let table = compiled()
        return { request in await table.respond(to: request) }
    }

    /// Answers one request (the way tests call a router without a socket). It compiles the router
    /// for the call; a server compiles it once, in ``handler``.
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        await compiled().respond(to: request)
    }
}

/// Routes registered under a group's prefix (see ``Router/group(_:middleware:refusalResponse:_:)``).
public struct RouteGroup: Sendable {
    /// The prefix, with a leading `/`.
    public let prefix: String
    let index: Int
    var registrations: [Router.Registration] = []

    /// Registers `responder` for `method` on `pattern`, relative to the group's prefix (`"/v1/lookup/{orderId}"`).
    public mutating func on(_ method: String, _ pattern: String, query: Router.QueryDecoding = .strict, _ responder: @escaping Router.Responder) {
        let full = prefix + (pattern.hasPrefix("/") ? pattern : "/" + pattern)
        registrations.append(Router.Registration(method: method, pattern: full, queryDecoding: query, responder: responder, group: index))
    }
}

/// A compiled ``Router``: a tree of path segments, each route's middleware chain composed once.
public final class RouteTable: Sendable {
    /// A route ready to answer: its pattern, which path positions it captures, and its whole chain.
    struct CompiledRoute: Sendable {
        let method: String
        let pattern: String
        let queryDecoding: Router.QueryDecoding
        /// Capture names by path position; the rest's name at the last position when it takes one.
        let captureNames: [Int: String]
        let restName: String?
        let chain: Router.Responder
        let refusalResponse: Router.RefusalFormatter
    }

    /// One position in the tree.
    final class Node: @unchecked Sendable {
        // Unchecked: built once in `RouteTable.init` and only read afterwards.
        var literals: [String: Node] = [:]
        var capture: Node?
        /// Routes that take the rest of the path from here, by method.
        var rest: [String: CompiledRoute] = [:]
        /// Routes that end here, by method.
        var routes: [String: CompiledRoute] = [:]
    }

    /// The chain of a group (or the router, at index nil) around a refusal, and how it is formatted.
    struct RefusalChain: Sendable {
        let segments: [String]
        let chain: Router.Responder
        let format: Router.RefusalFormatter
    }

    private let root = Node()
    private let refusals: [RefusalChain]
    private let metrics: HTTPMetrics?
    private let logger: Logger

    init(registrations: [Router.Registration], groups: [Router.GroupRegistration], middleware: [any HTTPMiddleware],
         refusalResponse: @escaping Router.RefusalFormatter, metrics: HTTPMetrics?, logger: Logger) {
        self.metrics = metrics
        self.logger = logger
        func compose(_ layers: [any HTTPMiddleware], around responder: @escaping Router.Responder) -> Router.Responder {
            var next = responder
            for layer in layers.reversed() {
                let inner = next
                next = { request, context in try await layer.handle(request, context: context, next: inner) }
            }
            return next
        }
        let throwRefusal: Router.Responder = { _, context in throw context.refusal ?? RoutingError(status: 404, code: "notFound", message: "no such path") }
        var refusals = [RefusalChain(segments: [], chain: compose(middleware, around: throwRefusal), format: refusalResponse)]
        for group in groups {
            refusals.append(RefusalChain(segments: group.segments, chain: compose(middleware + group.middleware, around: throwRefusal),
                                         format: group.refusalResponse ?? refusalResponse))
        }
        // The deepest prefix first, so a path finds its innermost group.
        self.refusals = refusals.sorted { $0.segments.count > $1.segments.count }

        for registration in registrations {
            let group = registration.group.map { groups[$0] }
            let segments = Self.segments(of: registration.pattern)
            var captureNames: [Int: String] = [:]
            var restName: String?
            var node = root
            for (position, segment) in segments.enumerated() {
                switch segment {
                case .literal(let text):
                    if node.literals[text] == nil { node.literals[text] = Node() }
                    node = node.literals[text]!
                case .capture(let name):
                    if node.capture == nil { node.capture = Node() }
                    node = node.capture!
                    captureNames[position] = name
                case .rest(let name):
                    restName = name
                }
            }
            let route = CompiledRoute(method: registration.method, pattern: registration.pattern, queryDecoding: registration.queryDecoding,
                                      captureNames: captureNames, restName: restName,
                                      chain: compose(middleware + (group?.middleware ?? []), around: registration.responder),
                                      refusalResponse: group?.refusalResponse ?? refusalResponse)
            if restName != nil { node.rest[registration.method] = route } else { node.routes[registration.method] = route }
        }
    }

    enum Segment: Equatable, Sendable {
        case literal(String)
        case capture(String)
        /// The rest of the path: one segment or more.
        case rest(String)
    }

    static func segments(of pattern: String) -> [Segment] {
        pattern.split(separator: "/").map { part in
            guard part.hasPrefix("{"), part.hasSuffix("}") else { return .literal(String(part)) }
            let name = part.dropFirst().dropLast()
            return name.hasSuffix("...") ? .rest(String(name.dropLast(3))) : .capture(String(name))
        }
    }

    /// The route for `method` at `path`, with its captures, searching literal segments first, then
    /// captures, then rests; otherwise the methods the path takes (empty: no such path).
    func find(_ method: String, _ path: [String]) -> (route: CompiledRoute, parameters: [String: String])? {
        var captures: [String] = []
        return find(method, path, at: 0, in: root, captures: &captures)
    }

    private func find(_ method: String, _ path: [String], at index: Int, in node: Node, captures: inout [String]) -> (route: CompiledRoute, parameters: [String: String])? {
        if index == path.count {
            guard let route = node.routes[method] ?? (method == "HEAD" ? node.routes["GET"] : nil) else { return nil }
            return (route, parameters(of: route, captures: captures, rest: nil))
        }
        if let child = node.literals[path[index]] {
            if let found = find(method, path, at: index + 1, in: child, captures: &captures) { return found }
        }
        if let child = node.capture {
            captures.append(path[index])
            if let found = find(method, path, at: index + 1, in: child, captures: &captures) { return found }
            captures.removeLast()
        }
        if let route = node.rest[method] ?? (method == "HEAD" ? node.rest["GET"] : nil) {
            return (route, parameters(of: route, captures: captures, rest: path[index...].joined(separator: "/")))
        }
        return nil
    }

    /// The methods any route takes at `path`.
    func allowedMethods(_ path: [String]) -> Set<String> {
        var allowed = Set<String>()
        collect(path, at: 0, in: root, into: &allowed)
        return allowed
    }

    private func collect(_ path: [String], at index: Int, in node: Node, into allowed: inout Set<String>) {
        if index == path.count {
            allowed.formUnion(node.routes.keys)
            return
        }
        if let child = node.literals[path[index]] { collect(path, at: index + 1, in: child, into: &allowed) }
        if let child = node.capture { collect(path, at: index + 1, in: child, into: &allowed) }
        allowed.formUnion(node.rest.keys)
    }

    private func parameters(of route: CompiledRoute, captures: [String], rest: String?) -> [String: String] {
        var parameters: [String: String] = [:]
        var captured = captures.makeIterator()
        for position in route.captureNames.keys.sorted() {
            if let value = captured.next() { parameters[route.captureNames[position]!] = value }
        }
        if let rest, let name = route.restName { parameters[name] = rest }
        return parameters
    }

    /// The refusal chain of the innermost group whose prefix `path` starts with.
    private func refusalChain(for path: [String]) -> RefusalChain {
        refusals.first { $0.segments.count <= path.count && Array(path.prefix($0.segments.count)) == $0.segments } ?? refusals[refusals.count - 1]
    }

    /// Answers one request: its route (or refusal) through its chain; the id in the answer, a `5xx` logged.
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        var request = request
        let logger = self.logger.with(["request_id": request.id])
        var context = RequestContext(segments: [], requestID: request.id, logger: logger)
        // What answers: a refusal at once (a path or query that cannot be decoded), or a chain.
        let pattern: String
        var immediate: HTTPResponse?
        var chain: Router.Responder = { _, _ in throw RoutingError(status: 404, code: "notFound", message: "no such path") }
        var format: Router.RefusalFormatter
        do {
            let segments = try PathDecoding.segments(of: request.rawPath)
            context = RequestContext(segments: segments, requestID: request.id, logger: logger)
            if let (route, parameters) = find(request.method, segments) {
                pattern = route.pattern
                context.parameters = parameters
                context.routePattern = route.pattern
                format = route.refusalResponse
                chain = route.chain
                if route.queryDecoding == .strict {
                    do { request.query = try PathDecoding.strictly(request.rawQuery) } catch { immediate = format(error, request) }
                }
            } else {
                pattern = HTTPMetrics.unmatched
                let refusals = refusalChain(for: segments)
                // Repeated as a short escaped excerpt: a path may be 8 KB of anything.
                let path = UntrustedText.excerpt("/" + segments.joined(separator: "/"), limit: 200)
                let allowed = allowedMethods(segments).sorted()
                context.refusal = allowed.isEmpty
                    ? RoutingError(status: 404, code: "notFound", message: "no such path \(path)")
                    : RoutingError(status: 405, code: "methodNotAllowed", message: "\(path) takes \(allowed.joined(separator: ", ")), not \(UntrustedText.excerpt(request.method))",
                                   headers: [("Allow", allowed.joined(separator: ", "))])
                format = refusals.format
                chain = refusals.chain
            }
        } catch {
            // A path that cannot be decoded is refused in the format of the group its raw segments name.
            pattern = HTTPMetrics.unmatched
            format = refusalChain(for: request.rawPath.split(separator: "/").map(String.init)).format
            immediate = format(error, request)
        }
        metrics?.started(route: pattern)
        let started = ContinuousClock.now
        let response: HTTPResponse
        if let immediate { response = immediate } else { response = await Self.run(chain, request, context, refusalResponse: format) }
        return finish(response, request: request, context: context, pattern: pattern, started: started)
    }

    private func finish(_ response: HTTPResponse, request: HTTPRequest, context: RequestContext, pattern: String,
                        started: ContinuousClock.Instant) -> HTTPResponse {
        var response = response
        if let metrics {
            metrics.finished(route: pattern, method: request.method, status: response.status, seconds: (ContinuousClock.now - started) / .seconds(1))
        }
        if response.status >= 500 { Router.logFailure(response, to: request, logger: context.logger) }
        response.headers.append(("X-Request-ID", request.id))
        return response
    }

    /// A chain's answer; what it throws as the answer it stands for.
    private static func run(_ chain: Router.Responder, _ request: HTTPRequest, _ context: RequestContext,
                            refusalResponse: Router.RefusalFormatter) async -> HTTPResponse {
        do {
            return try await chain(request, context)
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
}

extension Router {
    /// The one log line of a `5xx` answer: the request, the status and why.
    static func logFailure(_ response: HTTPResponse, to request: HTTPRequest, logger: Logger) {
        logger.log(level: response.failsBecauseStopping ? .notice : .error,
                   "\(request.method) \(request.path) → \(response.status)\(response.failure.map { ": \($0)" } ?? "")")
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
    /// The router's refusal (no such path, another method) that a group's middleware runs in front of.
    var refusal: RoutingError?

    public init(segments: [String], parameters: [String: String] = [:]) {
        self.segments = segments
        self.parameters = parameters
    }

    init(segments: [String], requestID: String, logger: Logger) {
        self.segments = segments
        self.requestID = requestID
        self.logger = logger
    }

    /// A capture of the route (its pattern names it, so it is there).
    public subscript(_ name: String) -> String { parameters[name] ?? "" }
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
