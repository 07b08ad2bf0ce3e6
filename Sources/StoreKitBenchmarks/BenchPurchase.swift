import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog
import StoreKitCommands

/// `storekit bench purchase`: durable purchases per second against the cost of their parts.
///
/// The limit a purchase is held to is measured in the same run: ECDSA P-256 signatures per second, and
/// the very rows a purchase writes (its transaction, outbox notification and counters) committed
/// durably through the same storage, with the same pragmas and indexes. A purchase on a customer's
/// only device signs once, so its cost is reported in units of one signature plus one such commit.
/// Durable purchases are measured one at a time and with eight in flight from eight customers (which
/// the store commits together). The windows alternate over rounds (the order alternates too), so a
/// machine that gets slower or faster during the run shifts every figure alike; min, median and max are
/// reported. Also measures `currentEntitlements` for an account with 10,000 transactions.
struct BenchPurchase: Command {
    static let declaration = CommandDeclaration("bench purchase", group: .benchmarks, abstract: "Measure durable purchases per second, alone and eight in flight, and currentEntitlements cost (build with -c release).", arguments: [
        .flag("--json", "print JSON"),
        .option("--seconds", "S", "how long each measurement runs"),
        .option("--rounds", "N", "how many rounds"),
        .option("--history", "N", "how many transactions the account already has"),
    ])

    /// Purchases in flight in the concurrent measurement, each from its own customer.
    static let purchasesInFlight = 8

