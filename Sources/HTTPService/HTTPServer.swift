import BlockingWork
import CMicroHTTPD
import Foundation
import ServiceLogging
import Synchronization

/// A small HTTP/1.1 server on libmicrohttpd: a few polling threads for every connection, bodies
/// buffered up to a limit, and an `async` handler per request.
///
/// No thread waits for a handler. When a request is complete, its connection is suspended
/// (libmicrohttpd's suspend and resume) and the handler runs as a Swift task wherever Swift runs it;
/// when it returns, the connection is resumed and the answer sent. So thousands of open long polls
/// cost no threads, and a handler may await actors for as long as a long poll needs. Bodies over
/// ``maximumBodySize`` are answered `413`; connections idle longer than the idle timeout are closed,
/// and so is a connection whose request (headers and body) has not fully arrived within the request
/// deadline, however steadily it trickles in. When connections run short, those waiting for a request
/// (idle keep-alives, requests not yet sent) give way to new ones, so one local client holding
/// thousands cannot shut out the others.
///
/// Stop a server with ``stop(grace:)``, which never blocks a thread: it stops accepting, cancels the
/// handlers in progress (a long poll answers at once), waits for their answers to be sent, and ends.
public final class HTTPServer: Sendable {
    /// The handler every request goes to. It is cancelled when the server stops.
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    let context: ServerContext
    private let daemon: Mutex<DaemonHandle?>
    /// The address the server listens on.
    public let host: String
    /// The port the server listens on (the one the system picked when asked for port 0).
    public let port: UInt16
    /// Requests whose handlers are working (long polls among them), or whose answers are being sent.
    public var requestsInProgress: Int { context.requestsInProgress }
    /// Connections closed because their request did not fully arrive within the request deadline.
    public var requestsCutOff: Int { context.connections.requestsCutOff }
    /// Connections that waited for a request and were closed to make room for new clients.
    public var connectionsDropped: Int { context.connections.connectionsDropped }
    /// Connections open now, those in their lingering close included.
    public var openConnections: Int { context.connections.openConnections }
    /// Answered connections whose sockets the server still reads and drops before closing them.
    public var lingeringConnections: Int { context.connections.lingeringConnections }

    /// The largest request body accepted; larger ones are answered `413`.
    public var maximumBodySize: Int { context.maximumBodySize }

