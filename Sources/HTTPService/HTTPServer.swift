import CMicroHTTPD
import Dispatch
import Foundation
import Synchronization

/// A small HTTP/1.1 server on libmicrohttpd: one thread per connection, bodies buffered up to a
/// limit, and an `async` handler per request.
///
/// The handler runs as a Swift task while the connection's thread waits for it, so handlers may
/// await actors and take as long as a long poll needs. Bodies over ``maximumBodySize`` are answered
/// `413` without being read; idle connections (a client that stops sending halfway) are closed after
/// the idle timeout, so slow clients cannot hold the server.
public final class HTTPServer: Sendable {
    /// The handler every request goes to.
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    let context: ServerContext
    private let daemon: Mutex<DaemonHandle?>
    /// The address the server listens on.
    public let host: String
    /// The port the server listens on (the one the system picked when asked for port 0).
    public let port: UInt16

    /// Starts listening on `host:port` (IPv4; `port` 0 picks a free one).
    public init(host: String = "127.0.0.1", port: UInt16 = 0, maximumBodySize: Int = 1 << 20, idleTimeout: Int = 30,
                connectionLimit: Int = 512, handler: @escaping Handler) throws(HTTPServerError) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw HTTPServerError("\(host) is not an IPv4 address") }
        let context = ServerContext(handler: handler, maximumBodySize: maximumBodySize)
        let pointer = Unmanaged.passUnretained(context).toOpaque()
        let started = withUnsafePointer(to: &address) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                openstorekit_start_daemon(socketAddress, handleAccess, pointer, handleCompletion, UInt32(idleTimeout), UInt32(connectionLimit))
            }
        }
        guard let started else { throw HTTPServerError("cannot listen on \(host):\(port) (in use, or not an address of this machine)") }
        self.context = context
        self.host = host
        self.port = openstorekit_daemon_port(started)
        self.daemon = Mutex(DaemonHandle(pointer: started))
    }

    deinit { stop() }

    /// Stops accepting connections and ends the server; requests in progress finish first.
    public func stop() {
        guard let handle = daemon.withLock({ handle -> DaemonHandle? in defer { handle = nil }; return handle }) else { return }
        MHD_stop_daemon(handle.pointer)
        context.executor.shutdown()
    }

    /// `http://host:port`.
    public var url: URL { URL(string: "http://\(host):\(port)")! }
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

/// What the C callbacks reach through their context pointer: immutable, so shared across threads.
final class ServerContext: Sendable {
    let handler: HTTPServer.Handler
    let maximumBodySize: Int
    /// This server's handler threads: a server busy with its own requests never delays another's.
    let executor = HandlerExecutor(threads: 8)

    init(handler: @escaping HTTPServer.Handler, maximumBodySize: Int) {
        self.handler = handler
        self.maximumBodySize = maximumBodySize
    }

    /// Runs the async handler and waits for it on this connection thread.
    ///
    /// The handler's task prefers the server's ``HandlerExecutor``, so it (and the default actors it
    /// calls, and the tasks it starts) runs on threads of its own rather than Swift's cooperative pool: a
    /// process that embeds a server and blocks pool threads elsewhere (waiting for a child process, say),
    /// or runs other busy servers, still gets this server's requests answered.
    func respond(to request: HTTPRequest) -> HTTPResponse {
        let result = ResponseSlot()
        let done = DispatchSemaphore(value: 0)
        let handler = self.handler
        Task(executorPreference: executor) {
            result.set(await handler(request))
            done.signal()
        }
        done.wait()
        return result.take()
    }
}

/// Where request handlers run: threads of their own, neither Swift's cooperative pool nor Dispatch's
/// (both can be busy with a host process's own work, which must not stall the server's answers).
///
/// Jobs are short: a handler's task runs until it awaits, then its thread takes the next job. A job
/// that blocks (SQLite waiting for another process's write lock) holds one thread, not the server.
final class HandlerExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init(threads: Int) {
        for index in 0..<threads {
            // The threads keep the executor alive until it is shut down and they have drained it.
            let thread = Thread { self.work() }
            thread.name = "HTTPService.handler.\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        guard !stopped else {
            condition.unlock()
            // A task that outlived its server (one it started, say) still runs, on the caller's thread.
            job.runSynchronously(on: asUnownedTaskExecutor())
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the threads end once the jobs already queued have run.
    func shutdown() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// A response handed from the handler's task to the waiting connection thread.
final class ResponseSlot: Sendable {
    private let value = Mutex<HTTPResponse?>(nil)
    func set(_ response: HTTPResponse) { value.withLock { $0 = response } }
    func take() -> HTTPResponse { value.withLock { $0 } ?? HTTPResponse(status: 500) }
}

/// One request being received on a connection thread.
final class RequestState {
    var body = Data()
    var tooLarge = false
}
