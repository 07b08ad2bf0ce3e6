import AppStoreSimulator
import Foundation
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
}
