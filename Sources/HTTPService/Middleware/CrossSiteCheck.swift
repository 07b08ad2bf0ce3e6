import Foundation

/// Refuses state-changing requests that a web page of another site could make from the developer's
/// browser (cross-site request forgery).
///
/// A page can make a browser send a "simple" request anywhere without asking: a form post, or a
/// `fetch` in `no-cors` mode with a `text/plain` body. Such a request never carries a JSON content
/// type, an `Authorization` header or a header of our own: those make the browser ask the server
/// first (CORS), which this server never allows. So every request that can change state (anything
/// but GET, HEAD and OPTIONS) must carry one of them, or a form token the server's own pages embed;
/// and when the browser says where a request comes from (`Origin`, `Sec-Fetch-Site`), it must be this
/// server. Programs (apps, scripts, `curl`) send no `Origin` and pass with a JSON body or the header.
public struct CrossSiteCheck: HTTPMiddleware {
    /// The header that marks a request as made by a program, not by a form (`X-OpenStoreKit-Request: 1`).
    public static let requestHeader = "X-OpenStoreKit-Request"
    /// The form field a page's form carries its token in.
    public static let formTokenField = "form_token"

    /// The token this server's pages put in their forms (random per server); `nil` accepts no form posts.
    public let formToken: String?
    /// Requests that change nothing though they are not GETs (an OCSP request is a POST).
    public let isExempt: @Sendable (HTTPRequest, RequestContext) -> Bool

    public init(formToken: String? = nil, isExempt: @escaping @Sendable (HTTPRequest, RequestContext) -> Bool = { _, _ in false }) {
        self.formToken = formToken
        self.isExempt = isExempt
    }

    public func handle(_ request: HTTPRequest, context: RequestContext,
                       next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        guard request.isStateChanging, !isExempt(request, context) else { return try await next(request, context) }
        if let site = request.header("Sec-Fetch-Site")?.lowercased(), site != "same-origin", site != "none" {
            throw Self.refusal("a \(site) request cannot change this server's state")
        }
        if let origin = request.header("Origin"), !Self.isOwnOrigin(origin, host: request.header("Host")) {
            throw Self.refusal("a request from \(origin) cannot change this server's state")
        }
        let contentType = request.header("Content-Type")?.lowercased() ?? ""
        let isJSON = contentType.hasPrefix("application/json")
        let isProgram = request.header(Self.requestHeader) != nil || request.header("Authorization") != nil
        let isOwnForm = formToken.map { token in
            contentType.hasPrefix("application/x-www-form-urlencoded") && FormToken.value(in: request.body, field: Self.formTokenField).map { AccessToken.same($0, token) } == true
        } ?? false
        guard isJSON || isProgram || isOwnForm else {
            throw Self.refusal("a request that changes state sends JSON (Content-Type: application/json), the \(Self.requestHeader) header, or a form of this server's pages")
        }
        return try await next(request, context)
    }

    /// Whether `origin` (`http://127.0.0.1:8080`) is the server the request was sent to (its `Host`).
    static func isOwnOrigin(_ origin: String, host: String?) -> Bool {
        guard let host, origin.lowercased().hasPrefix("http://") else { return false }
        return String(origin.dropFirst("http://".count)).lowercased() == host.lowercased()
    }

    static func refusal(_ message: String) -> RoutingError {
        RoutingError(status: 403, code: "crossSiteRequest", message: message)
    }
}

/// The token a server's own forms carry, and how a form body is read for it.
public enum FormToken {
    /// A new random token (32 bytes, hexadecimal), made once per server.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// Reads one field of a form body (`application/x-www-form-urlencoded`).
    static func value(in body: Data, field: String) -> String? {
        FormBody(body).fields[field]
    }
}
