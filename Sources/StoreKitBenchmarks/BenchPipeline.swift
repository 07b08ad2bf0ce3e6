import AppStoreBackend
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import BlockingWork
import Foundation
import HTTPClient
import HTTPService
import StoreKitCatalog
import StoreKitCommands
import StoreService
import Synchronization

/// `storekit bench pipeline`: a month of renewals for N subscribers, delivered over HTTP to the
/// entitlement backend and recorded there, measured as one pipeline, against the backend's ingestion
/// rate measured alone in the same run.
///
/// 1. A store (SQLite, or with `--store-postgres` PostgreSQL; manual clock) gets N monthly subscribers in bulk (and the limit's, below),
///    their purchases spread over 27 days, so the next month renews each once.
/// 2. K `backend serve` processes start on one database (SQLite in the scratch folder, or the
///    PostgreSQL database `--postgres` names, which must hold no notifications), behind a round-robin
///    balancer in this process when K > 1.
/// 3. This process serves as the store's sender (``NotificationDeliverer``, `--in-flight` posts at
///    once; with `--senders K`, K senders on the store opened K times, sharing the posts, as K
///    `storekit serve` processes on one store in PostgreSQL would) while the clock advances a day at a time (less above 100,000 subscribers, see
///    ``advanceStep(subscribers:)``) to the Nth subscriber's renewal; the run ends
///    when the backend has recorded every `DID_RENEW`, checked by count and by distinct original
///    transactions.
/// 4. The limit, in two stretches, one on each side of the pipeline: renewals played while no sender
///    runs, signed, and posted by the same number of workers through the sender's client (kept-alive
///    connections) straight to the backend (`backend_ingest_per_second`, both stretches together).
///    They are the same kind of notification as the pipeline's, a subscriber's first renewal the
///    backend sees: the earliest subscribers' before the pipeline, the latest ones' after it. Each is
///    posted once (recorded as delivered after its chunk; the backend's count is checked at the end).
///    A host that takes this machine's cores for a few minutes (steal) then falls more evenly on both
///    sides of the ratio.
///
/// `end_to_end_to_ingest_ratio` is the pipeline's rate over that limit: 1 means delivery and renewals
/// cost the backend nothing. Peak resident memory is this process's (the store, its sender, the
/// balancer) and the largest backend process's.
struct BenchPipeline: Command {
    static let declaration = CommandDeclaration("bench pipeline", group: .benchmarks, abstract: "Measure renewals, notification delivery and backend ingestion as one pipeline (build with -c release).", arguments: [
        .option("--subscribers", "N", "how many subscribers"),
        .option("--postgres", "URL", "the backends' PostgreSQL (default: SQLite)"),
        .option("--instances", "K", "how many backend processes"),
        .option("--in-flight", "N", "notification posts at once"),
        .option("--store-postgres", "URL", "make the store in this empty PostgreSQL database (default: SQLite in a scratch folder)"),
        .option("--senders", "K", "how many store instances deliver notifications, each with the store opened on its own (default 1; more needs --store-postgres)"),
        .flag("--json", "print JSON"),
    ])

