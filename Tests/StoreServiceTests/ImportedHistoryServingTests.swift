import AppStoreBackend
import AppStoreSigning
import AppStoreSimulator
import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import StoreService
import Testing
import TestSupport

/// A customer's real history imported with `storekit store import`, then served: the Transaction
/// Manager's data lists it, an app over HTTP sees the subscription, and what the store does next
/// reaches a backend while the imported notifications are never posted again.
@Suite(.timeLimit(.minutes(10)))
struct ImportedHistoryServingTests {
    static let customer = "customer-704897469903383919"

    @Test("an imported history is served: the manager lists it, an app sees its subscription, and the next renewal reaches the backend",
          .enabled(if: Built.available && SharedTestData.isAvailable, "the storekit binary or the shared test data is missing"))
    func servedImport() async throws {
        let scratch = Scratch()
        let lines = scratch.url.appendingPathComponent("lines.txt")
        let vectors = SharedTestData.files(in: "apple-vectors/real-sandbox", withExtension: "jws")
        try vectors.map { try String(contentsOf: $0, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }
            .joined(separator: "\n").write(to: lines, atomically: true, encoding: .utf8)
        let directory = scratch.url.appendingPathComponent("store")
        let imported = try await ChildProcess.run(Built.storekit, ["store", "import", directory.path, "--from", lines.path,
                                                                   "--root", SharedTestData.url("apple-vectors/apple-pki/AppleRootCA-G3.cer").path])
        #expect(imported.status == 0, "\(imported.standardError)")

        let store = try await TestStores.open(directory)
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        let database = scratch.url.appendingPathComponent("backend.sqlite").path
        let backend = try await ServeProcess.start(command: ["backend", "serve", "--database", "sqlite:" + database,
                                                            "--bundle-id", "com.loki-project.loki-messenger", "--environment", "Sandbox",
                                                            "--root", root.path, "--port", "0"])
        try await store.updateSettings { $0.notificationURL = backend.url.absoluteString + "/apple/notifications" }
        let storage = try await SQLBackendStorage.sqlite(path: database)
        try await StoreServer.serving(store) { server in
            // The Transaction Manager's data: the customer's transactions, each marked as imported.
            let listing = try await Exchange.send("GET", server.url.appendingPathComponent("v1/admin/transactions").appending(queryItems: [
                URLQueryItem(name: "account", value: Self.customer)]))
            #expect(listing.status == 200)
            let rows = try #require(listing.json?["transactions"] as? [[String: Any]])
            #expect(rows.count == 6)
            #expect(rows.allSatisfy { $0["imported"] != nil && $0["account"] as? String == Self.customer })

            // An app over HTTP, on a device of the imported customer.
            let session = try await TestSession(server: server.url, namespace: "")
            let phone = try await session.client(device: "phone", account: Self.customer)
            let product = try #require(try await phone.products(for: ["com.getsession.org.pro_sub_3_months"]).first)
            let subscription = try #require(product.subscription)
            let status = try #require(try await subscription.status.first)
            #expect(status.state == .subscribed)
            #expect(try status.transaction.payloadValue.id == 2_000_001_035_288_486)

            // The store renews it; only that renewal's notification is posted, not the imported history.
            try await store.advanceTime(by: 600)
            try await eventually("the renewal recorded by the backend") { try await storage.notificationCount() >= 1 }
            #expect(try await storage.notificationTally(type: "DID_RENEW").notifications == 1)
            #expect(try await storage.notificationCount() == 1)
            let renewed = try #require(try await subscription.status.first)
            #expect(try renewed.transaction.payloadValue.originalID == 2_000_001_024_993_299)
            #expect(try renewed.transaction.payloadValue.id > 2_000_001_035_288_486)
        }
        await backend.stop()
    }
}
