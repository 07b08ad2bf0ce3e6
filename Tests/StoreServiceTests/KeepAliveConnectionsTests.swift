import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPClient
import Synchronization
import Testing
import TestSupport

/// A TCP server that answers each request as its script says, on a thread of its own, counting the
/// connections it accepts: a receiver that misbehaves on purpose.
final class ScriptedHTTPServer: Sendable {
    enum Reply: Sendable {
        /// These bytes, then the connection stays open (or closes, with `close`).
        case bytes(String, close: Bool)
        /// Close the connection without answering.
        case hangUp
        /// Never answer (the connection stays open until the server stops).
        case silence
    }

    let port: UInt16
    private let listener: Int32
    private let script: @Sendable (Int) -> Reply
    private let state = Mutex((accepted: 0, requests: 0, open: [Int32](), stopped: false, listening: true))

    /// - Parameter script: The reply to the server's `n`th request (from 0, over every connection).
    init(script: @escaping @Sendable (Int) -> Reply) throws {
        self.script = script
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 16) == 0 else { throw TestFailure("cannot listen: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    var url: URL { URL(string: "http://127.0.0.1:\(port)/notifications")! }
    var acceptedConnections: Int { state.withLock { $0.accepted } }
    var requests: Int { state.withLock { $0.requests } }

    /// Stops accepting and ends every open connection. Descriptors are shut down under the lock their
    /// closing takes, so a number closed and reused elsewhere in the process is never touched.
    func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            if state.listening { Glibc.shutdown(listener, Int32(SHUT_RDWR)) }
            for fd in state.open { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { break }
            // Close-on-exec: a process another test starts must not keep the connection open. (Closing
            // shuts the connection down too, which ends it even in a child that forked in between.)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.accepted += 1
                state.open.append(fd)
                return true
            }
            guard accepted else {
                close(fd)
                break
            }
            Thread { [self] in serve(fd) }.start()
        }
        state.withLock { state in
            state.listening = false
            close(listener)
        }
    }

    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4_096)
        defer {
            state.withLock { state in
                state.open.removeAll { $0 == fd }
                Glibc.shutdown(fd, Int32(SHUT_RDWR))
                close(fd)
            }
        }
        while true {
            // One request: its head, then Content-Length bytes of body.
            while true {
                if let end = Self.headEnd(buffer), let length = Self.contentLength(buffer[..<end]), buffer.count >= end + length {
                    buffer.removeFirst(end + length)
                    break
                }
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                guard count > 0 else { return }
                buffer.append(contentsOf: chunk[0..<count])
            }
            let index = state.withLock { state -> Int in
                defer { state.requests += 1 }
                return state.requests
            }
            switch script(index) {
            case .bytes(let text, let close):
                let bytes = Array(text.utf8)
                _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
                if close { return }
            case .hangUp:
                return
            case .silence:
                while chunk.withUnsafeMutableBytes({ recv(fd, $0.baseAddress!, $0.count, 0) }) > 0 {}
                return
            }
        }
    }

    private static func headEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    private static func contentLength(_ head: ArraySlice<UInt8>) -> Int? {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        guard let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }) else { return 0 }
        return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
    }
}

@Suite("Keep-alive connections for notification delivery", .timeLimit(.minutes(5)))
struct KeepAliveConnectionsTests {
    static let ok = ScriptedHTTPServer.Reply.bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", close: false)

