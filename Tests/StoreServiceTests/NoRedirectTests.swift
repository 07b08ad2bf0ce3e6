import Foundation
import HTTPClient
import HTTPService
import Synchronization
import Testing
import TestSupport

/// No redirects, ever (#53): every request of the package carries credentials or fetches what a page
/// shows (an API's bearer token, a real-time retention request whose answer the cancellation page
/// shows), so a 3xx is the answer, and the place it points at receives nothing.
@Suite(.timeLimit(.minutes(2)))
struct NoRedirectTests {
    @Test("a 3xx is the answer: the request and its Authorization header never reach where it points", arguments: [301, 302, 303, 307, 308])
    func redirectsAreNotFollowed(status: Int) async throws {
        let received = Mutex<[String]>([])
        let elsewhere = try HTTPServer(port: 0) { request in
            received.withLock { $0.append(request.header("Authorization") ?? "none") }
            return .text(200, "the attacker's content")
        }
        let target = "http://127.0.0.1:\(elsewhere.port)/steal"
        let redirecting = try HTTPServer(port: 0) { _ in
            HTTPResponse(status: status, headers: [("Location", target)], body: Data())
        }
        let answer = try await HTTPClient.shared.send(.json("POST", redirecting.url.appendingPathComponent("/inApps/v1/retention"),
                                                            headers: [("Authorization", "Bearer secret-token")], body: Data("{}".utf8)))
        #expect(answer.status == status && answer.header("Location") == target)
        #expect(!String(decoding: answer.body, as: UTF8.self).contains("attacker"))
        let get = try await HTTPClient.shared.send(.init("GET", redirecting.url.appendingPathComponent("/page"), headers: [("Authorization", "Bearer secret-token")]))
        #expect(get.status == status)
        // Give a followed redirect time to land, then look.
        try await Task.sleep(for: .milliseconds(200))
        #expect(received.withLock { $0 }.isEmpty, "the redirect's target received \(received.withLock { $0 })")
        await redirecting.stop()
        await elsewhere.stop()
    }
}
