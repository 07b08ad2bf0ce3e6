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
    guard let statePointer = requestContext.pointee else {
        requestContext.pointee = Unmanaged.passRetained(RequestState()).toOpaque()
        // Framing a proxy in front could read otherwise (request smuggling), and headers a proxy could
        // read another way, are refused before the body (RFC 9112).
        let headerPairs = pairs(connection, MHD_ValueKind.HEADER_KIND)
        if let refusal = RequestFraming.refusal(of: headerPairs) {
            return queue(refusal.status == 400 ? badRequest(refusal.message) : notImplemented(refusal.message), on: connection,
                         deadlines: context.deadlines)
        }
        let lengths = headerPairs.filter { $0.0.lowercased() == "content-length" }
        // A body announced larger than the limit is refused before a byte of it is read (the
        // connection then closes, its body unread).
        if let length = lengths.first.flatMap({ Int($0.1) }), length > context.maximumBodySize {
            return queue(payloadTooLarge, on: connection, deadlines: context.deadlines)
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
            return queue(payloadTooLarge, on: connection, deadlines: context.deadlines)
        }
        state.body.append(UnsafeRawPointer(uploadData).assumingMemoryBound(to: UInt8.self), count: size)
        uploadDataSize.pointee = 0
        return MHD_Result.YES
    }
    context.deadlines.received(connection)
    let request = HTTPRequest(method: String(cString: method), rawPath: String(cString: url),
                              rawQuery: pairs(connection, MHD_ValueKind.GET_ARGUMENT_KIND).map { (name: $0.0, value: $0.1) },
                              headers: headers(connection), body: state.body)
    state.body = Data()
    guard context.start(request, state: state, connection: connection) else {
        return queue(context.answerItself(request, with: .stopping("the request came while the server stopped")), on: connection)
    }
    return MHD_Result.YES
}

/// Called when a connection opens and when it closes (before its socket is closed): the request
/// deadline's clock runs from here.
func handleConnectionNotice(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                            _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ notice: MHD_ConnectionNotificationCode) {
    guard let cls, let connection else { return }
    let deadlines = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue().deadlines
    if notice.rawValue == 0 /* MHD_CONNECTION_NOTIFY_STARTED */ {
        let descriptor = openstorekit_connection_socket(connection)
        if descriptor >= 0 { deadlines.opened(connection, descriptor: descriptor) }
    } else {
        deadlines.closed(connection)
    }
}

/// A `400` naming what is wrong with the request's framing.
private func badRequest(_ message: String) -> HTTPResponse {
    HTTPResponse(status: 400, headers: [("Content-Type", "application/json"), ("Connection", "close")],
                 body: (try? JSONSerialization.data(withJSONObject: ["error": ["family": "other", "code": "badRequest", "message": message]])) ?? Data())
}

/// A `501` naming the transfer coding the server does not implement.
private func notImplemented(_ message: String) -> HTTPResponse {
    HTTPResponse(status: 501, headers: [("Content-Type", "application/json"), ("Connection", "close")],
                 body: (try? JSONSerialization.data(withJSONObject: ["error": ["family": "other", "code": "notImplemented", "message": message]])) ?? Data())
}

/// The answer to a body larger than the server accepts.
private let payloadTooLarge = HTTPResponse(status: 413, headers: [("Content-Type", "application/json"), ("Connection", "close")],
                                           body: Data(#"{"error":{"code":"payloadTooLarge","message":"the request body is larger than the server accepts"}}"#.utf8))

/// Called when libmicrohttpd is done with a request (its answer sent, or its connection closed):
/// the request leaves the server's requests in progress and its state is released.
func handleCompletion(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                      _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_RequestTerminationCode) {
    guard let cls, let requestContext, let pointer = requestContext.pointee else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if let connection { context.deadlines.answered(connection) }
    let state = Unmanaged<RequestState>.fromOpaque(pointer).takeRetainedValue()
    context.finished(state)
    requestContext.pointee = nil
}

/// Queues an answer; the request needs no more of the client, so its deadline's clock stops.
private func queue(_ response: HTTPResponse, on connection: OpaquePointer, deadlines: RequestDeadlines) -> MHD_Result {
    deadlines.received(connection)
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

private func collectValue(_ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
                          _ value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue().pairs.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return MHD_Result.YES
}

private func pairs(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(String, String)] {
    let collector = ValueCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, kind, collectValue, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.pairs
}

private func headers(_ connection: OpaquePointer) -> [String: String] {
    var result: [String: String] = [:]
    for (key, value) in pairs(connection, MHD_ValueKind.HEADER_KIND) { result[key.lowercased()] = value }
    return result
}
