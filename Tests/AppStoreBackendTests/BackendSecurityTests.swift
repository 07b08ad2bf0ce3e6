import AppStoreBackend
import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import Synchronization
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
        #expect(BackendService.escapingControlCharacters("a\nFORGED b\r") == "a\\u{a}FORGED b\\u{d}")
        let scenario = try BackendScenario()
        try await scenario.withBackend { backend in
            let logged = Mutex<[String]>([])
            let logging = BackendService(storage: backend.storage, intake: backend.intake, log: { line in logged.withLock { $0.append(line) } })
            let answer = await logging.handle(HTTPRequest(method: "GET", rawPath: "/v1/customers/x%0AFORGED/entitlements"))
            #expect(answer.status == 400)
            _ = await logging.post("/v1/transactions", Data("not json".utf8), key: BackendScenario.serviceKey)
            #expect(logged.withLock { $0 }.allSatisfy { !$0.contains("\n") && !$0.contains("\r") })
            #expect(logged.withLock { $0 }.count == 1)
        }
    }
}
