import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog
import StoreService
import Testing
import TestSupport

/// Apple's own Python `AppStoreServerAPIClient`, with only its base URL pointed at `storekit serve`,
/// calls every endpoint; every signed item it receives verifies with Apple's `SignedDataVerifier`,
/// offline and with online checks against the store's OCSP responder.
@Suite(.timeLimit(.minutes(10)), AppleLibraryOracle.required)
struct ServerAPIInteropTests {
    /// A Sandbox store with a customer whose history spans more than one page, a subscription,
    /// refunds and a month of renewals, served with an API key.
    struct Scenario {
        let scratch = Scratch()
        let store: SimulatedAppStore
        let server: StoreServer
        let key: P256PrivateKey
        let record: APIKeyRecord

        private init(port: ReservedPort) async throws {
            // The port is reserved first, so the certificates can name the server's OCSP responder before it starts.
            let (directory, store) = try await TestStores.directory(in: scratch, environment: .sandbox, ocspURL: "http://127.0.0.1:\(port.port)/ocsp")
            self.store = store
            key = try P256PrivateKey.generate()
            record = try await store.registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
            server = try StoreServer(store: store, authority: try StoreDirectory.authority(at: directory), listeningSocket: try port.listeningSocket())
        }

        /// Runs one of the `Tests/Interop` scripts of Apple's library against the served store, with
        /// the scenario's key and `scenarioFile`: its report and the outcome of each call, its own
        /// failures expected to be none.
        func runAppleLibraryScript(_ name: String, root: URL, scenarioFile: URL) async throws -> (report: [String: Any], calls: [String: Any]) {
            let python = try await AppleLibraryOracle.prepare().get()
            let run = try await ChildProcess.run(python, [SharedTestData.packageRoot.appendingPathComponent("Tests/Interop/\(name)").path,
                                                         server.url.absoluteString, try writeKey().path, root.path, "com.example.shop",
                                                         "Sandbox", scenarioFile.path])
            let line = run.standardOutput.split(separator: "\n").last ?? ""
            let report = try #require((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
                                      "\(run.standardOutput)\n\(run.standardError)")
            #expect((report["failures"] as? [String])?.isEmpty == true, "\(report["failures"] ?? "")")
            return (report, try #require(report["calls"] as? [String: Any]))
        }

        /// Runs `body` with the scenario's store served; the server is stopped when `body` returns or throws.
        static func with(_ body: (Scenario) async throws -> Void) async throws {
            let scenario = try await Scenario(port: try ReservedPort())
            do {
                try await body(scenario)
                await scenario.server.stop()
            } catch {
                await scenario.server.stop()
                throw error
            }
        }

        func writeKey() throws -> URL {
            let url = scratch.url.appendingPathComponent("key.json")
            try JSONSerialization.data(withJSONObject: ["keyId": record.keyId, "issuerId": record.issuerId, "privateKey": try key.pemRepresentation])
                .write(to: url)
            return url
        }
    }