    /// Starts listening on `host:port` (IPv4; `port` 0 picks a free one).
    ///
    /// - Parameters:
    ///   - idleTimeout: Seconds a connection may send nothing before it is closed.
    ///   - requestDeadline: How long a client has to send a whole request, headers and body, from
    ///     the moment its connection opens (or its previous answer was sent); a connection still
    ///     sending then is closed. A handler's own time (a long poll) does not count.
    ///   - connectionLimit: Connections open at once, long polls included (at most what the process's
    ///     descriptor limit allows, which the server raises to its hard limit). Near it, connections
    ///     waiting for a request give way to new ones, longest-waiting first (see ``connectionsDropped``).
    ///   - connectionsPerAddress: Connections one client address may hold at once; `nil` is none on
    ///     loopback (where every client shares 127.0.0.1 and a share would let one process shut out
    ///     the rest) and 2,000 elsewhere.
    ///   - pollingThreads: Threads that read and write connections (handlers run as tasks, not here).
    ///   - logger: Where the server logs the requests it answers `503` itself, while it stops (a
    ///     ``Router`` logs its handlers' failures).
    /// - Throws: ``HTTPServerError`` when the address is not this machine's or the port is in use:
    ///   two servers never share a port.
    public convenience init(host: String = "127.0.0.1", port: UInt16 = 0, maximumBodySize: Int = 1 << 20, idleTimeout: Int = 30,
                            requestDeadline: Duration = .seconds(30), connectionLimit: Int = 10_000, connectionsPerAddress: Int? = nil,
                            pollingThreads: Int = 2, logger: Logger = .disabled, handler: @escaping Handler) throws(HTTPServerError) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw HTTPServerError("\(host) is not an IPv4 address") }
        try self.init(host: host, address: address, socket: -1, maximumBodySize: maximumBodySize, idleTimeout: idleTimeout,
                      requestDeadline: requestDeadline, connectionLimit: connectionLimit, connectionsPerAddress: connectionsPerAddress, pollingThreads: pollingThreads,
                      logger: logger, handler: handler)
    }

    /// Starts serving on a socket the caller bound and set listening; the server closes it when it stops.
    ///
    /// For callers that must know the port before the server exists (certificates that name it, a
    /// port reserved across restarts) without giving it up in between.
    public convenience init(listeningSocket socket: Int32, maximumBodySize: Int = 1 << 20, idleTimeout: Int = 30,
                            requestDeadline: Duration = .seconds(30), connectionLimit: Int = 10_000, connectionsPerAddress: Int? = nil,
                            pollingThreads: Int = 2, logger: Logger = .disabled, handler: @escaping Handler) throws(HTTPServerError) {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) == 0 }
        }
        guard named, address.sin_family == sa_family_t(AF_INET) else { throw HTTPServerError("descriptor \(socket) is not an IPv4 socket") }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
        let host = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        try self.init(host: host, address: address, socket: socket, maximumBodySize: maximumBodySize, idleTimeout: idleTimeout,
                      requestDeadline: requestDeadline, connectionLimit: connectionLimit, connectionsPerAddress: connectionsPerAddress, pollingThreads: pollingThreads,
                      logger: logger, handler: handler)
    }

    private init(host: String, address: sockaddr_in, socket: Int32, maximumBodySize: Int, idleTimeout: Int, requestDeadline: Duration,
                 connectionLimit: Int, connectionsPerAddress: Int?, pollingThreads: Int, logger: Logger, handler: @escaping Handler) throws(HTTPServerError) {
        var address = address
        // Room for the process's other descriptors (databases, logs, outgoing posts) below its limit.
        let capacity = max(64, min(connectionLimit, DescriptorLimit.raised - 256))
        // On loopback every client is 127.0.0.1: a share per address would let one local process shut
        // out every other, so there waiting connections give way instead (see ConnectionLimits).
        let perAddress = connectionsPerAddress ?? (Self.isLoopback(host) ? 0 : 2_000)
        let context = ServerContext(handler: handler, maximumBodySize: maximumBodySize, requestDeadline: requestDeadline, capacity: capacity,
                                    logger: logger)
        let pointer = Unmanaged.passUnretained(context).toOpaque()
        context.logSink.pointee = openstorekit_log_sink(line: handleLibraryLog, context: pointer)
        let started = withUnsafePointer(to: &address) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                openstorekit_start_daemon(socketAddress, socket, handleAccess, pointer, handleCompletion, handleConnectionNotice,
                                          UInt32(max(1, pollingThreads)),
                                          UInt32(idleTimeout), UInt32(capacity), UInt32(perAddress), context.logSink)
            }
        }
        guard let started else {
            context.connections.stop()
            let port = UInt16(bigEndian: address.sin_port)
            throw HTTPServerError("cannot listen on \(host):\(port): the port is in use, or the address is not one of this machine's")
        }
        self.context = context
        self.host = host
        self.port = openstorekit_daemon_port(started)
        self.daemon = Mutex(DaemonHandle(pointer: started))
    }

    /// A server nobody stopped ends in the background: its open requests are answered `503`.
    deinit {
        guard let handle = daemon.withLock({ handle -> DaemonHandle? in defer { handle = nil }; return handle }) else { return }
        let context = self.context
        Task.detached { await Self.shutdown(handle, context: context, grace: .zero) }
    }

    /// Stops the server without blocking a thread.
    ///
    /// It stops accepting connections and answers new requests on open ones `503`; cancels the
    /// handlers in progress, so long polls answer at once; waits up to `grace` for their answers to be
    /// sent (a handler that ignores cancellation gets a `503` sent in its place); then ends the
    /// polling threads. Stopping twice is harmless; the second call returns at once.
    public func stop(grace: Duration = .seconds(2)) async {
        guard let handle = daemon.withLock({ handle -> DaemonHandle? in defer { handle = nil }; return handle }) else { return }
        await Self.shutdown(handle, context: context, grace: grace)
    }

    private static func shutdown(_ handle: DaemonHandle, context: ServerContext, grace: Duration) async {
        context.beginStopping()
        let deadline = ContinuousClock.now + grace
        while context.requestsInProgress > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        // Whatever is left gets a 503 in place of its handler's answer, and a moment to be sent.
        context.answerEveryRequest(with: .stopping("the server stopped before the request's handler answered"))
        let sent = ContinuousClock.now + .milliseconds(500)
        while context.requestsInProgress > 0, ContinuousClock.now < sent {
            try? await Task.sleep(for: .milliseconds(5))
        }
        // Joins the polling threads, which never wait for handlers: quick, but still a blocking call.
        await BlockingWork.run("HTTPServer.stop") { MHD_stop_daemon(handle.pointer) }
        context.connections.stop()
        withExtendedLifetime(context) {}
    }

    /// `http://host:port`.
    public var url: URL { URL(string: "http://\(host):\(port)")! }

    /// Whether `host` (an address or `localhost`) is a loopback address, reachable from this machine only.
    public static func isLoopback(_ host: String) -> Bool {
        host.hasPrefix("127.") || host == "localhost" || host == "::1"
    }
}

