import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog
import StoreKitCommands

/// `storekit bench shared-store`: HTTP purchases on a store in PostgreSQL through one `storekit serve`
/// process, then through two sharing the store, measured with `wrk` (32 keep-alive connections in
/// all, split between the instances), in alternating rounds. The limit is the one instance's rate in
/// the same run: the aim is two instances at 1.5 times it.
///
/// `wrk` keeps each connection's next purchase waiting for the answer to the last, so too few
/// connections measure how long a purchase takes, not how many a configuration can sell: with 8 in
/// all, one instance sold about 1,500 a second of the 1,900 it sells with 32 or 64, and two instances,
/// 4 connections each, were further below theirs. 32 saturate both.
///
/// Instances on a team's machines each bring a machine's CPU; on one small host they would share it
/// with PostgreSQL and `wrk`, and a second instance could only take CPU from the first. So each
/// instance runs in a CPU cgroup of its own with `--instance-cpu` cores (half a core unless told:
/// the two instances then have one core between them, PostgreSQL and `wrk` the other), as a small
/// machine of its own would. `--instance-cpu 0` runs them unconfined.
struct BenchSharedStore: Command {
    static let declaration = CommandDeclaration("bench shared-store", group: .benchmarks, abstract: "Measure HTTP purchases on a store in PostgreSQL through one storekit serve process, then two (build with -c release).", arguments: [
        .option("--postgres", "URL", "an empty PostgreSQL database to make the store in: postgres://USER@HOST:PORT/DB", required: true),
        .flag("--json", "print JSON"),
        .option("--seconds", "N", "how long each load runs (default 3)"),
        .option("--rounds", "N", "rounds of one, then two instances (default 3)"),
        .option("--instance-cpu", "CORES", "the CPU each instance may use, as a machine of its own would (default 0.5; 0: unconfined)"),
        .option("--connections", "N", "keep-alive connections in all, split between the instances (default 32)"),
    ])

