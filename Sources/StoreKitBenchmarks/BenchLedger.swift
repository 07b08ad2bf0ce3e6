import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog
import StoreKitCommands

/// `storekit bench ledger`: what one account's views cost in stores of growing history.
///
/// For each size a store is made whose ledger holds that many transactions: a long history imported
/// for one account, and a handful of purchases for `alice` (a non-consumable, a subscription, a few
/// consumables). A fresh process (`bench ledger-probe`) then opens the store and answers alice's
/// `currentEntitlements`, subscription `status`, `latest`, `unfinished`, `Transaction.all` and one
/// purchase, reporting each wall time and its peak memory. The probe runs three times per size; the
/// medians are reported. The cost of a view should not grow with the history of other accounts:
/// `ratio_<largest>_to_<smallest>` near 1.
struct BenchLedger: Command {
    static let declaration = CommandDeclaration("bench ledger", group: .benchmarks, abstract: "Measure opening a store and one account's views at 1,000 / 100,000 / 1,000,000 transactions (build with -c release).", arguments: [
        .flag("--json", "print JSON"),
        .option("--sizes", "N,N,…", "the ledger sizes to measure"),
    ])

    static let operations = ["open", "currentEntitlements", "status", "latest", "unfinished", "all", "purchase"]

    var json: Bool
    var sizes: [Int]

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        sizes = try arguments.value("--sizes", expected: "sizes like 1000,100000,1000000 (each at least 100)") { text in
            let sizes = text.split(separator: ",").compactMap { Int($0) }
            return sizes.count == text.split(separator: ",").count && !sizes.isEmpty && sizes.allSatisfy { $0 >= 100 } ? sizes : nil
        } ?? [1_000, 100_000, 1_000_000]
    }

    static func label(_ size: Int) -> String {
        if size % 1_000_000 == 0 { return "\(size / 1_000_000)m" }
        if size % 1_000 == 0 { return "\(size / 1_000)k" }
        return String(size)
    }

    func run(console: Console) async throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        guard executable.lastPathComponent == "storekit" else { throw CommandFailure("bench ledger runs from the storekit executable") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-ledger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var report = BenchmarkReport(name: "bench ledger")
        var medians: [String: [Int: (seconds: Double, rss: Double)]] = [:]
        for size in sizes {
            let directory = scratch.appendingPathComponent(Self.label(size))
            let built = ContinuousClock.now
            try await Self.makeStore(at: directory, transactions: size)
            let buildSeconds = (ContinuousClock.now - built).seconds
            var samples: [[String: (seconds: Double, rss: Double)]] = []
            for _ in 0..<3 { samples.append(try await Self.probe(directory, executable: executable)) }
            for operation in Self.operations {
                let seconds = samples.compactMap { $0[operation]?.seconds }.sorted()
                let rss = samples.compactMap { $0[operation]?.rss }.max() ?? 0
                guard !seconds.isEmpty else { throw CommandFailure("the probe did not report \(operation)") }
                medians[operation, default: [:]][size] = (seconds[seconds.count / 2], rss)
            }
            report.add("build_seconds_\(Self.label(size))", Self.round(buildSeconds, 2))
            report.add("database_mb_\(Self.label(size))", Self.round(Self.megabytes(ofDirectory: directory), 1))
            try? FileManager.default.removeItem(at: directory)
        }
        let smallest = sizes.min()!, largest = sizes.max()!
        for operation in Self.operations {
            var entry: [String: Double] = [:]
            for size in sizes {
                guard let measured = medians[operation]?[size] else { continue }
                entry["seconds_\(Self.label(size))"] = Self.round(measured.seconds, 6)
                entry["rss_mb_\(Self.label(size))"] = Self.round(measured.rss, 1)
            }
            if let small = medians[operation]?[smallest], let large = medians[operation]?[largest], smallest != largest {
                entry["ratio_\(Self.label(largest))_to_\(Self.label(smallest))"] = Self.round(large.seconds / small.seconds, 2)
            }
            if json {
                report.add(operation, entry)
            } else {
                report.add(operation, entry.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
        }
        console.print(try report.render(json: json))
    }

    /// A store with `transactions` transactions: alice's handful, and the rest as another account's history.
    static func makeStore(at directory: URL, transactions: Int) async throws {
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        let store = try await StoreDirectory.create(at: directory, configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                              clockMode: .manual, start: Date(timeIntervalSince1970: 1_767_225_600))
        for product in alicesPurchases {
            _ = try await store.purchase(PurchaseRequest(productID: product, account: "alice", device: "phone"))
        }
        try await store.importHistory(productID: BenchStoreFile.consumable, account: "bulk", count: transactions - alicesPurchases.count)
    }

    static let alicesPurchases = [BenchStoreFile.nonConsumable, BenchStoreFile.subscription, BenchStoreFile.consumable,
                                  BenchStoreFile.consumable, BenchStoreFile.consumable]

    /// Runs the probe in a fresh process and reads its report.
    static func probe(_ directory: URL, executable: URL) async throws -> [String: (seconds: Double, rss: Double)] {
        let run = try await ChildProgram.run(executable.path, ["bench", "ledger-probe", directory.path])
        guard run.status == 0, let object = try JSONSerialization.jsonObject(with: run.standardOutput) as? [String: [String: Double]] else {
            throw CommandFailure("the ledger probe failed (status \(run.status))")
        }
        return object.compactMapValues { value in value["seconds"].flatMap { seconds in value["rss_mb"].map { (seconds, $0) } } }
    }

    static func round(_ value: Double, _ digits: Int) -> Double {
        let scale = pow(10, Double(digits))
        return (value * scale).rounded() / scale
    }

    static func megabytes(ofDirectory directory: URL) -> Double {
        let files = (try? FileManager.default.subpathsOfDirectory(atPath: directory.path)) ?? []
        let bytes = files.compactMap { try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent($0).path)[.size] as? Int }
        return Double(bytes.reduce(0, +)) / 1_048_576
    }
}

