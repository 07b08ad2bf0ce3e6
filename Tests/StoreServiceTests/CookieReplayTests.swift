import AppStoreSimulator
import Foundation
import HTTPService
import StoreService
import Testing
import TestSupport

/// Cookies ignore ports (#53): another local server that receives a store's session cookie must not
/// be able to use it. A session is the cookie and a page secret only this origin holds.
@Suite(.timeLimit(.minutes(5)))
struct CookieReplayTests {
    static let token = "replay-test-token-0123456789abcdef"

    @Test("the session cookie alone opens no page and no admin request; with the page secret it does")
    func cookieAloneOpensNothing() async throws {
        try await withServedStore(access: ServerAccess(token: Self.token)) { _, server in
            let port = server.port
            let opened = await RawHTTP.exchange(port: port, "GET /store?token=\(Self.token)&account=alice HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            #expect(opened.status == 200 && !opened.text.contains(Self.token), "\(opened.text)")
            let setCookie = try #require(opened.text.split(separator: "\r\n").first { $0.hasPrefix("Set-Cookie: storekit_session_\(port)=") })
            #expect(setCookie.contains("; Path=/; HttpOnly; SameSite=Strict; Max-Age="))
            let cookie = String(setCookie.dropFirst("Set-Cookie: ".count).prefix { $0 != ";" })
            // The page keeps the secret in this origin's storage and goes on with it in the address.
            let secret = try #require(opened.text.range(of: "osk_session=").map { String(opened.text[$0.upperBound...].prefix { $0.isHexDigit }) })
            #expect(secret.count == 64 && !cookie.contains(secret))
            #expect(opened.text.contains(#"localStorage.setItem("osk_session", "\#(secret)")"#))
            let local = server.url
            func get(_ path: String, _ headers: [(String, String)]) async throws -> (Int, String) {
                let answer = try await Exchange.send("GET", URL(string: local.absoluteString + path)!, headers: headers)
                return (answer.status, String(decoding: answer.body, as: UTF8.self))
            }
            // Replayed alone (as another port's server would): 401, and a page holds nothing of the store.
            #expect(try await get("/v1/admin/transactions", [("Cookie", cookie)]).0 == 401)
            let page = try await get("/store?account=alice&device=phone", [("Cookie", cookie), ("Accept", "text/html")])
            #expect(page.0 == 401 && page.1.contains("session-needed") && !page.1.contains("data-product-id"), "\(page)")
            #expect(try await get("/v1/admin/transactions", [("Cookie", cookie), ("X-OpenStoreKit-Session", String(repeating: "0", count: 64))]).0 == 401)
            let post = try await Exchange.send("POST", local.appendingPathComponent("/v1/admin/clock/advance"), body: Data(#"{"seconds": 86400}"#.utf8),
                                               headers: [("Cookie", cookie), ("Content-Type", "application/json")])
            #expect(post.status == 401)
            // The secret without the cookie opens nothing either.
            #expect(try await get("/v1/admin/transactions?osk_session=\(secret)", []).0 == 401)
            // Both halves: the header (scripts) or the address (pages), whose links then carry it.
            #expect(try await get("/v1/admin/transactions", [("Cookie", cookie), ("X-OpenStoreKit-Session", secret)]).0 == 200)
            let storefront = try await get("/store?account=alice&device=phone&osk_session=\(secret)", [("Cookie", cookie)])
            #expect(storefront.0 == 200 && storefront.1.contains("data-product-id"))
            #expect(storefront.1.contains("/assets/style.css?osk_session=\(secret)") || storefront.1.contains("osk_session=\(secret)"))
            // Static assets need no session: a page's subresources load with the cookie alone.
            #expect(try await get("/assets/style.css", []).0 == 200)
        }
    }

    @Test("in Chromium: another local server on another port receives the cookie and its replays are refused; the browser's session works",
          .enabled(if: BrowserPagesTests.available, BrowserPagesTests.skipReason))
    func chromiumCookieReplay() async throws {
        try await withServedStore(access: ServerAccess(token: Self.token)) { _, server in
            let report = try await BrowserPagesTests.runBrowserScript("store_cookie_replay.py", [server.url.absoluteString, Self.token,
                                                                                                 BrowserPagesTests.chromium.path, BrowserPagesTests.chromedriver.path])
            #expect(report["ok"] as? Bool == true, "\(report)")
            #expect((report["replays"] as? [String: Int])?.values.allSatisfy { $0 == 401 } == true && (report["replays"] as? [String: Int])?.count == 5, "\(report)")
            #expect((report["storefront"] as? String)?.contains("osk_session=") == true, "\(report)")
        }
    }
}
