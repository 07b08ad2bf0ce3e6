/// Answers only requests whose `Host` names this server: the defence against DNS rebinding, where a
/// web page's own name is pointed at 127.0.0.1 so that the developer's browser drives a local server
/// as if it were the page's origin.
///
/// Allowed are the address the server listens on, `localhost`, `127.0.0.1` and `[::1]`, and the
/// names given (`--allowed-host`); the port is not compared (a server on port 0 learns its port
/// after its routes exist). Anything else, or no `Host`, is `403`.
public struct HostCheck: HTTPMiddleware {
    public let allowedHosts: Set<String>

    /// - Parameters:
    ///   - listeningAddress: The address the server is bound to.
    ///   - names: More names clients reach the server by.
    public init(listeningAddress: String, names: [String] = []) {
        allowedHosts = Set(["localhost", "127.0.0.1", "[::1]", listeningAddress.lowercased()] + names.map { $0.lowercased() })
    }

    public func handle(_ request: HTTPRequest, context: RequestContext,
                       next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        guard let host = request.header("Host").map(Self.hostName), allowedHosts.contains(host) else {
            throw RoutingError(status: 403, code: "forbiddenHost",
                               message: "this server answers for \(allowedHosts.sorted().joined(separator: ", ")), not \(request.header("Host") ?? "a request without Host"); start it with --allowed-host to add a name")
        }
        return try await next(request, context)
    }

    /// The port a request's `Host` names (`[::1]:8080` → `8080`), or `80` when it names none: what
    /// cookies that must not reach another local server's pages are named for (cookies are not bound
    /// to ports).
    public static func port(of request: HTTPRequest) -> String {
        let value = request.header("Host") ?? ""
        var rest = Substring(value)
        if rest.hasPrefix("["), let end = rest.firstIndex(of: "]") { rest = rest[rest.index(after: end)...] }
        guard let colon = rest.firstIndex(of: ":") else { return "80" }
        let port = rest[rest.index(after: colon)...].filter(\.isNumber).prefix(5)
        return port.isEmpty ? "80" : String(port)
    }

    /// The host part of a `Host` value, lower-cased: `[::1]:8080` → `[::1]`, `LocalHost:80` → `localhost`.
    static func hostName(_ value: String) -> String {
        let value = value.lowercased()
        if value.hasPrefix("["), let end = value.firstIndex(of: "]") { return String(value[...end]) }
        return String(value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }
}