/// `storekit bench ledger-probe`: opens a store made by `bench ledger` and times alice's views, in
/// this fresh process, with the peak memory after each.
struct BenchLedgerProbe: Command {
    static let declaration = CommandDeclaration("bench ledger-probe", group: .benchmarks, abstract: "Time opening a bench ledger store and alice's views in this process (used by bench ledger).", arguments: [
        .positional("DIR", "the store's folder"),
    ])

    var directory: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        var result: [String: [String: Double]] = [:]
        func record(_ operation: String, _ seconds: Double) {
            result[operation] = ["seconds": seconds, "rss_mb": ProcessMemory.peakResidentMegabytes()]
        }
        let opened = ContinuousClock.now
        let store = try await StoreDirectory.open(at: URL(fileURLWithPath: directory))
        record("open", (ContinuousClock.now - opened).seconds)
        let group = BenchStoreFile.group
        record("currentEntitlements", try await Self.median { _ = try await store.currentEntitlements(device: "phone") })
        record("status", try await Self.median { _ = try await store.subscriptionStatuses(groupID: group, device: "phone") })
        record("latest", try await Self.median { _ = try await store.latestTransaction(for: BenchStoreFile.consumable, device: "phone") })
        record("unfinished", try await Self.median { _ = try await store.unfinishedTransactions(device: "phone") })
        record("all", try await Self.median { _ = try await store.allTransactions(device: "phone") })
        let request = PurchaseRequest(productID: BenchStoreFile.consumable, account: "alice", device: "phone")
        record("purchase", try await Self.median(runs: 5) { _ = try await store.purchase(request) })
        console.print(try PrettyJSON.string(from: result))
    }

    /// The median wall time of `runs` calls.
    static func median(runs: Int = 15, _ body: () async throws -> Void) async throws -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            try await body()
            times.append((ContinuousClock.now - start).seconds)
        }
        return times.sorted()[runs / 2]
    }

}

/// What `bench ledger` sells: the benchmarks' catalog.
enum BenchStoreFile {
    static let nonConsumable = "bench.unlock.a"
    static let subscription = "bench.monthly"
    static let consumable = "bench.consumable"
    static let group = "B1"
}
