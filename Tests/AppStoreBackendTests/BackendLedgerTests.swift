import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import Synchronization
import ServiceLogging
import Testing
import TestSupport

/// The entitlement backend follows a local App Store through its notifications to the same answer as
/// the store, whatever order, repetition or delay the notifications come in.
@Suite("Entitlement backend: verified notifications in, the store's entitlements out", .timeLimit(.minutes(10)))
struct BackendLedgerTests {
    /// Runs `body` with a store that has played the scripted year, and a fresh backend for it.
    static func afterScriptedYear(engine: BackendEngine = .sqlite, _ body: (BackendScenario, BackendService) async throws -> Void) async throws {
        let scenario = try BackendScenario()
        try await scenario.play()
        try await scenario.withBackend(engine: engine) { backend in try await body(scenario, backend) }
    }

    @Test("after a scripted year the backend's entitlements equal the store's for every customer, notifications in order",
          arguments: BackendEngine.available)
    func scriptedYearInOrder(engine: BackendEngine) async throws {
        try await Self.afterScriptedYear(engine: engine) { scenario, backend in
            let bodies = try await scenario.notificationBodies()
            for body in bodies {
                let answer = await backend.post("/apple/notifications", body, key: nil)
                #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            }
            for body in try await scenario.familyAppRequests() {
                #expect(await backend.post("/v1/transactions", body).status == 200)
            }
            let expected = try await scenario.storeEntitlements()
            print("scripted year: \(expected.map { "\($0.key.suffix(9)): \($0.value)" }.sorted().joined(separator: "; "))")
            #expect(try await BackendScenario.backendEntitlements(backend) == expected)
            #expect(expected.values.contains { !$0.isEmpty }, "the year leaves some customers entitled")
            #expect(expected.values.contains { $0.isEmpty }, "and some not")
            #expect(try await backend.storage.notificationCount() == bodies.count)
        }
    }

    @Test("the same with every notification delivered twice, in a shuffled order, 16 deliveries at once",
          arguments: BackendEngine.available, [1, 2])
    func shuffledAndDuplicated(engine: BackendEngine, seed: UInt64) async throws {
        try await Self.afterScriptedYear(engine: engine) { scenario, backend in
            var generator = SeededGenerator(seed: seed)
            let bodies = try await scenario.notificationBodies()
            let deliveries = (bodies + bodies).shuffled(using: &generator)
            let answers = await withTaskGroup(of: [HTTPResponse].self) { group in
                for lane in 0..<16 {
                    group.addTask {
                        var answers: [HTTPResponse] = []
                        for index in stride(from: lane, to: deliveries.count, by: 16) {
                            answers.append(await backend.post("/apple/notifications", deliveries[index], key: nil))
                        }
                        return answers
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
            #expect(answers.allSatisfy { $0.status == 200 })
            let recorded = answers.filter { String(decoding: $0.body, as: UTF8.self).contains("\"recorded\":true") }.count
            #expect(recorded == bodies.count, "each notification recorded once")
            for body in try await scenario.familyAppRequests() { _ = await backend.post("/v1/transactions", body) }
            #expect(try await BackendScenario.backendEntitlements(backend) == (try await scenario.storeEntitlements()))
        }
    }

    @Test("a backend that missed the second half of the year catches up from late deliveries to the same answer",
          arguments: BackendEngine.available)
    func lateDeliveries(engine: BackendEngine) async throws {
        try await Self.afterScriptedYear(engine: engine) { scenario, backend in
            let bodies = try await scenario.notificationBodies()
            let half = bodies.count / 2
            for body in bodies[..<half] { _ = await backend.post("/apple/notifications", body, key: nil) }
            for body in try await scenario.familyAppRequests() { _ = await backend.post("/v1/transactions", body) }
            // The rest arrives later, newest first (Apple retries each on its own schedule).
            for body in bodies[half...].reversed() { _ = await backend.post("/apple/notifications", body, key: nil) }
            #expect(try await BackendScenario.backendEntitlements(backend) == (try await scenario.storeEntitlements()))
        }
    }

    @Test("forged, foreign and malformed input is refused with 4xx and records nothing", arguments: BackendEngine.available)
    func badInput(engine: BackendEngine) async throws {
        let scenario = try BackendScenario()
        _ = try await scenario.buy(ExampleShop.pro, "alice")
        try await scenario.withBackend(engine: engine) { backend in
            let genuine = try #require(try await scenario.store.notifications().first)

            // Another authority signing a payload shaped like the store's.
            let foreign = try CertificateAuthority.make().makeSigner()
            var payload = try JSONSerialization.jsonObject(with: Data(Base64URL.decode(String(genuine.signedPayload.split(separator: ".")[1]))!)) as! [String: Any]
            payload["notificationUUID"] = UUID().uuidString.lowercased()
            let forged = try foreign.sign(payload: try JSONSerialization.data(withJSONObject: payload))
            // The genuine signature over a changed payload.
            let parts = genuine.signedPayload.split(separator: ".").map(String.init)
            let tampered = [parts[0], Base64URL.encode(try JSONSerialization.data(withJSONObject: payload)), parts[2]].joined(separator: ".")
            // Signed by the store, but for another app.
            let otherApp = try SignedDataIntakeFixtures.verifier(trusting: scenario.store.rootCertificate, bundleID: "com.example.other")

            for (body, status) in [(Data(#"{"signedPayload":"\#(forged)"}"#.utf8), 422), (Data(#"{"signedPayload":"\#(tampered)"}"#.utf8), 422),
                                   (Data(#"{"signedPayload":"not a jws"}"#.utf8), 422), (Data("not json".utf8), 400), (Data(#"{"other":1}"#.utf8), 400)] {
                let answer = await backend.post("/apple/notifications", body, key: nil)
                #expect(answer.status == status, "\(String(decoding: answer.body, as: UTF8.self))")
            }
            // Every refusal is logged, naming the request and why.
            let logged = RecordingLogHandler()
            let logging = BackendService(storage: backend.storage, intake: backend.intake, logger: Logger(label: "backend", handler: logged))
            _ = await logging.post("/apple/notifications", Data(#"{"signedPayload":"\#(forged)"}"#.utf8), key: nil)
            _ = await logging.post("/apple/notifications", Data("not json".utf8), key: nil)
            #expect(logged.written.count == 2)
            #expect(logged.written.allSatisfy { $0.level == .notice && $0.metadata["request_id"] != nil })
            #expect(logged.written.first?.message.hasPrefix("POST /apple/notifications → 422: the notification did not verify") == true)
            let wrongApp = BackendService(storage: backend.storage, intake: SignedDataIntake(verifier: otherApp))
            #expect(await wrongApp.post("/apple/notifications", Data(#"{"signedPayload":"\#(genuine.signedPayload)"}"#.utf8), key: nil).status == 422)
            let sandboxAsProduction = try SignedDataVerifier(rootCertificates: [scenario.store.rootCertificate], bundleId: "com.example.shop",
                                                             appAppleId: 1, environment: .production)
            let wrongEnvironment = BackendService(storage: backend.storage, intake: SignedDataIntake(verifier: sandboxAsProduction))
            #expect(await wrongEnvironment.post("/apple/notifications", Data(#"{"signedPayload":"\#(genuine.signedPayload)"}"#.utf8), key: nil).status == 422)
            #expect(try await backend.storage.notificationCount() == 0, "nothing was recorded")

            // The /v1 endpoints need a key.
            let customer = BackendScenario.token("alice").uuidString.lowercased()
            #expect(await backend.get("/v1/customers/\(customer)/entitlements", key: nil).status == 401)
            #expect(await backend.get("/v1/customers/\(customer)/entitlements", key: "osk_wrong").status == 401)
            let forgedTransaction = try foreign.sign(payload: Data(#"{"transactionId":"1","bundleId":"com.example.shop","environment":"Sandbox"}"#.utf8))
            #expect(await backend.post("/v1/transactions", Data(#"{"signedTransaction":"\#(forgedTransaction)"}"#.utf8)).status == 422)
            #expect(await backend.post("/v1/transactions", Data("[]".utf8)).status == 400)
            #expect(try await backend.ledger.entitlements(customer: customer).isEmpty)
        }
    }

    @Test("explain says in words why each customer is or is not entitled, after the scripted year")
    func explain() async throws {
        try await Self.afterScriptedYear { scenario, backend in
            for body in try await scenario.notificationBodies() { _ = await backend.post("/apple/notifications", body, key: nil) }
            func why(_ account: String, _ product: String) async throws -> EntitlementExplanation {
                try await backend.ledger.explain(customer: BackendScenario.token(account).uuidString.lowercased(), productID: product)
            }
            #expect(try await why("alice", ExampleShop.pro).because == "bought")
            #expect(try await why("carol", ExampleShop.pro).because.hasPrefix("refunded or revoked on "))
            #expect(try await why("carol", ExampleShop.gems).because == "a consumable: delivered when bought, never an entitlement")
            #expect(try await why("erin", ExampleShop.premiumYearly).because.hasPrefix("expired on "))
            #expect(try await why("bob", ExampleShop.standardMonthly).because.hasPrefix("subscribed until "))
            #expect(try await why("bob", ExampleShop.wizard).because == "never bought by this customer")
            #expect(try await why("alice", ExampleShop.standardMonthly).because == "the subscription moved to \(ExampleShop.premiumMonthly) (an upgrade or a plan change)")
            let customer = BackendScenario.token("carol").uuidString.lowercased()
            let answer = await backend.handle(HTTPRequest(method: "GET", path: "/v1/customers/\(customer)/explain", query: ["productId": [ExampleShop.pro]],
                                                          headers: ["Authorization": "Bearer \(BackendScenario.serviceKey)"]))
            #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self).contains("\"entitled\":false"))
        }
    }

    @Test("an app's transaction, sent before the notification, entitles at once; the entitlements read explains why")
    func appSentTransaction() async throws {
        let scenario = try BackendScenario()
        let pro = try await scenario.buy(ExampleShop.pro, "alice")
        let monthly = try await scenario.buy(ExampleShop.premiumMonthly, "alice")
        try await scenario.withBackend { backend in
            for transaction in [pro, monthly] {
                let jws = try await scenario.store.transaction(transaction.id, device: "alice-phone").jws
                let answer = await backend.post("/v1/transactions", Data(#"{"signedTransaction":"\#(jws)"}"#.utf8))
                #expect(answer.status == 200)
            }
            let read = await backend.get("/v1/customers/\(BackendScenario.token("alice").uuidString.lowercased())/entitlements")
            let body = try #require(try JSONSerialization.jsonObject(with: read.body) as? [String: Any])
            let entitlements = try #require(body["entitlements"] as? [[String: Any]])
            #expect(Set(entitlements.compactMap { $0["productId"] as? String }) == [ExampleShop.pro, ExampleShop.premiumMonthly])
            #expect(Set(entitlements.compactMap { $0["reason"] as? String }) == ["purchased", "notYetConfirmed"])
            // The notifications confirm the subscription.
            for body in try await scenario.notificationBodies() { _ = await backend.post("/apple/notifications", body, key: nil) }
            let confirmed = try await backend.ledger.entitlements(customer: BackendScenario.token("alice").uuidString.lowercased())
            #expect(confirmed.first { $0.productId == ExampleShop.premiumMonthly }?.reason == "subscribed")
            let history = await backend.get("/v1/customers/\(BackendScenario.token("alice").uuidString.lowercased())/history")
            #expect(history.status == 200)
            // A token copied as a page shows it, in upper case, names the same customer.
            let upper = await backend.get("/v1/customers/\(BackendScenario.token("alice").uuidString.uppercased())/entitlements")
            let upperBody = try #require(try JSONSerialization.jsonObject(with: upper.body) as? [String: Any])
            #expect((upperBody["entitlements"] as? [[String: Any]])?.count == 2)
            #expect(upperBody["customer"] as? String == BackendScenario.token("alice").uuidString.lowercased())
        }
    }
}

/// Verifiers for the refusal tests.
enum SignedDataIntakeFixtures {
    static func verifier(trusting root: Certificate, bundleID: String) throws -> SignedDataVerifier {
        try SignedDataVerifier(rootCertificates: [root], bundleId: bundleID, environment: .sandbox)
    }
}

/// A small deterministic generator for shuffles (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
