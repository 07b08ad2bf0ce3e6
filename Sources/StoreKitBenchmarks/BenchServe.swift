import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import HTTPService
import OpenStoreKit
import StoreKitCatalog
import StoreKitCommands
import StoreService

/// `storekit bench serve`: the server measured with a real keep-alive load generator (`wrk`), against
/// limits measured in the same run.
///
/// - Purchases: 8 customers buying over HTTP (8 connections) against 8 tasks buying in-process on the
///   same kind of store (durable, SQLite).
/// - Reads: a signed transaction by GET, against a handler in the same process that answers "hello"
///   through the same server (`HTTPServer`, libmicrohttpd underneath).
/// - Pages: with 10,000 transactions in the store, Transaction Manager pages (plain and filtered) and
///   storefronts, against the same hello handler.
/// - Long polls: thousands of `Transaction.updates` polls held open at once; the `/health` latency
///   meanwhile, and how long `stop` takes with them open (each must get its answer).
struct BenchServe: Command {
    static let declaration = CommandDeclaration("bench serve", group: .benchmarks, abstract: "Measure the HTTP server with wrk: purchases, signed reads and pages against in-process purchases and a hello-world handler; open long polls (build with -c release).", arguments: [
        .flag("--json", "print JSON"),
        .option("--seconds", "N", "how long each load runs"),
        .option("--long-polls", "N", "how many long polls to hold open, and then idle connections (default 5,000)"),
    ])

