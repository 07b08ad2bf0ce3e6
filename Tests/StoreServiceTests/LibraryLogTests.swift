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
        // Sent 30 at a time, so that the flood fits in few of the budget's 10-second windows however
        // loaded the machine is; the bound below counts the windows it took.
        let started = ContinuousClock.now
        let port = server.port
        await withTaskGroup(of: Void.self) { group in
            for batch in stride(from: 0, to: 300, by: 30) {
                for index in batch..<(batch + 30) {
                    // A Content-Length libmicrohttpd cannot read: it refuses the request and logs why.
                    group.addTask { _ = await RawHTTP.exchange(port: port, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1x\(index)\r\n\r\n", limit: .seconds(10)) }
                }
                await group.waitForAll()
            }
        }
        let windows = Int((ContinuousClock.now - started) / .seconds(10)) + 1
        let lines = logged.written.map { StreamLogHandler.line($0, format: .text, time: Date()) }
        let libraryLines = lines.filter { $0.contains("libmicrohttpd: ") }.count
        #expect(lines.contains { $0.contains("libmicrohttpd: ") }, "libmicrohttpd's lines reach the server's logger: \(lines.prefix(3))")
        #expect(libraryLines <= 20 * windows, "\(libraryLines) lines in \(windows) windows of the budget")
        #expect(libraryLines < 300, "the budget left lines out")
        #expect(lines.allSatisfy { $0.utf8.count < 1_000 })
        await server.stop()
    }
}
