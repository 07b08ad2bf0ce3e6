import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import HTTPService
import StoreKitCatalog
import StoreService
import Testing
import TestSupport

/// The local servers as an attacker on the same machine meets them (a web page in the developer's
/// browser, another local process): each finding of the attack audit, held to what it must be now.
@Suite(.timeLimit(.minutes(10)))
struct SecurityTests {
    static func host(_ server: StoreServer) -> String { "127.0.0.1:\(server.port)" }

    // MARK: Cross-site requests and rebinding

    @Test("a change must carry JSON, a header of its own or the page's form token; another origin changes nothing")
    func crossSiteRequests() async throws {
        try await withServedStore { store, server in
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
            let base = server.url.absoluteString
            // A text/plain body (what fetch with mode no-cors sends): refused, nothing refunded.
            let plain = try await Exchange.send("POST", URL(string: "\(base)/v1/admin/transactions/0/refund")!, body: Data("{}".utf8),
                                                headers: [("Content-Type", "text/plain")], asProgram: false)
            #expect(plain.status == 403 && plain.errorCode == "crossSiteRequest")
            // A form post (a hidden form on another site): refused.
            let form = try await Exchange.send("POST", URL(string: "\(base)/v1/admin/clock/advance")!, body: Data("by=P1Y".utf8),
                                               headers: [("Content-Type", "application/x-www-form-urlencoded")], asProgram: false)
            #expect(form.status == 403)
            // JSON from another origin, as a browser would label it: refused.
            let foreign = try await Exchange.send("POST", URL(string: "\(base)/v1/admin/clock/advance")!, body: Data(#"{"by": "P1Y"}"#.utf8),
                                                  headers: [("Content-Type", "application/json"), ("Origin", "http://127.0.0.1:1")], asProgram: false)
            #expect(foreign.status == 403)
            let crossSite = try await Exchange.send("DELETE", URL(string: "\(base)/v1/admin/transactions")!,
                                                    headers: [("X-OpenStoreKit-Request", "1"), ("Sec-Fetch-Site", "cross-site")])
            #expect(crossSite.status == 403)
            let ledger = try await store.ledgerTransactions()
            #expect(ledger.count == 1 && ledger.first?.isRevoked == false)
            #expect(try await store.currentTime() == TestStores.start, "the clock did not move")
            // The same requests from a program, or from the server's own page, work.
            let own = try await Exchange.send("POST", URL(string: "\(base)/v1/admin/clock/advance")!, body: Data(#"{"by": "P1D"}"#.utf8),
                                              headers: [("Content-Type", "application/json"), ("Origin", server.url.absoluteString)])
            #expect(own.status == 200)
            let program = try await Exchange.send("POST", URL(string: "\(base)/v1/devices/phone/transactions/0/finish")!,
                                                  headers: [("X-OpenStoreKit-Request", "1")])
            #expect(program.status == 200)
        }
    }

    @Test("the storefront's forms work with the page's token, and a form without it changes nothing")
    func storefrontFormToken() async throws {
        try await withServedStore { store, server in
            // The page is about its token, not its speed: a loaded run may take long to render it.
            let page = String(decoding: try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/store?account=alice&device=phone")!, timeout: .seconds(180)).body,
                              as: UTF8.self)
            let token = try #require(page.range(of: #"name="form_token" value=""#).map { page[$0.upperBound...].prefix { $0 != "\"" } })
            let buy = "account=alice&device=phone&product=\(ExampleShop.pro)"
            let forged = try await Exchange.send("POST", server.url.appendingPathComponent("/store/buy"), body: Data(buy.utf8),
                                                 headers: [("Content-Type", "application/x-www-form-urlencoded")], asProgram: false)
            #expect(forged.status == 403)
            #expect(try await store.ledgerTransactions().isEmpty)
            let bought = try await Exchange.send("POST", server.url.appendingPathComponent("/store/buy"), body: Data("\(buy)&form_token=\(token)".utf8),
                                                 headers: [("Content-Type", "application/x-www-form-urlencoded")], asProgram: false)
            // The package's client follows no redirect (#53): the 303 that leads a browser back to the storefront is the answer.
            #expect(bought.status == 303 && bought.location?.hasPrefix("/store") == true, "\(String(describing: bought.location))")
            #expect(try await store.ledgerTransactions().map(\.productID) == [ExampleShop.pro])
        }
    }

    @Test("a Host the server does not answer for is refused: DNS rebinding deletes nothing")
    func rebinding() async throws {
        try await withServedStore { store, server in
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
            let rebound = await RawHTTP.exchange(port: server.port, "DELETE /v1/admin/transactions HTTP/1.1\r\nHost: rebind.attacker.example:\(server.port)\r\nX-OpenStoreKit-Request: 1\r\nConnection: close\r\n\r\n")
            #expect(rebound.status == 403 && rebound.text.contains("forbiddenHost"))
            let page = await RawHTTP.exchange(port: server.port, "GET / HTTP/1.1\r\nHost: rebind.attacker.example\r\nConnection: close\r\n\r\n")
            #expect(page.status == 403, "not even the pages answer for another name")
            #expect(try await store.ledgerTransactions().count == 1)
            for host in ["localhost:\(server.port)", "127.0.0.1:\(server.port)", "LOCALHOST"] {
                #expect(await RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n").status == 200, "\(host)")
            }
        }
    }

    // MARK: Paths

    @Test("one path decoder: %00 and control characters are 400, %2F stays in its segment, %25 decodes once")
    func pathDecoding() async throws {
        try await withServedStore { store, server in
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
            try await store.addDevice("tablet", account: "aA")
            let request = { (line: String) in
                "\(line) HTTP/1.1\r\nHost: \(Self.host(server))\r\nX-OpenStoreKit-Request: 1\r\nConnection: close\r\n\r\n"
            }
            let nul = await RawHTTP.exchange(port: server.port, request("DELETE /v1/admin/transactions%00/1"))
            #expect(nul.status == 400)
            #expect(await RawHTTP.exchange(port: server.port, request("GET /v1/admin/accounts/al%0Aice")).status == 400)
            #expect(await RawHTTP.exchange(port: server.port, request("GET /v1/admin/accounts/%C3%28")).status == 400, "not UTF-8")
            #expect(try await store.ledgerTransactions().count == 1, "nothing was deleted")
            // %2541 is the three characters %41, not A: account "a%41" does not exist, "aA" is not it.
            #expect(await RawHTTP.exchange(port: server.port, request("GET /v1/admin/accounts/a%2541")).status == 404)
            #expect(await RawHTTP.exchange(port: server.port, request("GET /v1/admin/accounts/a%41")).status == 200, "a%41 is aA, decoded once")
            #expect(await RawHTTP.exchange(port: server.port, request("GET /v1/devices/phone%2500/storefront")).status == 404)
            #expect(await RawHTTP.exchange(port: server.port, request("GET /v1/devices/phone/storefront")).status == 200)
        }
    }

    @Test("an OCSP request as GET whose base64 holds a slash (sent as %2F) is answered")
    func ocspGetWithSlash() async throws {
        let scratch = Scratch()
        let port = try ReservedPort()
        let (directory, store) = try await TestStores.directory(in: scratch, environment: .sandbox, start: SystemStoreClock().now(),
                                                                ocspURL: "http://127.0.0.1:\(port.port)/ocsp")
        let server = try StoreServer(store: store, authority: try StoreDirectory.authority(at: directory), listeningSocket: try port.listeningSocket())
        // Any DER whose base64 has a "/" makes the point: the segment reaches the responder whole.
        let der = Data([0x30, 0x03, 0xFF, 0xFF, 0xFF])
        let encoded = der.base64EncodedString()
        #expect(encoded.contains("/"))
        let started = ContinuousClock.now
        let answer = await RawHTTP.exchange(port: port.port, "GET /ocsp/\(encoded.replacingOccurrences(of: "/", with: "%2F")) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(answer.status == 200 && answer.text.lowercased().contains("application/ocsp-response"),
                "after \(ContinuousClock.now - started): \(answer.text.prefix(300))")
        await server.stop()
    }

    @Test("account and device names are one name however their Unicode is written: another café cannot act on café's purchase")
    func unicodeNames() async throws {
        try await withServedStore(phoneAccount: nil) { store, server in
            let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
            #expect(composed.unicodeScalars.count != decomposed.unicodeScalars.count, "two spellings of one name")
            let register = try await Exchange.send("POST", URL(string: server.url.absoluteString + "/v1/devices/ipad")!, json: #"{"account": "\#(decomposed)"}"#)
            #expect(register.status == 200)
            #expect(try await store.device(named: "ipad")?.account.unicodeScalars.count == composed.unicodeScalars.count, "kept composed")
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: composed, device: "ipad"))
            // A device named in decomposed form reaches the same device.
            let device = decomposed.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            try await store.addDevice("phone-\(composed)", account: "mallory")
            let other = try await Exchange.send("POST", URL(string: "\(server.url.absoluteString)/v1/devices/phone-\(device)/transactions/0/finish")!,
                                                headers: [("X-OpenStoreKit-Request", "1")])
            #expect(other.status == 403, "mallory's device cannot finish café's transaction")
        }
    }

    // MARK: GETs change nothing

    @Test("GETs change nothing: updates are acknowledged by POST, and the storefront signs a device in only by a form")
    func getsChangeNothing() async throws {
        try await withServedStore { store, server in
            try await store.addDevice("tablet", account: "alice")
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
            let waiting = try await store.waitingUpdates(device: "tablet")
            #expect(waiting.count == 1)
            let get = try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/devices/tablet/updates?wait=0&ack=\(waiting[0].sequence)")!)
            #expect(get.status == 400)
            #expect(try await store.waitingUpdates(device: "tablet").count == 1, "nothing was dropped")
            let post = try await Exchange.send("POST", URL(string: "\(server.url.absoluteString)/v1/devices/tablet/updates")!,
                                               json: #"{"channel": "transactions", "wait": 0, "ack": \#(waiting[0].sequence)}"#)
            #expect(post.status == 200)
            #expect(try await store.waitingUpdates(device: "tablet").isEmpty)

            let page = try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/store?account=carol&device=x")!)
            #expect(page.status == 404 && page.contentType?.hasPrefix("text/html") == true)
            #expect(String(decoding: page.body, as: UTF8.self).contains("Sign in x to carol"))
            #expect(try await store.device(named: "x") == nil, "a page view created nothing")
            #expect(try await store.account(named: "carol") == nil)
        }
    }

    // MARK: Framing

    @Test("HTTP framing: a large announced body is refused unread, two lengths are 400, HTTP/1.1 needs Host")
    func framing() async throws {
        try await withServedStore { store, server in
            let host = Self.host(server)
            // 100 MB announced, nothing sent: the 413 comes at once, before any body.
            let large = await RawHTTP.exchange(port: server.port, "POST /v1/devices/phone/purchases HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n",
                                               limit: .seconds(20))
            #expect(large.status == 413)
            let twice = await RawHTTP.exchange(port: server.port, "POST /v1/devices/phone/purchases HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 30\r\nConnection: close\r\n\r\n{}")
            #expect(twice.status == 400)
            let both = await RawHTTP.exchange(port: server.port, "POST /v1/devices/phone/purchases HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{}")
            #expect(both.status == 400)
            let noHost = await RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n")
            #expect(noHost.status == 400)
            let ledger = try await store.ledgerTransactions()
            #expect(ledger.isEmpty)
        }
    }

    @Test("HTTP framing, second round: a space before the colon, two Transfer-Encodings, a final coding other than chunked, two Hosts, a Host that is not host[:port] and a malformed length are 400; a 24 KB target is 414; unknown codings are 501",
          arguments: [
              ("POST /v1/devices/phone/purchases HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding : chunked\r\nConnection: close\r\n\r\n{}", 400),
              ("POST /v1/devices/phone/purchases HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400),
              ("POST /v1/devices/phone/purchases HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked, identity\r\nConnection: close\r\n\r\n{}", 400),
              ("POST /v1/devices/phone/purchases HTTP/1.1\r\nHost: HOST\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n0\r\n\r\n", 501),
              ("GET /v1/admin/transactions HTTP/1.1\r\nHost: evil.example\r\nHost: HOST\r\nConnection: close\r\n\r\n", 400),
              ("GET /v1/admin/transactions HTTP/1.1\r\nHost: [::1]evil.example\r\nConnection: close\r\n\r\n", 400),
              ("GET /v1/admin/transactions HTTP/1.1\r\nHost: 127.0.0.1:x@evil.example\r\nConnection: close\r\n\r\n", 400),
              ("GET /v1/admin/transactions?q=\(String(repeating: "a", count: 24_000)) HTTP/1.1\r\nHost: HOST\r\nConnection: close\r\n\r\n", 414),
              ("GET /v1/admin/transactions HTTP/1.1\r\nHost: HOST\r\nContent-Length: 1x\r\nConnection: close\r\n\r\n", 400),
          ])
    func strictFraming(_ request: String, _ status: Int) async throws {
        try await withServedStore { store, server in
            let answer = await RawHTTP.exchange(port: server.port, request.replacingOccurrences(of: "HOST", with: Self.host(server)))
            #expect(answer.status == status, "\(answer.text.prefix(300))")
            let ledger = try await store.ledgerTransactions()
            #expect(ledger.isEmpty)
        }
    }

    @Test("a header value libmicrohttpd would cut at a NUL is refused: Content-Length: 0<NUL>216 and a second request get one answer, a 400 (#53)",
          arguments: [
              "GET /health HTTP/1.1\r\nHost: HOST\r\nContent-Length: 0\u{0}216\r\nX-Other: 1\r\n\r\nGET /v1/admin/transactions HTTP/1.1\r\nHost: HOST\r\nConnection: close\r\n\r\n",
              "GET /health HTTP/1.1\r\nHost: HOST\r\nContent-Length: 0\u{0}216\r\n\r\nGET /v1/admin/transactions HTTP/1.1\r\nHost: HOST\r\nConnection: close\r\n\r\n",
              "GET /health HTTP/1.1\r\nHost: HOST\r\nX-Note: a\u{0}\u{0}b\r\nConnection: close\r\n\r\n",
              "GET /health HTTP/1.1\r\nX-Note: a\u{0}b\r\nHost: HOST\r\nConnection: close\r\n\r\n",
          ])
    func nulInAHeaderIsRefused(_ request: String) async throws {
        try await withServedStore { _, server in
            let answer = await RawHTTP.exchange(port: server.port, request.replacingOccurrences(of: "HOST", with: Self.host(server)), limit: .seconds(20))
            #expect(answer.status == 400, "\(answer.text.prefix(300))")
            #expect(answer.text.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer, not two: \(answer.text.prefix(600))")
            // Values with spaces and tabs inside and after them, and empty ones, are not taken for cut ones.
            let host = Self.host(server)
            let plain = await RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: \(host)\r\nX-Note: a b\tc \t\r\nX-Empty:\r\nX-Last: z  \r\nConnection: close\r\n\r\n")
            #expect(plain.status == 200, "\(plain.text.prefix(300))")
        }
    }

    @Test("no answer can be framed by another page: pages and API answers say DENY and frame-ancestors 'none'",
          arguments: ["/", "/store", "/health", "/v1/admin/transactions"])
    func answersRefuseFraming(_ path: String) async throws {
        try await withServedStore { _, server in
            let answer = await RawHTTP.exchange(port: server.port, "GET \(path) HTTP/1.1\r\nHost: \(Self.host(server))\r\nConnection: close\r\n\r\n")
            #expect(answer.status == 200, "\(answer.text.prefix(300))")
            let head = answer.text.components(separatedBy: "\r\n\r\n").first?.lowercased() ?? ""
            #expect(head.contains("x-frame-options: deny"))
            #expect(head.contains("frame-ancestors 'none'"))
            #expect(head.contains("x-content-type-options: nosniff"))
        }
    }

    @Test("every way of writing settings takes only http(s) notification URLs, and a body that is not overrides changes nothing")
    func settingsAreValidatedOnEveryPath() async throws {
        try await withServedStore { store, server in
            _ = try await Exchange.send("PATCH", server.url.appendingPathComponent("/v1/admin/settings"), json: #"{"askToBuyEnabled": true}"#)
            let before = try await store.currentSettings()
            #expect(before.askToBuyEnabled)
            let overrides = server.url.appendingPathComponent("/v1/admin/settings/overrides")
            for body in [#"{"notificationURL": "ftp://127.0.0.1:21/"}"#, #"{"notificationURL": "javascript:alert(1)"}"#,
                         #"{"notificationURL": "file:///etc/passwd"}"#, #"{"surprise": 1}"#, "[]", "not json"] {
                let answer = try await Exchange.send("PUT", overrides, json: body)
                // 400 for a body that is not overrides; 409 for a value the store refuses, as every control refusal.
                #expect([400, 409].contains(answer.status), "PUT \(body): \(answer.status)")
            }
            let patched = try await Exchange.send("PATCH", server.url.appendingPathComponent("/v1/admin/settings"), json: #"{"notificationURL": "ftp://127.0.0.1/"}"#)
            #expect(patched.status == 409)
            await #expect(throws: AppStoreError.self) { try await store.updateSettings { $0.notificationURL = "gopher://127.0.0.1/" } }
            #expect(try await store.currentSettings() == before, "no refused write changed a setting")
        }
    }

    @Test("a store or backend database another user can write is refused, naming the path and the fix; nothing in it is changed")
    func othersCannotWrite() async throws {
        let scratch = Scratch()
        let (directory, store) = try await TestStores.directory(in: scratch)
        _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone"))
        let database = StoreDirectory.databaseURL(in: directory)
        for (path, mode) in [(directory.path, mode_t(0o777)), (database.path, mode_t(0o666))] {
            var status = stat()
            #expect(lstat(path, &status) == 0)
            let original = status.st_mode & 0o7777
            #expect(chmod(path, mode) == 0)
            await #expect {
                try await StoreDirectory.open(at: directory)
            } throws: { error in
                "\(error)".contains("can be written by other users") && "\(error)".contains(path) && "\(error)".contains("chmod")
            }
            #expect(chmod(path, original) == 0)
        }
        #expect(try await TestStores.open(directory).ledgerTransactions().count == 1)

        let backendPath = scratch.url.appendingPathComponent("backend.sqlite").path
        _ = try await SQLBackendStorage.sqlite(path: backendPath)
        #expect(chmod(backendPath, 0o666) == 0)
        await #expect {
            _ = try await SQLBackendStorage.sqlite(path: backendPath)
        } throws: { error in
            "\(error)".contains("can be written by other users") && "\(error)".contains("chmod 600")
        }
    }

    @Test("devices never get the offer-signing key: the served configuration keeps its identifier, not its private key")
    func offerKeyStaysWithTheStore() async throws {
        try await withServedStore { store, server in
            #expect(await store.storeKitConfiguration.subscriptionOffersKeyPair?.privateKey != nil, "the example file has a key")
            let answer = try await Exchange.send("GET", server.url.appendingPathComponent("/v1/store/configuration"))
            #expect(answer.status == 200)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(!text.contains("privateKey"), "the private key was served")
            #expect(text.contains("subscriptionOffersKeyPair"))
        }
    }

    @Test("one address holds at most its share of the connections")
    func connectionsPerAddress() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let server = try StoreServer(store: store, access: ServerAccess(connectionsPerAddress: 8))
        // Eight connections from 127.0.0.1 hold their places (each sends half a request)...
        let holders = try (0..<8).map { _ in try HeldConnection(port: server.port) }
        // The server has taken all eight (a loaded machine accepts them late; a probe sent before would
        // take a holder's place).
        try await eventually("eight connections held") { server.openConnections == 8 }
        let ninth = await RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", limit: .seconds(20))
        #expect(ninth.status == 0, "the ninth connection from the address is turned away: \(ninth.text.prefix(200))")
        // ...and the ninth from that address is turned away, while the server stays up for others once they go.
        for holder in holders { holder.close() }
        try await eventually("the server answers again") {
            await RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").status == 200
        }
        await server.stop()
    }

    @Test("a request must arrive whole within the request deadline: a client trickling header lines is closed, a long poll is not")
    func requestDeadline() async throws {
        let server = try HTTPServer(idleTimeout: 30, requestDeadline: .seconds(2)) { request in
            if request.rawPath == "/poll" { try? await Task.sleep(for: .seconds(4)) }
            return .text(200, "ok")
        }
        // One header line every 300 ms: never idle long enough for the 30 s idle timeout.
        let trickler = try HeldConnection(port: server.port)
        try await eventually("the trickling connection is closed", within: .seconds(20)) {
            trickler.trickle("X-Padding: \(Int.random(in: 0...9))\r\n")
            try await Task.sleep(for: .milliseconds(300))
            return trickler.isClosedByServer
        }
        #expect(server.requestsCutOff == 1)
        trickler.close()
        // A handler's own time does not count: a 4 s long poll over a 2 s deadline is answered.
        let started = ContinuousClock.now
        let poll = await RawHTTP.exchange(port: server.port, "GET /poll HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(poll.status == 200, "after \(ContinuousClock.now - started), cut off \(server.requestsCutOff): \(poll.text.prefix(200))")
        #expect(server.requestsCutOff == 1)
        await server.stop()
    }

    // MARK: The token off loopback

    @Test("serve --host 0.0.0.0 makes a token and prints it; without it the pages and APIs are 401, with it they work",
          .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
    func tokenOffLoopback() async throws {
        let scratch = Scratch()
        let directory = try await makeStoreDirectory(in: scratch)
        let server = try await ServeProcess.start(command: ["serve", directory.path, "--host", "0.0.0.0", "--port", "0"])
        let local = URL(string: "http://127.0.0.1:\(server.url.port ?? 0)")!
        let token = try await eventually(orNil: "the printed token") { () -> String? in
            server.standardError.split(separator: "\n").first { $0.hasPrefix("access token: ") }
                .map { String($0.dropFirst("access token: ".count).prefix { $0 != " " }) }
        }
        #expect(server.standardError.contains("reachable from the network"))
        for path in ["/", "/store", "/v1/admin/transactions", "/v1/devices/phone/storefront"] {
            #expect(try await Exchange.send("GET", local.appendingPathComponent(path)).status == 401, "\(path)")
        }
        #expect(try await Exchange.send("GET", local.appendingPathComponent("/health")).status == 200)
        let authorized = [("Authorization", "Bearer \(token)")]
        #expect(try await Exchange.send("GET", local.appendingPathComponent("/v1/admin/transactions"), headers: authorized).status == 200)
        #expect(try await Exchange.send("GET", local.appendingPathComponent("/"), headers: authorized).status == 200)
        // A browser opens a page with ?token= once: a cookie, and the page's address without the token.
        let port = local.port ?? 0
        let opened = await RawHTTP.exchange(port: UInt16(port), "GET /store?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        #expect(opened.status == 200 && opened.text.contains("location.replace(\"/store?osk_session="))
        // The cookie is a session named for the port, never the token: a page of another local server
        // that receives it learns nothing it can use elsewhere, and the token stays out of the browser.
        let setCookie = try #require(opened.text.split(separator: "\r\n").first { $0.hasPrefix("Set-Cookie: storekit_session_\(port)=") })
        #expect(setCookie.contains("; Path=/; HttpOnly; SameSite=Strict; Max-Age=") && !setCookie.contains(token))
        let session = String(setCookie.dropFirst("Set-Cookie: ".count).prefix { $0 != ";" })
        let secret = try #require(opened.text.range(of: "osk_session=").map { String(opened.text[$0.upperBound...].prefix { $0.isHexDigit }) })
        #expect(try await Exchange.send("GET", local.appendingPathComponent("/"), headers: [("Cookie", session)]).status == 401, "the cookie alone (#53)")
        #expect(try await Exchange.send("GET", local.appendingPathComponent("/"), headers: [("Cookie", session), ("X-OpenStoreKit-Session", secret)]).status == 200)
        #expect(try await Exchange.send("GET", local.appendingPathComponent("/"), headers: [("Cookie", "storekit_session_\(port)=\(token)")]).status == 401,
                "the token itself is not a session")
        #expect(try await Exchange.send("GET", local.appendingPathComponent("/"), headers: [("Cookie", "storekit_token=\(token)")]).status == 401)
        await server.stop()
    }

    @Test("a port in use is an error: a second server never shares it",
          .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
    func portInUse() async throws {
        try await withServedStore { _, server in
            #expect(throws: HTTPServerError.self) { _ = try HTTPServer(port: server.port) { _ in .text(200, "") } }
            let scratch = Scratch()
            let directory = try await makeStoreDirectory(in: scratch)
            let second = try await ChildProcess.run(Built.storekit, ["serve", directory.path, "--port", String(server.port)])
            #expect(second.status == 1 && second.standardError.contains("in use"))
        }
    }

    // MARK: The App Store Server API's tokens

    @Test("a Server API token lives an hour at most: one with exp far from iat, or far from now without iat, is refused")
    func tokenLifetime() async throws {
        try await ServedServerAPI.with { api in
            let now = Int64(Date().timeIntervalSince1970)
            func token(iat: Int64?, exp: Int64) throws -> String {
                try JWSSigner(key: api.key, certificateChain: [], typ: "JWT", kid: api.record.keyId).sign(
                    ServerAPIToken.Claims(iss: api.record.issuerId, iat: iat, exp: exp, aud: ServerAPIToken.audience, bid: ServedServerAPI.bundleID))
            }
            let path = "/inApps/v1/notifications/test"
            let forever = try token(iat: nil, exp: 253_402_300_000), twoHours = try token(iat: now, exp: now + 7_200)
            let fiftyMinutes = try token(iat: now, exp: now + 3_000), withoutIat = try token(iat: nil, exp: now + 300)
            #expect(try await api.send("POST", path, token: .some(forever)).status == 401, "exp in 9999")
            #expect(try await api.send("POST", path, token: .some(twoHours)).status == 401, "two hours")
            #expect(try await api.send("POST", path, token: .some(fiftyMinutes)).status == 200)
            #expect(try await api.send("POST", path, token: .some(withoutIat)).status == 200, "Apple's Python library leaves iat out")
        }
    }

    // MARK: The storefront's links

    @Test("a javascript: policy URL in a .storekit file is never a link on the storefront")
    func javascriptURLs() async throws {
        let scratch = Scratch()
        // The example shop with script where its policies' addresses belong.
        let hostile = try String(contentsOf: ExampleShop.file, encoding: .utf8)
            .replacingOccurrences(of: #""eula" : "","#, with: #""eula" : "javascript:alert(document.cookie)","#)
            .replacingOccurrences(of: #""policyURL" : """#, with: #""policyURL" : "javascript:alert(1)""#)
        #expect(hostile.contains("javascript:alert(1)"))
        let file = scratch.url.appendingPathComponent("hostile.storekit")
        try Data(hostile.utf8).write(to: file)
        let store = try await TestStores.directory(in: scratch, file: file).store
        try await store.addDevice("phone", account: "alice")
        try await StoreServer.serving(store) { server in
            // The page is about its token, not its speed: a loaded run may take long to render it.
            let page = String(decoding: try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/store?account=alice&device=phone")!, timeout: .seconds(180)).body,
                              as: UTF8.self)
            #expect(page.contains("Restore Purchases"))
            let lowered = page.lowercased()
            var around: [String] = []
            var searchFrom = lowered.startIndex
            // The EULA is text (shown as text, escaped); the policy is an address and must never be a link to script.
            while let found = lowered.range(of: #"="javascript:"#, range: searchFrom..<lowered.endIndex) {
                let start = lowered.index(found.lowerBound, offsetBy: -80, limitedBy: lowered.startIndex) ?? lowered.startIndex
                around.append(String(lowered[start..<found.upperBound]))
                searchFrom = found.upperBound
            }
            #expect(around.isEmpty, "script where an address belongs: \(around)")
        }
    }
}

/// A connection that sends half a request and holds its place.
final class HeldConnection: Sendable {
    private let descriptor: Int32

    /// Connects and sends `text`: by default half a request, which holds the connection's place.
    init(port: UInt16, sending text: String = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n") throws {
        guard let descriptor = RawHTTP.connectedSocket(port: port) else { throw TestFailure("cannot connect to port \(port)") }
        let half = Array(text.utf8)
        _ = half.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        self.descriptor = descriptor
    }

    /// Sends a little more of the request; `false` once the server has closed the connection.
    @discardableResult
    func trickle(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Whether the server has closed the connection (checked without waiting).
    var isClosedByServer: Bool {
        var byte: UInt8 = 0
        let read = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT))
        return read == 0 || (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    func close() { Glibc.close(descriptor) }
}
