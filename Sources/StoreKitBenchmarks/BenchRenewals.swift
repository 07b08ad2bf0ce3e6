import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog
import StoreKitCommands

/// `storekit bench renewals`: a year of monthly renewals for many subscribers on the manual clock.
///
/// Subscribers buy one minute apart, so every renewal is its own instant (events are still committed
/// in chunks, each keeping its own date). The year is played for a tenth of the subscribers and for
/// all of them, over several rounds (a fresh store each); the growth factor compares the two per
/// subscriber and should stay near 1 (linear cost). Beside the rate stands the limit of the same
/// rounds: how many transactions one thread signs per second (`sign_per_second`), measured between
/// the years. The aim is a year of 10,000 monthly subscribers (about 110,000 renewals) in under 10
/// seconds; min, median and max are reported.
struct BenchRenewals: Command {
    static let declaration = CommandDeclaration("bench renewals", group: .benchmarks, abstract: "Measure a year of monthly renewals for 1,000 and 10,000 subscribers (build with -c release).", arguments: [
        .flag("--json", "print JSON"),
        .option("--subscribers", "N", "one size instead of both"),
        .option("--rounds", "N", "how many rounds"),
        .option("--storage", "sqlite|memory", "the ledger's storage (default sqlite)"),
    ])

    var json: Bool
    var subscribers: Int
    var rounds: Int
    var durable: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        subscribers = try arguments.value("--subscribers", expected: "a number of subscribers, 10 or more") { Int($0).flatMap { $0 >= 10 ? $0 : nil } } ?? 10_000
        rounds = try arguments.value("--rounds", expected: "a number of rounds from 1 to 20") { Int($0).flatMap { (1...20).contains($0) ? $0 : nil } } ?? 3
        durable = try arguments.value("--storage", expected: "sqlite or memory") { $0 == "sqlite" ? true : $0 == "memory" ? false : nil } ?? true
    }

    func run(console: Console) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var smalls: [Double] = []
        var larges: [Double] = []
        var signRates: [Double] = []
        var ratios: [Double] = []
        var renewals = (small: 0, large: 0)
        for round in 0..<rounds {
            let small = try await year(subscribers: subscribers / 10, in: scratch.appendingPathComponent("small-\(round)"))
            let large = try await year(subscribers: subscribers, in: scratch.appendingPathComponent("large-\(round)"))
            let signRate = try Self.signRate()
            renewals = (small.renewals, large.renewals)
            smalls.append(small.seconds)
            larges.append(large.seconds)
            signRates.append(signRate)
            ratios.append(Double(large.renewals) / large.seconds / signRate)
        }
        let seconds = larges.median
        var report = BenchmarkReport(name: "bench renewals")
        report.add("storage", durable ? "sqlite" : "memory")
        report.add("rounds", rounds)
        report.add("small_subscribers", subscribers / 10)
        report.add("small_renewals", renewals.small)
        report.add("small_seconds", smalls.median.thousandths)
        report.add("subscribers", subscribers)
        report.add("renewals", renewals.large)
        report.add("seconds_min", (larges.min() ?? 0).thousandths)
        report.add("seconds", seconds.thousandths)
        report.add("seconds_max", (larges.max() ?? 0).thousandths)
        report.add("renewals_per_second", (Double(renewals.large) / seconds).rounded())
        report.add("simulated_subscriber_years_per_second", (Double(subscribers) / seconds * 10).rounded() / 10)
        // The limit of the same rounds: one thread signing a transaction, the work every renewal's
        // notification needs once when the outbox is read.
        report.add("sign_per_second", signRates.median.rounded())
        report.add("renewals_to_sign_ratio_min", (ratios.min() ?? 0).thousandths)
        report.add("renewals_to_sign_ratio", ratios.median.thousandths)
        report.add("renewals_to_sign_ratio_max", (ratios.max() ?? 0).thousandths)
        report.add("year_of_10000_subscribers_target_seconds", 10)
        report.add("growth_factor_per_subscriber", ((seconds / Double(subscribers)) / (smalls.median / Double(subscribers / 10)) * 100).rounded() / 100)
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
            store = try await StoreDirectory.create(at: directory, configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                              clockMode: .manual, start: start)
        } else {
            store = try await SimulatedAppStore.create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
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
