import Foundation

/// Requires a server's access token: the protection of a server reachable from other machines (and
/// of one on loopback started with a token), as Jupyter's token protects a notebook server.
///
/// A request carries the token as `Authorization: Bearer TOKEN` (programs), or as the cookie the
/// server sets when a browser first opens a page with `?token=TOKEN` (people): that visit answers with
/// the cookie (`HttpOnly`, `SameSite=Strict`) and a redirect to the same page without the token in
/// its address. Requests the token does not cover (``isExempt``) pass; others without it get `401`.
public struct AccessToken: HTTPMiddleware {
    /// The cookie a browser keeps the token in.
    public static let cookieName = "storekit_token"

    private let token: String
    /// The requests that need no token (routes with authentication of their own, or none to protect).
    public let isExempt: @Sendable (HTTPRequest, RequestContext) -> Bool

    public init(token: String, isExempt: @escaping @Sendable (HTTPRequest, RequestContext) -> Bool = { _, _ in false }) {
        self.token = token
        self.isExempt = isExempt
    }

    public func handle(_ request: HTTPRequest, context: RequestContext,
                       next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        if isExempt(request, context) { return try await next(request, context) }
        if let header = request.header("Authorization"), header.hasPrefix("Bearer "), Self.same(String(header.dropFirst(7)), token) {
            return try await next(request, context)
        }
        if let cookie = Self.cookie(Self.cookieName, in: request.header("Cookie")), Self.same(cookie, token) {
            return try await next(request, context)
        }
        if request.method == "GET", let given = request.queryValue("token"), Self.same(given, token) {
            // The token leaves the address (and the browser's history) for a cookie.
            var query = request.query
            query["token"] = nil
            let rest = query.keys.sorted().flatMap { name in query[name, default: []].map { "\(Self.encode(name))=\(Self.encode($0))" } }
            let location = request.rawPath + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&"))
            return HTTPResponse(status: 303, headers: [("Location", location),
                                                       ("Set-Cookie", "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"),
                                                       ("Cache-Control", "no-store")])
        }
        throw RoutingError(status: 401, code: "tokenRequired",
                           message: "this server needs its access token: Authorization: Bearer TOKEN, or open a page once with ?token=TOKEN")
    }

    /// Compares in time that does not depend on where the texts differ.
    static func same(_ given: String, _ expected: String) -> Bool {
        let given = Array(given.utf8), expected = Array(expected.utf8)
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(given, expected) { difference |= left ^ right }
        return difference == 0
    }

    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0] == Substring(name) { return String(pair[1]) }
        }
        return nil
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}
