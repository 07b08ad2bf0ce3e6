@testable import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import BlockingWork
import Foundation
import OpenStoreKit
import StoreService
import Testing
import TestSupport

/// Fault drills: `storekit serve` and `storekit backend serve --reconcile every 2s` as processes of
/// their own, the store's clock moved by the test, each fault made by killing a process or stopping
/// PostgreSQL. No process is restarted but the one a drill kills, and nobody runs a command: each
/// drill ends with every notification of the App Store's history recorded once by the backend (its
/// own reconciliation at work) and the backend's entitlements, asked over HTTP on its own clock,
/// equal to the store's.
@Suite(.timeLimit(.minutes(10)), .enabled(if: Built.available, "the storekit binary is not built"))
struct RecoveryDrillTests {
    @Test("the backend down for eight store days of purchases, renewals and refunds: restarted, it reconciles what Apple gave up on")
    func backendDownForEightDays() async throws {
        let drill = try await RecoveryDrill(database: .sqlite)
        try await drill.run { drill in
            try await drill.live(days: 3)
            try await drill.expectBackendEqualsStore()
            await drill.backend.stop(signal: SIGKILL)
            let outageStart = try await drill.store.currentTime()
            try await drill.live(days: 8)
            // The first day's notifications had all six attempts while the backend was down: given up.
            try await eventually("Apple's schedule gave up on the outage's first notifications") {
                try await drill.store.notificationRecords().contains { $0.date >= outageStart && $0.delivery.isGivenUp }
            }
            try await drill.restartBackend()
            try await drill.expectBackendEqualsStore()
            // What it recorded had been tried and lost: counted as lost deliveries.
            let line = try await eventually(orNil: "the reconciliation's report") {
                drill.backend.standardError.split(separator: "\n").first { $0.contains("whose delivery had been lost") }
            }
            let lost = line.firstMatch(of: /\((\d+) whose delivery had been lost/).flatMap { Int($0.1) } ?? 0
            #expect(lost > 0, "\(line)")
        }
    }

    @Test("the store's clock moved back (a manual store that ran 60 days ahead, then served on the real clock): the backend follows it by its own reconciliation, and a customer who subscribes then has access")
    func storeClockMovedBack() async throws {
        let drill = try await RecoveryDrill(database: .sqlite)
        try await drill.run { drill in
            try await drill.live(days: 1)
            try await drill.expectBackendEqualsStore()
            // Run the store 60 days ahead of real time; the backend follows it there.
            _ = try await drill.store.advanceTime(to: Date().addingTimeInterval(60 * 86_400))
            try await drill.expectBackendEqualsStore()
            try await drill.restartServerOnItsPort(arguments: ["--clock", "real"])
            // Zoe subscribes on the real clock: 60 days before anything the backend has seen.
            let transport = HTTPStoreTransport(server: drill.server.url)
            try await transport.register(device: "zoe-phone", account: "zoe")
            let outcome = try await transport.purchase(TransportPurchaseRequest(productID: ExampleShop.premiumMonthly, device: "zoe-phone",
                                                                                appAccountToken: BackendProcessTests.token("zoe")))
            guard case .success(let item) = outcome,
                  let id = (try? CompactJWS(item.jws).payload(as: JWSTransactionDecodedPayload.self))?.transactionId else {
                throw TestFailure("zoe could not subscribe: \(outcome)")
            }
            let customer = BackendProcessTests.token("zoe").uuidString.lowercased()
            try await eventually("the backend gives zoe access by the store's time, by itself", within: .seconds(60)) {
                let answer = try await Exchange.send("GET", drill.backend.url.appendingPathComponent("/v1/customers/\(customer)/entitlements"),
                                                     headers: [("Authorization", "Bearer \(RecoveryDrill.serviceKey)")])
                return (answer.json?["entitlements"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String } == [id]
            }
            let health = try await drill.health()
            let appStoreTime = (health.json?["appStoreTime"] as? Int).map { Date(timeIntervalSince1970: Double($0) / 1_000) }
            #expect(appStoreTime.map { abs($0.timeIntervalSinceNow) < 600 } == true, "the backend's time is the store's again: \(String(describing: appStoreTime))")
            // The store as the server now runs it (on the real clock): every notification recorded
            // once, and every customer's entitlements the store's.
            let directory = drill.directory
            let served = try await BlockingWork.run("open on the real clock") { () throws(AppStoreError) in try StoreDirectory.open(at: directory, clockMode: .real) }
            let expected = Set(try await served.notificationRecords().map(\.notificationUUID))
            try await eventually("the backend holds every notification of the history") { expected.isSubset(of: try await drill.recordedNotifications()) }
            var differences: [String] = []
            try await eventually("the backend's entitlements equal the store's on its real clock") {
                differences = try await drill.entitlementDifferences(of: served, accounts: RecoveryDrill.accounts + ["zoe"])
                return differences.isEmpty
            }
            #expect(differences.isEmpty, "\(differences)")
        }
    }

    @Test("a backend started before the App Store it reconciles with answers: /health says it waits for it, counts no failed run, and reconciles once it answers")
    func reconcilesOnceTheStoreAnswers() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        let keyFile = scratch.url.appendingPathComponent("api-key.json")
        try await store.writeNewAPIKeyFile(to: keyFile)
        let port = try ReservedPort()
        let backend = try await ServeProcess.start(command: [
            "backend", "serve", "--database", "sqlite:" + scratch.path("backend.sqlite"), "--bundle-id", "com.example.shop", "--environment", "Xcode",
            "--root", root.path, "--port", "0", "--reconcile", "every", "1h", "--key-file", keyFile.path, "--api-url", port.url(path: "").absoluteString])
        defer { Task { await backend.stop() } }
        func reconciliation() async throws -> [String: Any] {
            let health = try await Exchange.send("GET", backend.url.appendingPathComponent("/health"))
            return health.json?["reconciliation"] as? [String: Any] ?? [:]
        }
        let waiting = try await eventually(orNil: "/health says the backend waits for the App Store") {
            let report = try await reconciliation()
            return report["waitingForAppStore"] != nil ? report : nil
        }
        #expect(waiting["failed"] as? Int == 0, "\(waiting)")
        print("backend /health before the store answers: reconciliation \(waiting)")
        let server = try StoreServer(store: store, listeningSocket: try port.listeningSocket())
        do {
            let done = try await eventually(orNil: "the first reconciliation once the store answers", within: .seconds(60)) {
                let report = try await reconciliation()
                return (report["succeeded"] as? Int ?? 0) >= 1 ? report : nil
            }
            #expect(done["failed"] as? Int == 0, "\(done)")
            #expect(done["waitingForAppStore"] == nil, "\(done)")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("storekit serve killed while it holds claims, on a clock that never moves: another server delivers them within the lease")
    func killedServerOnStillClock() async throws {
        // Posts to the hanging receiver wait for the kill, however loaded the machine.
        let drill = try await RecoveryDrill(database: .sqlite, serverArguments: ["--notification-timeout", "600"])
        try await drill.run { drill in
            // A receiver that takes the connection and never answers: posts hang in flight, claimed.
            let hanging = try ReservedPort()
            let socket = try hanging.listeningSocket()
            defer { close(socket) }
            let hangingURL = hanging.url(path: "/apple/notifications").absoluteString
            try await drill.store.updateSettings { $0.notificationURL = hangingURL }
            try await drill.buy(count: 6)
            do {
                try await eventually("the server claimed the notifications") {
                    try await drill.store.notificationRecords().allSatisfy { $0.delivery.claimedUntil != nil && $0.delivery.attempts.isEmpty }
                }
            } catch {
                throw TestFailure("\(error): \(try await drill.store.notificationRecords().map(\.delivery)); server's log: \(drill.server.standardError.suffix(2_000))")
            }
            #expect(try await drill.store.notificationRecords().allSatisfy(\.delivery.attempts.isEmpty), "killed with every post in flight")
            let clock = try await drill.store.currentTime()
            await drill.server.stop(signal: SIGKILL)
            let backendURL = drill.backendNotificationURL.absoluteString
            try await drill.store.updateSettings { $0.notificationURL = backendURL }
            try await drill.restartServer()
            try await eventually("every notification delivered by the new server, the clock unmoved") {
                try await drill.store.notificationRecords().allSatisfy { $0.delivery.attempts.last?.result == "SUCCESS" }
            }
            #expect(try await drill.store.currentTime() == clock)
            try await drill.expectBackendEqualsStore()
        }
    }

    @Test("a year in one step with the backend down: what Apple would have given up is given up at once, and the backend reconciles the history's 180 days")
    func yearJumpWithBackendDown() async throws {
        let drill = try await RecoveryDrill(database: .sqlite)
        try await drill.run { drill in
            try await drill.live(days: 2)
            try await drill.expectBackendEqualsStore()
            await drill.backend.stop(signal: SIGKILL)
            _ = try await drill.store.advanceTime(by: 365 * 86_400)
            let now = try await drill.store.currentTime()
            let schedule = SimulatedAppStore.notificationRetryDelays.reduce(0, +)
            try await eventually("every notification older than Apple's schedule given up, none waiting for the clock") {
                try await drill.store.notificationRecords().allSatisfy { record in
                    record.date.addingTimeInterval(schedule) > now || record.delivery.isGivenUp || record.delivery.isDelivered
                }
            }
            let givenUp = try await drill.store.notificationRecords().filter(\.delivery.isGivenUp)
            #expect(givenUp.count >= 20, "the year's renewals were given up (\(givenUp.count))")
            #expect(givenUp.allSatisfy { $0.delivery.attempts.count == 6 })
            try await drill.restartBackend()
            // The history keeps 180 days: older notifications are gone for the backend, as they would be at Apple.
            try await drill.expectBackendEqualsStore(historySince: now.addingTimeInterval(-NotificationReconciler.historyWindow))
        }
    }

    @Test("the backend's disk full while purchases go on: /health says degraded with the reason as long as writes fail, and once there is room the backend records what it refused by itself, long before its hourly reconciliation")
    func backendDiskFull() async throws {
        let scratch = Scratch()
        guard let disk = await SmallDisk.make(in: scratch, megabytes: 24) else { return }
        do {
            let drill = try await RecoveryDrill(database: .sqliteIn(disk.folder), reconcileEvery: "1h")
            try await drill.run { drill in
                try await drill.live(days: 2)
                try await drill.expectBackendEqualsStore()
                try await disk.fill()
                try await drill.buy(count: 6)
                try await eventually("the deliveries to a full disk failed") {
                    try await drill.store.notificationRecords().contains { $0.delivery.attempts.contains { $0.result != "SUCCESS" } }
                }
                // As long as writes fail, /health says so, with the current reason.
                for _ in 0..<3 {
                    let full = try await drill.health()
                    let reason = full.json?["reason"] as? String ?? ""
                    #expect(full.status == 503 && full.json?["status"] as? String == "degraded", "\(full.status) \(String(decoding: full.body, as: UTF8.self))")
                    #expect(reason.contains("disk is full"), "\(reason)")
                    print("backend /health with its disk full: \(full.status) \(String(decoding: full.body, as: UTF8.self))")
                    try await Task.sleep(for: .milliseconds(300))
                }
                try disk.empty()
                // Healed by the backend's own reconciliation, tried again within a minute while writes
                // failed, not an hour later.
                try await drill.expectBackendEqualsStore()
                try await eventually("/health ok once writes work again", within: .seconds(90)) { (try? await drill.health().status) == 200 }
            }
        } catch {
            await disk.unmount()
            throw error
        }
        await disk.unmount()
    }

    @Test("PostgreSQL stopped and started under a running backend: /health says degraded, then ok, and the backend catches up by itself",
          .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)), arguments: ["fast", "immediate"])
    func postgresRestart(mode: String) async throws {
        try await PostgresCluster.with { cluster in
            let drill = try await RecoveryDrill(database: .postgres(cluster.url))
            try await drill.run { drill in
                try await drill.live(days: 2)
                try await drill.expectBackendEqualsStore()
                try await cluster.stopServer(mode: mode)
                // Nothing is cached: the first /health asked after the stop says degraded.
                let down = try await drill.health()
                #expect(down.status == 503 && down.json?["status"] as? String == "degraded", "\(down.status) \(String(decoding: down.body, as: UTF8.self))")
                // Purchases while the database is down: their deliveries fail and wait an hour of store time,
                // which never comes; the backend's reconciliation after the reconnect records them.
                try await drill.buy(count: 4)
                try await eventually("the deliveries during the outage failed") {
                    try await drill.store.notificationRecords().contains { $0.delivery.attempts.contains { $0.result != "SUCCESS" } }
                }
                try await cluster.startAgain()
                try await eventually("/health ok within five seconds of PostgreSQL taking connections", within: .seconds(5)) {
                    (try? await drill.health().status) == 200
                }
                try await drill.expectBackendEqualsStore()
            }
        }
    }
}

/// A small filesystem of a drill's own (a tmpfs), to fill: `nil` where this user may not mount one.
final class SmallDisk {
    let folder: URL