    var json: Bool
    var seconds: Double
    var longPolls: Int

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        seconds = try arguments.value("--seconds", expected: "a number of seconds from 1 to 60") { Double($0).flatMap { (1...60).contains($0) ? $0 : nil } } ?? 3
        longPolls = try arguments.value("--long-polls", expected: "a number of long polls from 1 to 8000") { Int($0).flatMap { (1...8_000).contains($0) ? $0 : nil } }
            ?? 5_000
    }

    static let clients = 8
    /// How many transactions the store holds when its pages are measured.
    static let pageStoreSize = 10_000

    func run(console: Console) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        func makeStore(_ name: String) throws -> SimulatedAppStore {
            try StoreDirectory.create(at: scratch.appendingPathComponent(name), configuration: configuration,
                                      identity: StoreIdentity(bundleId: "com.example.bench"), clockMode: .manual,
                                      start: Date(timeIntervalSince1970: 1_767_225_600))
        }
        let load = LoadGenerator(connections: Self.clients, threads: 1, seconds: seconds)

        let local = try makeStore("in-process")
        for client in 0..<Self.clients { try await local.addDevice("device\(client)", account: "buyer\(client)") }
        let inProcess = try await Self.rate(seconds: seconds) { client in
            _ = try await local.purchase(PurchaseRequest(productID: BenchStoreFile.consumable, account: "buyer\(client)", device: "device\(client)"))
        }

        let served = try makeStore("served")
        for client in 0..<Self.clients { try await served.addDevice("device\(client)", account: "buyer\(client)") }
        let server: StoreServer
        do { server = try StoreServer(store: served) } catch { throw CommandFailure(error.description) }
        let hello: HTTPServer
        do { hello = try HTTPServer { _ in .text(200, "hello") } } catch { throw CommandFailure(error.description) }

        var report = BenchmarkReport(name: "bench serve")
        do {
            let purchasePaths = (0..<Self.clients).map { "/v1/devices/device\($0)/purchases" }
            let http = try await load.measure(server.url, method: "POST", paths: purchasePaths,
                                              body: #"{"productID": "\#(BenchStoreFile.consumable)"}"#)
            let reads = try await load.measure(server.url, paths: ["/v1/devices/device0/transactions?view=transaction&id=0"])
            let helloRate = try await load.measure(hello.url, paths: ["/hello"])
            report.add("load_generator", "wrk, \(Self.clients) keep-alive connections")
            report.add("clients", Self.clients)
            report.add("http_purchases_per_second", http.requestsPerSecond.rounded())
            report.add("in_process_purchases_per_second", inProcess.rounded())
            report.add("http_to_in_process_purchase_ratio", (http.requestsPerSecond / inProcess).thousandths)
            report.add("purchase_ratio_aim", 0.5)
            report.add("api_reads_per_second", reads.requestsPerSecond.rounded())
            report.add("microhttpd_hello_per_second", helloRate.requestsPerSecond.rounded())
            report.add("read_to_hello_ratio", (reads.requestsPerSecond / helloRate.requestsPerSecond).thousandths)
            report.add("read_ratio_aim", 0.5)

            // The web pages with a store of 10,000 transactions: a Transaction Manager page (what its
            // script asks for: 50 rows at places spread over the ledger, and a filter that matches rarely),
            // and the storefront of a device with a long history.
            var count = try await served.ledgerTransactions(after: nil, limit: .max).count
            while count < Self.pageStoreSize {
                _ = try await served.purchase(PurchaseRequest(productID: BenchStoreFile.consumable, account: "buyer\(count % Self.clients)",
                                                              device: "device\(count % Self.clients)"))
                count += 1
            }
            let pageSize = 50
            let pagePaths = (0..<64).map { "/v1/admin/transactions?limit=\(pageSize)&after=\(($0 * 1_237 + 311) % Self.pageStoreSize)" }
            let transactionPages = try await load.measure(server.url, paths: pagePaths)
            let filteredPages = try await load.measure(server.url, paths: ["/v1/admin/transactions?limit=\(pageSize)&state=refunded"])
            let storefronts = try await load.measure(server.url, paths: (0..<Self.clients).map { "/store?account=buyer\($0)&device=device\($0)" })
            report.add("store_transactions", count)
            report.add("transaction_manager_pages_per_second", transactionPages.requestsPerSecond.rounded())
            report.add("transaction_manager_page_to_hello_ratio", (transactionPages.requestsPerSecond / helloRate.requestsPerSecond).thousandths)
            report.add("filtered_pages_per_second", filteredPages.requestsPerSecond.rounded())
            report.add("storefront_pages_per_second", storefronts.requestsPerSecond.rounded())
            report.add("storefront_page_to_hello_ratio", (storefronts.requestsPerSecond / helloRate.requestsPerSecond).thousandths)
        } catch {
            await hello.stop()
            await server.stop()
            throw error
        }
        await hello.stop()
        await server.stop()

        // Long polls on a server of their own, so that stopping it is what is timed.
        let polled = try makeStore("long-polls")
        let devices = 50
        for device in 0..<devices { try await polled.addDevice("poller\(device)", account: "poller\(device)") }
        let pollServer: StoreServer
        do { pollServer = try StoreServer(store: polled, access: ServerAccess(connectionsPerAddress: 10_000)) } catch {
            throw CommandFailure(error.description)
        }
        let probe = try await LongPollProbe.open(longPolls, to: pollServer.port) { index in
            "/v1/devices/poller\(index % devices)/updates?wait=60"
        }
        do {
            try await LongPollProbe.waitUntil(timeout: .seconds(60), "\(longPolls) long polls waiting at the store") {
                var waiting = 0
                for device in 0..<devices { waiting += await polled.updateWaiterCount(device: "poller\(device)") }
                return waiting == longPolls
            }
            let health = try await LongPollProbe.medianLatency(of: "/health", port: pollServer.port, requests: 200)
            let started = ContinuousClock.now
            await pollServer.stop()
            let stopped = (ContinuousClock.now - started).seconds
            let answered = await probe.answered()
            guard answered == longPolls else { throw CommandFailure("\(longPolls - answered) of \(longPolls) long polls got no answer when the server stopped") }
            report.add("long_polls_open", longPolls)
            report.add("health_ms_with_long_polls", (health * 1_000).thousandths)
            report.add("health_ms_aim", 50)
            report.add("stop_seconds_with_long_polls", stopped.thousandths)
            report.add("stop_seconds_aim", 2)
        } catch {
            await pollServer.stop()
            probe.close()
            throw error
        }

        // One local client hoarding idle connections (on loopback every client is 127.0.0.1): the
        // others' /health and pages must still find room and answer at once.
        let idleCount = longPolls
        let idleServer: StoreServer
        do { idleServer = try StoreServer(store: polled) } catch { throw CommandFailure(error.description) }
        let idle = try await LongPollProbe.openIdle(idleCount, to: idleServer.port)
        do {
            try await LongPollProbe.waitUntil(timeout: .seconds(60), "\(idleCount) idle connections open at the store") {
                idleServer.openConnections >= idleCount
            }
            let health = try await LongPollProbe.medianLatency(of: "/health", port: idleServer.port, requests: 200)
            let page = try await LongPollProbe.medianLatency(of: "/store", port: idleServer.port, requests: 50)
            let purchase = try await LongPollProbe.medianLatency(of: "/v1/devices/poller0/purchases", json: #"{"productID": "\#(BenchStoreFile.consumable)"}"#,
                                                                 port: idleServer.port, requests: 50)
            report.add("idle_connections_held", idleCount)
            report.add("health_ms_with_idle_connections", (health * 1_000).thousandths)
            report.add("page_ms_with_idle_connections", (page * 1_000).thousandths)
            report.add("purchase_ms_with_idle_connections", (purchase * 1_000).thousandths)
            report.add("with_idle_connections_ms_aim", 100)
            idle.close()
            await idleServer.stop()
        } catch {
            idle.close()
            await idleServer.stop()
            throw error
        }
        console.print(try report.render(json: json))
    }

    /// Operations per second with `clients` loops running `body` at once for about `seconds` (after a warm-up).
    static func rate(seconds: Double, _ body: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
        for client in 0..<clients { try await body(client) }
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in 0..<clients {
                group.addTask {
                    var count = 0
                    repeat {
                        try await body(client)
                        count += 1
                    } while ContinuousClock.now < deadline
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(total) / (ContinuousClock.now - start).seconds
    }
}
