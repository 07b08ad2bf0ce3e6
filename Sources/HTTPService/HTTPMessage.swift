import Foundation

/// An HTTP request as the server received it, body complete.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path without the query as it came on the wire, still percent-encoded
    /// (`/v1/devices/caf%C3%A9/purchases`): ``Router`` decodes it once, segment by segment.
    public var rawPath: String
    /// The path with each segment percent-decoded (`/v1/devices/café/purchases`), for messages; a
    /// path that cannot be decoded is its raw form.
    public var path: String { (try? PathDecoding.segments(of: rawPath)).map { "/" + $0.joined(separator: "/") } ?? rawPath }
    /// The query's names and values as they came on the wire, still percent-encoded, in order.
    public var rawQuery: [(name: String, value: String)]
    /// Query parameters, each name and value percent-decoded once; a parameter given twice keeps
    /// every value, in order. ``Router`` refuses a query that cannot be decoded before a route sees
    /// it, unless the route asks for ``Router/QueryDecoding/lenient`` decoding, where a component
    /// that cannot be decoded is kept as sent.
    public var query: [String: [String]]
    /// Header fields by lower-cased name.
    public var headers: [String: String]
    public var body: Data
    /// The request's identity in logs and in its answer's `X-Request-ID`: sixteen hexadecimal digits,
    /// new for every request the server receives.
    public var id: String
    /// The client's address as the server saw it (`127.0.0.1`), empty for a request made in process.
    public var remoteAddress = ""

    /// A request for `path` and `query`, given decoded (they are percent-encoded again for
    /// ``rawPath`` and ``rawQuery``).
    public init(method: String, path: String, query: [String: [String]] = [:], headers: [String: String] = [:], body: Data = Data()) {
        func encoded(_ text: some StringProtocol, allowing allowed: CharacterSet) -> String {
            text.addingPercentEncoding(withAllowedCharacters: allowed.subtracting(CharacterSet(charactersIn: "/%&=+?#"))) ?? String(text)
        }
        let rawQuery = query.sorted { $0.key < $1.key }.flatMap { name, values in
            values.map { (name: encoded(name, allowing: .urlQueryAllowed), value: encoded($0, allowing: .urlQueryAllowed)) }
        }
        self.init(method: method,
                  rawPath: path.split(separator: "/", omittingEmptySubsequences: false).map { encoded($0, allowing: .urlPathAllowed) }.joined(separator: "/"),
                  rawQuery: rawQuery, headers: headers, body: body)
    }

    /// A request as it came on the wire: the path and the query still percent-encoded.
    public init(method: String, rawPath: String, rawQuery: [(name: String, value: String)] = [], headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        self.rawPath = rawPath
        self.rawQuery = rawQuery
        self.query = PathDecoding.leniently(rawQuery)
        self.headers = headers
        self.body = body
        self.id = Self.makeID()
    }

    /// A new request id: sixteen random hexadecimal digits.
    static func makeID() -> String {
        let value = UInt64.random(in: .min ... .max)
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The first value of a query parameter.
    public func queryValue(_ name: String) -> String? { query[name]?.first }

    /// The path's segments, decoded once, without empty ones (`/v1/devices/phone` → `["v1", "devices", "phone"]`);
    /// empty when the path cannot be decoded (``Router`` answers such a request `400`).
    public var pathSegments: [String] { (try? PathDecoding.segments(of: rawPath)) ?? [] }
}

/// An HTTP response to send.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data
    /// Why a `5xx` answer failed, in words, for the server's log; never sent.
    public var failure: String?
    /// Whether the failure is the server stopping, logged as a notice rather than an error.
    var failsBecauseStopping = false

    /// The answer to a request that came while the server stops, or whose handler it stopped.
    static func stopping(_ why: String) -> HTTPResponse {
        var response = HTTPResponse.text(503, "the server is stopping")
        response.headers.append(("Connection", "close"))
        response.failure = why
        response.failsBecauseStopping = true
        return response
    }

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON body with `Content-Type: application/json`.
    public static func json(_ status: Int, _ body: Data) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// A plain-text body.
    public static func text(_ status: Int, _ text: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Data(text.utf8))
    }
}