    static func make(in scratch: Scratch, megabytes: Int) async -> SmallDisk? {
        let folder = scratch.url.appendingPathComponent("disk")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard let mounted = try? await ChildProcess.run(URL(fileURLWithPath: "/bin/mount"), ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", folder.path]),
              mounted.status == 0 else {
            print("skipped: cannot mount a tmpfs here (root may; the drill fills a small filesystem of its own)")
            return nil
        }
        return SmallDisk(folder: folder)
    }

    private init(folder: URL) { self.folder = folder }

    /// Fills what is left of the filesystem with a file of zeros.
    func fill() async throws {
        _ = try await ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "cat /dev/zero > \(folder.appendingPathComponent("filler").path) 2>/dev/null; sync"])
    }

    /// Makes room again.
    func empty() throws { try FileManager.default.removeItem(at: folder.appendingPathComponent("filler")) }

    func unmount() async { _ = try? await ChildProcess.run(URL(fileURLWithPath: "/bin/umount"), ["-l", folder.path]) }
}

/// A store served by `storekit serve`, a backend by `storekit backend serve` reconciling every two
/// seconds through the store's Server API, and the test's own handle on both.
final class RecoveryDrill {
    enum Database {
        case sqlite
        /// SQLite in this folder (a small filesystem of the drill's own).
        case sqliteIn(URL)
        case postgres(String)
    }

