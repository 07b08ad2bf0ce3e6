import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import Testing
import TestSupport

/// `storekit backend serve` as its own process, its dashboard session attacked through the App
/// Store's clock (#53, item 2): a local store's clock is manual (Xcode data), so a session that lived
/// by it would never end while the clock stood still and would end at once when it jumped. Over raw
/// sockets: a session opened, then the backend's App Store time moved 30 days on by a genuinely signed
/// notification, and the session still open; its cookie tells the browser 12 hours of real time.
/// `BackendSecurityTests.sessionsExpireInRealTime` ends one after 12 hours of an injected real clock,
/// which a running process could only show by waiting 12 hours.
@Suite(.timeLimit(.minutes(5)), .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
struct DashboardSessionClockTests {
    @Test("a dashboard session on a running backend outlives the App Store's clock moving 30 days on; its cookie lasts 12 hours of real time")
    func sessionIgnoresTheAppStoreClock() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        let database = "sqlite:" + scratch.url.appendingPathComponent("backend.sqlite").path
        let made = try await ChildProcess.run(Built.storekit, ["backend", "key", "create", "--database", database])
        #expect(made.status == 0, "\(made.standardError)")
        let key = made.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        let backend = try await ServeProcess.start(command: ["backend", "serve", "--database", database, "--bundle-id", "com.example.shop",
                                                            "--environment", "Xcode", "--root", root.path, "--port", "0"])
        do {
            let port = UInt16(try #require(backend.url.port))
            let host = "127.0.0.1:\(port)"
            func exchange(_ method: String, _ path: String, headers: [String] = [], body: String = "") async -> RawHTTP.Answer {
                let head = ["\(method) \(path) HTTP/1.1", "Host: \(host)", "Connection: close", "Content-Length: \(body.utf8.count)"] + headers
                return await RawHTTP.exchange(port: port, head.joined(separator: "\r\n") + "\r\n\r\n" + body)
            }
            func header(_ name: String, in answer: RawHTTP.Answer) -> String? {
                answer.text.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                    .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
            }

            // Signed in as a browser would: the form's token from the sign-in page, posted from this origin.
            let signInPage = await exchange("GET", "/dashboard")
            let formToken = try #require(signInPage.text.range(of: #"name="form_token" value=""#).map {
                String(signInPage.text[$0.upperBound...].prefix { $0 != "\"" })
            })
            let signIn = await exchange("POST", "/dashboard/login", headers: ["Origin: http://\(host)", "Content-Type: application/x-www-form-urlencoded"],
                                        body: "form_token=\(formToken)&key=\(key)")
            #expect(signIn.status == 303, "\(signIn.text)")
            let setCookie = try #require(header("Set-Cookie", in: signIn))
            // The browser keeps the cookie 12 hours of real time, whatever the App Store's clock says.
            #expect(setCookie.contains("Max-Age=43200"), "\(setCookie)")
            let cookie = String(setCookie.prefix { $0 != ";" })
            let location = try #require(header("Location", in: signIn))
            func signedIn() async -> Bool {
                let page = await exchange("GET", location, headers: ["Cookie: \(cookie)"])
                return page.status == 200 && page.text.contains("Sign out")
            }
            #expect(await signedIn())

            // The App Store's clock moves 30 days on, and the backend follows it: a TEST notification
            // the store signs then, posted as Apple would.
            try await store.advanceTime(by: 30 * 86_400)
            let uuid = try await store.requestTestNotification()
            let signed = try #require(try await store.notifications().first { $0.notificationUUID == uuid }?.signedPayload)
            let posted = await exchange("POST", "/apple/notifications", headers: ["Content-Type: application/json"], body: #"{"signedPayload":"\#(signed)"}"#)
            #expect(posted.status == 200, "\(posted.text)")
            let health = await exchange("GET", "/health")
            let appStoreTime = try await store.currentTime()
            #expect(health.text.contains(#""appStoreTime":\#(AppStoreJSON.milliseconds(from: appStoreTime))"#), "\(health.text)")
            #expect(await signedIn(), "30 days of the App Store's clock ended a session opened seconds ago")

            // The session still ends when asked: signing out closes it for this cookie.
            let dashboard = await exchange("GET", location, headers: ["Cookie: \(cookie)"])
            let session = String(location.drop { $0 != "=" }.dropFirst())
            let signOutToken = try #require(dashboard.text.range(of: #"name="form_token" value=""#).map {
                String(dashboard.text[$0.upperBound...].prefix { $0 != "\"" })
            })
            let signOut = await exchange("POST", "/dashboard/logout", headers: ["Origin: http://\(host)", "Cookie: \(cookie)",
                                                                              "Content-Type: application/x-www-form-urlencoded"],
                                         body: "form_token=\(signOutToken)&session=\(session)")
            #expect([200, 303].contains(signOut.status), "\(signOut.text)")
            #expect(await !signedIn())
            await backend.stop()
        } catch {
            await backend.stop()
            throw error
        }
    }
}
