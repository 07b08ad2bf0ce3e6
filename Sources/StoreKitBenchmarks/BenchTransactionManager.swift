import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
import HTTPService
import StoreKitCatalog
import StoreKitCommands
import StoreService

/// `storekit bench transaction-manager`: the Transaction Manager's pages from the admin API at
/// 10,000 and 1,000,000 transactions, each against the 100 ms a page may take.
///
/// Each store holds a consumable history (a quarter of its transactions) and subscribers a year into
/// a monthly plan: a quarter of them cancelled (their last period ended), one period in fifty
/// refunded. Every page the page's script asks for is measured with `wrk` on one keep-alive connection
/// (so each figure is one request's latency, the median of a run): the first page, a page deep in the
/// ledger, each state filter that matters, a product search, a type, a date range, and each order.
struct BenchTransactionManager: Command {
    static let declaration = CommandDeclaration("bench transaction-manager", group: .benchmarks, abstract: "Measure the Transaction Manager's pages (first, filtered, sorted) from the admin API at 10,000 and 1,000,000 transactions with wrk (build with -c release).", arguments: [
        .flag("--json", "print JSON"),
        .option("--sizes", "N,N,…", "the store sizes to measure (default 10000,1000000)"),
        .option("--seconds", "N", "how long each page is requested (default 2)"),
    ])

    /// The most a page may take, from the request to the last byte of its answer.
    static let limitMilliseconds = 100.0

    var json: Bool
    var sizes: [Int]
    var seconds: Double

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        sizes = try arguments.value("--sizes", expected: "sizes like 10000,1000000 (each at least 1000)") { text in
            let sizes = text.split(separator: ",").compactMap { Int($0) }
            return sizes.count == text.split(separator: ",").count && !sizes.isEmpty && sizes.allSatisfy { $0 >= 1_000 } ? sizes : nil
        } ?? [10_000, 1_000_000]
        seconds = try arguments.value("--seconds", expected: "a number of seconds from 1 to 60") { Double($0).flatMap { (1...60).contains($0) ? $0 : nil } } ?? 2
    }

    /// The pages measured: what the Transaction Manager's script asks for, by name.
    static func pages(size: Int) -> [(name: String, query: String)] {
        [("first_page", "order=descending"),
         ("deep_page", "order=descending&after=\(size / 2)"),
         ("expired", "state=expired&order=descending"),
         ("purchased", "state=purchased&order=descending"),
         ("refunded", "state=refunded&order=descending"),
         ("auto_renewable", "type=autoRenewable&order=descending"),
         ("search_monthly", "search=monthly&order=descending"),
         ("date_range", "from=2025-06-01&to=2025-06-30&order=descending"),
         ("by_account", "sort=account"),
         ("by_expiration", "sort=expirationDate&order=descending"),
         ("by_state", "sort=state"),
         ("expired_by_account", "state=expired&sort=account")]
    }

    func run(console: Console) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-tm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var report = BenchmarkReport(name: "bench transaction-manager")
        report.add("load_generator", "wrk, 1 keep-alive connection: each figure is the median latency of one page request")
        report.add("limit_ms", Self.limitMilliseconds)
        let load = LoadGenerator(connections: 1, threads: 1, seconds: seconds)
        for size in sizes {
            let label = BenchLedger.label(size)
            let built = ContinuousClock.now
            let store = try await Self.makeStore(at: scratch.appendingPathComponent(label), transactions: size)
            report.add("build_seconds_\(label)", BenchLedger.round((ContinuousClock.now - built).seconds, 1))
            report.add("store_transactions_\(label)", try await store.ledgerTransactions().count)
            let server: StoreServer
            do { server = try StoreServer(store: store) } catch { throw CommandFailure(error.description) }
            var slowest = 0.0
            do {
                for (name, query) in Self.pages(size: size) {
                    let measured = try await load.measure(server.url, paths: ["/v1/admin/transactions?limit=50&\(query)"])
                    let milliseconds = Double(measured.medianLatencyMicroseconds) / 1_000
                    slowest = max(slowest, milliseconds)
                    report.add("\(name)_ms_\(label)", BenchLedger.round(milliseconds, 2))
                }
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
            report.add("slowest_page_ms_\(label)", BenchLedger.round(slowest, 2))
            report.add("slowest_page_to_limit_ratio_\(label)", BenchLedger.round(slowest / Self.limitMilliseconds, 3))
            try? FileManager.default.removeItem(at: scratch.appendingPathComponent(label))
        }
        console.print(try report.render(json: json))
    }

    /// A store of about `transactions` transactions: a quarter consumables, the rest subscriber histories of twelve periods each.
    static func makeStore(at directory: URL, transactions: Int) async throws -> SimulatedAppStore {
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        let store = try await StoreDirectory.create(at: directory, configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                                    clockMode: .manual, start: Date(timeIntervalSince1970: 1_767_225_600))
        let consumables = transactions / 4
        try await store.importHistory(productID: BenchStoreFile.consumable, account: "bulk", count: consumables, spacing: 600)
        let subscribers = (transactions - consumables) / 12
        try await store.importSubscriberHistories(productID: BenchStoreFile.subscription, accountPrefix: "s", count: subscribers, periods: 12)
        return store
    }
}