extension HTTPServer {
    /// Runs `body` with a server that is stopped when `body` returns or throws.
    public static func serving<Result>(host: String = "127.0.0.1", port: UInt16 = 0, handler: @escaping Handler,
                                       _ body: (HTTPServer) async throws -> Result) async throws -> Result {
        let server = try HTTPServer(host: host, port: port, handler: handler)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

/// The process's limit on open descriptors, raised once to its hard limit (as Go's runtime does):
/// a server's connections are descriptors, and the soft limit (often 1,024) is far below what a
/// server holding thousands of long polls needs.
enum DescriptorLimit {
    static let raised: Int = {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1_024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur > rlim_t(Int.max) ? Int.max : Int(limit.rlim_cur)
    }()
}

/// A failure to start a server.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public var description: String
    init(_ description: String) { self.description = description }
}

/// The daemon pointer; used only to stop it.
struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// What the C callbacks reach through their context pointer; shared by the polling threads, the
/// handlers' tasks and ``HTTPServer/stop(grace:)``.
final class ServerContext: Sendable {
    let handler: HTTPServer.Handler
    let maximumBodySize: Int
    let connections: ConnectionLimits
    /// Where the requests the server answers itself are logged.
    let logger: Logger
    /// Where libmicrohttpd's own error log goes (see ``libraryLog(_:)``); freed with the context,
    /// after the daemon that writes to it has stopped.
    nonisolated(unsafe) let logSink = UnsafeMutablePointer<openstorekit_log_sink>.allocate(capacity: 1)
    /// libmicrohttpd's lines per window: its messages name no client, so they share one budget.
    let libraryLogBudget = LogBudget(linesPerWindow: 20, window: .seconds(10))
    private let state = Mutex(State())

    private struct State {
        var isStopping = false
        /// Requests whose connection is suspended or whose answer is being sent, by identity.
        var inProgress: [ObjectIdentifier: RequestState] = [:]
    }

    init(handler: @escaping HTTPServer.Handler, maximumBodySize: Int, requestDeadline: Duration, capacity: Int, logger: Logger) {
        self.handler = handler
        self.maximumBodySize = maximumBodySize
        self.connections = ConnectionLimits(requestDeadline: requestDeadline, capacity: capacity)
        self.logger = logger
    }

    /// The server's own answer to `request` (it stops): logged once, with the request's id.
    func answerItself(_ request: HTTPRequest, with response: HTTPResponse) -> HTTPResponse {
        var response = response
        Router.logFailure(response, to: request, logger: logger.with(["request_id": request.id]))
        response.headers.append(("X-Request-ID", request.id))
        return response
    }

    deinit { logSink.deallocate() }

    /// A line of libmicrohttpd's own error log (a malformed request, a failed socket call): written
    /// to the server's logger, escaped and cut, within ``libraryLogBudget``, never to standard error.
    func libraryLog(_ line: String) {
        guard let dropped = libraryLogBudget.admit("libmicrohttpd") else { return }
        let earlier = dropped > 0 ? " (\(dropped) earlier lines of libmicrohttpd were not logged)" : ""
        logger.notice("libmicrohttpd: \(UntrustedText.excerpt(line.trimmingCharacters(in: .whitespacesAndNewlines), limit: 200))\(earlier)")
    }

    var isStopping: Bool { state.withLock { $0.isStopping } }
    var requestsInProgress: Int { state.withLock { $0.inProgress.count } }

