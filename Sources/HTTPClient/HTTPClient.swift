import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The package's HTTP client for requests and answers: apps' store connections, test sessions' controls, notification
/// delivery and the App Store Server API client all send through it.
///
/// One ``shared`` client serves a process: one connection pool, a timeout per request, and one place
/// that turns transport failures into ``Failure`` (cannot connect, timed out) and cancellation into
/// `CancellationError` at once, whatever the transfer is doing. Callers keep only what is theirs: the
/// error bodies of their API.
///
/// ```swift
/// let answer = try await HTTPClient.shared.send(.init("GET", server.appendingPathComponent("/health")))
/// guard answer.isSuccess else { … }
/// ```
public final class HTTPClient: Sendable {
    /// The process's client.
    public static let shared = HTTPClient()

    private let session: URLSession
    /// The session's delegate: collects answers, follows no redirect.
    private let transfers: NoRedirectTransfers

    /// A client with its own connection pool: up to `connectionsPerHost` connections to one server at
    /// once (long polls hold one each while they wait).
    public init(connectionsPerHost: Int = 256) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connectionsPerHost
        // Each request carries its own timeout; these only bound what a request did not say.
        configuration.timeoutIntervalForRequest = 300
        configuration.timeoutIntervalForResource = 300
        // No cache: every request reaches its server (an API answers what is true now), and the
        // cache's lookups cost as much as a small request's other work.
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // Nor cookies: the package's servers set none, and parsing for them costs every answer.
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        // No redirects, ever: a 3xx is the answer (see NoRedirectTransfers).
        let transfers = NoRedirectTransfers()
        self.transfers = transfers
        session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: nil)
    }

    /// A request to send.
    public struct Request: Sendable {
        public var method: String
        public var url: URL
        /// Query parameters added to the URL, in order (a name may repeat).
        public var query: [(name: String, value: String)]
        public var headers: [(name: String, value: String)]
        public var body: Data?
        /// How long the server has to answer: no bytes for this long is ``Failure/timedOut(_:)``.
        public var timeout: Duration

        public init(_ method: String, _ url: URL, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
                    body: Data? = nil, timeout: Duration = .seconds(60)) {
            self.method = method
            self.url = url
            self.query = query
            self.headers = headers
            self.body = body
            self.timeout = timeout
        }

        /// A request for `encodedPath` (already percent-encoded, segment by segment, such as
        /// `/v1/devices/caf%C3%A9`) on the server at `base`. Unlike `URL.appendingPathComponent`,
        /// which would encode the `%`s again, the path goes out as given.
        public init(_ method: String, _ base: URL, path encodedPath: String, query: [(name: String, value: String)] = [],
                    headers: [(name: String, value: String)] = [], body: Data? = nil, timeout: Duration = .seconds(60)) {
            var text = base.absoluteString
            while text.hasSuffix("/") { text.removeLast() }
            self.init(method, URL(string: text + encodedPath) ?? base, query: query, headers: headers, body: body, timeout: timeout)
        }

        /// A request whose body is JSON (`Content-Type: application/json`).
        public static func json(_ method: String, _ url: URL, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
                                body: Data, timeout: Duration = .seconds(60)) -> Request {
            Request(method, url, query: query, headers: headers + [("Content-Type", "application/json")], body: body, timeout: timeout)
        }
    }

    /// What the server answered, whatever the status.
    public struct Response: Sendable {
        public var status: Int
        /// Header fields by lower-cased name.
        public var headers: [String: String]
        public var body: Data

        public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// Whether the status is 2xx.
        public var isSuccess: Bool { (200..<300).contains(status) }

        /// A header field by name, in any case.
        public func header(_ name: String) -> String? { headers[name.lowercased()] }

        /// The body, or ``Failure/status(_:_:body:)`` when the status is not 2xx.
        public func successBody(from url: URL) throws(Failure) -> Data {
            guard isSuccess else { throw .status(url, status, body: body) }
            return body
        }
    }

    /// Why no answer came, or why an answer is not a success.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// The server could not be reached, or the exchange broke off (see ``Cause``).
        case unreachable(URL, String, Cause)
        /// The server did not answer within the request's timeout.
        case timedOut(URL)
        /// A URL could not be made from the request's parts.
        case invalidURL(String)
        /// The server answered with a status that is not 2xx (from ``Response/successBody(from:)``).
        case status(URL, Int, body: Data)

        public var description: String {
            switch self {
            case .unreachable(let url, let reason, _): return "cannot reach \(url.absoluteString): \(reason)"
            case .timedOut(let url): return "\(url.absoluteString) did not answer in time"
            case .invalidURL(let text): return "\(text) is not a URL"
            case .status(let url, let status, _): return "\(url.absoluteString) answered HTTP \(status)"
            }
        }

        /// Why an exchange broke off, as far as the transport tells.
        public enum Cause: Sendable {
            /// Nobody answered at the address: refused, unknown host, no route.
            case noConnection
            /// The connection closed before the answer was whole.
            case connectionLost
            /// TLS failed: the certificate or the handshake.
            case tls
            /// Redirects went round in a circle, or led nowhere.
            case redirects
            /// What came back is not an HTTP answer.
            case badResponse
            case other
        }

        /// Whether the server could not be reached or did not answer (as opposed to answering badly).
        public var isNetworkFailure: Bool {
            switch self {
            case .unreachable, .timedOut: return true
            case .invalidURL, .status: return false
            }
        }
    }

    /// Sends a request and returns the server's answer, whatever its status.
    ///
    /// - Throws: ``Failure`` when no answer came; `CancellationError` at once when the task is cancelled
    ///   (the transfer is stopped).
    public func send(_ request: Request) async throws -> Response {
        let url = try Self.url(of: request)
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.timeoutInterval = request.timeout / .seconds(1)
        for header in request.headers { urlRequest.setValue(header.value, forHTTPHeaderField: header.name) }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.detachedData(for: urlRequest, transfers: transfers)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as URLError {
            if error.code == .cancelled, Task.isCancelled { throw CancellationError() }
            if error.code == .timedOut { throw Failure.timedOut(url) }
            throw Failure.unreachable(url, error.localizedDescription, Self.cause(of: error))
        } catch {
            throw Failure.unreachable(url, "\(error)", .other)
        }
        guard let http = response as? HTTPURLResponse else { throw Failure.unreachable(url, "the answer is not HTTP", .badResponse) }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return Response(status: http.statusCode, headers: headers, body: data)
    }

    private static func cause(of error: URLError) -> Failure.Cause {
        switch error.code {
        case .cannotConnectToHost, .cannotFindHost, .notConnectedToInternet, .dnsLookupFailed: return .noConnection
        case .networkConnectionLost: return .connectionLost
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
             .serverCertificateHasUnknownRoot, .clientCertificateRejected: return .tls
        case .httpTooManyRedirects, .redirectToNonExistentLocation: return .redirects
        case .badServerResponse, .cannotParseResponse: return .badResponse
        default: return .other
        }
    }

    private static func url(of request: Request) throws(Failure) -> URL {
        guard !request.query.isEmpty else { return request.url }
        guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false) else {
            throw .invalidURL(request.url.absoluteString)
        }
        components.queryItems = (components.queryItems ?? []) + request.query.map { URLQueryItem(name: $0.name, value: $0.value) }
        guard let url = components.url else { throw .invalidURL(request.url.absoluteString) }
        return url
    }
}
