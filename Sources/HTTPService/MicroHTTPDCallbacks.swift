import CMicroHTTPD
import Foundation

// The C callbacks of the daemon. They are top-level functions (not closures) so that they carry no
// actor isolation: libmicrohttpd calls them on its own threads.

/// Called several times per request: first with the headers, then with each piece of the body, then
/// with no data once the request is complete. That call suspends the connection and starts the
/// handler's task (see ``ServerContext/start(_:state:connection:)``); once the task resumes the
/// connection, libmicrohttpd calls again and the answer is queued. Answering on the first call would
/// make libmicrohttpd close keep-alive connections, so even a GET is answered on a later call.
func handleAccess(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
                  _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
                  _ uploadDataSize: UnsafeMutablePointer<Int>?, _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let cls, let connection, let url, let method, let uploadDataSize, let requestContext else { return MHD_Result.NO }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    // Before the first call the context holds the target's length, tagged (see openstorekit_note_target).
    let tagged = UInt(bitPattern: requestContext.pointee)
    guard tagged != 0, tagged & 1 == 0, let statePointer = requestContext.pointee else {
        requestContext.pointee = Unmanaged.passRetained(RequestState()).toOpaque()
        // A target longer than the server reads is refused before anything else about it.
        let targetLength = Int(tagged >> 1)
        if targetLength > RequestFraming.longestTarget {
            let message = "the request target is \(targetLength) bytes; the longest this server reads is \(RequestFraming.longestTarget)"
            return queue(refusal(414, "uriTooLong", message), on: connection, connections: context.connections)
        }
        // A header value libmicrohttpd cut at a NUL byte: the server would read it one way and a proxy
        // that drops NULs another (request smuggling). Refused, the connection closed.
        if openstorekit_header_truncated(connection) != 0 {
            return queue(refusal(400, "badRequest", "a header value holds a NUL byte"), on: connection, connections: context.connections)
        }
        // Framing a proxy in front could read otherwise (request smuggling), and headers a proxy could
        // read another way, are refused before the body (RFC 9112).
        let headerPairs = pairs(connection, MHD_ValueKind.HEADER_KIND)
        if let refused = RequestFraming.refusal(of: headerPairs) {
            return queue(refusal(refused.status, refused.status == 400 ? "badRequest" : "notImplemented", refused.message), on: connection,
                         connections: context.connections)
        }
        let lengths = headerPairs.filter { $0.0.lowercased() == "content-length" }
        // A body announced larger than the limit is refused before a byte of it is read (the
        // connection then closes, its body unread).
        if let length = lengths.first.flatMap({ Int($0.1) }), length > context.maximumBodySize {
            return queue(payloadTooLarge, on: connection, connections: context.connections)
        }
        return MHD_Result.YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()
    if let answer = state.takeAnswer() {
        return queue(answer, on: connection)
    }
    if uploadDataSize.pointee > 0 {
        let size = uploadDataSize.pointee
        guard state.body.count + size <= context.maximumBodySize, let uploadData else {
            // A body sent without a length (chunked) is refused as soon as it passes the limit.
            state.body = Data()
            uploadDataSize.pointee = 0
            return queue(payloadTooLarge, on: connection, connections: context.connections)
        }
        state.body.append(UnsafeRawPointer(uploadData).assumingMemoryBound(to: UInt8.self), count: size)
        uploadDataSize.pointee = 0
        return MHD_Result.YES
    }
    context.connections.received(connection)
    var request = HTTPRequest(method: String(cString: method), rawPath: String(cString: url),
                              rawQuery: pairs(connection, MHD_ValueKind.GET_ARGUMENT_KIND).map { (name: $0.0, value: $0.1) },
                              headers: headers(connection), body: state.body)
    var address = [CChar](repeating: 0, count: 64)
    openstorekit_client_address(connection, &address, socklen_t(address.count))
    request.remoteAddress = String(decoding: address.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    state.body = Data()
    guard context.start(request, state: state, connection: connection) else {
        return queue(context.answerItself(request, with: .stopping("the request came while the server stopped")), on: connection)
    }
    return MHD_Result.YES
}

/// Called with each line of libmicrohttpd's own error log (through openstorekit_forward_log).
func handleLibraryLog(_ cls: UnsafeMutableRawPointer?, _ line: UnsafePointer<CChar>?) {
    guard let cls, let line else { return }
    Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().libraryLog(String(cString: line))
}

/// Called when a connection opens and when it closes (before its socket is closed): the request
/// deadline's clock runs from here.
func handleConnectionNotice(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                            _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ notice: MHD_ConnectionNotificationCode) {
    guard let cls, let connection else { return }
    let connections = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().connections
    if notice.rawValue == 0 /* MHD_CONNECTION_NOTIFY_STARTED */ {
        let descriptor = openstorekit_connection_socket(connection)
        if descriptor >= 0 { connections.opened(connection, descriptor: descriptor) }
    } else {
        connections.closed(connection)
    }
}

/// The server's own refusal, before a handler sees the request: the JSON error body every answer
/// uses, and a close (the rest of the request is not read).
private func refusal(_ status: Int, _ code: String, _ message: String) -> HTTPResponse {
    HTTPResponse(status: status, headers: [("Content-Type", "application/json"), ("Connection", "close")],
                 body: (try? JSONSerialization.data(withJSONObject: ["error": ["family": "other", "code": code, "message": message]])) ?? Data())
}

/// The answer to a body larger than the server accepts.
private let payloadTooLarge = refusal(413, "payloadTooLarge", "the request body is larger than the server accepts")

/// Called when libmicrohttpd is done with a request (its answer sent, or its connection closed):
/// the request leaves the server's requests in progress and its state is released.
func handleCompletion(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                      _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_RequestTerminationCode) {
    guard let cls, let requestContext, let pointer = requestContext.pointee, UInt(bitPattern: pointer) & 1 == 0 else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if let connection { context.connections.answered(connection) }
    let state = Unmanaged<RequestState>.fromOpaque(pointer).takeRetainedValue()
    context.finished(state)
    requestContext.pointee = nil
}

/// Queues an answer; the request needs no more of the client, so its deadline's clock stops.
private func queue(_ response: HTTPResponse, on connection: OpaquePointer, connections: ConnectionLimits) -> MHD_Result {
    connections.received(connection)
    connections.lingerOnClose(connection)
    return queue(response, on: connection)
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let created = response.body.withUnsafeBytes { bytes in
        MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
    }
    guard let created else { return MHD_Result.NO }
    for header in response.headers { MHD_add_response_header(created, header.name, header.value) }
    // No answer of a local server is shown inside another site's frame (clickjacking) or read as
    // another type than it says; a page that sets its own policy keeps it.
    for header in RequestFraming.defaultResponseHeaders where !response.headers.contains(where: { $0.name.lowercased() == header.name.lowercased() }) {
        MHD_add_response_header(created, header.name, header.value)
    }
    let result = MHD_queue_response(connection, UInt32(response.status), created)
    MHD_destroy_response(created)
    return result
}

private func lookup(_ connection: OpaquePointer, _ kind: MHD_ValueKind, _ key: String) -> String? {
    MHD_lookup_connection_value(connection, kind, key).map { String(cString: $0) }
}

/// Collects key/value pairs of one kind through libmicrohttpd's iterator.
private final class ValueCollector {
    var pairs: [(String, String)] = []
}

private func collectValue(_ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?, _ keySize: Int,
                          _ value: UnsafePointer<CChar>?, _ valueSize: Int) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let collector = Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue()
    let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
    let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) } ?? ""
    collector.pairs.append((name, text))
    return MHD_Result.YES
}

private func pairs(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(String, String)] {
    let collector = ValueCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values_n(connection, kind, collectValue, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.pairs
}

private func headers(_ connection: OpaquePointer) -> [String: String] {
    var result: [String: String] = [:]
    for (key, value) in pairs(connection, MHD_ValueKind.HEADER_KIND) { result[key.lowercased()] = value }
    return result
}
