import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreService
import Testing
import TestSupport

/// Bad input never crashes the server or gets a 5xx: malformed bodies, unknown paths and methods,
/// oversized bodies, unknown devices, products and transactions are 4xx with a JSON error body, and
/// a client that stops halfway does not keep the server from answering others.
@Suite(.timeLimit(.minutes(10)))
struct ServerInputTests {
    struct BadRequest: Sendable, CustomStringConvertible {
        var method: String
        var path: String
        var body: String?
        var status: Int
        var code: String
        var description: String { "\(method) \(path) → \(status) \(code)" }
    }

    static let badRequests: [BadRequest] = [
        BadRequest(method: "POST", path: "/v1/devices/phone/purchases", body: "{\"productID\": ", status: 400, code: "badRequest"),
        BadRequest(method: "POST", path: "/v1/devices/phone/purchases", body: "[1, 2]", status: 400, code: "badRequest"),
        BadRequest(method: "POST", path: "/v1/devices/phone/purchases", body: "{\"productID\": 7}", status: 400, code: "badRequest"),
        BadRequest(method: "POST", path: "/v1/devices/phone/purchases", body: "{\"productID\": \"com.example.shop.pro\", \"quantity\": 0}", status: 400, code: "badRequest"),
        BadRequest(method: "POST", path: "/v1/devices/phone/purchases", body: "{\"productID\": \"no.such.product\"}", status: 422, code: "productUnavailable"),
        BadRequest(method: "POST", path: "/v1/devices/phone/purchases", body: "{\"productID\": \"com.example.shop.pro\", \"offer\": {\"kind\": \"bogus\"}}", status: 400, code: "badRequest"),
        BadRequest(method: "GET", path: "/v1/devices/nobody/transactions", body: nil, status: 404, code: "unknown"),
        BadRequest(method: "POST", path: "/v1/devices/phone/transactions/999999/finish", body: nil, status: 403, code: "notEntitled"),
        BadRequest(method: "POST", path: "/v1/devices/phone/transactions/x1/finish", body: nil, status: 400, code: "badRequest"),
        BadRequest(method: "GET", path: "/v1/devices/phone/transactions?view=sideways", body: nil, status: 400, code: "badRequest"),
        BadRequest(method: "GET", path: "/v1/devices/phone/updates?wait=forever", body: nil, status: 400, code: "badRequest"),
        BadRequest(method: "DELETE", path: "/v1/devices/phone/purchases", body: nil, status: 405, code: "methodNotAllowed"),
        BadRequest(method: "GET", path: "/v1/nowhere", body: nil, status: 404, code: "notFound"),
        BadRequest(method: "POST", path: "/v1/admin/transactions/424242/refund", body: nil, status: 404, code: "noTransactionFound"),
        BadRequest(method: "PATCH", path: "/v1/admin/settings", body: "{\"askToBuyEnabled\": \"maybe\"}", status: 409, code: "invalidAction"),
        BadRequest(method: "PATCH", path: "/v1/admin/settings", body: "{\"noSuchSetting\": true}", status: 409, code: "invalidAction"),
        BadRequest(method: "POST", path: "/v1/admin/clock/advance", body: "{\"by\": \"P1X\"}", status: 400, code: "badRequest"),
        BadRequest(method: "POST", path: "/v1/admin/clock/advance", body: "{\"to\": 1700000000000}", status: 409, code: "invalidAction"),
        BadRequest(method: "POST", path: "/v1/admin/subscriptions/expire", body: "{\"productID\": \"com.example.shop.pro\", \"account\": \"alice\"}", status: 409, code: "invalidProductType"),
        BadRequest(method: "PUT", path: "/v1/admin/accounts/alice", body: "{\"storefront\": \"XYZ\"}", status: 409, code: "invalidAction"),
    ]

