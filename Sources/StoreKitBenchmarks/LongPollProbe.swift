import BlockingWork
import Foundation
import Glibc
import StoreKitCommands

/// Many HTTP requests held open at once, one raw connection each, for measuring a server with long
/// polls open: how many it holds, how fast it answers others meanwhile, and that each gets an answer
/// when it stops. Every socket call runs off the cooperative pool.
final class LongPollProbe: Sendable {
    private let sockets: [Int32]

    private init(sockets: [Int32]) { self.sockets = sockets }

    /// Opens `count` connections to `127.0.0.1:port`, each sending `GET path(index)` (nothing when
    /// `path` is `nil`).
    static func open(_ count: Int, to port: UInt16, path: (@Sendable (Int) -> String)?) async throws(CommandFailure) -> LongPollProbe {
        raiseDescriptorLimit()
        let opened = await BlockingWork.run("LongPollProbe.open") { () -> Result<[Int32], CommandFailure> in
            var sockets: [Int32] = []
            for index in 0..<count {
                guard let socket = connect(port: port) else {
                    for socket in sockets { Glibc.close(socket) }
                    return .failure(CommandFailure("cannot open connection \(index + 1) of \(count) to port \(port): \(String(cString: strerror(errno)))"))
                }
                sockets.append(socket)
                guard let path else { continue }
                guard write(socket, "GET \(path(index)) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n") else {
                    for socket in sockets { Glibc.close(socket) }
                    return .failure(CommandFailure("cannot send long poll \(index + 1)"))
                }
            }
            return .success(sockets)
        }
        return LongPollProbe(sockets: try opened.get())
    }

    /// Opens `count` connections to `127.0.0.1:port` that send nothing: one local client hoarding
    /// connections.
    static func openIdle(_ count: Int, to port: UInt16) async throws(CommandFailure) -> LongPollProbe {
        try await open(count, to: port, path: nil)
    }

    /// How many of the connections got a `200` answer (waiting up to 10 s for each); closes them all.
    func answered() async -> Int {
        let sockets = self.sockets
        return await BlockingWork.run("LongPollProbe.answered") { () -> Int in
            var answered = 0
            for socket in sockets {
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if let head = Self.readHead(socket), head.hasPrefix("HTTP/1.1 200") { answered += 1 }
                Glibc.close(socket)
            }
            return answered
        }
    }

    /// Closes every connection without reading.
    func close() {
        for socket in sockets { Glibc.close(socket) }
    }

    /// The median time a keep-alive connection waits for `GET path` (answered 200), over `requests` requests, in seconds.
    /// With `json`, the request is a `POST` of that body, as a program sends it.
    static func medianLatency(of path: String, json: String? = nil, port: UInt16, requests: Int) async throws(CommandFailure) -> Double {
        let request = json.map { body in
            "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nX-OpenStoreKit-Request: 1\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } ?? "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n"
        let timings = await BlockingWork.run("LongPollProbe.latency") { () -> [Double]? in
            guard let socket = connect(port: port) else { return nil }
            defer { Glibc.close(socket) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var timings: [Double] = []
            for _ in 0..<requests {
                let start = ContinuousClock.now
                guard write(socket, request), readResponse(socket) else { return nil }
                timings.append((ContinuousClock.now - start).seconds)
            }
            return timings
        }
        guard let timings, !timings.isEmpty else { throw CommandFailure("\(json == nil ? "GET" : "POST") \(path) failed while the connections were open") }
        return timings.sorted()[timings.count / 2]
    }

    /// Waits for `condition`, looking every 20 ms, up to `timeout`.
    static func waitUntil(timeout: Duration, _ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw CommandFailure("\(what): not within \(timeout)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The benchmark holds thousands of connections: the soft limit on descriptors goes up to the hard one.
    private static func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    private static func connect(port: UInt16) -> Int32? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }

    private static func write(_ socket: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// The status line and headers of an answer, or `nil` when none came.
    private static func readHead(_ socket: Int32) -> String? {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while received.firstRange(of: [13, 10, 13, 10]) == nil {
            let count = recv(socket, &chunk, chunk.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return received.isEmpty ? nil : String(decoding: received, as: UTF8.self) }
            received += chunk[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Reads one whole answer (its head and a `Content-Length` body); `false` when it did not come.
    private static func readResponse(_ socket: Int32) -> Bool {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        while true {
            if let end = received.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self).lowercased()
                let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.count - end.upperBound >= length { return head.hasPrefix("http/1.1 200") }
            }
            let count = recv(socket, &chunk, chunk.count, 0)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            received += chunk[0..<count]
        }
    }
}