    static let accounts = ["alice", "bob", "carol", "dave", "erin", "frank"]
    static let subscriptions = [ExampleShop.premiumMonthly, ExampleShop.standardMonthly, ExampleShop.basicWeekly]
    static let serviceKey = "osk_drill-key"

    let scratch = Scratch()
    let directory: URL
    /// The test's handle on the store: the same ledger the server process serves.
    let store: SimulatedAppStore
    let storage: SQLBackendStorage
    let database: String
    private let root: URL
    private let keyFile: URL
    private(set) var server: ServeProcess
    private(set) var backend: ServeProcess
    private var purchases = 0

    /// How often the backend reconciles by itself.
    let reconcileEvery: String

    init(database: Database, serverArguments: [String] = [], reconcileEvery: String = "2s") async throws {
        self.reconcileEvery = reconcileEvery
        let made = try await TestStores.directory(in: scratch)
        directory = made.url
        store = made.store
        root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        keyFile = scratch.url.appendingPathComponent("api-key.json")
        try await store.writeNewAPIKeyFile(to: keyFile)
        switch database {
        case .sqlite:
            self.database = "sqlite:" + scratch.url.appendingPathComponent("backend.sqlite").path
            storage = try await SQLBackendStorage.sqlite(path: scratch.url.appendingPathComponent("backend.sqlite").path)
        case .sqliteIn(let folder):
            self.database = "sqlite:" + folder.appendingPathComponent("backend.sqlite").path
            storage = try await SQLBackendStorage.sqlite(path: folder.appendingPathComponent("backend.sqlite").path)
        case .postgres(let url):
            self.database = url
            storage = try await SQLBackendStorage.postgres(url: url)
        }
        try await storage.addKey(hash: ServiceKeys.digest(Self.serviceKey), label: "drill", created: TestStores.start)
        server = try await ServeProcess.start(directory: directory, arguments: serverArguments)
        backend = try await ServeProcess.start(command: Self.backendCommand(database: self.database, root: root, keyFile: keyFile, storeURL: server.url, port: 0,
                                                                            every: reconcileEvery))
        let backendURL = backendNotificationURL.absoluteString
        try await store.updateSettings { $0.notificationURL = backendURL }
    }

