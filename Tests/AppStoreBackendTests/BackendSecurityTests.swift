import AppStoreBackend
import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import Synchronization
import ServiceLogging
import Testing
import TestSupport

/// The backend as an attacker meets it: purchases are linked to the customer they belong to, its
/// database is private, and its log cannot be written into by a client.
@Suite(.timeLimit(.minutes(10)))
struct BackendSecurityTests {
    static func post(_ backend: BackendService, jws: String, userID: String) async -> HTTPResponse {
        await backend.post("/v1/transactions", Data(#"{"signedTransaction": "\#(jws)", "userID": "\#(userID)"}"#.utf8))
    }

    @Test("a purchase belongs to its app account token; a user id links only a purchase without one, and only the first user id")
    func linking() async throws {
        let scenario = try BackendScenario()
        let tokened = try await scenario.buy(ExampleShop.pro, "alice")
        guard case .success(let plain) = try await scenario.store.purchase(PurchaseRequest(productID: ExampleShop.wizard, account: "bob",
                                                                                         device: "bob-phone")) else {
            throw TestFailure("expected a purchase")
        }
        try await scenario.withBackend { backend in
            let alice = BackendScenario.token("alice").uuidString.lowercased()
            // Mallory sends alice's purchase with her own user id: it stays alice's.
            let stolen = try await scenario.store.transaction(tokened.id, device: "alice-phone").jws
            #expect(await Self.post(backend, jws: stolen, userID: "mallory").status == 200)
            #expect(try await backend.ledger.entitlements(customer: "mallory").isEmpty)
            #expect(try await backend.ledger.entitlements(customer: alice).map(\.productId) == [ExampleShop.pro])
            // A purchase without a token: the first user id links it; another is a conflict, logged.
            let jws = try await scenario.store.transaction(plain.transaction.id, device: "bob-phone").jws
            #expect(await Self.post(backend, jws: jws, userID: "bob").status == 200)
            let conflict = await Self.post(backend, jws: jws, userID: "mallory")
            #expect(conflict.status == 409)
            #expect(try await backend.ledger.entitlements(customer: "mallory").isEmpty, "one purchase never entitles two customers")
            #expect(try await backend.ledger.entitlements(customer: "bob").map(\.productId) == [ExampleShop.wizard])
            #expect(try await backend.ledger.explain(customer: "bob", productID: ExampleShop.wizard).linkedBy == "userID")
            #expect(try await backend.ledger.explain(customer: alice, productID: ExampleShop.pro).linkedBy == "appAccountToken")
        }
    }

    @Test("the dashboard and the metrics need a key: a page of another site can neither sign a browser in nor read the figures")
    func dashboardNeedsAKey() async throws {
        let scenario = try BackendScenario()
        _ = try await scenario.buy(ExampleShop.standardMonthly, "alice")
        try await scenario.withBackend { backend in
            for body in try await scenario.notificationBodies() { _ = await backend.post("/apple/notifications", body, key: nil) }
            let router = backend.router(listeningAddress: "127.0.0.1")
            func send(_ method: String, _ path: String, headers: [String: String] = [:], body: String = "") async -> HTTPResponse {
                let parts = path.split(separator: "?", maxSplits: 1)
                let query = parts.count > 1 ? parts[1].split(separator: "&").map { pair -> (name: String, value: String) in
                    let nameValue = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    return (nameValue[0], nameValue.count > 1 ? nameValue[1] : "")
                } : []
                return await router.respond(to: HTTPRequest(method: method, rawPath: String(parts[0]), rawQuery: query,
                                                            headers: ["Host": "127.0.0.1:9"].merging(headers) { $1 }.reduce(into: [:]) { $0[$1.key.lowercased()] = $1.value },
                                                            body: Data(body.utf8)))
            }
            let form = ["Content-Type": "application/x-www-form-urlencoded"]
            let key = BackendScenario.serviceKey
            // Without a key: the figures are not answered, and the page is the sign-in form.
            #expect(await send("GET", "/v1/metrics?from=2026-01-01&to=2026-01-31").status == 401)
            #expect(await send("GET", "/v1/metrics/cohorts?from=2026-01-01&to=2026-01-31").status == 401)
            let signedOut = String(decoding: await send("GET", "/dashboard").body, as: UTF8.self)
            #expect(signedOut.contains(#"id="key""#) && !signedOut.contains("data-figure"))
            let forged = String(decoding: await send("GET", "/dashboard", headers: ["Cookie": "osk_backend_key=osk_guess"]).body, as: UTF8.self)
            #expect(forged.contains(#"id="key""#) && !forged.contains("data-figure"), "a cookie with a key the backend does not know opens nothing")
            // Another site's form: refused without the page's token, and when the browser says where it comes from.
            #expect(await send("POST", "/dashboard/login", headers: form, body: "key=\(key)").status == 403)
            #expect(await send("POST", "/dashboard/login", headers: form.merging(["Origin": "http://evil.example"]) { $1 },
                               body: "form_token=\(backend.formToken)&key=\(key)").status == 403)
            #expect(await send("POST", "/dashboard/login", headers: form.merging(["Sec-Fetch-Site": "cross-site"]) { $1 },
                               body: "form_token=\(backend.formToken)&key=\(key)").status == 403)
            // A wrong key is refused; the right one sets a cookie only the dashboard gets, which opens it.
            #expect(await send("POST", "/dashboard/login", headers: form, body: "form_token=\(backend.formToken)&key=osk_guess").status == 401)
            let signIn = await send("POST", "/dashboard/login", headers: form, body: "form_token=\(backend.formToken)&key=\(key)")
            #expect(signIn.status == 303, "\(String(decoding: signIn.body, as: UTF8.self))")
            let cookie = try #require(signIn.headers.first { $0.name == "Set-Cookie" }?.value)
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/dashboard"))
            let location = try #require(signIn.headers.first { $0.name == "Location" }?.value)
            #expect(location.hasPrefix("/dashboard?session=") && !cookie.contains(String(location.dropFirst("/dashboard?session=".count))))
            let page = await send("GET", location, headers: ["Cookie": String(cookie.prefix { $0 != ";" })])
            #expect(page.headers.contains { $0.name == "Content-Security-Policy" && $0.value.contains("frame-ancestors 'none'") })
            #expect(String(decoding: page.body, as: UTF8.self).contains(#"data-figure="active_subscriptions""#))
            #expect(await send("GET", "/v1/metrics?from=2026-01-01&to=2026-01-31", headers: ["Authorization": "Bearer \(key)"]).status == 200)
            // Bad ranges are told apart from missing keys.
            #expect(await send("GET", "/v1/metrics?from=2026-02-30&to=2026-03-01", headers: ["Authorization": "Bearer \(key)"]).status == 400)
            #expect(await send("GET", "/v1/metrics?from=2026-03-01&to=2026-02-01", headers: ["Authorization": "Bearer \(key)"]).status == 400)
            // The cookie is a session, not the key: named for the port (cookies are not bound to ports), ended by signing out.
            #expect(cookie.hasPrefix("osk_backend_session_9="), "\(cookie)")
            #expect(!cookie.contains(key) && !cookie.contains(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key))
            #expect(cookie.contains("Max-Age="))
            let session = String(cookie.prefix { $0 != ";" })
            let secret = String(location.dropFirst("/dashboard?session=".count))
            #expect(String(decoding: await send("GET", location, headers: ["Cookie": session, "Host": "127.0.0.1:10"]).body, as: UTF8.self)
                        .contains(#"id="key""#), "another port's server does not take this port's cookie")
            // The cookie alone, as another local server that received it would replay it, opens nothing (#53).
            for path in ["/dashboard", "/dashboard/customers?q=alice", "/dashboard/export/money.csv", "/dashboard/export/daily.csv?from=2026-01-01&to=2026-01-31"] {
                let replayed = await send("GET", path, headers: ["Cookie": session])
                #expect(String(decoding: replayed.body, as: UTF8.self).contains(#"id="key""#) && !String(decoding: replayed.body, as: UTF8.self).contains("data-figure"),
                        "\(path)")
                let secretAlone = String(decoding: await send("GET", path + (path.contains("?") ? "&" : "?") + "session=\(secret)").body, as: UTF8.self)
                #expect(secretAlone.contains(#"id="key""#) && !secretAlone.contains("data-figure"), "the secret alone neither: \(path)")
            }
            #expect(await send("GET", "/dashboard/export/money.csv?session=\(secret)", headers: ["Cookie": session]).status == 200)
            // Every link and form of the page carries the page secret, so the pages work as before.
            let pageText = String(decoding: page.body, as: UTF8.self)
            #expect(pageText.contains("/dashboard/customers?session=\(secret)") && pageText.contains(#"name="session" value="\#(secret)""#)
                    && pageText.contains("/dashboard/export/money.csv?from=") && pageText.contains("&amp;session=\(secret)"))
            // Signing out needs the secret too: the cookie alone ends nothing.
            _ = await send("POST", "/dashboard/logout", headers: form.merging(["Cookie": session]) { $1 }, body: "form_token=\(backend.formToken)")
            #expect(await send("GET", location, headers: ["Cookie": session]).status == 200)
            #expect(await send("POST", "/dashboard/logout", headers: form.merging(["Cookie": session]) { $1 },
                               body: "form_token=\(backend.formToken)&session=\(secret)").status == 303)
            #expect(String(decoding: await send("GET", location, headers: ["Cookie": session]).body, as: UTF8.self).contains(#"id="key""#),
                    "a session that signed out opens nothing, even with its old cookie")
            // Revoking the key ends its other sessions and its requests.
            let again = await send("POST", "/dashboard/login", headers: form, body: "form_token=\(backend.formToken)&key=\(key)")
            let second = String(try #require(again.headers.first { $0.name == "Set-Cookie" }?.value).prefix { $0 != ";" })
            let secondPage = try #require(again.headers.first { $0.name == "Location" }?.value)
            #expect(String(decoding: await send("GET", secondPage, headers: ["Cookie": second]).body, as: UTF8.self).contains("data-figure"))
            let revoked = try await backend.storage.revokeKeys(digestPrefix: ServiceKeys.digest(key))
            #expect(revoked.count == 1)
            #expect(String(decoding: await send("GET", secondPage, headers: ["Cookie": second]).body, as: UTF8.self).contains(#"id="key""#))
            #expect(await send("GET", "/v1/metrics?from=2026-01-01&to=2026-01-31", headers: ["Authorization": "Bearer \(key)"]).status == 401)
        }
    }

    @Test("dashboard sessions live 12 hours of real time, whatever the App Store's clock does (#53)")
    func sessionsExpireInRealTime() async throws {
        let scenario = try BackendScenario()
        try await scenario.withBackend { backend in
            var backend = backend
            let realTime = ManualStoreClock(startingAt: Date(timeIntervalSince1970: 1_900_000_000))
            backend.sessionClock = { realTime.now() }
            let router = backend.router(listeningAddress: "127.0.0.1")
            func send(_ method: String, _ path: String, cookie: String = "", body: String = "") async -> HTTPResponse {
                let parts = path.split(separator: "?", maxSplits: 1)
                let query = parts.count > 1 ? parts[1].split(separator: "&").map { pair -> (name: String, value: String) in
                    let nameValue = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    return (nameValue[0], nameValue.count > 1 ? nameValue[1] : "")
                } : []
                return await router.respond(to: HTTPRequest(method: method, rawPath: String(parts[0]), rawQuery: query,
                                                            headers: ["host": "127.0.0.1:9", "cookie": cookie, "content-type": "application/x-www-form-urlencoded"],
                                                            body: Data(body.utf8)))
            }
            let signIn = await send("POST", "/dashboard/login", body: "form_token=\(backend.formToken)&key=\(BackendScenario.serviceKey)")
            let cookie = String(try #require(signIn.headers.first { $0.name == "Set-Cookie" }?.value).prefix { $0 != ";" })
            let page = try #require(signIn.headers.first { $0.name == "Location" }?.value)
            func isSignedIn() async -> Bool { String(decoding: await send("GET", page, cookie: cookie).body, as: UTF8.self).contains("Sign out") }
            #expect(await isSignedIn())
            // The App Store's clock (a manual one, for Xcode data) moving a year on or back ends nothing.
            scenario.clock.set(to: BackendScenario.start.addingTimeInterval(365 * 86_400))
            #expect(await isSignedIn())
            scenario.clock.set(to: BackendScenario.start)
            // Real time ends it after 12 hours.
            realTime.set(to: realTime.now().addingTimeInterval(12 * 3_600 - 60))
            #expect(await isSignedIn())
            realTime.set(to: realTime.now().addingTimeInterval(120))
            #expect(await !isSignedIn(), "a session 12 hours and a minute old is over")
        }
    }

    @Test("the backend's SQLite database and its -wal and -shm files are private to their owner from creation")
    func databaseIsPrivate() async throws {
        let scenario = try BackendScenario()
        _ = try await scenario.buy(ExampleShop.pro, "alice")
        let scratch = Scratch()
        let path = scratch.url.appendingPathComponent("backend.sqlite").path
        let storage = try await SQLBackendStorage.sqlite(path: path)
        let backend = try scenario.service(on: storage)
        for body in try await scenario.notificationBodies() { _ = await backend.post("/apple/notifications", body, key: nil) }
        #expect(try await storage.notificationCount() == 1)
        for file in [path, path + "-wal", path + "-shm"] {
            let permissions = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(permissions == 0o600, "\(file): \(String(permissions ?? 0, radix: 8))")
        }
    }

    @Test("a refusal's log line escapes control characters, and a path with one is refused before it reaches the log")
    func logLines() async throws {
        #expect(StreamLogHandler.escaped("a\nFORGED b\r") == "a\\nFORGED b\\r")
        let scenario = try BackendScenario()
        try await scenario.withBackend { backend in
            let logged = RecordingLogHandler()
            let logging = BackendService(storage: backend.storage, intake: backend.intake, logger: Logger(label: "backend", handler: logged))
            let answer = await logging.handle(HTTPRequest(method: "GET", rawPath: "/v1/customers/x%0AFORGED/entitlements"))
            #expect(answer.status == 400)
            _ = await logging.post("/v1/transactions", Data("not json".utf8), key: BackendScenario.serviceKey)
            let lines = logged.written.map { StreamLogHandler.line($0, format: .text, time: Date()) }
            #expect(lines.allSatisfy { !$0.contains("\n") && !$0.contains("\r") })
            #expect(lines.count == 1)
        }
    }

    @Test("an unverified JWS header is never repeated whole: a 700 KB alg costs a short answer and a short log line")
    func noAmplification() async throws {
        let scenario = try BackendScenario()
        try await scenario.withBackend { backend in
            let logged = RecordingLogHandler()
            let logging = BackendService(storage: backend.storage, intake: backend.intake, logger: Logger(label: "backend", handler: logged))
            func base64URL(_ data: Data) -> String {
                data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }
            let header = base64URL(Data(#"{"alg":"\#(String(repeating: "A", count: 700_000))\u2028FORGED"}"#.utf8))
            let body = Data(#"{"signedPayload":"\#(header).e30.c2ln"}"#.utf8)
            let answer = await logging.post("/apple/notifications", body, key: nil)
            #expect(answer.status == 422, "\(String(decoding: answer.body.prefix(300), as: UTF8.self))")
            #expect(answer.body.count < 2_000, "the answer repeats \(answer.body.count) bytes")
            let lines = logged.written.map { StreamLogHandler.line($0, format: .text, time: Date()) }
            #expect(lines.count == 1)
            #expect(lines.allSatisfy { $0.utf8.count < 2_000 && !$0.contains("\u{2028}") })
        }
    }

    @Test("each client's share of the log is bounded: 1,000 refused requests write twenty lines, and the next line written says how many were left out")
    func logVolumePerClient() async throws {
        let budget = LogBudget(linesPerWindow: 3, window: .seconds(10))
        let start = ContinuousClock.now
        #expect((0..<5).map { _ in budget.admit("a", at: start) } == [0, 0, 0, nil, nil])
        #expect(budget.admit("b", at: start) == 0, "another client has a budget of its own")
        #expect(budget.admit("a", at: start + .seconds(11)) == 2, "the first line of the next window says two were left out")

        let scenario = try BackendScenario()
        try await scenario.withBackend { backend in
            let logged = RecordingLogHandler()
            let logging = BackendService(storage: backend.storage, intake: backend.intake, logger: Logger(label: "backend", handler: logged))
            var request = HTTPRequest(method: "POST", path: "/apple/notifications", headers: ["content-type": "application/json"],
                                      body: Data(#"{"signedPayload":"not.a.jws"}"#.utf8))
            request.remoteAddress = "127.0.0.1"
            for _ in 0..<1_000 {
                let answer = await logging.handle(request)
                #expect(answer.status == 422)
            }
            #expect(logged.written.count == logging.refusalLogBudget.linesPerWindow)
            #expect(logged.written.allSatisfy { $0.metadata["client"] == "127.0.0.1" })
        }
    }

    @Test("on loopback, a local process flooding other refusals cannot keep a forged notification out of the log (#53)")
    func forgedNotificationsHaveTheirOwnBudget() async throws {
        let scenario = try BackendScenario()
        try await scenario.withBackend { backend in
            let logged = RecordingLogHandler()
            let logging = BackendService(storage: backend.storage, intake: backend.intake, logger: Logger(label: "backend", handler: logged))
            // One local process: a thousand requests with a wrong key, all from 127.0.0.1.
            var flood = HTTPRequest(method: "GET", path: "/v1/customers/alice/entitlements", headers: ["authorization": "Bearer osk_guess"])
            flood.remoteAddress = "127.0.0.1"
            // Until its share is spent: a refusal that writes no line (on a loaded machine a window may
            // pass during the flood, so the count of requests that spends it is not fixed).
            var exhausted = false
            for _ in 0..<10_000 {
                let lines = logged.written.count
                _ = await logging.handle(flood)
                if logged.written.count == lines { exhausted = true; break }
            }
            #expect(exhausted)
            let before = logged.written.count
            // Another local process (the same address) sends a forged notification: it is logged.
            var forged = HTTPRequest(method: "POST", path: "/apple/notifications", headers: ["content-type": "application/json"],
                                     body: Data(#"{"signedPayload":"forged.by.mallory"}"#.utf8))
            forged.remoteAddress = "127.0.0.1"
            #expect(await logging.handle(forged).status == 422)
            #expect(logged.written.count == before + 1)
            #expect(logged.written.last.map { StreamLogHandler.line($0, format: .text, time: Date()) }?.contains("/apple/notifications") == true)
        }
    }
}
