import AppStoreBackend
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreService
import Testing
import TestSupport

/// `storekit backend serve` as its own process, receiving a served store's notifications over HTTP
/// while it is killed (kill -9) and restarted again and again: once every delivery has gone through
/// (the store retries failed ones on Apple's schedule), its entitlements equal the store's.
@Suite(.timeLimit(.minutes(10)))
struct BackendProcessTests {
    static func token(_ account: String) -> UUID {
        // FNV-1a of the name: a distinct token for each name.
        let hash = account.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        return UUID(uuidString: "00000000-0000-4000-8000-" + String(format: "%012llx", hash & 0xFFFF_FFFF_FFFF))!
    }

    static var engines: [String] { PostgresCluster.isAvailable ? ["sqlite", "postgres"] : ["sqlite"] }

    @Test("kill -9 of the backend 20 times while a store delivers to it: nothing recorded twice, nothing lost, the store's entitlements",
          .enabled(if: Built.available, "the storekit binary is not built"), arguments: engines)
    func killedAndRestarted(engine: String) async throws {
        if engine == "postgres" {
            try await PostgresCluster.with { cluster in try await Self.killAndRestart(database: cluster.url) }
        } else {
            let scratch = Scratch()
            try await Self.killAndRestart(database: "sqlite:" + scratch.url.appendingPathComponent("backend.sqlite").path)
        }
    }

    static func killAndRestart(database: String) async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        let storage = try await database.hasPrefix("sqlite:") ? SQLBackendStorage.sqlite(path: String(database.dropFirst(7)))
            : SQLBackendStorage.postgres(url: database)
        try await StoreServer.serving(store) { server in
            // A clock that jumps while the backend is down a moment at a time makes the store give up on
            // some notifications (their retries fall due at once): the backend's reconciliation records them.
            let keyFile = scratch.url.appendingPathComponent("api-key.json")
            try await store.writeNewAPIKeyFile(to: keyFile)
            var command = ["backend", "serve", "--database", database, "--bundle-id", "com.example.shop", "--environment", "Xcode",
                           "--root", root.path, "--reconcile", "every", "2s", "--key-file", keyFile.path, "--api-url", server.url.absoluteString,
                           "--port", "0"]
            var backend = try await ServeProcess.start(command: command)
            // Restarts take the same port, so the store's notification URL stays right.
            command[command.count - 1] = String(backend.url.port ?? 0)
            let notificationURL = backend.url.absoluteString + "/apple/notifications"
            try await store.updateSettings { $0.notificationURL = notificationURL }
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
                await backend.stop(signal: SIGKILL)
                if kill % 4 == 0 {
                    // A purchase while the backend is down: the store's attempt fails, to be retried later.
                    _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: account, device: "\(account)-phone",
                                                                 appAccountToken: Self.token(account)))
                    let sequence = try #require(try await store.notificationRecords().last?.sequence)
                    try await eventually("a delivery attempt to the killed backend") {
                        try await store.notification(sequence: sequence)?.1.attempts.isEmpty == false
                    }
                }
                backend = try await ServeProcess.start(command: command)
            }
            // Failed deliveries are retried 1, 12, 24, 48 and 72 hours later on the store's clock: a day at a
            // time, each day's retries attempted before the next.
            for day in 1...8 {
                try await store.advanceTime(by: 86_400)
                try await eventually("day \(day)'s retries attempted") {
                    let now = try await store.currentTime()
                    return try await store.notificationRecords().allSatisfy { ($0.delivery.nextAttemptDate ?? .distantFuture) > now }
                }
            }
            let outbox = try await store.notificationRecords().count
            try await eventually("every notification recorded by the backend") { try await storage.notificationCount() >= outbox }
            #expect(try await storage.notificationCount() == outbox, "every notification recorded once, none lost")
            let retried = try await store.notificationRecords().filter { $0.delivery.attempts.contains { $0.result != "SUCCESS" } }.count
            print("backend kill -9 (\(database.prefix(8))): \(outbox) notifications, \(retried) delivered only after a failed attempt")
            #expect(retried >= 5, "the deliveries made while the backend was down were retried")
            // Subscriptions expire by the store's clock (a manual one, months from the machine's).
            let storeNow = try await store.currentTime()
            let ledger = CustomerLedger(storage: storage, now: { storeNow })
            for account in accounts {
                let expected = try await store.entitledTransactions(of: account).map { String($0.id) }.sorted()
                let actual = try await ledger.entitlements(customer: Self.token(account).uuidString.lowercased()).map(\.transactionId).sorted()
                #expect(actual == expected, "\(account)")
            }
            await backend.stop()
        }
    }
}

/// Two `storekit backend serve` processes on one PostgreSQL database, each receiving every notification
/// of the same stream at the same time: each is recorded once, none is lost, and either instance
/// answers the store's entitlements.
@Suite(.timeLimit(.minutes(10)))
struct SharedDatabaseBackendTests {
    @Test("two backend instances on one PostgreSQL, the same notifications to both at once: no duplicate, no loss",
          .enabled(if: Built.available && PostgresCluster.isAvailable, "the storekit binary or PostgreSQL is missing"))
    func twoInstances() async throws {
        try await PostgresCluster.with { cluster in
            let scratch = Scratch()
            let store = try await TestStores.directory(in: scratch).store
            let root = scratch.url.appendingPathComponent("root.pem")
            try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
            let accounts = (0..<6).map { "customer\($0)" }
            let products = [ExampleShop.pro, ExampleShop.premiumMonthly, ExampleShop.standardMonthly, ExampleShop.wizard]
            for (index, account) in accounts.enumerated() {
                for product in products where (index + products.firstIndex(of: product)!) % 2 == 0 {
                    _ = try await store.purchase(PurchaseRequest(productID: product, account: account, device: "\(account)-phone",
                                                                 appAccountToken: BackendProcessTests.token(account)))
                }
            }
            try await store.advanceTime(by: 95 * 86_400)
            let notifications = try await store.notifications()
            let command = ["backend", "serve", "--database", cluster.url, "--bundle-id", "com.example.shop", "--environment", "Xcode",
                           "--root", root.path, "--port", "0"]
            let first = try await ServeProcess.start(command: command), second = try await ServeProcess.start(command: command)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for instance in [first, second] {
                    for lane in 0..<4 {
                        group.addTask {
                            for index in stride(from: lane, to: notifications.count, by: 4) {
                                let answer = try await Exchange.send("POST", instance.url.appendingPathComponent("/apple/notifications"),
                                                                     json: #"{"signedPayload":"\#(notifications[index].signedPayload)"}"#)
                                guard answer.status == 200 else { throw TestFailure("HTTP \(answer.status): \(String(decoding: answer.body, as: UTF8.self))") }
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            await first.stop()
            await second.stop()
            let storage = try await SQLBackendStorage.postgres(url: cluster.url)
            #expect(try await storage.notificationCount() == notifications.count, "each notification recorded once though both instances received it")
            // Subscriptions expire by the store's clock (a manual one, months from the machine's).
            let storeNow = try await store.currentTime()
            let ledger = CustomerLedger(storage: storage, now: { storeNow })
            for account in accounts {
                let expected = try await store.entitledTransactions(of: account).map { String($0.id) }.sorted()
                let actual = try await ledger.entitlements(customer: BackendProcessTests.token(account).uuidString.lowercased()).map(\.transactionId).sorted()
                #expect(actual == expected, "\(account)")
            }
            #expect(notifications.count > 20)
        }
    }
}