    /// Suspends the request's connection and runs the handler as a task, which resumes the
    /// connection with its answer; `false` when the server is stopping (the caller answers `503`).
    /// Called on a polling thread, from the access callback.
    ///
    /// Suspending and recording happen under the lock ``beginStopping()`` takes, so a stopping
    /// server sees every suspended connection, and answers each before it ends the daemon.
    func start(_ request: HTTPRequest, state requestState: RequestState, connection: OpaquePointer) -> Bool {
        let admitted = state.withLock { state -> Bool in
            guard !state.isStopping else { return false }
            MHD_suspend_connection(connection)
            requestState.suspend(connection, request: request)
            state.inProgress[ObjectIdentifier(requestState)] = requestState
            return true
        }
        guard admitted else { return false }
        let handler = self.handler
        let task = Task {
            let response = await handler(request)
            requestState.answer(response)
        }
        requestState.keep(task)
        if isStopping { task.cancel() }
        return true
    }

    /// The request's answer was sent, or its connection closed: libmicrohttpd is done with it.
    func finished(_ request: RequestState) {
        _ = state.withLock { $0.inProgress.removeValue(forKey: ObjectIdentifier(request)) }
    }

    /// Refuses new requests and cancels the handlers in progress.
    func beginStopping() {
        let requests = state.withLock { state -> [RequestState] in
            state.isStopping = true
            return Array(state.inProgress.values)
        }
        for request in requests { request.cancel() }
    }

    /// Answers every request still waiting for its handler with `response`, each logged once.
    func answerEveryRequest(with response: HTTPResponse) {
        for request in state.withLock({ Array($0.inProgress.values) }) {
            guard let waiting = request.waitingRequest else { continue }
            request.answer(answerItself(waiting, with: response))
        }
    }
}

/// One request: its body as it arrives (touched only by the polling thread that owns the
/// connection), then its answer, handed from the handler's task to the polling thread.
final class RequestState: @unchecked Sendable {
    // Unchecked: `body` is used only by the connection's polling thread, one
    // callback at a time; everything shared is behind `phase`'s lock.
    var body = Data()
    private let phase = Mutex<Phase>(.receiving)

    private enum Phase {
        case receiving
        /// The connection is suspended while the handler's task works on the request.
        case suspended(connection: UnsafeConnection, task: Task<Void, Never>?, request: HTTPRequest)
        /// The answer to queue when the polling thread calls again.
        case answered(HTTPResponse)
        case sent
    }

    /// A connection pointer, used only to resume it while it is suspended.
    struct UnsafeConnection: @unchecked Sendable { let pointer: OpaquePointer }

    func suspend(_ connection: OpaquePointer, request: HTTPRequest) {
        phase.withLock { $0 = .suspended(connection: UnsafeConnection(pointer: connection), task: nil, request: request) }
    }

    /// Keeps the handler's task, to cancel it when the server stops (unless it answered already).
    func keep(_ task: Task<Void, Never>) {
        phase.withLock { phase in
            guard case .suspended(let connection, nil, let request) = phase else { return }
            phase = .suspended(connection: connection, task: task, request: request)
        }
    }

    /// The request its handler is working on, while it is not answered.
    var waitingRequest: HTTPRequest? {
        phase.withLock { phase in
            guard case .suspended(_, _, let request) = phase else { return nil }
            return request
        }
    }

    func cancel() {
        let task = phase.withLock { phase -> Task<Void, Never>? in
            guard case .suspended(_, let task, _) = phase else { return nil }
            return task
        }
        task?.cancel()
    }

    /// Hands the answer to the polling thread and resumes the connection; only the first answer
    /// counts (a handler's, or the 503 of a server that stopped waiting for it).
    ///
    /// The resume happens under the lock, so a stopping server that answered every request knows no
    /// resume is still on its way when it ends the daemon.
    func answer(_ response: HTTPResponse) {
        phase.withLock { phase in
            guard case .suspended(let connection, _, _) = phase else { return }
            phase = .answered(response)
            MHD_resume_connection(connection.pointer)
        }
    }

    /// The answer to queue, if one is ready (the polling thread asks after a resume).
    func takeAnswer() -> HTTPResponse? {
        phase.withLock { phase in
            guard case .answered(let response) = phase else { return nil }
            phase = .sent
            return response
        }
    }
}