    private static func backendCommand(database: String, root: URL, keyFile: URL, storeURL: URL, port: UInt16, every: String) -> [String] {
        ["backend", "serve", "--database", database, "--bundle-id", "com.example.shop", "--environment", "Xcode", "--root", root.path,
         "--port", String(port), "--reconcile", "every", every, "--key-file", keyFile.path, "--api-url", storeURL.absoluteString]
    }

    var backendNotificationURL: URL { backend.url.appendingPathComponent("/apple/notifications") }

    /// Runs the drill; both processes are stopped when it returns or throws.
    func run(_ body: (RecoveryDrill) async throws -> Void) async throws {
        do {
            try await body(self)
        } catch {
            await stopAll()
            throw error
        }
        await stopAll()
    }

    private func stopAll() async {
        await backend.stop()
        await server.stop()
    }

    /// Starts the killed backend again on its port (the store's notification URL stays right).
    func restartBackend() async throws {
        backend = try await ServeProcess.start(command: Self.backendCommand(database: database, root: root, keyFile: keyFile, storeURL: server.url,
                                                                            port: UInt16(backend.url.port ?? 0), every: reconcileEvery))
    }

    /// Starts the killed store server again (another port: the backend reconciles through the
    /// store's Server API, so it must be the one the backend was told of; the drills that restart
    /// the server check delivery, which does not need it).
    func restartServer() async throws {
        server = try await ServeProcess.start(directory: directory)
    }

