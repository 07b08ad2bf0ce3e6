import BlockingWork
import Foundation
import HTTPService
import Testing
import TestSupport

/// Sockets answered 413 whose clients keep them open are open connections (#53): they count against
/// the capacity and give way first, so thousands of them cannot take the room of /health.
@Suite(.timeLimit(.minutes(3)))
struct LingeringRoomTests {
    @Test("clients that keep 413-answered sockets open hold at most the server's capacity; the rest are closed, and /health answers")
    func lingeringSocketsCount() async throws {
        let server = try HTTPServer(port: 0, maximumBodySize: 1_000, connectionLimit: 100) { _ in .text(200, "ok") }
        let port = server.port
        let clients = 400
        // Each client announces a body too large, reads its 413, and keeps the socket open.
        let sockets = await BlockingWork.run("open lingering clients") { () -> [Int32] in
            var sockets: [Int32] = []
            let request = Array("POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n".utf8)
            for _ in 0..<clients {
                guard let descriptor = RawHTTP.connectedSocket(port: port) else { continue }
                _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                sockets.append(descriptor)
            }
            return sockets
        }
        defer { for descriptor in sockets { close(descriptor) } }
        #expect(sockets.count == clients)
        // A socket the server closed outright resets when written to; one it still lingers on takes
        // the bytes and drops them. All but the capacity's worth must be closed. The probes run on a
        // thread of their own, with their own deadline: the whole suite can keep Swift's two pool
        // threads busy for tens of seconds, and a loop there once probed only once in 20 s while the
        // server had long since closed the sockets.
        let probes = await BlockingWork.run("probe lingering clients") { () -> Probes in
            var probes = Probes()
            var buffer = [UInt8](repeating: 0, count: 4_096)
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                for descriptor in sockets where !probes.closed.contains(descriptor) {
                    // The reset is reported once, to whichever call meets it first.
                    if send(descriptor, "x", 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) < 0, errno == ECONNRESET || errno == EPIPE {
                        probes.closed.insert(descriptor)
                        continue
                    }
                    while true {
                        let read = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                        if read > 0 { continue }
                        if read == 0 { probes.finished.insert(descriptor) }
                        if read < 0, errno == ECONNRESET || errno == EPIPE { probes.closed.insert(descriptor) }
                        break
                    }
                }
                probes.rounds += 1
                if probes.closed.count >= clients - 100, server.openConnections <= 100 { break }
                usleep(200_000)
            }
            return probes
        }
        let reset = probes.closed.count
        #expect(reset >= clients - 100, """
            only \(reset) of \(clients) kept-open 413 sockets were closed (\(probes.finished.count) saw the server's FIN) after \
            \(probes.rounds) probes; \(server.lingeringConnections) linger, \(server.openConnections) open, \(server.connectionsDropped) dropped
            """)
        #expect(server.openConnections <= 100, "\(server.openConnections) open, \(server.lingeringConnections) of them lingering")
        let health = await RawHTTP.exchange(port: port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", limit: .seconds(90))
        #expect(health.status == 200)
        await server.stop()
    }
}

/// What the probes of the kept-open sockets found.
private struct Probes: Sendable {
    /// Sockets the server closed: a write to them met a reset.
    var closed = Set<Int32>()
    /// Sockets whose reads met the server's end of stream (closed, or in their lingering close).
    var finished = Set<Int32>()
    var rounds = 0
}
