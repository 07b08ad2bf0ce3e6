import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Keep-alive HTTP/1.1 connections to one plain-`http` origin, for a sender that posts many small
/// requests to one receiver: the store's notification delivery.
///
/// ``HTTPClient`` (URLSession) costs about half a millisecond of CPU per request on Linux and keeps
/// memory per request it has made; a sender posting hundreds of notifications a second to one backend
/// pays that on every post. Here a request is one `send` of its bytes on a connection kept open and one
/// read of the answer, with nothing kept afterwards but the idle connection.
///
/// Each connection does its blocking socket work on a dispatch queue of its own, never on Swift's
/// cooperative pool; the caller suspends meanwhile, and cancelling it shuts the socket down so the
/// exchange ends at once. A request's ``HTTPClient/Request/timeout`` bounds connecting and each wait
/// for bytes. A connection the receiver closed while idle is noticed by the next request, which then
/// opens a new one and sends again (nothing of the answer had arrived, so nothing was handled twice
/// that a receiver keyed by the notification's UUID would not drop). Redirects are not followed: an
/// answer is the receiver's answer.
public final class KeepAliveConnections: Sendable {
    /// The origin requests go to: `http://host:port`.
    public let origin: URL
    private let host: String
    private let port: Int
    private let maxIdle: Int
    private let idle = Mutex<[Connection]>([])

    /// Connections to the origin of `url`, keeping at most `maxIdle` open between requests; `nil` for a
    /// URL that is not plain `http` with a host (use ``HTTPClient`` for those).
    public init?(origin url: URL, maxIdle: Int = 8) {
        guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else { return nil }
        self.host = host
        self.port = url.port ?? 80
        self.maxIdle = max(1, maxIdle)
        var components = URLComponents()
        components.scheme = "http"
        components.host = host
        components.port = url.port
        self.origin = components.url ?? url
    }

    deinit {
        for connection in idle.withLock({ $0 }) { connection.close() }
    }

    /// Sends a request to this origin (its URL's path and query; its host must be this origin's) and
    /// answers the status, headers and body, whatever the status.
    ///
    /// - Throws: ``HTTPClient/Failure/unreachable(_:_:_:)`` (no connection, connection lost, an answer
    ///   that is not HTTP), ``HTTPClient/Failure/timedOut(_:)``, or `CancellationError`.
    public func send(_ request: HTTPClient.Request) async throws -> HTTPClient.Response {
        let bytes = requestBytes(request)
        let reused = idle.withLock { $0.popLast() }
        let connection = reused ?? Connection(host: host, port: port)
        do {
            let response = try await connection.exchange(bytes, url: request.url, timeout: request.timeout, mayRetryOnNewConnection: reused != nil)
            if response.keepsAlive {
                let kept = idle.withLock { connections -> Bool in
                    guard connections.count < maxIdle else { return false }
                    connections.append(connection)
                    return true
                }
                if !kept { connection.close() }
            } else {
                connection.close()
            }
            return response.response
        } catch {
            connection.close()
            throw error
        }
    }

    private func requestBytes(_ request: HTTPClient.Request) -> [UInt8] {
        var target = request.url.path.isEmpty ? "/" : request.url.path
        var query = request.url.query.map { [$0] } ?? []
        for (name, value) in request.query {
            let allowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+"))
            query.append("\(name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)")
        }
        if !query.isEmpty { target += "?" + query.joined(separator: "&") }
        let body = request.body ?? Data()
        var head = "\(request.method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in request.headers where name.lowercased() != "content-length" && name.lowercased() != "host" {
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        var bytes = Array(head.utf8)
        bytes.append(contentsOf: body)
        return bytes
    }
}

/// One TCP connection and the queue its blocking work runs on.
private final class Connection: Sendable {
    struct Answer: Sendable {
        let response: HTTPClient.Response
        let keepsAlive: Bool
    }

    private let host: String
    private let port: Int
    private let queue: DispatchQueue
    /// The socket, `-1` until connected; read and written on the queue only, shut down from anywhere.
    private let socket = Mutex<Int32>(-1)

    init(host: String, port: Int) {
        self.host = host
        self.port = port
        queue = DispatchQueue(label: "KeepAliveConnections.\(host):\(port)")
    }

