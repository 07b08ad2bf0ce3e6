import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import Synchronization
import Testing
import TestSupport

/// The `storekit` executable of this build.
let builtStorekit = SharedTestData.packageRoot.appendingPathComponent(".build/debug/storekit")

/// The rollups survive `kill -9` of a real `storekit backend serve` during ingestion: whatever was
/// committed with a notification is in them once, and they equal a rebuild and the store's ledger.
@Suite(.timeLimit(.minutes(10)), .enabled(if: FileManager.default.isExecutableFile(atPath: builtStorekit.path),
                                          "the storekit binary is not built; run swift build first"))
struct AnalyticsCrashTests {
    static let storekit = builtStorekit

    @Test("kill -9 of the backend during ingestion, 6 times: the rollups equal a rebuild and the ledger")
    func killNineDuringIngestion() async throws {
        let year = try AnalyticsYear(subscribers: 150)
        try await year.play(seed: 9)
        let bodies = try await year.notificationBodies()
        let expected = try await IndependentMetrics(store: year.store)
        let scratch = Scratch()
        let root = scratch.url.appendingPathComponent("root.der")
        try year.store.rootCertificate.derRepresentation.write(to: root)
        let database = scratch.url.appendingPathComponent("backend.sqlite").path
        let acknowledged = Acknowledgements()
        var random = SplitMix64(state: 0x5EED)
        var kills = 0
        for round in 0..<7 {
            let process = try Subprocess(Self.storekit, ["backend", "serve", "--port", "0", "--database", "sqlite:\(database)",
                                                         "--bundle-id", "com.example.shop", "--environment", "Sandbox", "--root", root.path],
                                         output: .pipe, error: .file(scratch.url.appendingPathComponent("serve-\(round).err").path))
            guard let line = await process.readLine(), let port = URL(string: String(line.dropFirst("listening on ".count)))?.port else {
                process.signal(SIGKILL)
                _ = await process.termination()
                throw TestFailure("backend serve did not start: \(String(decoding: (try? Data(contentsOf: scratch.url.appendingPathComponent("serve-\(round).err"))) ?? Data(), as: UTF8.self))")
            }
            let pending = bodies.indices.filter { !acknowledged.contains($0) }
            // The kill comes after a random number of answers, while eight posts are in flight.
            let killAfter = round < 6 ? Int.random(in: 20...120, using: &random) : Int.max
            acknowledged.startRound()
            await withTaskGroup(of: Void.self) { group in
                for lane in 0..<8 {
                    group.addTask {
                        for index in stride(from: lane, to: pending.count, by: 8) {
                            let body = bodies[pending[index]]
                            let request = "POST /apple/notifications HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n" + String(decoding: body, as: UTF8.self)
                            guard await RawHTTP.exchange(port: UInt16(port), request).status == 200 else { return }
                            if acknowledged.insert(pending[index]) == killAfter { process.signal(SIGKILL) }
                        }
                    }
                }
            }
            if process.isRunning && round == 6 { process.signal(SIGTERM) }
            let ended = await process.termination()
            if ended.wasSignaled && ended.status & 0x7F == SIGKILL { kills += 1 }
        }
        #expect(kills == 6)
        #expect(acknowledged.count == bodies.count, "every notification was acknowledged in the end")

        let storage = try await SQLBackendStorage.sqlite(path: database)
        #expect(try await storage.notificationCount() == bodies.count, "each notification recorded once")
        let firstDay = CalendarDay(milliseconds: AppStoreJSON.milliseconds(from: AnalyticsYear.start))
        let query = MetricsQuery(from: firstDay, to: firstDay.adding(days: 400))
        let kept = try await storage.metrics(query)
        let keptCohorts = try await storage.cohorts(from: firstDay, to: query.to)
        try await storage.rebuildMetrics()
        #expect(try await storage.metrics(query) == kept, "the rollups kept through the kills equal a rebuild")
        #expect(try await storage.cohorts(from: firstDay, to: query.to) == keptCohorts)
        SubscriptionAnalyticsTests.expectEqual(kept.days, expected.days(from: firstDay), "kept through kill -9")
    }
}

/// Which notifications a backend acknowledged, and how many in the current round.
private final class Acknowledgements: Sendable {
    private let state = Mutex<(indices: Set<Int>, round: Int)>(([], 0))

    var count: Int { state.withLock { $0.indices.count } }
    func contains(_ index: Int) -> Bool { state.withLock { $0.indices.contains(index) } }
    func startRound() { state.withLock { $0.round = 0 } }

    /// Records an acknowledgement; returns how many this round has had.
    func insert(_ index: Int) -> Int {
        state.withLock { state in
            state.indices.insert(index)
            state.round += 1
            return state.round
        }
    }
}