    var json: Bool
    var seconds: Double
    var rounds: Int
    var history: Int

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        seconds = try arguments.value("--seconds", expected: "a positive number of seconds") { Double($0).flatMap { $0 > 0 ? $0 : nil } } ?? 1
        rounds = try arguments.value("--rounds", expected: "a number of rounds from 1 to 100") { Int($0).flatMap { (1...100).contains($0) ? $0 : nil } } ?? 3
        history = try arguments.value("--history", expected: "a number of transactions") { Int($0).flatMap { $0 > 0 ? $0 : nil } } ?? 10_000
    }

    func run(console: Console) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        let identity = StoreIdentity(bundleId: "com.example.bench", environment: .sandbox)
        let start = Date(timeIntervalSince1970: 1_767_225_600)

        let key = try P256PrivateKey.generate()
        let message = try AppStoreJSON.encode(BenchmarkSample.transaction)
        let signRate = try BenchmarkTimer.rate(seconds: seconds) { _ = try key.signature(for: message) }
        let commitRows = try await PurchaseRowsCommit(in: scratch, configuration: configuration, identity: identity, start: start)
        let store = try await StoreDirectory.create(at: scratch.appendingPathComponent("store"), configuration: configuration, identity: identity,
                                              clockMode: .manual, start: start)
        let request = PurchaseRequest(productID: "bench.consumable", account: "buyer", device: "phone")

        var commits: [Double] = []
        var sequential: [Double] = []
        var concurrent: [Double] = []
        var costs: [Double] = []
        var ratios: [Double] = []
        for round in 0..<rounds {
            let measureCommit = { () throws -> Double in try commitRows.rate(seconds: seconds) }
            let measureSequential = { () async throws -> Double in
                try await BenchmarkTimer.rate(seconds: seconds) {
                    guard case .success = try await store.purchase(request) else { throw CommandFailure("a benchmark purchase did not succeed") }
                }
            }
            let measureConcurrent = { () async throws -> Double in try await Self.concurrentPurchaseRate(store: store, seconds: seconds) }
            let (commit, alone, together): (Double, Double, Double)
            if round.isMultiple(of: 2) {
                commit = try measureCommit()
                alone = try await measureSequential()
                together = try await measureConcurrent()
            } else {
                together = try await measureConcurrent()
                alone = try await measureSequential()
                commit = try measureCommit()
            }
            commits.append(commit)
            sequential.append(alone)
            concurrent.append(together)
            costs.append((1 / alone) / (1 / signRate + 1 / commit))
            ratios.append(together / alone)
        }
        let memoryStore = try await SimulatedAppStore.create(configuration: configuration, identity: identity,
                                                       authority: try CertificateAuthority.make(), storage: InMemoryLedgerStorage(),
                                                       clock: ManualStoreClock(startingAt: start))
        let memoryRate = try await BenchmarkTimer.rate(seconds: seconds / 2) { _ = try await memoryStore.purchase(request) }

        var report = BenchmarkReport(name: "bench purchase")
        report.add("rounds", rounds)
        report.add("ecdsa_p256_sign_per_second", signRate.rounded())
        report.add("purchase_rows_durable_commit_per_second", commits.median.rounded())
        report.add("purchases_per_second", sequential.median.rounded())
        report.add("purchase_cost_in_sign_plus_commit_min", (costs.min() ?? 0).thousandths)
        report.add("purchase_cost_in_sign_plus_commit_median", costs.median.thousandths)
        report.add("purchase_cost_in_sign_plus_commit_max", (costs.max() ?? 0).thousandths)
        report.add("purchase_cost_limit", 1.5)
        report.add("concurrent_purchases_in_flight", Self.purchasesInFlight)
        report.add("concurrent_purchases_per_second", concurrent.median.rounded())
        report.add("concurrent_to_sequential_ratio_min", (ratios.min() ?? 0).thousandths)
        report.add("concurrent_to_sequential_ratio_median", ratios.median.thousandths)
        report.add("concurrent_to_sequential_ratio_max", (ratios.max() ?? 0).thousandths)
        report.add("concurrent_to_sequential_aim", 3.0)
        report.add("in_memory_purchases_per_second", memoryRate.rounded())

        let (unsigned, signed) = try await entitlementCosts(configuration: configuration)
        report.add("history_transactions", history)
        report.add("current_entitlements_microseconds", (unsigned * 10).rounded() / 10)
        report.add("current_entitlements_signed_microseconds", (signed * 10).rounded() / 10)
        report.add("current_entitlements_limit_microseconds", 1000.0)
        console.print(try report.render(json: json))
    }

    /// Durable purchases per second with ``purchasesInFlight`` customers buying at once, each waiting
    /// for its purchase before the next.
    static func concurrentPurchaseRate(store: SimulatedAppStore, seconds: Double) async throws -> Double {
        let requests = (0..<purchasesInFlight).map { PurchaseRequest(productID: "bench.consumable", account: "customer-\($0)", device: "phone-\($0)") }
        for request in requests { _ = try await store.purchase(request) }
        let clock = ContinuousClock()
        let started = clock.now
        let deadline = started + .milliseconds(Int64(seconds * 1000))
        let purchases = try await withThrowingTaskGroup(of: Int.self) { group in
            for request in requests {
                group.addTask {
                    // At least one each: on a loaded machine a task may first run after a short window closed.
                    var count = 0
                    repeat {
                        guard case .success = try await store.purchase(request) else { throw CommandFailure("a benchmark purchase did not succeed") }
                        count += 1
                    } while clock.now < deadline
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(purchases) / (clock.now - started).seconds
    }

    /// Microseconds per `currentEntitlements` call for an account with `history` transactions: the
    /// ledger query alone, and with the results signed in server form.
    private func entitlementCosts(configuration: StoreKitConfiguration) async throws -> (Double, Double) {
        let store = try await SimulatedAppStore.create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                                 authority: try CertificateAuthority.make(), storage: InMemoryLedgerStorage(),
                                                 clock: ManualStoreClock(startingAt: Date(timeIntervalSince1970: 1_767_225_600)))
        let request = PurchaseRequest(productID: "bench.consumable", account: "collector", device: nil)
        for index in 0..<history {
            if index < 3 {
                _ = try await store.buyProduct(["bench.unlock.a", "bench.unlock.b", "bench.pass"][index], account: "collector")
            } else {
                _ = try await store.buyProduct(request.productID, account: "collector")
            }
        }
        let probe = try await store.entitledTransactions(of: "collector")
        guard probe.count == 3 else { throw CommandFailure("expected 3 entitlements, found \(probe.count)") }
        let unsigned = try await store.measureThrowing(seconds: seconds / 2) { store in _ = try store.entitledTransactions(of: "collector") }
        let signed = try await store.measureThrowing(seconds: seconds / 2) { store in _ = try store.currentEntitlements(account: "collector") }
        return (unsigned, signed)
    }
}

/// Exactly the rows a purchase commits, committed durably again and again under fresh keys.
///
/// A purchase is made through a store whose storage records what it commits; that change is then
/// committed through the same storage over and over, so the limit pays for the same rows, indexes,
/// pragmas and `fsync` as a purchase and for nothing else.
private final class PurchaseRowsCommit {
    private let storage: SQLLedgerStorage
    private let purchaseRows: LedgerChanges
    private var round: UInt64 = 0

    init(in scratch: URL, configuration: StoreKitConfiguration, identity: StoreIdentity, start: Date) async throws {
        storage = try await SQLLedgerStorage.open(path: scratch.appendingPathComponent("limit.sqlite").path, create: true)
        let recorder = CommitRecorder(storage)
        let store = try await SimulatedAppStore.create(configuration: configuration, identity: identity, authority: try CertificateAuthority.make(),
                                                 storage: recorder, clock: ManualStoreClock(startingAt: start))
        let request = PurchaseRequest(productID: "bench.consumable", account: "buyer", device: "phone")
        _ = try await store.purchase(request)
        _ = try await store.purchase(request)
        guard let rows = recorder.lastCommit, rows.transactions.count == 1 else {
            throw CommandFailure("the recorded purchase did not commit one transaction")
        }
        purchaseRows = rows
    }

    /// Durable commits of a purchase's rows per second, over about `seconds`.
    func rate(seconds: Double) throws -> Double {
        try BenchmarkTimer.rate(seconds: seconds) {
            round += 1
            let rows = purchaseRows.rekeyed(round: round)
            try storage.write { _ in (rows, ()) }
        }
    }
}

/// A storage that forwards to another and keeps the last change committed through it.
private final class CommitRecorder: LedgerStorage, @unchecked Sendable {
    private let base: any LedgerStorage
    private let lock = NSLock()
    private var recorded: LedgerChanges?

    init(_ base: any LedgerStorage) { self.base = base }

    var lastCommit: LedgerChanges? { lock.withLock { recorded } }

    func read<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> Result) throws(AppStoreError) -> Result { try base.read(body) }

    func write<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> (LedgerChanges, Result)) throws(AppStoreError) -> Result {
        try base.write { (reader) throws(AppStoreError) -> (LedgerChanges, Result) in
            let (changes, result) = try body(reader)
            lock.withLock { recorded = changes }
            return (changes, result)
        }
    }

    func acquireLifecycleLease(wait: Bool) throws(AppStoreError) -> (any LifecycleLease)? { try base.acquireLifecycleLease(wait: wait) }
    func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord] {
        try base.notifications(after: sequence, limit: limit)
    }
    func integrityProblems() throws(AppStoreError) -> [String] { try base.integrityProblems() }
}

