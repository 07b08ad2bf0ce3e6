import AppStoreBackend
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
import StoreService
import Testing
import TestSupport

/// `storekit backend serve` as its own process, receiving a served store's notifications over HTTP
/// while it is killed (kill -9) and restarted again and again: once every delivery has gone through
/// (the store retries failed ones on Apple's schedule), its entitlements equal the store's.
struct BackendProcessTests {
    static func token(_ account: String) -> UUID {
        let digits = String(account.unicodeScalars.map { String($0.value, radix: 16) }.joined().prefix(12))
        return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits)!
    }

    @Test("kill -9 of the backend 20 times while a store delivers to it: nothing recorded twice, nothing lost, the store's entitlements",
          .enabled(if: Built.available, "the storekit binary is not built"))
    func killedAndRestarted() async throws {
        let scratch = Scratch()
        let directory = try makeStoreDirectory(in: scratch)
        let store = try StoreDirectory.open(at: directory)
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        let database = scratch.url.appendingPathComponent("backend.sqlite").path
        var command = ["backend", "serve", "--database", "sqlite:\(database)", "--bundle-id", "com.example.shop", "--environment", "Xcode",
                       "--root", root.path, "--port", "0"]
        var backend = try ServeProcess(command: command)
        command[command.count - 1] = String(backend.url.port ?? 0)
        try await store.updateSettings { $0.notificationURL = backend.url.absoluteString + "/apple/notifications" }
        let server = try StoreServer(store: store)
        defer { server.stop() }

        let accounts = ["alice", "bob", "carol", "dave", "erin"]
        let products = [ExampleShop.pro, ExampleShop.premiumMonthly, ExampleShop.gems, ExampleShop.standardMonthly, ExampleShop.wizard]
        for kill in 0..<20 {
            let account = accounts[kill % accounts.count]
            _ = try await store.purchase(PurchaseRequest(productID: products[(kill / 2) % products.count], account: account,
                                                         device: "\(account)-phone", appAccountToken: Self.token(account)))
            if kill % 5 == 4 { try await store.advanceTime(by: 16 * 86_400) }
            if kill == 10, case let first? = try await store.ledgerTransactions(account: "carol").first { try await store.refundTransaction(first.id) }
            // Let some deliveries land, then kill the backend mid-stream and start it again on its port.
            try await Task.sleep(for: .milliseconds(Int.random(in: 0..<60)))
            backend.stop(signal: SIGKILL)
            backend = try ServeProcess(command: command)
        }
        defer { backend.stop() }
        // Failed deliveries are retried 1, 12, 24, 48 and 72 hours later on the store's clock.
        for _ in 0..<8 {
            try await store.advanceTime(by: 86_400)
            try await Task.sleep(for: .milliseconds(300))
        }
        let outbox = try await store.notificationRecords().count
        let storage = try SQLBackendStorage.sqlite(path: database)
        for _ in 0..<300 where try storage.notificationCount() < outbox { try await Task.sleep(for: .milliseconds(100)) }
        #expect(try storage.notificationCount() == outbox, "every notification recorded once, none lost")
        let retried = try await store.notificationRecords().filter { $0.delivery.attempts.contains { $0.result != "SUCCESS" } }.count
        print("backend kill -9: \(outbox) notifications, \(retried) delivered only after a failed attempt")
        #expect(retried > 0, "some deliveries met a killed backend and were retried")
        let ledger = CustomerLedger(storage: storage)
        for account in accounts {
            let expected = try await store.entitledTransactions(of: account).map { String($0.id) }.sorted()
            let actual = try ledger.entitlements(customer: Self.token(account).uuidString.lowercased()).map(\.transactionId).sorted()
            #expect(actual == expected, "\(account)")
        }
    }
}
