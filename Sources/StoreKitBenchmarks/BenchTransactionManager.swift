import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import HTTPService
import StoreKitCatalog
import StoreKitCommands
import StoreService

/// `storekit bench transaction-manager`: the Transaction Manager's pages from the admin API at
/// 10,000 and 1,000,000 transactions, each against the 100 ms a page may take.
///
/// Each store holds a consumable history (about a quarter of its transactions, one account's) and
/// subscribers to a monthly plan (40,000 accounts at a million: a quarter of them cancelled, their
/// last period ended; one period in fifty refunded). Every filter the page offers (none, each type,
/// each state, a search for a product, a search for an account by name, an account, a month of
/// purchases) is measured in every order (five sort keys, each way), as its first page and as a page
/// asked for by number (page 50), with `wrk` on one keep-alive connection (so each figure is one
/// request's latency, the median of a run).
struct BenchTransactionManager: Command {
    static let declaration = CommandDeclaration("bench transaction-manager", group: .benchmarks, abstract: "Measure the Transaction Manager's pages (every filter × sort, first page and a page by number) from the admin API at 10,000 and 1,000,000 transactions with wrk (build with -c release).", arguments: [
        .flag("--json", "print JSON"),
        .option("--sizes", "N,N,…", "the store sizes to measure (default 10000,1000000)"),
        .option("--accounts", "N", "subscriber accounts at the largest size (default 40000; fewer in smaller stores)"),
        .option("--seconds", "N", "how long each page is requested (default 1)"),
        .option("--page", "N", "the page asked for by number (default 50)"),
        .option("--keep", "DIR", "keep the largest store in DIR (a new folder) to serve it afterwards"),
        .option("--filters", "NAME,NAME,…", "measure only these filters (names as in the report, such as all or month_of_purchases)"),
    ])

    /// The most a page may take, from the request to the last byte of its answer.
    static let limitMilliseconds = 100.0

