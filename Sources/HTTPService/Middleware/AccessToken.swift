import Foundation
import Synchronization

/// Requires a server's access token: the protection of a server reachable from other machines (and
/// of one on loopback started with a token), as Jupyter's token protects a notebook server.
///
/// A request carries the token as `Authorization: Bearer TOKEN` (programs), or a browser session
/// (people), opened when a browser first opens a page with `?token=TOKEN`. A session has two random
/// halves, kept in memory for 12 hours (the token itself never goes into a cookie):
///
/// - the cookie (`HttpOnly`, `SameSite=Strict`), which the browser sends to this host on every port:
///   cookies ignore ports, so another local server may receive it and replay it; alone it opens
///   nothing.
/// - the page secret, which only this origin ever holds: the visit with the token answers a page that
///   keeps it in the origin's `localStorage` (another port is another origin) and goes on to the page
///   asked for with `osk_session=SECRET` in its address. The pages' scripts send it as
///   `X-OpenStoreKit-Session`; the server adds it to the same-origin links, images and form actions of
///   the HTML pages it answers; a navigation that lacks it (a link a script drew, a `GET` form) gets a
///   small page that takes it from `localStorage` and asks again with it, showing nothing else.
///
/// Requests the token does not cover (``isExempt``, and the static assets) pass; others without it
/// get `401`.
public struct AccessToken: HTTPMiddleware {
    /// The start of the session cookie's name; the port follows (`storekit_session_8080`).
    public static let cookiePrefix = "storekit_session_"
    /// How long a browser's session lasts.
    public static let sessionLifetime: Duration = .seconds(12 * 3_600)
    /// The header the pages' scripts send a session's page secret in.
    public static let sessionHeader = "X-OpenStoreKit-Session"
    /// The query parameter that carries a session's page secret in an address.
    public static let sessionParameter = "osk_session"

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
        if isExempt(request, context) || Self.isStaticAsset(request, context) { return try await next(request, context) }
        if let header = request.header("Authorization"), header.hasPrefix("Bearer "), Self.same(String(header.dropFirst(7)), token) {
            return try await next(request, context)
        }
        if let cookie = Self.cookie(Self.cookieName(for: request), in: request.header("Cookie")), sessions.isOpen(cookie) {
            let given = request.header(Self.sessionHeader) ?? request.queryValue(Self.sessionParameter)
            if let given, let secret = sessions.pageSecret(cookie: cookie, given: given) {
                var inner = request
                inner.rawQuery.removeAll { $0.name == Self.sessionParameter }
                inner.query[Self.sessionParameter] = nil
                return Self.carrying(secret, try await next(inner, context))
            }
            // The cookie alone: what another local server that received it would send. A browser's
            // navigation gets the page that adds the secret from this origin's storage; nothing else.
            if given == nil, request.method == "GET", Self.isNavigation(request) { return Self.recoveryPage }
            throw RoutingError(status: 401, code: "sessionSecretRequired",
                               message: "the session cookie alone opens nothing: send the page secret (\(Self.sessionHeader)) with it, or open a page with ?token=TOKEN")
        }
        if request.method == "GET", let given = request.queryValue("token"), Self.same(given, token) {
            // The token leaves the address (and the browser's history) for a session.
            var query = request.query
            query["token"] = nil
            query[Self.sessionParameter] = nil
            let (cookie, secret) = sessions.open()
            query[Self.sessionParameter] = [secret]
            let rest = query.keys.sorted().flatMap { name in query[name, default: []].map { "\(Self.encode(name))=\(Self.encode($0))" } }
            let location = request.rawPath + "?" + rest.joined(separator: "&")
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                                                       ("Referrer-Policy", "no-referrer"),
                                                       ("Set-Cookie", "\(Self.cookieName(for: request))=\(cookie); Path=/; HttpOnly; SameSite=Strict; Max-Age=\(Self.sessionLifetime.components.seconds)")],
                                body: Data(Self.handoffPage(secret: secret, location: location).utf8))
        }
        throw RoutingError(status: 401, code: "tokenRequired",
                           message: "this server needs its access token: Authorization: Bearer TOKEN, or open a page once with ?token=TOKEN")
    }

    /// The pages' scripts, styles and icon: the same for everyone, secret to no one; a page's
    /// subresources load with the cookie only, so they need no session.
    static func isStaticAsset(_ request: HTTPRequest, _ context: RequestContext) -> Bool {
        guard request.method == "GET" || request.method == "HEAD" else { return false }
        return context.segments.first == "assets" || context.segments == ["favicon.svg"] || context.segments == ["favicon.ico"]
    }

    /// Whether a request is a browser loading a page (not a script's fetch or an image).
    static func isNavigation(_ request: HTTPRequest) -> Bool {
        if let mode = request.header("Sec-Fetch-Mode")?.lowercased() { return mode == "navigate" }
        return request.header("Accept")?.lowercased().contains("text/html") == true
    }

    /// The page that answers the visit with the token: it keeps the page secret in this origin's
    /// storage and goes on to the page asked for, the secret in its address.
    static func handoffPage(secret: String, location: String) -> String {
        """
        <!doctype html><meta charset="utf-8"><title>Opening…</title>
        <script>localStorage.setItem("\(sessionParameter)", "\(secret)"); location.replace(\(javaScriptString(location)));</script>
        <noscript>This page needs script to open the session. <a href="\(HTML.escape(location))">Go on</a>.</noscript>
        """
    }

    /// The answer to a navigation that carries the cookie but not the page secret: the secret is
    /// added from this origin's storage (which another port's pages cannot read) and the page asked
    /// for again. No data of the server is in it.
    static let recoveryPage = HTTPResponse(status: 401, headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")], body: Data("""
        <!doctype html><meta charset="utf-8"><title>Opening…</title>
        <p id="session-needed">Open this page with ?token=TOKEN (the address the server printed) to sign this browser in.</p>
        <script>
        const secret = localStorage.getItem("\(sessionParameter)");
        const query = new URLSearchParams(location.search);
        if (secret && !query.has("\(sessionParameter)")) { query.set("\(sessionParameter)", secret); location.replace(location.pathname + "?" + query + location.hash); }
        </script>
        """.utf8))

    /// Adds the page secret to the same-origin links, images and form actions of an HTML answer, and
    /// keeps the addresses (which hold it) from being sent to other origins as a referrer.
    static func carrying(_ secret: String, _ response: HTTPResponse) -> HTTPResponse {
        var response = response
        if !response.headers.contains(where: { $0.name.lowercased() == "referrer-policy" }) {
            response.headers.append(("Referrer-Policy", "same-origin"))
        }
        guard let type = response.headers.first(where: { $0.name.lowercased() == "content-type" })?.value, type.lowercased().hasPrefix("text/html"),
              var text = String(data: response.body, encoding: .utf8) else { return response }
        for attribute in ["href", "src", "action"] {
            var result = ""
            var rest = Substring(text)
            let opening = "\(attribute)=\"/"
            while let range = rest.range(of: opening) {
                result += rest[..<range.upperBound]
                rest = rest[range.upperBound...]
                guard !rest.hasPrefix("/"), let close = rest.firstIndex(of: "\"") else { continue }
                var address = String(rest[..<close])
                let fragment = address.firstIndex(of: "#").map { String(address[$0...]) } ?? ""
                address = String(address.prefix { $0 != "#" })
                address += (address.contains("?") ? "&amp;" : "?") + "\(sessionParameter)=\(secret)" + fragment
                result += address
                rest = rest[close...]
            }
            text = result + rest
        }
        response.body = Data(text.utf8)
        return response
    }

    static func javaScriptString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)) || "/?&=._~-%".unicodeScalars.contains(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                result += String(format: "\\u%04x", scalar.value)
            }
        }
        return result + "\""
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

/// The browser sessions a server's token opened: two random halves each (a cookie and a page
/// secret), open for ``AccessToken/sessionLifetime``, kept in memory (they end with the server).
final class BrowserSessions: Sendable {
    private let sessions = Mutex<[String: (expiry: ContinuousClock.Instant, secret: String)]>([:])

    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// Opens a session: its cookie and its page secret (32 random bytes each, hexadecimal).
    func open() -> (cookie: String, secret: String) {
        let (id, secret) = (Self.random(), Self.random())
        let now = ContinuousClock.now
        sessions.withLock { sessions in
            sessions = sessions.filter { $0.value.expiry > now }
            sessions[id] = (now + AccessToken.sessionLifetime, secret)
        }
        return (id, secret)
    }

    func isOpen(_ id: String) -> Bool {
        let now = ContinuousClock.now
        return sessions.withLock { sessions in
            // Looked up by the id's own hash; the ids are random, so timing tells nothing of another.
            guard let session = sessions[id] else { return false }
            return session.expiry > now
        }
    }

    /// The session's page secret when `given` is it (compared in constant time).
    func pageSecret(cookie: String, given: String) -> String? {
        let now = ContinuousClock.now
        return sessions.withLock { sessions in
            guard let session = sessions[cookie], session.expiry > now, AccessToken.same(given, session.secret) else { return nil }
            return session.secret
        }
    }
}