    static func post(_ connections: KeepAliveConnections, _ server: ScriptedHTTPServer, timeout: Duration = .seconds(60)) async throws -> HTTPClient.Response {
        try await connections.send(.json("POST", server.url, body: Data(#"{"signedPayload":"x"}"#.utf8), timeout: timeout))
    }

    @Test("posts one after another share one connection, and several at once one each")
    func reuse() async throws {
        let server = try ScriptedHTTPServer { _ in Self.ok }
        defer { server.stop() }
        let connections = try #require(KeepAliveConnections(origin: server.url, maxIdle: 4))
        for _ in 0..<50 {
            let answer = try await Self.post(connections, server)
            #expect(answer.status == 200)
            #expect(answer.body == Data("ok".utf8))
        }
        #expect(server.acceptedConnections == 1)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await Self.post(connections, server).status } }
            for try await status in group { #expect(status == 200) }
        }
        #expect(server.acceptedConnections <= 4)
        #expect(server.requests == 54)
    }

    @Test("a connection the receiver closed while idle is replaced, and the request sent again; Connection: close is honoured")
    func closedByReceiver() async throws {
        // Every second request's answer closes its connection.
        let server = try ScriptedHTTPServer { index in
            index % 2 == 0 ? .bytes("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n", close: true)
                : .bytes("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", close: true)
        }
        defer { server.stop() }
        let connections = try #require(KeepAliveConnections(origin: server.url))
        for index in 0..<10 {
            let answer = try await Self.post(connections, server)
            #expect(answer.status == (index % 2 == 0 ? 204 : 200))
        }
        // The odd answers left their connection open on this side: the next request found it closed
        // and went again on a new one, so every request was answered and none twice.
        #expect(server.requests == 10)
    }

    @Test("chunked and length-less bodies are read whole; a status that is not 2xx is an answer, not a failure")
    func bodies() async throws {
        let server = try ScriptedHTTPServer { index in
            switch index {
            case 0: return .bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=1\r\n world\r\n0\r\n\r\n", close: false)
            case 1: return .bytes("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nfail", close: false)
            default: return .bytes("HTTP/1.0 200 OK\r\n\r\nuntil the end", close: true)
            }
        }
        defer { server.stop() }
        let connections = try #require(KeepAliveConnections(origin: server.url))
        let chunked = try await Self.post(connections, server)
        #expect(String(decoding: chunked.body, as: UTF8.self) == "hello world")
        let failed = try await Self.post(connections, server)
        #expect(failed.status == 500)
        #expect(failed.body == Data("fail".utf8))
        let untilEnd = try await Self.post(connections, server)
        #expect(String(decoding: untilEnd.body, as: UTF8.self) == "until the end")
        #expect(server.acceptedConnections == 1)
    }

    @Test("no answer is a timeout, a closed port no connection, a hang-up a lost connection, and cancelling returns at once")
    func failures() async throws {
        let silent = try ScriptedHTTPServer { _ in .silence }
        defer { silent.stop() }
        let connections = try #require(KeepAliveConnections(origin: silent.url))
        do {
            _ = try await Self.post(connections, silent, timeout: .milliseconds(300))
            Issue.record("a silent receiver answered")
        } catch HTTPClient.Failure.timedOut {
            // Expected.
        }

        let closedPort = try ReservedPort()
        let nowhere = try #require(KeepAliveConnections(origin: closedPort.url()))
        do {
            _ = try await nowhere.send(.init("POST", closedPort.url()))
            Issue.record("a closed port answered")
        } catch HTTPClient.Failure.unreachable(_, _, .noConnection) {
            // Expected.
        }

        let hangingUp = try ScriptedHTTPServer { _ in .hangUp }
        defer { hangingUp.stop() }
        let lost = try #require(KeepAliveConnections(origin: hangingUp.url))
        do {
            _ = try await Self.post(lost, hangingUp)
            Issue.record("a hang-up answered")
        } catch HTTPClient.Failure.unreachable(_, _, .connectionLost) {
            // Expected.
        }

        // Cancelled while waiting for an answer that would take up to four minutes: the task ends with
        // CancellationError, not with the timeout.
        let waiting = Task { try await Self.post(connections, silent, timeout: .seconds(240)) }
        try await eventually("the request reached the silent receiver") { silent.requests >= 2 }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(KeepAliveConnections(origin: URL(string: "https://example.com/")!) == nil)
    }
}