    var json: Bool
    var sizes: [Int]
    var accounts: Int
    var seconds: Double
    var pageNumber: Int
    var keep: URL?
    var filterNames: Set<String>?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        sizes = try arguments.value("--sizes", expected: "sizes like 10000,1000000 (each at least 1000)") { text in
            let sizes = text.split(separator: ",").compactMap { Int($0) }
            return sizes.count == text.split(separator: ",").count && !sizes.isEmpty && sizes.allSatisfy { $0 >= 1_000 } ? sizes : nil
        } ?? [10_000, 1_000_000]
        accounts = try arguments.value("--accounts", expected: "a number of accounts from 10 to 1000000") { Int($0).flatMap { (10...1_000_000).contains($0) ? $0 : nil } } ?? 40_000
        seconds = try arguments.value("--seconds", expected: "a number of seconds from 1 to 60") { Double($0).flatMap { (1...60).contains($0) ? $0 : nil } } ?? 1
        pageNumber = try arguments.value("--page", expected: "a page number from 2 to 100000") { Int($0).flatMap { (2...100_000).contains($0) ? $0 : nil } } ?? 50
        keep = try arguments.value("--keep", expected: "a folder that does not exist yet") { text in
            FileManager.default.fileExists(atPath: text) ? nil : URL(fileURLWithPath: text)
        }
        let known = Set(Self.filters(accounts: accounts).map(\.name))
        filterNames = try arguments.value("--filters", expected: "filter names among \(known.sorted().joined(separator: ", "))") { text in
            let names = Set(text.split(separator: ",").map(String.init))
            return !names.isEmpty && names.isSubset(of: known) ? names : nil
        }
    }

    /// The filters the page offers, by name, as admin API queries.
    static func filters(accounts: Int) -> [(name: String, query: String)] {
        [("all", "")]
            + CatalogProduct.Kind.allCases.map { ("type_\($0.rawValue)", "type=\($0.rawValue)") }
            + ListedState.allCases.map { ("state_\($0.rawValue)", "state=\($0.rawValue)") }
            + [("search_product", "search=monthly"), ("search_account_name", "search=s\(accounts / 2)"),
               ("account", "account=s\(accounts / 3)"), ("month_of_purchases", "from=2025-06-01&to=2025-06-30"),
               ("quarter_of_purchases", "from=2025-04-01&to=2025-06-30"), ("year_of_purchases", "from=2025-01-01&to=2025-12-31")]
    }

    /// Every order the page offers: each sort key, each way.
    static let orders: [(name: String, query: String)] = TransactionListing.SortKey.allCases.flatMap { key in
        [("\(key.rawValue)_ascending", "sort=\(key.rawValue)&order=ascending"), ("\(key.rawValue)_descending", "sort=\(key.rawValue)&order=descending")]
    }

    func run(console: Console) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-tm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var report = BenchmarkReport(name: "bench transaction-manager")
        report.add("load_generator", "wrk, 1 keep-alive connection: each figure is the median latency of one page request")
        report.add("limit_ms", Self.limitMilliseconds)
        report.add("page_by_number", pageNumber)
        let load = LoadGenerator(connections: 1, threads: 1, seconds: seconds)
        let largest = sizes.max() ?? 0
        for size in sizes {
            let label = BenchLedger.label(size)
            let subscribers = max(10, Int((Double(accounts) * Double(size) / Double(max(largest, 1))).rounded()))
            let built = ContinuousClock.now
            let folder = size == largest && keep != nil ? keep! : scratch.appendingPathComponent(label)
            let store = try await Self.makeStore(at: folder, transactions: size, subscribers: subscribers)
            report.add("build_seconds_\(label)", BenchLedger.round((ContinuousClock.now - built).seconds, 1))
            report.add("store_transactions_\(label)", try await store.ledgerTransactions().count)
            report.add("store_accounts_\(label)", subscribers + 1)
            let server: StoreServer
            do { server = try StoreServer(store: store) } catch { throw CommandFailure(error.description) }
            var slowest = (name: "", milliseconds: 0.0)
            var over = 0, measured = 0
            do {
                for (filter, filterQuery) in Self.filters(accounts: subscribers) where filterNames?.contains(filter) ?? true {
                    for (order, orderQuery) in Self.orders {
                        for (page, pageQuery) in [("first", ""), ("page\(pageNumber)", "&page=\(pageNumber)")] {
                            let query = [filterQuery, orderQuery].filter { !$0.isEmpty }.joined(separator: "&")
                            let result = try await load.measure(server.url, paths: ["/v1/admin/transactions?limit=50&\(query)\(pageQuery)"])
                            let milliseconds = Double(result.medianLatencyMicroseconds) / 1_000
                            let name = "\(filter)__\(order)__\(page)"
                            measured += 1
                            if milliseconds > Self.limitMilliseconds { over += 1 }
                            if milliseconds > slowest.milliseconds { slowest = (name, milliseconds) }
                            report.add("\(name)_ms_\(label)", BenchLedger.round(milliseconds, 2))
                        }
                    }
                }
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
            report.add("pages_measured_\(label)", measured)
            report.add("pages_over_limit_\(label)", over)
            report.add("slowest_page_\(label)", slowest.name)
            report.add("slowest_page_ms_\(label)", BenchLedger.round(slowest.milliseconds, 2))
            report.add("slowest_page_to_limit_ratio_\(label)", BenchLedger.round(slowest.milliseconds / Self.limitMilliseconds, 3))
            if folder.path.hasPrefix(scratch.path) { try? FileManager.default.removeItem(at: folder) }
        }
        console.print(try report.render(json: json))
    }

    /// A store of about `transactions` transactions: `subscribers` accounts with a subscriber history
    /// each (as many monthly periods as fill three quarters of the store), and one account's consumables for the rest.
    static func makeStore(at directory: URL, transactions: Int, subscribers: Int) async throws -> SimulatedAppStore {
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        let store = try await StoreDirectory.create(at: directory, configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                                    clockMode: .manual, start: Date(timeIntervalSince1970: 1_767_225_600))
        let periods = max(1, transactions * 3 / 4 / subscribers)
        try await store.importHistory(productID: BenchStoreFile.consumable, account: "bulk", count: max(1, transactions - subscribers * periods), spacing: 600)
        try await store.importSubscriberHistories(productID: BenchStoreFile.subscription, accountPrefix: "s", count: subscribers, periods: periods)
        return store
    }
}
