import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import StoreKitCatalog
import StoreKitCommands

/// `storekit bench backend`: how fast the entitlement backend takes in notifications, against the
/// verification rate of the same notifications measured in the same run.
///
/// A Sandbox store's customers buy and renew until its outbox holds the notifications to ingest.
/// The limit, `verify_per_second`, is the intake's work alone: each notification verified (payload,
/// embedded transaction and renewal info, chain from the warm cache) and decoded, 8 at a time. Then
/// a fresh SQLite backend records the same notifications, 8 deliveries in flight, each committed
/// (WAL, `synchronous=FULL`) before it is answered. With `--postgres URL` (an empty database), the same
/// on PostgreSQL with one instance, then with two instances (two connections and writers, as two
/// `backend serve` processes would have) sharing the stream. Then customers' entitlement reads. Last,
/// the subscription metrics: the rollups of a year of `--subscribers` made-up subscribers are loaded
/// (summed as a rebuild sums them) and a year of daily figures, and the cohort table, are asked for.
struct BenchBackend: Command {
    static let declaration = CommandDeclaration("bench backend", group: .benchmarks, abstract: "Measure notification ingestion and entitlement reads of the backend against verification (build with -c release).", arguments: [
        .flag("--json", "print JSON"),
        .option("--notifications", "N", "how many notifications to ingest"),
        .option("--subscribers", "N", "the metrics' year of made-up subscribers (default 100000)"),
        .option("--postgres", "URL", "measure on PostgreSQL too: postgres://USER@HOST:PORT/DB"),
    ])