    @Test("bad requests get a 4xx with a JSON error naming the problem", arguments: badRequests)
    func badRequest(_ bad: BadRequest) async throws {
        try await withServedStore { _, server in
            let answer = try await Exchange.send(bad.method, URL(string: server.url.absoluteString + bad.path)!, body: bad.body.map { Data($0.utf8) })
            #expect(answer.status == bad.status, "\(String(decoding: answer.body, as: UTF8.self))")
            #expect(answer.errorCode == bad.code)
            #expect(answer.contentType == "application/json")
            // The server goes on serving.
            #expect(try await Exchange.send("GET", server.url.appendingPathComponent("/health")).status == 200)
        }
    }

    @Test("an account change that cannot be made whole changes nothing: a device of another account is refused before the account is made")
    func accountChangeIsWhole() async throws {
        try await withServedStore { store, server in
            let url = URL(string: server.url.absoluteString + "/v1/admin/accounts/carol")!
            let answer = try await Exchange.send("PUT", url, json: #"{"askToBuy": true, "devices": ["carol-phone", "phone"]}"#)
            #expect(answer.status == 409 && answer.errorCode == "invalidAction", "\(String(decoding: answer.body, as: UTF8.self))")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("device phone is signed in to account alice"))
            #expect(try await store.account(named: "carol") == nil, "no account without its devices")
            #expect(try await store.device(named: "carol-phone") == nil)
            let made = try await Exchange.send("PUT", url, json: #"{"askToBuy": true, "devices": ["carol-phone"]}"#)
            #expect(made.status == 200)
            #expect(try await store.devices(ofAccount: "carol").map(\.name) == ["carol-phone"])
        }
    }

    @Test("a body over 1 MiB is refused with 413 and changes nothing; the 413, sent before the body is read, reaches the client whole 50 times in a row: the rest of the body is read and dropped before the close, so no reset overtakes the answer")
    func earlyAnswerIsNotLostToAReset() async throws {
        try await withServedStore { store, server in
            // The package's client (curl underneath) waits a moment for 100-continue and then sends the
            // body anyway; the answer comes before the body is read, and the connection closes.
            let body = Data(repeating: UInt8(ascii: "x"), count: 2_000_000)
            let url = server.url.appendingPathComponent("/v1/devices/phone/purchases")
            for attempt in 1...50 {
                let answer = try await Exchange.send("POST", url, body: body, headers: [("Content-Type", "application/json")])
                #expect(answer.status == 413, "attempt \(attempt)")
                #expect(answer.errorCode == "payloadTooLarge")
                if answer.status != 413 { break }
            }
            let ledger = try await store.ledgerTransactions()
            #expect(ledger.isEmpty)
        }
    }

    @Test("clients that stop halfway through their request do not keep the server from answering others")
    func slowClients() async throws {
        // The request deadline would cut the slow clients off after 30 s (SecurityTests tests it); this
        // test is about what happens while they hold on, however long a loaded machine takes.
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        try await store.addDevice("phone", account: "alice")
        try await StoreServer.serving(store, access: ServerAccess(requestDeadline: .seconds(3_600))) { server in
            // Twenty slow-loris connections: half a request, then a byte every two seconds, for far longer than
            // the test (it is stopped at the end), so a machine slowed by other tests cannot outlast it.
            let script = """
                import socket, sys, time
                sockets = []
                for _ in range(20):
                    s = socket.create_connection(("127.0.0.1", \(server.port)))
                    s.sendall(b"POST /v1/devices/phone/purchases HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: 100\\r\\n\\r\\n{\\"pro")
                    sockets.append(s)
                print("holding", flush=True)
                for _ in range(300):
                    time.sleep(2)
                    for s in sockets:
                        s.sendall(b" ")
                """
            let holder = try Subprocess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script], output: .pipe)
            defer { holder.signal(SIGTERM) }
            _ = await holder.readLine()
            for _ in 0..<10 {
                let answer = try await Exchange.send("POST", server.url.appendingPathComponent("/v1/devices/phone/purchases"),
                                                     json: #"{"productID": "com.example.shop.gems.small"}"#)
                #expect(answer.status == 200)
            }
            // The answers came while the twenty connections were still held open.
            #expect(holder.isRunning, "the requests were answered only after the held connections went away")
        }
    }
}