    var json: Bool
    var subscribers: Int
    var postgres: String?
    var instances: Int
    var inFlight: Int
    var storePostgres: String?
    var senders: Int

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        subscribers = try arguments.value("--subscribers", expected: "a number of subscribers from 100 to 10000000") {
            Int($0).flatMap { (100...10_000_000).contains($0) ? $0 : nil }
        } ?? 10_000
        postgres = try arguments.value("--postgres")
        instances = try arguments.value("--instances", expected: "a number of backend processes from 1 to 8") { Int($0).flatMap { (1...8).contains($0) ? $0 : nil } } ?? 1
        inFlight = try arguments.value("--in-flight", expected: "a number of posts in flight from 1 to 256") {
            Int($0).flatMap { (1...256).contains($0) ? $0 : nil }
        } ?? NotificationDeliverer.Options().inFlight
        storePostgres = try arguments.value("--store-postgres")
        if let storePostgres, !StoreDatabase.isDatabaseURL(storePostgres) { throw ValidationError("--store-postgres must be a postgres:// URL, not \(storePostgres)") }
        senders = try arguments.value("--senders", expected: "a number of sending store instances from 1 to 8") { Int($0).flatMap { (1...8).contains($0) ? $0 : nil } } ?? 1
        if senders > 1, storePostgres == nil { throw ValidationError("--senders above 1 needs --store-postgres: several instances share a store in PostgreSQL") }
    }

    /// How many notifications the limit is measured with, at most, and how many are signed and held
    /// at once for it.
    static let ingestSample = 20_000
    static let ingestChunk = 2_000
    /// How far the clock moves in one advance: a day, and less above 100,000 subscribers, so that each
    /// advance renews about 3,700 at most. An advance holds the store's executor until its renewals
    /// are committed, and the sender's claims wait behind it: at a million, a day's 37,000 renewals
    /// kept the sender nearly idle (0.05 posts in flight) for the 150 s the renewals took.
    static func advanceStep(subscribers: Int) -> TimeInterval {
        86_400 * min(1, 100_000 / Double(subscribers))
    }

    /// How long the backend may record nothing new before the run fails.
    static let stallLimit: Duration = .seconds(120)

    func run(console: Console) async throws {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        guard executable.lastPathComponent == "storekit" else { throw CommandFailure("bench pipeline runs from the storekit executable") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("storekit-bench-pipeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        // 1. The store.
        let configuration = try StoreKitConfiguration.read(Data(BenchCatalogFixture.json.utf8), fileName: "bench.storekit").configuration
        let location = storePostgres.map { StoreLocation.database($0) } ?? .directory(scratch.appendingPathComponent("store"))
        let store = try await location.create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.bench"),
                                              clockMode: .manual, start: Date(timeIntervalSince1970: 1_767_225_600))
        // The other senders: the same store opened again, as other `storekit serve` processes would.
        var otherSenders: [SimulatedAppStore] = []
        for _ in 1..<senders { otherSenders.append(try await location.open()) }
        // The limit's two stretches: the first renewals of the earliest subscribers, before the
        // pipeline's, and of the latest, after them.
        let sample = min(subscribers, Self.ingestSample)
        let sampleBefore = sample / 2
        let sampleAfter = sample - sampleBefore

        // 2. The backend.
        let rootFile = scratch.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: rootFile)
        let database = postgres ?? "sqlite:\(scratch.appendingPathComponent("backend.sqlite").path)"
        let storage: SQLBackendStorage
        if let postgres {
            storage = try await SQLBackendStorage.postgres(url: postgres)
        } else {
            storage = try await SQLBackendStorage.sqlite(path: scratch.appendingPathComponent("backend.sqlite").path)
        }
        guard try await storage.notificationCount() == 0 else {
            throw CommandFailure("the backend database already holds notifications: give bench pipeline an empty database")
        }
        var backends: [RunningChild] = []
        var balancer: HTTPServer?
        func stopAll() async {
            if let balancer { await balancer.stop() }
            for backend in backends { await backend.stop() }
        }
        let target: URL
        do throws(any Error) {
            var urls: [URL] = []
            for instance in 0..<instances {
                let log = scratch.appendingPathComponent("backend-\(instance).err").path
                let backend = try RunningChild.start(executable.path, ["backend", "serve", "--database", database, "--bundle-id", "com.example.bench",
                                                                      "--environment", "Xcode", "--root", rootFile.path, "--port", "0"],
                                                     standardError: log)
                backends.append(backend)
                let line: String
                do { line = try await backend.firstLine() } catch {
                    throw CommandFailure("backend serve did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
                }
                guard line.hasPrefix("listening on "), let url = URL(string: String(line.dropFirst("listening on ".count))) else {
                    throw CommandFailure("backend serve printed \(line)")
                }
                urls.append(url.appendingPathComponent("/apple/notifications"))
            }
            if urls.count == 1 {
                target = urls[0]
            } else {
                let server = try RoundRobin.serve(urls)
                balancer = server
                target = server.url.appendingPathComponent("/apple/notifications")
            }
        } catch {
            await stopAll()
            throw error
        }

        do throws(any Error) {
            // The subscribers, in bulk: the pipeline's and, around them, the limit's. Their renewals are
            // due for delivery to the backend, as the URL is set.
            try await store.updateSettings { $0.notificationURL = target.absoluteString }
            var clock = ContinuousClock.now
            let imported = try await store.importSubscribers(productID: BenchStoreFile.subscription, accountPrefix: "s", count: sampleBefore + subscribers + sampleAfter)
            let importSeconds = (ContinuousClock.now - clock).seconds

            // 4a. The limit's first stretch, before the pipeline: the earliest subscribers renew, and
            // their renewals are posted straight to the backend.
            var earliest = FreshRenewals(store: store, advancingUntil: imported.renewalDate(ofSubscriber: sampleBefore - 1))
            let limitBefore = try await Self.measureIngest(from: &earliest, count: sampleBefore, to: target, workers: inFlight, backends: backends)
            guard limitBefore.posted == sampleBefore else { throw CommandFailure("expected \(sampleBefore) renewals before the pipeline's, found \(limitBefore.posted)") }
            let pipelineEnd = imported.renewalDate(ofSubscriber: sampleBefore + subscribers - 1)

            // 3. The pipeline: renewals while the sender delivers. Each timed stretch starts with what
            // was written before it on disk, so that the kernel's writing back of the import (hundreds
            // of megabytes at a million) does not slow the first commits of the stretch after it.
            await Self.flushFileSystems()
            // `--in-flight` posts in all, split between the senders.
            let deliverers = ([store] + otherSenders).enumerated().map { index, sender in
                NotificationDeliverer(store: sender, options: NotificationDeliverer.Options(inFlight: max(1, inFlight / senders + (index < inFlight % senders ? 1 : 0))))
            }
            let delivery = Task {
                await withTaskGroup(of: Void.self) { group in
                    for deliverer in deliverers { group.addTask { await deliverer.run() } }
                }
            }
            let deliverer = Senders(deliverers)
            clock = ContinuousClock.now
            let cpu0 = Self.cpu(backends)
            let machine0 = MachineCPU.now()
            var renewals = 0
            var now = try await store.currentTime()
            let step = Self.advanceStep(subscribers: subscribers)
            while now < pipelineEnd {
                now = min(now.addingTimeInterval(step), pipelineEnd)
                renewals += try await store.advanceTime(to: now)
            }
            let renewalsSeconds = (ContinuousClock.now - clock).seconds
            let sentDuringRenewals = deliverer.statistics
            // The sender's count of accepted posts is watched (a backend answers 200 only once it has
            // committed); then the backend's own count, which has the last word.
            var accepted = 0
            var lastProgress = ContinuousClock.now
            func stalled() throws {
                guard ContinuousClock.now - lastProgress < Self.stallLimit else {
                    delivery.cancel()
                    throw CommandFailure("the backend accepted nothing new for \(Self.stallLimit) (\(accepted) of \(renewals))")
                }
            }
            while accepted < renewals {
                let count = deliverer.statistics.successes
                if count > accepted { lastProgress = .now }
                accepted = count
                try stalled()
                if accepted < renewals { try await Task.sleep(for: .milliseconds(5)) }
            }
            while try await storage.notificationCount() < sampleBefore + renewals {
                try stalled()
                try await Task.sleep(for: .milliseconds(20))
            }
            let endToEndSeconds = (ContinuousClock.now - clock).seconds
            let cpu1 = Self.cpu(backends)
            let machinePipeline = MachineCPU.now() - machine0
            delivery.cancel()
            await delivery.value
            let sent = deliverer.statistics
            // The backend also holds the limit's first stretch.
            let tally = try await storage.notificationTally(type: "DID_RENEW")
            let expected = sampleBefore + subscribers
            guard renewals == subscribers, tally.notifications == expected, tally.originalTransactions == expected else {
                throw CommandFailure("expected \(subscribers) renewals recorded once each (and the limit's \(sampleBefore) before them); \(renewals) renewals, the backend has \(tally.notifications) DID_RENEW about \(tally.originalTransactions) subscriptions")
            }
            let storeMemory = ProcessMemory.peakResidentMegabytes()
            let backendMemory = backends.map(\.peakResidentMegabytes).max() ?? 0

            // 4b. The limit's second stretch, after the pipeline: the latest subscribers' renewals.
            var latest = FreshRenewals(store: store, advancingUntil: imported.lastRenewalDate)
            let limitAfter = try await Self.measureIngest(from: &latest, count: sampleAfter, to: target, workers: inFlight, backends: backends)
            guard limitAfter.posted == sampleAfter else { throw CommandFailure("expected \(sampleAfter) renewals after the pipeline's, found \(limitAfter.posted)") }
            // The limit measured recordings, not a backend dropping notifications it already had.
            let recordedInAll = try await storage.notificationCount()
            guard recordedInAll == sampleBefore + subscribers + sampleAfter else {
                throw CommandFailure("the limit posted \(sample) renewals, but the backend recorded \(recordedInAll - subscribers) new ones besides the pipeline's")
            }
            await stopAll()
            let limit = limitBefore + limitAfter
            let ingestRate = limit.rate

            let endToEndRate = Double(subscribers) / endToEndSeconds
            var report = BenchmarkReport(name: "bench pipeline")
            report.add("subscribers", subscribers)
            report.add("storage", postgres == nil ? "sqlite" : "postgres")
            report.add("store_storage", storePostgres == nil ? "sqlite" : "postgres")
            report.add("senders", senders)
            report.add("instances", instances)
            report.add("in_flight", inFlight)
            report.add("import_seconds", importSeconds.thousandths)
            report.add("renewals", renewals)
            report.add("renewals_seconds", renewalsSeconds.thousandths)
            report.add("delivery_seconds", (endToEndSeconds - renewalsSeconds).thousandths)
            report.add("end_to_end_seconds", endToEndSeconds.thousandths)
            report.add("notifications_per_second", endToEndRate.rounded())
            report.add("delivery_attempts", sent.attempts)
            report.add("delivery_in_flight_max", sent.maxInFlight)
            // Posts in flight on average (Little's law), while the clock advanced and after.
            report.add("delivery_in_flight_mean_renewing", (sentDuringRenewals.secondsInFlight / renewalsSeconds).hundredths)
            report.add("delivery_in_flight_mean_after", ((sent.secondsInFlight - sentDuringRenewals.secondsInFlight) / (endToEndSeconds - renewalsSeconds)).hundredths)
            // Where the CPU went (two cores shared by every process here): this process is the store,
            // its sender and, for the limit, the client; the backend's figure leaves out PostgreSQL's.
            report.add("cpu_ms_per_notification_store", ((cpu1.store - cpu0.store) / Double(subscribers) * 1000).thousandths)
            report.add("cpu_ms_per_notification_backend", ((cpu1.backend - cpu0.backend) / Double(subscribers) * 1000).thousandths)
            report.add("cpu_ms_per_notification_client_alone", (limit.cpu.store / Double(limit.posted) * 1000).thousandths)
            report.add("cpu_ms_per_notification_backend_alone", (limit.cpu.backend / Double(limit.posted) * 1000).thousandths)
            report.add("cpu_ms_per_notification_backend_alone_before_pipeline", (limitBefore.cpu.backend / Double(limitBefore.posted) * 1000).thousandths)
            report.add("cpu_ms_per_notification_backend_alone_after_pipeline", (limitAfter.cpu.backend / Double(limitAfter.posted) * 1000).thousandths)
            report.add("recorded_once", tally.notifications - sampleBefore)
            report.add("peak_rss_mb_store", (storeMemory * 10).rounded() / 10)
            report.add("peak_rss_mb_backend", (backendMemory * 10).rounded() / 10)
            report.add("backend_ingest_sample", limit.posted)
            report.add("backend_ingest_per_second", ingestRate.rounded())
            report.add("backend_ingest_per_second_before_pipeline", limitBefore.rate.rounded())
            report.add("backend_ingest_per_second_after_pipeline", limitAfter.rate.rounded())
            report.add("end_to_end_to_ingest_ratio", (endToEndRate / ingestRate).thousandths)
            report.add("end_to_end_to_ingest_aim", 0.7)
            // The stretches are minutes apart on a virtual machine whose host may take its cores for a
            // while: how much it took in each, how long the cores sat idle, and the ratio of the rates
            // per unit of the cores' time this machine really had.
            report.add("machine_steal_percent_pipeline", machinePipeline.stealPercent.tenths)
            report.add("machine_steal_percent_limit", limit.machine.stealPercent.tenths)
            report.add("machine_steal_percent_limit_before_pipeline", limitBefore.machine.stealPercent.tenths)
            report.add("machine_steal_percent_limit_after_pipeline", limitAfter.machine.stealPercent.tenths)
            report.add("machine_idle_percent_pipeline", machinePipeline.idlePercent.tenths)
            report.add("machine_idle_percent_limit", limit.machine.idlePercent.tenths)
            report.add("machine_idle_percent_limit_before_pipeline", limitBefore.machine.idlePercent.tenths)
            report.add("machine_idle_percent_limit_after_pipeline", limitAfter.machine.idlePercent.tenths)
            report.add("end_to_end_to_ingest_ratio_steal_corrected",
                       (endToEndRate / machinePipeline.availableFraction / (ingestRate / limit.machine.availableFraction)).thousandths)
            console.print(try report.render(json: json))
        } catch {
            await stopAll()
            throw error
        }
    }

    /// The store instances' senders, their statistics added up (the most in flight at once: the sum of
    /// each one's most).
    struct Senders {
        let deliverers: [NotificationDeliverer]
        init(_ deliverers: [NotificationDeliverer]) { self.deliverers = deliverers }

        var statistics: NotificationDeliverer.Statistics {
            deliverers.map(\.statistics).reduce(into: NotificationDeliverer.Statistics()) { sum, each in
                sum.attempts += each.attempts
                sum.successes += each.successes
                sum.maxInFlight += each.maxInFlight
                sum.secondsInFlight += each.secondsInFlight
            }
        }
    }

    /// One stretch of the limit: notifications posted straight to the backend, the time and CPU the
    /// posting took, and how the machine's cores went meanwhile.
    struct IngestStretch {
        var posted = 0
        var seconds = 0.0
        var cpu = (store: 0.0, backend: 0.0)
        var machine = MachineCPU()

        var rate: Double { seconds > 0 ? Double(posted) / seconds : 0 }

        static func + (one: IngestStretch, other: IngestStretch) -> IngestStretch {
            IngestStretch(posted: one.posted + other.posted, seconds: one.seconds + other.seconds,
                          cpu: (one.cpu.store + other.cpu.store, one.cpu.backend + other.cpu.backend), machine: one.machine + other.machine)
        }
    }

    /// The backend alone, as fast as the sender's client and workers can post: `count` fresh renewals,
    /// signed a chunk at a time (never all held at once); only the posting is timed and its CPU
    /// counted. Each chunk is then recorded in the store as delivered, as the sender would: neither a
    /// later chunk nor the sender posts it again. Like the pipeline, it starts with what was written
    /// before it on disk.
    static func measureIngest(from fresh: inout FreshRenewals, count: Int, to target: URL, workers: Int, backends: [RunningChild]) async throws -> IngestStretch {
        await flushFileSystems()
        var stretch = IngestStretch()
        while stretch.posted < count {
            let chunk = try await fresh.next(min(Self.ingestChunk, count - stretch.posted))
            guard !chunk.isEmpty else { break }
            let cpuBefore = Self.cpu(backends)
            let machineBefore = MachineCPU.now()
            let clock = ContinuousClock.now
            try await Self.post(chunk.map(\.body), to: target, workers: workers)
            stretch.seconds += (ContinuousClock.now - clock).seconds
            stretch.machine = stretch.machine + (MachineCPU.now() - machineBefore)
            let cpuAfter = Self.cpu(backends)
            stretch.cpu = (stretch.cpu.store + cpuAfter.store - cpuBefore.store, stretch.cpu.backend + cpuAfter.backend - cpuBefore.backend)
            stretch.posted += chunk.count
            try await fresh.store.recordDeliveryAttempts(chunk.map { DeliveryAttemptResult(sequence: $0.sequence, result: "SUCCESS") })
        }
        return stretch
    }

    /// Waits until what was written so far is on disk (`sync`), on a thread of its own.
    static func flushFileSystems() async {
        await BlockingWork.run("bench pipeline sync") { sync() }
    }

    /// CPU seconds used so far by this process and by the backend processes together.
    static func cpu(_ backends: [RunningChild]) -> (store: Double, backend: Double) {
        (ProcessMemory.cpuSeconds(), backends.map { ProcessMemory.cpuSeconds(process: String($0.pid)) }.reduce(0, +))
    }

    /// Posts every body, `workers` at a time, each worker one after another; each must be accepted.
    static func post(_ bodies: [Data], to url: URL, workers: Int) async throws {
        // The sender's own client: kept-alive connections, one per worker.
        guard let connections = KeepAliveConnections(origin: url, maxIdle: workers) else { throw CommandFailure("\(url) is not a plain http URL") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    for index in stride(from: worker, to: bodies.count, by: workers) {
                        let answer = try await connections.send(.json("POST", url, body: bodies[index], timeout: .seconds(30)))
                        guard answer.status == 200 else {
                            throw CommandFailure("the backend answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// A small load balancer for the benchmarks: each request goes to the next of several servers in turn.
enum RoundRobin {
    private final class Turn: Sendable {
        let next = Atomic<Int>(0)
    }

    static func serve(_ targets: [URL]) throws -> HTTPServer {
        let turn = Turn()
        // Kept-alive connections to each server, as a load balancer keeps them.
        let pools = targets.map { KeepAliveConnections(origin: $0, maxIdle: 64) }
        return try HTTPServer(host: "127.0.0.1", port: 0) { request in
            let index = turn.next.wrappingAdd(1, ordering: .relaxed).oldValue % targets.count
            let target = targets[index]
            do {
                let forwarded = HTTPClient.Request.json(request.method, target, body: request.body, timeout: .seconds(30))
                let answer = if let pool = pools[index] { try await pool.send(forwarded) } else { try await HTTPClient.shared.send(forwarded) }
                return HTTPResponse(status: answer.status, headers: [("Content-Type", answer.headers["content-type"] ?? "application/json")], body: answer.body)
            } catch {
                return HTTPResponse(status: 502, headers: [("Content-Type", "text/plain")], body: Data("\(error)".utf8))
            }
        }
    }
}

/// Renewals the sender is not delivering, as signed webhook bodies, a chunk at a time: fresh
/// notifications for the limit, so the backend does a recording's full work. Claiming is how the
/// outbox is read, a page at a time, with no sender claiming beside it (none is running).
struct FreshRenewals {
    let store: SimulatedAppStore
    /// How far the clock may be advanced for more.
    let end: Date
    private var now: Date?

    init(store: SimulatedAppStore, advancingUntil end: Date) {
        self.store = store
        self.end = end
    }

    /// Up to `count` notifications' sequences and bodies, the clock advanced six hours at a time as
    /// needed; none when no more come.
    mutating func next(_ count: Int) async throws -> [(sequence: Int64, body: Data)] {
        var bodies: [(sequence: Int64, body: Data)] = []
        var now: Date
        if let known = self.now { now = known } else { now = try await store.currentTime() }
        while bodies.count < count {
            // What this chunk claimed stays claimed (a lease in real time) until recorded; a lease that
            // lapses on a slow machine must not make it taken twice.
            let held = Set(bodies.map(\.sequence))
            if let claimed = try await store.claimDueNotificationRecords(limit: min(1_000, count - bodies.count), excluding: held) {
                for record in claimed.records {
                    bodies.append((record.sequence, NotificationDeliverer.webhookBody(try store.signedNotification(record).signedPayload)))
                }
                continue
            }
            guard now < end else { break }
            now = min(now.addingTimeInterval(6 * 3_600), end)
            try await store.advanceTime(to: now)
        }
        self.now = now
        return bodies
    }
}