    var json: Bool
    var count: Int
    var postgres: String?
    var subscribers: Int

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        count = try arguments.value("--notifications", expected: "a number from 100 to 100000") { Int($0).flatMap { (100...100_000).contains($0) ? $0 : nil } } ?? 4_000
        postgres = try arguments.value("--postgres")
        subscribers = try arguments.value("--subscribers", expected: "a number from 10 to 1000000") {
            Int($0).flatMap { (10...1_000_000).contains($0) ? $0 : nil }
        } ?? 100_000
    }

    /// The subscription metrics' limit: a year of daily figures answers within it.
    static let metricsYearQueryLimitMilliseconds = 50.0

    /// Loads the synthetic year's rollups into `storage` and times the year's figures and the cohort
    /// table (medians of several asks, in milliseconds).
    static func timeMetricsQueries(_ storage: SQLBackendStorage, _ year: SyntheticSubscribers) async throws -> (year: Double, cohorts: Double) {
        let rollups = year.rollups()
        try await storage.loadRollups(days: rollups.days, cohorts: rollups.cohorts, lastPeriods: rollups.lastPeriods, asOf: rollups.asOf)
        let first = CalendarDay(milliseconds: Int64(year.start.timeIntervalSince1970 * 1_000))
        let query = MetricsQuery(from: first, to: first.adding(days: 364))
        var yearTimes: [Double] = []
        var cohortTimes: [Double] = []
        for _ in 0..<15 {
            var started = ContinuousClock.now
            let report = try await storage.metrics(query)
            yearTimes.append((ContinuousClock.now - started).seconds * 1_000)
            guard report.days.count == 365, report.days.last?.activeSubscriptions ?? 0 > 0 else {
                throw CommandFailure("the metrics query did not answer the year: \(report.days.count) days")
            }
            started = ContinuousClock.now
            _ = try await storage.cohorts(from: first, to: query.to)
            cohortTimes.append((ContinuousClock.now - started).seconds * 1_000)
        }
        return (yearTimes.median, cohortTimes.median)
    }

    static let inFlight = 8
    /// How many times each customer's entitlements are read: one round of a few thousand reads
    /// lasted a tenth of a second, too short for a steady rate.
    static let readRounds = 10
    static let postgresRounds = 3

    func run(console: Console) async throws {
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        let store = try await SimulatedAppStore.create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench", environment: .sandbox),
                                                 authority: try CertificateAuthority.make(), storage: InMemoryLedgerStorage(),
                                                 clock: ManualStoreClock(startingAt: Date(timeIntervalSince1970: 1_767_225_600)))
        // Each purchase sends at least one notification: buy as many as are missing, then count again.
        var customers = 0
        var missing = count
        while missing > 0 {
            for _ in 0..<missing {
                let token = UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", customers))!
                _ = try await store.purchase(PurchaseRequest(productID: BenchStoreFile.consumable, account: "c\(customers)", device: "d\(customers)",
                                                             appAccountToken: token))
                customers += 1
            }
            missing = count - (try await store.notificationRecords(limit: count).count)
        }
        let bodies = try await store.notifications(limit: count).map { Data(#"{"signedPayload":"\#($0.signedPayload)"}"#.utf8) }
        let verifier = try SignedDataVerifier(rootCertificates: [store.rootCertificate], bundleId: "com.example.bench", environment: .sandbox)
        let intake = SignedDataIntake(verifier: verifier)

        let verifyRate = try await Self.rate(bodies) { body in _ = try intake.notification(body: body) }

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-backend-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let storage = try await SQLBackendStorage.sqlite(path: scratch.appendingPathComponent("backend.sqlite").path)
        let service = BackendService(storage: storage, intake: intake)
        let ingestRate = try await Self.rate(bodies) { body in try await Self.ingest(body, into: service) }
        guard try await storage.notificationCount() == bodies.count else { throw CommandFailure("the backend did not record every notification once") }
        let customerIDs = (0..<customers).map { String(format: "00000000-0000-4000-8000-%012x", $0) }
        let reads = Array(repeating: customerIDs, count: Self.readRounds).flatMap { $0 }
        let readRate = try await Self.rate(reads) { id in _ = try await service.ledger.entitlements(customer: id) }

        var postgresStorage: SQLBackendStorage?

        var postgresRounds: [(one: Double, two: Double)] = []
        if let postgres {
            // Rounds of fresh notifications: each round one instance takes a share and two instances the
            // next, in alternating order, so a machine that speeds up or slows down moves both alike.
            let oneStorage = try await SQLBackendStorage.postgres(url: postgres)
            let one = BackendService(storage: oneStorage, intake: intake)
            let pair = [BackendService(storage: try await SQLBackendStorage.postgres(url: postgres), intake: intake),
                        BackendService(storage: try await SQLBackendStorage.postgres(url: postgres), intake: intake)]
            let share = bodies.count / (2 * Self.postgresRounds)
            for round in 0..<Self.postgresRounds {
                let first = Array(bodies[(2 * round * share)..<((2 * round + 1) * share)])
                let second = Array(bodies[((2 * round + 1) * share)..<((2 * round + 2) * share)])
                let alone = { (chunk: [Data]) in try await Self.rate(chunk) { body in try await Self.ingest(body, into: one) } }
                let together = { (chunk: [Data]) in
                    try await Self.rate(Array(chunk.indices)) { position in try await Self.ingest(chunk[position], into: pair[position % 2]) }
                }
                if round % 2 == 0 {
                    let oneRate = try await alone(first)
                    postgresRounds.append((oneRate, try await together(second)))
                } else {
                    let twoRate = try await together(first)
                    postgresRounds.append((try await alone(second), twoRate))
                }
            }
            guard try await one.storage.notificationCount() == 2 * Self.postgresRounds * share else {
                throw CommandFailure("PostgreSQL did not record every notification once")
            }
            postgresStorage = oneStorage
        }
        // Last: loading the synthetic year writes a lot, whose flushing would slow the commits measured above.
        let syntheticYear = SyntheticSubscribers(count: subscribers, start: Date(timeIntervalSince1970: 1_767_225_600))
        let metricsSQLite = try await Self.timeMetricsQueries(try await SQLBackendStorage.sqlite(path: scratch.appendingPathComponent("metrics.sqlite").path),
                                                               syntheticYear)
        var metricsPostgres: (year: Double, cohorts: Double)?
        if let postgresStorage { metricsPostgres = try await Self.timeMetricsQueries(postgresStorage, syntheticYear) }

        var report = BenchmarkReport(name: "bench backend")
        report.add("notifications", bodies.count)
        report.add("in_flight", Self.inFlight)
        report.add("verify_per_second", verifyRate.rounded())
        report.add("notifications_per_second_sqlite", ingestRate.rounded())
        report.add("sqlite_to_verify_ratio", (ingestRate / verifyRate).thousandths)
        report.add("sqlite_to_verify_aim", 0.5)
        report.add("entitlement_reads_per_second_sqlite", readRate.rounded())
        report.add("metrics_subscribers", subscribers)
        report.add("metrics_year_query_ms", metricsSQLite.year.thousandths)
        report.add("metrics_cohorts_query_ms", metricsSQLite.cohorts.thousandths)
        if let metricsPostgres {
            report.add("metrics_year_query_ms_postgres", metricsPostgres.year.thousandths)
            report.add("metrics_cohorts_query_ms_postgres", metricsPostgres.cohorts.thousandths)
        }
        report.add("metrics_year_query_limit_ms", Self.metricsYearQueryLimitMilliseconds)
        if !postgresRounds.isEmpty {
            let ratios = postgresRounds.map { $0.two / $0.one }
            report.add("rounds", postgresRounds.count)
            report.add("notifications_per_second_postgres", postgresRounds.map(\.one).median.rounded())
            report.add("notifications_per_second_postgres_2", postgresRounds.map(\.two).median.rounded())
            report.add("postgres_to_verify_ratio", (postgresRounds.map(\.one).median / verifyRate).thousandths)
            report.add("postgres_2_to_1_ratio_min", (ratios.min() ?? 0).thousandths)
            report.add("postgres_2_to_1_ratio_median", ratios.median.thousandths)
            report.add("postgres_2_to_1_ratio_max", (ratios.max() ?? 0).thousandths)
        } else {
            report.add("postgres", "not measured: give --postgres URL (an empty database)")
        }
        console.print(try report.render(json: json))
    }

    /// Posts one notification to a backend as the webhook does.
    static func ingest(_ body: Data, into service: BackendService) async throws {
        let answer = await service.handle(HTTPRequest(method: "POST", path: "/apple/notifications", body: body))
        guard answer.status == 200 else { throw CommandFailure("a notification was refused: \(String(decoding: answer.body, as: UTF8.self))") }
    }

    /// Items per second, `inFlight` workers each taking every `inFlight`-th item.
    static func rate<Item: Sendable>(_ items: [Item], _ body: @escaping @Sendable (Item) async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<inFlight {
                group.addTask {
                    for index in stride(from: worker, to: items.count, by: inFlight) { try await body(items[index]) }
                }
            }
            try await group.waitForAll()
        }
        return Double(items.count) / (ContinuousClock.now - start).seconds
    }
}
