import Foundation

/// An HTTP request as the server received it, body complete.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path without the query (`/v1/devices/phone/purchases`), percent-decoded.
    public var path: String
    /// Query parameters; a parameter given twice keeps every value, in order.
    public var query: [String: [String]]
    /// Header fields by lower-cased name.
    public var headers: [String: String]
    public var body: Data

    public init(method: String, path: String, query: [String: [String]] = [:], headers: [String: String] = [:], body: Data = Data()) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of a query parameter.
    public func queryValue(_ name: String) -> String? { query[name]?.first }

    /// The path's segments, without empty ones (`/v1/devices/phone` → `["v1", "devices", "phone"]`).
    public var pathSegments: [String] { path.split(separator: "/").map(String.init) }
}

/// An HTTP response to send.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Data

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