    func exchange(_ bytes: [UInt8], url: URL, timeout: Duration, mayRetryOnNewConnection: Bool) async throws -> Answer {
        try Task.checkCancellation()
        let result: Result<Answer, any Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.async {
                    continuation.resume(returning: Result { try self.blockingExchange(bytes, url: url, timeout: timeout, mayRetry: mayRetryOnNewConnection) })
                }
            }
        } onCancel: {
            self.shutDown()
        }
        if Task.isCancelled { throw CancellationError() }
        return try result.get()
    }

    /// Ends a blocked exchange at once: its `send` or `recv` returns.
    func shutDown() {
        socket.withLock { if $0 >= 0 { _ = Glibc.shutdown($0, Int32(SHUT_RDWR)) } }
    }

    func close() {
        queue.async {
            self.socket.withLock { fd in
                if fd >= 0 { Glibc.close(fd) }
                fd = -1
            }
        }
    }

    // MARK: On the queue

    private func blockingExchange(_ bytes: [UInt8], url: URL, timeout: Duration, mayRetry: Bool) throws -> Answer {
        var fd = socket.withLock { $0 }
        if fd < 0 { fd = try connect(url: url, timeout: timeout) }
        do {
            try write(bytes, to: fd, url: url)
            return try readAnswer(from: fd, url: url)
        } catch NothingArrived.closed where mayRetry {
            // The receiver closed the idle connection: a new one, and the request again.
            reset()
            let fresh = try connect(url: url, timeout: timeout)
            do {
                try write(bytes, to: fresh, url: url)
                return try readAnswer(from: fresh, url: url)
            } catch NothingArrived.closed {
                throw HTTPClient.Failure.unreachable(url, "the connection closed before an answer", .connectionLost)
            }
        } catch NothingArrived.closed {
            throw HTTPClient.Failure.unreachable(url, "the connection closed before an answer", .connectionLost)
        }
    }

    /// The connection ended before any byte of the answer.
    private enum NothingArrived: Error { case closed }

    private func reset() {
        socket.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }

    private func connect(url: URL, timeout: Duration) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPClient.Failure.unreachable(url, "cannot resolve \(host): \(String(cString: gai_strerror(status)))", .noConnection)
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            // Close-on-exec: a child process started meanwhile (a backend, a browser) must not inherit the
            // connection, or closing it here would not end it.
            let fd = Glibc.socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            let flags = fcntl(fd, F_GETFL)
            _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
            var connected = Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0
            if !connected, errno == EINPROGRESS {
                var poll = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if Glibc.poll(&poll, 1, Int32(clamping: timeout.milliseconds)) == 1 {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    connected = error == 0
                    if !connected { lastError = String(cString: strerror(error)) }
                } else {
                    Glibc.close(fd)
                    throw HTTPClient.Failure.timedOut(url)
                }
            } else if !connected {
                lastError = String(cString: strerror(errno))
            }
            guard connected else {
                Glibc.close(fd)
                continue
            }
            _ = fcntl(fd, F_SETFL, flags)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            var wait = timeval(tv_sec: Int(timeout.milliseconds / 1_000), tv_usec: Int(timeout.milliseconds % 1_000) * 1_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            socket.withLock { $0 = fd }
            return fd
        }
        throw HTTPClient.Failure.unreachable(url, "cannot connect to \(host):\(port): \(lastError)", .noConnection)
    }

    private func write(_ bytes: [UInt8], to fd: Int32, url: URL) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                throw HTTPClient.Failure.timedOut(url)
            } else {
                // A reset or a closed connection before the request went out: nothing was answered.
                throw NothingArrived.closed
            }
        }
    }

    /// Reads one answer: the status line, the header fields, and the body by its length, in chunks, or
    /// up to the end of the connection.
    private func readAnswer(from fd: Int32, url: URL) throws -> Answer {
        var reader = SocketReader(fd: fd, url: url)
        guard let statusLine = try reader.line(first: true) else { throw NothingArrived.closed }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw HTTPClient.Failure.unreachable(url, "not an HTTP answer: \(statusLine.prefix(80))", .badResponse)
        }
        var headers: [String: String] = [:]
        while let line = try reader.line(first: false), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let connectionHeader = headers["connection"]?.lowercased() ?? ""
        var keepsAlive = parts[0] == "HTTP/1.1" ? !connectionHeader.contains("close") : connectionHeader.contains("keep-alive")
        var body = Data()
        if (100..<200).contains(status) || status == 204 || status == 304 {
            // No body.
        } else if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            while true {
                guard let sizeLine = try reader.line(first: false), let size = Int(sizeLine.split(separator: ";")[0].trimmingCharacters(in: .whitespaces), radix: 16) else {
                    throw HTTPClient.Failure.unreachable(url, "a chunked answer broke off", .connectionLost)
                }
                if size == 0 {
                    while let trailer = try reader.line(first: false), !trailer.isEmpty {}
                    break
                }
                body.append(contentsOf: try reader.bytes(size))
                _ = try reader.line(first: false)
            }
        } else if let length = headers["content-length"].flatMap({ Int($0) }) {
            body.append(contentsOf: try reader.bytes(length))
        } else {
            body.append(contentsOf: try reader.rest())
            keepsAlive = false
        }
        if reader.hasUnread { keepsAlive = false }
        return Answer(response: HTTPClient.Response(status: status, headers: headers, body: body), keepsAlive: keepsAlive)
    }
}

/// Buffered reading from a socket whose waits are bounded by `SO_RCVTIMEO`.
private struct SocketReader {
    let fd: Int32
    let url: URL
    private var buffer: [UInt8] = []
    private var start = 0
    /// An answer's head is small; a longer line is not HTTP.
    private static let maxLine = 16_384

    init(fd: Int32, url: URL) {
        self.fd = fd
        self.url = url
    }

    var hasUnread: Bool { start < buffer.count }

    /// Reads more bytes; `false` at the end of the connection.
    private mutating func fill() throws -> Bool {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress!, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return true
            }
            if count == 0 { return false }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: throw HTTPClient.Failure.timedOut(url)
            default: return false
            }
        }
    }

    /// The next line without its CRLF; `nil` when the connection ends before one.
    mutating func line(first: Bool) throws -> String? {
        var scanned = start
        while true {
            if let end = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                var lineEnd = end
                if lineEnd > start, buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                let line = String(decoding: buffer[start..<lineEnd], as: UTF8.self)
                start = end + 1
                return line
            }
            scanned = buffer.count
            guard buffer.count - start < Self.maxLine else {
                throw HTTPClient.Failure.unreachable(url, "a header line longer than \(Self.maxLine) bytes", .badResponse)
            }
            let before = buffer.count - start
            guard try fill() else {
                if first && before == 0 { return nil }
                throw HTTPClient.Failure.unreachable(url, "the answer broke off", .connectionLost)
            }
            scanned = start + before
        }
    }

    mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - start < count {
            guard try fill() else { throw HTTPClient.Failure.unreachable(url, "the answer's body broke off", .connectionLost) }
        }
        defer { start += count }
        return buffer[start..<(start + count)]
    }

    mutating func rest() throws -> ArraySlice<UInt8> {
        while try fill() {}
        defer { start = buffer.count }
        return buffer[start...]
    }
}

extension Duration {
    fileprivate var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