    /// Stops the store server and starts it again on the same port (the backend reconciles through
    /// it) with `arguments` (`--clock real`, say).
    func restartServerOnItsPort(arguments: [String]) async throws {
        let port = server.url.port ?? 0
        await server.stop()
        server = try await ServeProcess.start(command: ["serve", directory.path, "--port", String(port)] + arguments)
    }

    /// `count` purchases spread over the accounts: subscriptions, consumables, a non-consumable.
    func buy(count: Int) async throws {
        let products = Self.subscriptions + [ExampleShop.gems, ExampleShop.pro]
        for _ in 0..<count {
            let account = Self.accounts[purchases % Self.accounts.count]
            let product = products[(purchases / Self.accounts.count + purchases) % products.count]
            purchases += 1
            _ = try await store.purchase(PurchaseRequest(productID: product, account: account, device: "\(account)-phone",
                                                         appAccountToken: BackendProcessTests.token(account)))
        }
    }

    /// `days` of the store's life, a day at a time: purchases each day, a refund every third day,
    /// renewals as they fall due.
    func live(days: Int) async throws {
        for day in 0..<days {
            try await buy(count: 2)
            if day % 3 == 2, let refundable = try await store.ledgerTransactions().last(where: { $0.revocation == nil && $0.productID != ExampleShop.gems }) {
                try await store.refundTransaction(refundable.id)
            }
            _ = try await store.advanceTime(by: 86_400)
        }
    }