    @Test("every endpoint through Apple's Python client; every signed item verifies with Apple's verifier")
    func appleClient() async throws {
        try await Scenario.with { scenario in
            let store = scenario.store
            // A quiet month first, so the order of purchases below is the customer's whole history.
            try await store.advanceTime(by: 30 * 86_400)
            var gems: [UInt64] = []
            for _ in 0..<24 {
                guard case .success(let signed) = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone")) else {
                    throw TestFailure("expected a purchase")
                }
                gems.append(signed.transaction.id)
            }
            for id in gems.prefix(10) { try await store.finish(id) }
            try await store.refundTransaction(gems[20])
            try await store.refundTransaction(gems[21])
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
            guard case .success(let monthly) = try await store.purchase(PurchaseRequest(productID: ExampleShop.standardMonthly, account: "alice", device: "phone")),
                  case .success = try await store.purchase(PurchaseRequest(productID: ExampleShop.standardMonthly, account: "bob", device: "laptop")) else {
                throw TestFailure("expected subscriptions")
            }
            try await store.advanceTime(by: 100 * 86_400)
            let completed = try await store.ledgerTransactions(account: "alice").filter(\.isPurchased)
            let notifications = try await store.notifications()

            let root = scenario.scratch.url.appendingPathComponent("root.der")
            try store.rootCertificate.derRepresentation.write(to: root)
            let now = AppStoreJSON.milliseconds(from: try await store.currentTime())
            let scenarioFile = scenario.scratch.url.appendingPathComponent("scenario.json")
            try JSONSerialization.data(withJSONObject: [
                "anyTransactionId": gems[0], "subscriptionOriginalId": monthly.transaction.originalID, "subscriptionProductId": ExampleShop.standardMonthly,
                "orderId": monthly.transaction.orderID, "consumableId": gems[12], "historyStart": now - 179 * 86_400_000, "historyEnd": now + 86_400_000,
            ]).write(to: scenarioFile)

            let (report, calls) = try await scenario.runAppleLibraryScript("server_api_with_apple_library.py", root: root, scenarioFile: scenarioFile)
            #expect((report["verified"] as? Int ?? 0) > 120, "each signed item verified offline and with online checks")

            #expect(calls["getTransactionInfo"] as? String == ExampleShop.gems)
            let v2 = try #require(calls["getTransactionHistoryV2"] as? [String: Any], "\(calls["getTransactionHistoryV2"] ?? "")")
            #expect(v2["count"] as? Int == completed.filter { !$0.isRevoked }.count)
            #expect(v2["unique"] as? Int == v2["count"] as? Int)
            #expect((v2["pages"] as? Int ?? 0) >= 2, "more than 20 transactions page")
            let v1 = try #require(calls["getTransactionHistoryV1"] as? [String: Any])
            #expect(v1["count"] as? Int == completed.filter { !($0.productKind == .consumable && $0.isFinished) }.count)
            let descending = try #require(calls["getTransactionHistoryConsumablesDescending"] as? [String: Any])
            #expect(descending["count"] as? Int == 24)
            #expect((descending["first"] as? [String])?.first.flatMap { UInt64($0) } ?? 0 > (descending["last"] as? [String])?.first.flatMap { UInt64($0) } ?? 0)
            #expect((calls["getAllSubscriptionStatuses"] as? [String: Any])?["active"] as? Int == 1)
            #expect(calls["getRefundHistory"] as? Int == 2)
            #expect((calls["lookUpOrderId"] as? [String: Any])?["status"] as? Int == 0)
            #expect((calls["lookUpOrderId"] as? [String: Any])?["count"] as? Int == 1)
            #expect((calls["lookUpOrderIdInvalid"] as? [String: Any])?["status"] as? Int == 1)
            #expect((calls["extendSubscriptionRenewalDate"] as? [String: Any])?["success"] as? Bool == true)
            let mass = try #require(calls["extendRenewalDateForAllActiveSubscribers"] as? [String: Any])
            #expect(mass["complete"] as? Bool == true)
            #expect(mass["succeeded"] as? Int == 2)
            #expect(calls["sendConsumptionData"] as? String == "accepted")
            #expect(calls["sendConsumptionInformation"] as? String == "accepted")
            #expect(calls["setAppAccountToken"] as? String == "set")
            #expect(calls["getAppTransactionInfo"] as? String == "com.example.shop")
            #expect(calls["finishTransaction"] as? String == "finished")
            #expect((calls["requestTestNotification"] as? [String: Any])?["type"] as? String == "TEST")
            let history = try #require(calls["getNotificationHistory"] as? [String: Any])
            #expect((history["count"] as? Int ?? 0) >= notifications.count)
            #expect((history["pages"] as? Int ?? 0) >= 2)
            #expect((calls["getTransactionInfoUnknown"] as? [String: Any])?["errorCode"] as? Int == 4_040_010)
            #expect((calls["getTransactionInfoUnknown"] as? [String: Any])?["status"] as? Int == 404)
            #expect(try await store.ledgerTransaction(gems[12])?.isFinished == true)
        }
    }

    @Test("the Retention Messaging API's fourteen calls through Apple's Python client, with Apple's codes for the documented errors")
    func retentionMessaging() async throws {
        try await Scenario.with { scenario in
            let store = scenario.store
            guard case .success(let monthly) = try await store.purchase(PurchaseRequest(productID: ExampleShop.standardMonthly, account: "alice", device: "phone")) else {
                throw TestFailure("expected a subscription")
            }
            // Past the six months of its introductory offer, to a renewal.
            try await store.advanceTime(by: 190 * 86_400)
            let all = try await store.ledgerTransactions(account: "alice")
            let renewal = try #require(all.last { $0.id != monthly.transaction.id })
            let root = scenario.scratch.url.appendingPathComponent("root.der")
            try store.rootCertificate.derRepresentation.write(to: root)
            let scenarioFile = scenario.scratch.url.appendingPathComponent("scenario.json")
            try JSONSerialization.data(withJSONObject: [
                "subscriptionOriginalId": monthly.transaction.originalID, "renewalId": renewal.id,
                "subscriptionProductId": ExampleShop.standardMonthly, "consumableProductId": ExampleShop.gems,
            ]).write(to: scenarioFile)

            let (report, calls) = try await scenario.runAppleLibraryScript("retention_messaging_with_apple_library.py", root: root, scenarioFile: scenarioFile)
            func refusal(_ name: String) -> [Int] {
                guard let answer = calls[name] as? [String: Any] else { return [] }
                return [answer["status"] as? Int ?? 0, answer["errorCode"] as? Int ?? 0]
            }
            // Every call succeeds where it should.
            for name in ["uploadImage", "uploadImageBullet", "uploadImageUnused", "uploadMessage"] { #expect(calls[name] as? String == "uploaded", "\(name)") }
            for name in ["configureDefaultMessage", "configureRealtimeUrl"] { #expect(calls[name] as? String == "configured", "\(name)") }
            for name in ["deleteImageUnused", "deleteDefaultMessage", "deleteMessage", "deleteImageFreed", "deleteRealtimeUrl"] {
                #expect(calls[name] as? String == "deleted", "\(name)")
            }
            // In the sandbox uploads are approved at once, as Apple's sandbox does.
            let images = try #require(calls["getImageList"] as? [[String]])
            #expect(images.count == 3)
            #expect(images.allSatisfy { $0[1] == "APPROVED" })
            #expect(images.filter { $0[2] == "BULLET_POINT" }.count == 1)
            #expect((calls["getMessageList"] as? [[String]])?.map { $0[1] } == ["APPROVED"])
            #expect((calls["getImageListAfter"] as? [[String]])?.count == 1, "the bullet point's image is left")
            #expect((calls["getDefaultMessage"] as? String)?.isEmpty == false)
            #expect(calls["getRealtimeUrl"] as? Bool == true)
            // The performance test posted signed real-time requests that Apple's verifier accepts.
            let test = try #require(calls["initiatePerformanceTest"] as? [String: Any], "\(calls["initiatePerformanceTest"] ?? "")")
            #expect(["PASS", "FAIL"].contains(test["result"] as? String ?? ""))
            #expect(test["numPending"] as? Int == 0)
            #expect(report["realtimeVerified"] as? Int == test["totalRequests"] as? Int, "\(test)")
            #expect(report["realtimeRefused"] as? Int == 0)
            // Apple's codes for the documented errors.
            #expect(refusal("uploadImageAgain") == [409, 4_090_000])
            #expect(refusal("uploadImageTransparent") == [400, 4_000_161])
            #expect(refusal("uploadImageWrongSize") == [400, 4_000_161])
            #expect(refusal("uploadImageNotPNG") == [400, 4_000_161])
            #expect(refusal("uploadImageBulletWrongSize") == [400, 4_000_161])
            #expect(refusal("uploadMessageAgain") == [409, 4_090_001])
            #expect(refusal("uploadMessageHeaderTooLong") == [400, 4_000_162])
            #expect(refusal("uploadMessageBodyTooLong") == [400, 4_000_163])
            #expect(refusal("uploadMessageAltTextTooLong") == [400, 4_000_175])
            #expect(refusal("uploadMessageTooManyBulletPoints") == [400, 4_000_218])
            #expect(refusal("uploadMessageBulletTextTooLong") == [400, 4_000_219])
            #expect(refusal("uploadMessageAboveImageWithoutImage") == [400, 4_000_224])
            #expect(refusal("configureDefaultMessageInvalidLocale") == [400, 4_000_164])
            #expect(refusal("configureDefaultMessageNotSubscription") == [400, 4_000_023])
            #expect(refusal("configureDefaultMessageUnknownMessage") == [404, 4_040_015])
            #expect(refusal("getDefaultMessageUnknown") == [404, 4_040_020])
            #expect(refusal("getDefaultMessageDeleted") == [404, 4_040_020])
            #expect(refusal("getRealtimeUrlUnset") == [404, 4_040_021])
            #expect(refusal("getRealtimeUrlDeleted") == [404, 4_040_021])
            #expect(refusal("configureRealtimeUrlInvalid") == [400, 4_000_215])
            #expect(refusal("initiatePerformanceTestNotOriginal") == [400, 4_000_187])
            #expect(refusal("initiatePerformanceTestUnknown") == [404, 4_040_005])
            #expect(refusal("initiatePerformanceTestInvalid") == [400, 4_000_006])
            #expect(refusal("getPerformanceTestResultsUnknown") == [404, 4_040_018])
            #expect(refusal("getPerformanceTestResultsInvalid") == [400, 4_000_212])
            #expect(refusal("deleteImageInUse") == [403, 4_030_019])
            #expect(refusal("deleteImageUnknown") == [404, 4_040_014])
            #expect(refusal("deleteMessageAgain") == [404, 4_040_015])
        }
    }
}