    var postgres: String
    var json: Bool
    var seconds: Double
    var rounds: Int
    var instanceCPU: Double
    var connections: Int

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        guard let postgres = try arguments.value("--postgres") else { throw ValidationError("missing --postgres URL (an empty database)") }
        guard StoreDatabase.isDatabaseURL(postgres) else { throw ValidationError("--postgres must be a postgres:// URL, not \(postgres)") }
        self.postgres = postgres
        json = arguments.flag("--json")
        seconds = try arguments.value("--seconds", expected: "a number of seconds from 1 to 60") { Double($0).flatMap { (1...60).contains($0) ? $0 : nil } } ?? 3
        rounds = try arguments.value("--rounds", expected: "a number of rounds from 1 to 10") { Int($0).flatMap { (1...10).contains($0) ? $0 : nil } } ?? 3
        instanceCPU = try arguments.value("--instance-cpu", expected: "a number of cores from 0 to 64") { Double($0).flatMap { (0...64).contains($0) ? $0 : nil } } ?? 0.5
        connections = try arguments.value("--connections", expected: "an even number of connections from 2 to 256") {
            Int($0).flatMap { (2...256).contains($0) && $0 % 2 == 0 ? $0 : nil }
        } ?? 32
    }

    func run(console: Console) async throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        guard executable.lastPathComponent == "storekit" else { throw CommandFailure("bench shared-store runs from the storekit executable") }
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        let store = try await StoreLocation.database(postgres).create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                                                      clockMode: .manual, start: Date(timeIntervalSince1970: 1_767_225_600))
        for device in 0..<connections { try await store.addDevice("device\(device)", account: "buyer\(device)") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-shared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        var instances: [(child: RunningChild, url: URL)] = []
        var groups: [CPUGroup] = []
        func stopAll() async {
            for instance in instances { _ = await instance.child.stop() }
            for group in groups { group.remove() }
        }
        var ones: [Double] = []
        var twos: [Double] = []
        var idleOnes: [Double] = []
        var idleTwos: [Double] = []
        do {
            for index in 0..<2 {
                let log = scratch.appendingPathComponent("serve-\(index).err").path
                let child = try RunningChild.start(executable.path, ["serve", "--database", postgres, "--port", "0"], standardError: log)
                instances.append((child, try await Self.address(of: child, log: log)))
                if instanceCPU > 0 { groups.append(try CPUGroup(name: "openstorekit-bench-\(getpid())-\(index)", cores: instanceCPU, process: child.pid)) }
            }
            let body = #"{"productID": "\#(BenchStoreFile.consumable)"}"#
            let paths = (0..<connections).map { "/v1/devices/device\($0)/purchases" }
            let half = connections / 2
            let one = LoadGenerator(connections: connections, threads: 1, seconds: seconds)
            let each = LoadGenerator(connections: half, threads: 1, seconds: seconds)
            let (firstURL, secondURL) = (instances[0].url, instances[1].url)
            for _ in 0..<rounds {
                var start = MachineCPU.now()
                ones.append(try await one.measure(firstURL, method: "POST", paths: paths, body: body).requestsPerSecond)
                idleOnes.append((MachineCPU.now() - start).idlePercent)
                start = MachineCPU.now()
                defer { idleTwos.append((MachineCPU.now() - start).idlePercent) }
                async let first = each.measure(firstURL, method: "POST", paths: Array(paths[..<half]), body: body)
                async let second = each.measure(secondURL, method: "POST", paths: Array(paths[half...]), body: body)
                twos.append(try await first.requestsPerSecond + second.requestsPerSecond)
            }
        } catch {
            await stopAll()
            throw error
        }
        await stopAll()
        let ids = try await store.ledgerTransactions().map(\.id)
        guard Set(ids).count == ids.count, ids.sorted() == Array(0..<UInt64(ids.count)) else {
            throw CommandFailure("the shared store's identifiers repeat or have gaps after the load")
        }
        let one = Self.median(ones)
        let two = Self.median(twos)
        var report = BenchmarkReport(name: "bench shared-store")
        report.add("storage", "postgres")
        report.add("load_generator", "wrk, \(connections) keep-alive connections in all")
        report.add("rounds", rounds)
        report.add("cpu_per_instance", instanceCPU > 0 ? "\(instanceCPU) core (a cgroup each)" : "unconfined (the host's, shared)")
        report.add("one_instance_purchases_per_second", one.rounded())
        report.add("two_instances_purchases_per_second", two.rounded())
        report.add("two_to_one_instance_ratio", (two / one).thousandths)
        report.add("ratio_aim", 1.5)
        // With no idle CPU left on the host during the two instances' load, the ratio measures the
        // host (PostgreSQL, wrk and the instances sharing its cores), not the shared store.
        report.add("host_idle_percent_one_instance", Self.median(idleOnes).rounded())
        report.add("host_idle_percent_two_instances", Self.median(idleTwos).rounded())
        report.add("purchases_in_ledger", ids.count)
        console.print(try report.render(json: json))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// The `listening on URL` a serve process prints first.
    static func address(of child: RunningChild, log: String) async throws -> URL {
        let line: String
        do { line = try await child.firstLine() } catch {
            throw CommandFailure("storekit serve did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        guard line.hasPrefix("listening on "), let url = URL(string: String(line.dropFirst("listening on ".count))) else {
            throw CommandFailure("storekit serve printed \(line)")
        }
        return url
    }
}

/// A CPU cgroup one process is confined to: `cores` of CPU time per period (cgroup v2's `cpu.max`,
/// or v1's CFS quota), removed when the benchmark ends.
struct CPUGroup {
    let path: String

    init(name: String, cores: Double, process: pid_t) throws(CommandFailure) {
        let period = 100_000
        let quota = max(1_000, Int(cores * Double(period)))
        let fileManager = FileManager.default
        let unified = fileManager.fileExists(atPath: "/sys/fs/cgroup/cgroup.controllers")
            && (try? String(contentsOfFile: "/sys/fs/cgroup/cgroup.controllers", encoding: .utf8))?.contains("cpu") == true
        let root = unified ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpu"
        path = "\(root)/\(name)"
        do {
            try fileManager.createDirectory(atPath: path, withIntermediateDirectories: false)
            if unified {
                try "\(quota) \(period)".write(toFile: "\(path)/cpu.max", atomically: false, encoding: .utf8)
            } else {
                try String(period).write(toFile: "\(path)/cpu.cfs_period_us", atomically: false, encoding: .utf8)
                try String(quota).write(toFile: "\(path)/cpu.cfs_quota_us", atomically: false, encoding: .utf8)
            }
            try String(process).write(toFile: "\(path)/cgroup.procs", atomically: false, encoding: .utf8)
        } catch {
            try? fileManager.removeItem(atPath: path)
            throw CommandFailure("cannot confine a serve instance to \(cores) core in \(root) (\(error.localizedDescription)): run as a user who may make CPU cgroups, or pass --instance-cpu 0")
        }
    }

    /// Removes the group (its process has ended by then).
    func remove() { rmdir(path) }
}