    func health() async throws -> Exchange {
        try await Exchange.send("GET", backend.url.appendingPathComponent("/health"))
    }

    /// Waits until the backend holds every notification of the history signed since `historySince`
    /// (all of them by default), each once, and answers each customer's entitlements as the store
    /// does, on its own clock.
    func expectBackendEqualsStore(historySince: Date? = nil) async throws {
        let expected = Set(try await store.notificationRecords().filter { record in historySince.map { record.date >= $0 } ?? true }.map(\.notificationUUID))
        do {
            // The test's own connection meets a restarted PostgreSQL like the backend's: it fails once, then connects again.
            try await eventually("the backend holds every notification of the history") {
                (try? await recordedNotifications()).map { expected.isSubset(of: $0) } ?? false
            }
        } catch {
            let missing = expected.subtracting((try? await recordedNotifications()) ?? [])
            let health = try? await self.health()
            throw TestFailure("\(error): \(missing.count) of \(expected.count) missing; /health \(health.map { String(decoding: $0.body, as: UTF8.self) } ?? "?"); "
                              + "backend's log: \(backend.standardError.suffix(3_000))")
        }
        let recorded = try await eventually(orNil: "the notifications counted") {
            try? await storage.read { (database) throws(BackendError) -> (all: Int, distinct: Int)? in
                let row = try database.query("SELECT count(*) AS all_rows, count(DISTINCT uuid) AS distinct_rows FROM notifications", []).first
                return try row.map { (row) throws(BackendError) in (try row.column("all_rows"), try row.column("distinct_rows")) }
            } ?? nil
        }
        #expect(recorded.all == recorded.distinct, "each notification recorded once")
        var differences: [String] = []
        try await eventually("the backend's entitlements equal the store's") {
            differences = try await entitlementDifferences()
            return differences.isEmpty
        }
        #expect(differences.isEmpty, "\(differences)")
        // The figures count what reconciliation recorded as they count deliveries: equal to a rebuild.
        let kept = try await figures()
        // The test's own writer connection may meet a restarted PostgreSQL first: it fails once, then connects again.
        try await eventually("the figures rebuilt") { (try? await storage.rebuildMetrics()) != nil }
        #expect(try await figures() == kept, "the figures kept as notifications came equal the figures rebuilt from the records")
    }

    /// The backend's daily figures from the store's first day to its now, as JSON text.
    private func figures() async throws -> String {
        let today = try await store.currentTime().formatted(Date.ISO8601FormatStyle().year().month().day())
        let answer = try await Exchange.send("GET", URL(string: backend.url.absoluteString + "/v1/metrics?from=2026-01-01&to=\(today)")!,
                                             headers: [("Authorization", "Bearer \(Self.serviceKey)")])
        guard answer.status == 200 else { throw TestFailure("/v1/metrics answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))") }
        return String(decoding: answer.body, as: UTF8.self)
    }

    func recordedNotifications() async throws -> Set<String> {
        Set(try await storage.read { (database) throws(BackendError) in
            try database.query("SELECT uuid FROM notifications", []).map { (row) throws(BackendError) -> String in try row.column("uuid") }
        })
    }

    /// Each customer whose entitlements differ, with both lists.
    func entitlementDifferences(of other: SimulatedAppStore? = nil, accounts: [String] = RecoveryDrill.accounts) async throws -> [String] {
        var differences: [String] = []
        for account in accounts {
            let expected = try await (other ?? store).entitledTransactions(of: account).map { String($0.id) }.sorted()
            let customer = BackendProcessTests.token(account).uuidString.lowercased()
            let answer = try await Exchange.send("GET", backend.url.appendingPathComponent("/v1/customers/\(customer)/entitlements"),
                                                 headers: [("Authorization", "Bearer \(Self.serviceKey)")])
            let listed = (answer.json?["entitlements"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }.sorted()
            if listed != expected { differences.append("\(account): backend \(listed), store \(expected)") }
        }
        return differences
    }
}
