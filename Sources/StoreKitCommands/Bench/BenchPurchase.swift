import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
import StoreKitCatalog

/// `storekit bench purchase`: durable purchases per second against the cost of their parts.
///
/// In one run: ECDSA P-256 signatures per second, SQLite durable single-row commits per second in the
/// same directory, and durable in-process purchases per second through a SQLite-backed store. A purchase
/// signs the transaction for the device, the transaction for the server and the notification, and
/// commits once; the limit is about twice one signature plus one commit. Also measures
/// `currentEntitlements` for an account with 10,000 transactions.
struct BenchPurchase: Command {
    static let name = "bench purchase"
    static let abstract = "Measure durable purchases per second and currentEntitlements cost (build with -c release)."
    static let usage = "[--json] [--seconds S] [--history N]"

    var json: Bool
    var seconds: Double
    var history: Int

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        seconds = try arguments.value("--seconds", expected: "a positive number of seconds") { Double($0).flatMap { $0 > 0 ? $0 : nil } } ?? 2
        history = try arguments.value("--history", expected: "a number of transactions") { Int($0).flatMap { $0 > 0 ? $0 : nil } } ?? 10_000
    }

    func run(console: Console) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration

        let key = try P256PrivateKey.generate()
        let message = Data(repeating: 0x61, count: 2_000)
        let signRate = try BenchmarkTimer.rate(seconds: seconds) { _ = try key.signature(for: message) }
        let commitRate = try SQLiteLedgerStorage.durableCommitRate(in: scratch, seconds: seconds)

        let store = try StoreDirectory.create(at: scratch.appendingPathComponent("store"), configuration: configuration,
                                              identity: StoreIdentity(bundleId: "com.example.bench", environment: .sandbox),
                                              clockMode: .manual, start: Date(timeIntervalSince1970: 1_767_225_600))
        let request = PurchaseRequest(productID: "bench.consumable", account: "buyer", device: "phone")
        // Purchases are timed on the store's own executor, so the numbers are the engine's cost and not
        // the cost of hopping onto an actor from outside.
        let purchaseRate = 1_000_000 / (try await store.measureThrowing(seconds: seconds) { store in
            guard case .success = try store.purchase(request) else { throw CommandFailure("a benchmark purchase did not succeed") }
        })
        let memoryStore = try SimulatedAppStore.create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                                       authority: try CertificateAuthority.make(), storage: InMemoryLedgerStorage(),
                                                       clock: ManualStoreClock(startingAt: Date(timeIntervalSince1970: 1_767_225_600)))
        let memoryRate = 1_000_000 / (try await memoryStore.measureThrowing(seconds: seconds / 2) { store in _ = try store.purchase(request) })
        let budget = 1 / signRate + 1 / commitRate
        var report = BenchmarkReport(name: "bench purchase")
        report.add("ecdsa_p256_sign_per_second", signRate.rounded())
        report.add("sqlite_durable_commit_per_second", commitRate.rounded())
        report.add("durable_purchases_per_second", purchaseRate.rounded())
        report.add("purchase_cost_in_sign_plus_commit", ((1 / purchaseRate) / budget * 1000).rounded() / 1000)
        report.add("purchase_cost_limit", 2.0)
        report.add("in_memory_purchases_per_second", memoryRate.rounded())

        let (unsigned, signed) = try await entitlementCosts(configuration: configuration)
        report.add("history_transactions", history)
        report.add("current_entitlements_microseconds", (unsigned * 10).rounded() / 10)
        report.add("current_entitlements_signed_microseconds", (signed * 10).rounded() / 10)
        report.add("current_entitlements_limit_microseconds", 1000.0)
        console.print(try report.render(json: json))
    }

    /// Microseconds per `currentEntitlements` call for an account with `history` transactions: the
    /// ledger query alone, and with the results signed in server form.
    private func entitlementCosts(configuration: StoreKitConfiguration) async throws -> (Double, Double) {
        let store = try SimulatedAppStore.create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
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