private extension LedgerChanges {
    /// The same rows under keys no earlier round used: transactions, feed entries and notifications
    /// move up by `round` steps.
    func rekeyed(round: UInt64) -> LedgerChanges {
        var copy = self
        let step = 1_000 * round
        copy.transactions = Dictionary(uniqueKeysWithValues: transactions.values.map { transaction in
            var moved = transaction
            moved.id += step
            moved.originalID += step
            return (moved.id, moved)
        })
        copy.appendedUpdates = appendedUpdates.map { var moved = $0; moved.sequence += Int64(step); moved.transactionID += step; return moved }
        copy.appendedNotifications = appendedNotifications.map { notification in
            var moved = notification
            moved.sequence += Int64(step)
            moved.notificationUUID = "\(round)-\(notification.notificationUUID)"
            moved.transactionID = notification.transactionID.map { $0 + step }
            return moved
        }
        return copy
    }
}

extension SimulatedAppStore {
    /// Microseconds per run of `body` on the store's own executor (so actor hops are not measured).
    func measureThrowing(seconds: Double, _ body: @Sendable (isolated SimulatedAppStore) throws -> Void) throws -> Double {
        try BenchmarkTimer.microseconds(seconds: seconds) { try body(self) }
    }
}

/// The catalog the store benchmarks sell.
enum BenchCatalogFixture {
    static let json = """
    {"products": [
      {"productID": "bench.consumable", "type": "Consumable", "displayPrice": "0.99", "localizations": [{"locale": "en_US", "displayName": "Coins", "description": ""}]},
      {"productID": "bench.unlock.a", "type": "NonConsumable", "displayPrice": "4.99"},
      {"productID": "bench.unlock.b", "type": "NonConsumable", "displayPrice": "9.99"}],
     "nonRenewingSubscriptions": [{"productID": "bench.pass", "type": "NonRenewingSubscription", "displayPrice": "14.99"}],
     "subscriptionGroups": [{"id": "B1", "subscriptions": [
        {"productID": "bench.monthly", "type": "RecurringSubscription", "groupNumber": 1, "displayPrice": "4.99", "recurringSubscriptionPeriod": "P1M"}]}],
     "settings": {"_timeRate": 0}, "version": {"major": 4, "minor": 0}}
    """
}
