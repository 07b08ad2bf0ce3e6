import Foundation
import Synchronization

/// Requires a server's access token: the protection of a server reachable from other machines (and
/// of one on loopback started with a token), as Jupyter's token protects a notebook server.
///
/// A request carries the token as `Authorization: Bearer TOKEN` (programs), or the session cookie the
/// server sets when a browser first opens a page with `?token=TOKEN` (people): that visit opens a
/// session (a random id the server keeps in memory for 12 hours; the token itself never goes into a
/// cookie) and answers with its cookie (`HttpOnly`, `SameSite=Strict`, named for the port, since
/// cookies are not bound to ports and another local server must not receive it) and a redirect to
/// the same page without the token in its address. Requests the token does not cover
/// (``isExempt``) pass; others without it get `401`.
public struct AccessToken: HTTPMiddleware {
    /// The start of the session cookie's name; the port follows (`storekit_session_8080`).
    public static let cookiePrefix = "storekit_session_"
    /// How long a browser's session lasts.
    public static let sessionLifetime: Duration = .seconds(12 * 3_600)

    private let token: String
    private let sessions = BrowserSessions()
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
        if let cookie = Self.cookie(Self.cookieName(for: request), in: request.header("Cookie")), sessions.isOpen(cookie) {
            return try await next(request, context)
        }
        if request.method == "GET", let given = request.queryValue("token"), Self.same(given, token) {
            // The token leaves the address (and the browser's history) for a cookie.
            var query = request.query
            query["token"] = nil
            let rest = query.keys.sorted().flatMap { name in query[name, default: []].map { "\(Self.encode(name))=\(Self.encode($0))" } }
            let location = request.rawPath + (rest.isEmpty ? "" : "?" + rest.joined(separator: "&"))
            return HTTPResponse(status: 303, headers: [("Location", location),
                                                       ("Set-Cookie", "\(Self.cookieName(for: request))=\(sessions.open()); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Self.sessionLifetime.components.seconds)"),
                                                       ("Cache-Control", "no-store")])
        }
        throw RoutingError(status: 401, code: "tokenRequired",
                           message: "this server needs its access token: Authorization: Bearer TOKEN, or open a page once with ?token=TOKEN")
    }

    /// The session cookie's name for the port the request came to (80 when its `Host` names none).
    public static func cookieName(for request: HTTPRequest) -> String {
        cookiePrefix + HostCheck.port(of: request)
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

/// The browser sessions a server's token opened: random ids, each open for
/// ``AccessToken/sessionLifetime``, kept in memory (they end with the server).
final class BrowserSessions: Sendable {
    private let sessions = Mutex<[String: ContinuousClock.Instant]>([:])

    /// Opens a session and returns its id (32 random bytes, hexadecimal).
    func open() -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
        let now = ContinuousClock.now
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value > now }
            sessions[id] = now + AccessToken.sessionLifetime
        }
        return id
    }

    func isOpen(_ id: String) -> Bool {
        let now = ContinuousClock.now
        return sessions.withLock { sessions in
            // Looked up by the id's own hash; the ids are random, so timing tells nothing of another.
            guard let expiry = sessions[id] else { return false }
            return expiry > now
        }
    }
}
