import AppStoreBackend
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import StoreService
import Synchronization
import Testing
import TestSupport

/// The storefront and the Transaction Manager in a real headless Chromium (Debian's, driven over
/// WebDriver by `Tests/Browser/store_pages.py`), against a served store with an app connected over
/// HTTP: what is bought and refunded in the browser reaches the app through `Transaction.updates`.
/// The screenshots it takes are the README's (`docs/screenshots/`).
@Suite(.timeLimit(.minutes(10)))
struct BrowserPagesTests {
    static let chromium = URL(fileURLWithPath: "/usr/bin/chromium")
    static let chromedriver = URL(fileURLWithPath: "/usr/bin/chromedriver")
    static let available = FileManager.default.isExecutableFile(atPath: chromium.path)
        && FileManager.default.isExecutableFile(atPath: chromedriver.path)
    static let skipReason: Comment = "Chromium or chromedriver is not installed (scripts/bootstrap installs Debian's chromium and chromium-driver)"

    @Test("buy on the storefront, refund and approve in the Transaction Manager, advance the clock, open a timeline — in Chromium",
          .enabled(if: available, skipReason))
    func storefrontAndTransactionManager() async throws {
        try await withServedStore(phoneAccount: nil) { store, server in
            try await store.configureAccount("kid", askToBuy: true)
            try await store.addDevice("ipad", account: "kid")

            // The app on alice's phone, in this process, listening as a StoreKit app does.
            let phone = try await StoreClient.connect(server: server.url, device: "phone", account: "alice")
            let heard = Mutex<[(id: UInt64, product: String, revoked: Bool)]>([])
            let listener = Task {
                for await result in phone.transactionUpdates {
                    let transaction = result.unsafePayloadValue
                    heard.withLock { $0.append((transaction.id, transaction.productID, transaction.revocationDate != nil)) }
                }
            }
            defer { listener.cancel() }

            let script = SharedTestData.packageRoot.appendingPathComponent("Tests/Browser/store_pages.py")
            let screenshots = SharedTestData.packageRoot.appendingPathComponent("docs/screenshots")
            let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                 ["python3", "-u", script.path, server.url.absoluteString, screenshots.path, Self.chromium.path, Self.chromedriver.path])
            let line = run.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
            let parsed = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let report = try #require(parsed, "the browser script (exit \(run.status)) said: \(run.standardOutput)\n\(run.standardError)")
            #expect(report["ok"] as? Bool == true, "\(report)")
            #expect(report["storefrontMessage"] as? String == "Bought Pro Unlock.")
            #expect((report["renewals"] as? Int ?? 0) >= 1)
            #expect((report["timelinePeriods"] as? Int ?? 0) >= 3)
            #expect((report["timelineStretches"] as? Int ?? 0) >= 1, "the billing problem shows as a grace or retry stretch")
            #expect(report["liveTransaction"] as? Int != nil, "a purchase made through the admin API appeared in the open page")
            let pro = try #require(report["proTransaction"] as? Int)

            // The app heard the storefront's purchase and the Transaction Manager's refund.
            try await eventually("the app heard the refund") { heard.withLock { $0.contains { $0.id == UInt64(pro) && $0.revoked } } }
            let updates = heard.withLock { $0 }.filter { $0.id == UInt64(pro) }
            #expect(updates.map(\.revoked) == [false, true], "the purchase, then its refund, through Transaction.updates: \(updates)")
            for name in ["storefront.png", "transaction-manager.png", "timeline.png"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: screenshots.appendingPathComponent(name).path)
                #expect((attributes[.size] as? NSNumber)?.intValue ?? 0 > 10_000, "\(name) was written")
            }
        }
    }

    @Test("a page of another origin in Chromium changes nothing in the store or the backend, and neither answers to its address under another name",
          .enabled(if: available, skipReason))
    func attackFromAnotherOrigin() async throws {
        try await withServedStore { store, server in
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
            let before = try await store.ledgerTransactions()
            let clock = try await store.currentTime()
            // The backend, trusting the store, and a real notification of the store's that the page tries to deliver.
            let scratch = Scratch()
            let storage = try await SQLBackendStorage.sqlite(path: scratch.url.appendingPathComponent("backend.sqlite").path)
            let identity = store.identity
            let backend = BackendService(storage: storage, intake: SignedDataIntake(verifier: try SignedDataVerifier(
                rootCertificates: [store.rootCertificate], bundleId: identity.bundleId, environment: identity.environment)))
            let notification = try #require(try await store.notifications().first.map { #"{"signedPayload":"\#($0.signedPayload)"}"# },
                                            "the purchase left a notification in the outbox")
            let backendServer = try HTTPServer(handler: backend.router(listeningAddress: "127.0.0.1").handler)
            // The attacker's site: another port on 127.0.0.1, serving Tests/Browser/attack.html.
            let page = try Data(contentsOf: SharedTestData.packageRoot.appendingPathComponent("Tests/Browser/attack.html"))
            try await HTTPServer.serving(handler: { _ in HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: page) }) { attacker in
                var address = URLComponents(string: "\(attacker.url.absoluteString)/attack.html")!
                address.queryItems = [URLQueryItem(name: "store", value: server.url.absoluteString),
                                      URLQueryItem(name: "backend", value: backendServer.url.absoluteString),
                                      URLQueryItem(name: "notification", value: notification)]
                let script = SharedTestData.packageRoot.appendingPathComponent("Tests/Browser/attack_pages.py")
                let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                     ["python3", "-u", script.path, Self.chromium.path, Self.chromedriver.path, address.url!.absoluteString,
                                                      "http://rebind.attacker.test:\(server.port)", "http://rebind.attacker.test:\(backendServer.port)", notification])
                let line = run.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
                let report = try #require(try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                                          "the attack script (exit \(run.status)) said: \(run.standardOutput)\n\(run.standardError)")
                #expect(report["ok"] as? Bool == true, "\(report)")
                #expect(report["attackFinished"] as? Bool == true)
                #expect((report["rebindPage"] as? String)?.contains("forbiddenHost") == true, "\(report)")
                #expect(report["rebindDelete"] as? Int == 403, "\(report)")
                #expect(report["backendRebindNotification"] as? Int == 403, "\(report)")
            }
            await backendServer.stop()
            #expect(try await store.ledgerTransactions() == before, "nothing deleted, refunded or bought")
            #expect(try await store.currentTime() == clock, "the clock did not move")
            #expect(try await storage.notificationCount() == 0, "the backend recorded nothing")
            // The notification was one the backend takes from the store itself: only where it came from stopped it.
            let delivered = await backend.handle(HTTPRequest(method: "POST", path: "/apple/notifications",
                                                             headers: ["content-type": "application/json"], body: Data(notification.utf8)))
            #expect(delivered.status == 200, "\(String(decoding: delivered.body, as: UTF8.self))")
            #expect(try await storage.notificationCount() == 1)
        }
    }
}

