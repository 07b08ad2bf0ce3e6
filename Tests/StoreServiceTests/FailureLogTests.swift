import AppStoreSimulator
import OpenStoreKitTesting
import Foundation
import HTTPClient
import HTTPService
import ServiceLogging
import StoreService
import Testing
import TestSupport

/// Every `5xx` is logged once, with the request's id, which its answer carries as `X-Request-ID`; a
/// refusal (`4xx`) is not an error; a log line never carries a line break a client sent.
@Suite(.timeLimit(.minutes(10)))
struct FailureLogTests {
    struct Boom: Error, CustomStringConvertible {
        var description: String { "the disk is on fire" }
    }

    func router(logging records: RecordingLogHandler) -> Router {
        var router = Router()
        router.logger = Logger(label: "test", handler: records)
        router.on("GET", "/boom") { _, _ in throw Boom() }
        router.on("GET", "/unavailable") { _, _ in
            var response = HTTPResponse.text(503, "later")
            response.failure = "the database is restarting"
            return response
        }
        router.on("GET", "/fine") { _, context in .text(200, context.requestID) }
        return router
    }

    @Test("a handler that fails is answered 500, logged once with its request id and why, and the answer names the id")
    func handlerFailure() async throws {
        let records = RecordingLogHandler()
        let router = router(logging: records)
        let answer = await router.respond(to: HTTPRequest(method: "GET", path: "/boom"))
        #expect(answer.status == 500)
        let id = try #require(answer.headers.first { $0.name == "X-Request-ID" }?.value)
        #expect(id.count == 16)
        let lines = records.written
        #expect(lines.count == 1)
        #expect(lines.first?.level == .error)
        #expect(lines.first?.metadata["request_id"] == id)
        #expect(lines.first?.message == "GET /boom → 500: the disk is on fire")

        // A handler's own 5xx is logged with the reason it gives; answers below 500 are not errors.
        let unavailable = await router.respond(to: HTTPRequest(method: "GET", path: "/unavailable"))
        #expect(unavailable.status == 503)
        #expect(records.written.last?.message == "GET /unavailable → 503: the database is restarting")
        for path in ["/fine", "/nowhere"] { _ = await router.respond(to: HTTPRequest(method: "GET", path: path)) }
        #expect(records.written.count == 2)
        // Handlers see the request's id.
        let fine = await router.respond(to: HTTPRequest(method: "GET", path: "/fine"))
        #expect(String(decoding: fine.body, as: UTF8.self) == fine.headers.first { $0.name == "X-Request-ID" }?.value)
    }

    @Test("a store whose storage fails answers 500 over HTTP, logged once with the request id it answers with")
    func storageFailure() async throws {
        let storage = InMemoryLedgerStorage()
        let store = try #require(try TestSession(contentsOf: ExampleShop.file, bundleID: "com.example.shop", storage: storage).store)
        let records = RecordingLogHandler()
        let server = try StoreServer(store: store, logger: Logger(label: "store", handler: records))
        func put(_ account: String) async throws -> HTTPClient.Response {
            try await HTTPClient.shared.send(HTTPClient.Request("PUT", server.url.appendingPathComponent("v1/admin/accounts/\(account)"),
                                                               headers: [("X-OpenStoreKit-Request", "1")], body: Data("{}".utf8),
                                                               timeout: .seconds(180)))
        }
        #expect(try await put("alice").status == 200)
        storage.failNextCommits(1)
        let failed = try await put("bob")
        await server.stop()
        #expect(failed.status == 500)
        let id = try #require(failed.header("X-Request-ID"))
        let errors = records.written.filter { $0.level >= .error }
        #expect(errors.count == 1)
        #expect(errors.first?.metadata["request_id"] == id)
        #expect(errors.first?.message.hasPrefix("PUT /v1/admin/accounts/bob → 500") == true)
    }

    @Test("log lines escape every line break and control character, C1 and U+2028 included, and cut long values")
    func escaping() {
        let record = LogRecord(label: "test", level: .error, message: "a\nPOST /apple/notifications → 200\u{2028}b\u{85}c\r",
                               metadata: ["alg": String(repeating: "x", count: 700_000)])
        let time = Date(timeIntervalSince1970: 1_767_225_600)
        let text = StreamLogHandler.line(record, format: .text, time: time)
        #expect(!text.contains("\n") && !text.contains("\r") && !text.unicodeScalars.contains { $0.value == 0x2028 || $0.value == 0x85 })
        #expect(text.contains(#"a\nPOST /apple/notifications → 200\u{2028}b\u{85}c\r"#))
        #expect(text.utf8.count < 2_000, "a 700 KB value is cut")
        #expect(text.hasPrefix("2026-01-01T00:00:00.000Z error test: "))
        let json = StreamLogHandler.line(record, format: .json, time: time)
        #expect(!json.contains("\n") && !json.unicodeScalars.contains { $0.value == 0x2028 || $0.value == 0x85 })
        let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String]
        #expect(object?["message"] == "a\nPOST /apple/notifications → 200\u{2028}b\u{85}c\r")
        #expect(object?["level"] == "error")
        #expect(object?["alg"]?.hasSuffix("…(699488 more)") == true)
    }
}
