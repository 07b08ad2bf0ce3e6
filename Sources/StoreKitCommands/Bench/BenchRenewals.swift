import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
import StoreKitCatalog

/// `storekit bench renewals`: a year of monthly renewals for many subscribers on the manual clock.
///
/// Subscribers buy one minute apart, so every renewal is its own event and commit. The run is done
/// for a tenth of the subscribers and for all of them; the growth factor compares the two per
/// subscriber and should stay near 1 (linear cost). Beside the rate stands the limit of the same run:
/// how many transactions one thread signs per second (`sign_per_second`); the aim is a year of 10,000
/// monthly subscribers (about 110,000 renewals) in under 10 seconds.
struct BenchRenewals: Command {
    static let name = "bench renewals"
    static let abstract = "Measure a year of monthly renewals for 1,000 and 10,000 subscribers (build with -c release)."
    static let usage = "[--json] [--subscribers N] [--storage sqlite|memory]"

    var json: Bool
    var subscribers: Int
    var durable: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        subscribers = try arguments.value("--subscribers", expected: "a number of subscribers, 10 or more") { Int($0).flatMap { $0 >= 10 ? $0 : nil } } ?? 10_000
        durable = try arguments.value("--storage", expected: "sqlite or memory") { $0 == "sqlite" ? true : $0 == "memory" ? false : nil } ?? true
    }

    func run(console: Console) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let small = try await year(subscribers: subscribers / 10, in: scratch.appendingPathComponent("small"))
        let large = try await year(subscribers: subscribers, in: scratch.appendingPathComponent("large"))
        var report = BenchmarkReport(name: "bench renewals")
        report.add("storage", durable ? "sqlite" : "memory")
        report.add("small_subscribers", subscribers / 10)
        report.add("small_renewals", small.renewals)
        report.add("small_seconds", small.seconds.thousandths)
        report.add("subscribers", subscribers)
        report.add("renewals", large.renewals)
        report.add("seconds", large.seconds.thousandths)
        report.add("renewals_per_second", (Double(large.renewals) / large.seconds).rounded())
        report.add("simulated_subscriber_years_per_second", (Double(subscribers) / large.seconds * 10).rounded() / 10)
        // The limit of the same run: one thread signing a transaction, the work every renewal must do once.
        let signRate = try Self.signRate()
        report.add("sign_per_second", signRate.rounded())
        report.add("renewals_to_sign_ratio", ((Double(large.renewals) / large.seconds) / signRate * 1000).rounded() / 1000)
        report.add("year_of_10000_subscribers_target_seconds", 10)
        report.add("growth_factor_per_subscriber", ((large.seconds / Double(subscribers)) / (small.seconds / Double(subscribers / 10)) * 100).rounded() / 100)
        console.print(try report.render(json: json))
    }

    /// Transactions signed per second on this thread with a local authority: an ES256 JWS with the x5c chain.
    static func signRate() throws -> Double {
        let signer = try CertificateAuthority.make().makeSigner()
        let transaction = BenchmarkSample.transaction
        return try BenchmarkTimer.rate(seconds: 1) { _ = try signer.sign(transaction) }
    }

    private func year(subscribers: Int, in directory: URL) async throws -> (renewals: Int, seconds: Double) {
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let store: SimulatedAppStore
        if durable {
            store = try StoreDirectory.create(at: directory, configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                              clockMode: .manual, start: start)
        } else {
            store = try SimulatedAppStore.create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                                 authority: try CertificateAuthority.make(), storage: InMemoryLedgerStorage(),
                                                 clock: ManualStoreClock(startingAt: start))
        }
        try await store.advanceTime(to: start.addingTimeInterval(Double(subscribers) * 60))
        for index in 0..<subscribers {
            _ = try await store.buyProduct("bench.monthly", account: "subscriber-\(index)", purchaseDate: start.addingTimeInterval(Double(index) * 60))
        }
        let clock = ContinuousClock()
        let began = clock.now
        let renewals = try await store.advanceTime(to: start.addingTimeInterval(365 * 86_400))
        let elapsed = clock.now - began
        return (renewals, elapsed.seconds)
    }
}
