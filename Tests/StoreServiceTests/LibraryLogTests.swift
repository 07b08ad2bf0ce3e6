import Foundation
import HTTPService
import ServiceLogging
import Testing
import TestSupport

/// libmicrohttpd's own error log (a malformed request it refuses itself) goes through the server's
/// logger within a budget, never straight to standard error (#53).
@Suite(.timeLimit(.minutes(3)))
struct LibraryLogTests {
    @Test("300 requests libmicrohttpd refuses itself write at most a budget's lines, each escaped, and the next says how many were left out")
    func libraryLogIsBounded() async throws {
        let logged = RecordingLogHandler()
        let server = try HTTPServer(port: 0, logger: Logger(label: "server", handler: logged)) { _ in .text(200, "ok") }
        for index in 0..<300 {
            // A Content-Length libmicrohttpd cannot read: it refuses the request and logs why.
            _ = await RawHTTP.exchange(port: server.port, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1x\(index)\r\n\r\n", limit: .seconds(10))
        }
        let lines = logged.written.map { StreamLogHandler.line($0, format: .text, time: Date()) }
        #expect(lines.contains { $0.contains("libmicrohttpd: ") }, "libmicrohttpd's lines reach the server's logger: \(lines.prefix(3))")
        #expect(lines.filter { $0.contains("libmicrohttpd: ") }.count <= 20, "\(lines.count) lines")
        #expect(lines.allSatisfy { $0.utf8.count < 1_000 })
        await server.stop()
    }
}
