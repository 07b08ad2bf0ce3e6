import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPService
import OpenStoreKit
import StoreKitCatalog
import StoreService

/// `storekit bench serve`: the cost of the HTTP layer, against limits measured in the same run.
///
/// Purchases: 8 clients in flight over HTTP against 8 tasks buying in-process on the same kind of
/// store (durable, SQLite). Reads: GET requests for a signed transaction against a libmicrohttpd
/// handler that answers "hello" in the same process, with the same client. Pages: with 10,000
/// transactions in the store, Transaction Manager pages (plain and filtered) and storefronts, against
/// the same hello handler.
struct BenchServe: Command {
    static let name = "bench serve"
    static let abstract = "Measure purchases and signed reads over HTTP against in-process purchases and a hello-world handler (build with -c release)."
    static let usage = "[--json] [--seconds N]"

    var json: Bool
    var seconds: Double

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        seconds = try arguments.value("--seconds", expected: "a number of seconds from 1 to 60") { Double($0).flatMap { (1...60).contains($0) ? $0 : nil } } ?? 3
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

        let local = try makeStore("in-process")
        for client in 0..<Self.clients { try await local.addDevice("device\(client)", account: "buyer\(client)") }
        let inProcess = try await Self.rate(seconds: seconds) { client in
            _ = try await local.purchase(PurchaseRequest(productID: BenchStoreFile.consumable, account: "buyer\(client)", device: "device\(client)"))
        }

        let served = try makeStore("served")
        for client in 0..<Self.clients { try await served.addDevice("device\(client)", account: "buyer\(client)") }
        let server: StoreServer
        do { server = try StoreServer(store: served) } catch { throw CommandFailure(error.description) }
        defer { server.stop() }
        let session = Self.session()
        let purchaseBody = Data(#"{"productID": "\#(BenchStoreFile.consumable)"}"#.utf8)
        let http = try await Self.rate(seconds: seconds) { client in
            try await Self.send(session, "POST", server.url.appendingPathComponent("/v1/devices/device\(client)/purchases"), body: purchaseBody)
        }

        let readURL = URL(string: server.url.absoluteString + "/v1/devices/device0/transactions?view=transaction&id=0")!
        let reads = try await Self.rate(seconds: seconds) { _ in try await Self.send(session, "GET", readURL) }
        let hello: HTTPServer
        do {
            hello = try HTTPServer { _ in .text(200, "hello") }
        } catch { throw CommandFailure(error.description) }
        defer { hello.stop() }
        let helloURL = hello.url.appendingPathComponent("/hello")
        let helloRate = try await Self.rate(seconds: seconds) { _ in try await Self.send(session, "GET", helloURL) }

        var report = BenchmarkReport(name: "bench serve")
        report.add("clients", Self.clients)
        report.add("http_purchases_per_second", http.rounded())
        report.add("in_process_purchases_per_second", inProcess.rounded())
        report.add("http_to_in_process_purchase_ratio", (http / inProcess).thousandths)
        report.add("purchase_ratio_aim", 0.5)
        report.add("api_reads_per_second", reads.rounded())
        report.add("microhttpd_hello_per_second", helloRate.rounded())
        report.add("read_to_hello_ratio", (reads / helloRate).thousandths)
        report.add("read_ratio_aim", 0.5)

        // The web pages with a store of 10,000 transactions: a Transaction Manager page (what its
        // script asks for: 50 rows at a random place, and a filter that matches rarely), and the
        // storefront of a device with a long history.
        var count = try await served.ledgerTransactions(after: nil, limit: .max).count
        while count < Self.pageStoreSize {
            _ = try await served.purchase(PurchaseRequest(productID: BenchStoreFile.consumable, account: "buyer\(count % Self.clients)",
                                                          device: "device\(count % Self.clients)"))
            count += 1
        }
        let base = server.url.absoluteString
        let pageSize = 50
        let transactionPages = try await Self.rate(seconds: seconds) { client in
            let after = (client * 1_237 + Int.random(in: 0..<Self.pageStoreSize)) % Self.pageStoreSize
            try await Self.send(session, "GET", URL(string: "\(base)/v1/admin/transactions?limit=\(pageSize)&after=\(after)")!)
        }
        let filteredPages = try await Self.rate(seconds: seconds) { _ in
            try await Self.send(session, "GET", URL(string: "\(base)/v1/admin/transactions?limit=\(pageSize)&state=refunded")!)
        }
        let storefronts = try await Self.rate(seconds: seconds) { client in
            try await Self.send(session, "GET", URL(string: "\(base)/store?account=buyer\(client)&device=device\(client)")!)
        }
        report.add("store_transactions", count)
        report.add("transaction_manager_pages_per_second", transactionPages.rounded())
        report.add("transaction_manager_page_to_hello_ratio", (transactionPages / helloRate).thousandths)
        report.add("filtered_pages_per_second", filteredPages.rounded())
        report.add("storefront_pages_per_second", storefronts.rounded())
        report.add("storefront_page_to_hello_ratio", (storefronts / helloRate).thousandths)
        console.print(try report.render(json: json))
    }

    static func session() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = clients
        return URLSession(configuration: configuration)
    }

    static func send(_ session: URLSession, _ method: String, _ url: URL, body: Data? = nil) async throws {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        let (_, response) = try await session.detachedData(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw CommandFailure("\(method) \(url.path) answered HTTP \(status)") }
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
