/// A step in front of every route of a ``Router``: it may answer by itself, change the request or
/// context on the way in, or look at the answer on the way out.
public protocol HTTPMiddleware: Sendable {
    func handle(_ request: HTTPRequest, context: RequestContext,
                next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse
}

extension HTTPRequest {
    /// A header by name, in any case.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// Whether the method can change state: anything but GET, HEAD and OPTIONS.
    public var isStateChanging: Bool { !["GET", "HEAD", "OPTIONS"].contains(method) }
}
