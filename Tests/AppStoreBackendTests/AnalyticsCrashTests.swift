import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import BlockingWork
import SQLiteDatabase
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

/// A backend database made before the analytics existed is brought up to them when opened.
struct AnalyticsMigrationTests {
    /// The tables as the backend made them before the analytics (no facts, no grace column, no rollups).
    static let schemaBeforeAnalytics = """
        CREATE TABLE notifications (uuid TEXT PRIMARY KEY, type TEXT NOT NULL, subtype TEXT, signed_ms BIGINT NOT NULL,
                                    transaction_id TEXT, original_transaction_id TEXT);
        CREATE TABLE transactions (transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL,
                                   customer_id TEXT, signed_ms BIGINT NOT NULL, payload TEXT NOT NULL, jws TEXT NOT NULL);
        CREATE INDEX transactions_by_customer ON transactions(customer_id) WHERE customer_id IS NOT NULL;
        CREATE INDEX transactions_by_original ON transactions(original_transaction_id);
        CREATE TABLE statuses (original_transaction_id TEXT PRIMARY KEY, status INTEGER, renewal_info TEXT, signed_ms BIGINT NOT NULL);
        CREATE TABLE links (original_transaction_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL);
        CREATE INDEX links_by_customer ON links(customer_id);
        CREATE TABLE keys (hash TEXT PRIMARY KEY, label TEXT NOT NULL, created_ms BIGINT NOT NULL);
        """

    @Test("a database from before the analytics gets its facts and rollups when opened: the figures equal a current backend's, but for grace periods and charged periods it never kept")
    func databaseFromBeforeTheAnalytics() async throws {
        let year = try AnalyticsYear(subscribers: 120)
        try await year.play(seed: 11)
        let bodies = try await year.notificationBodies()
        let scratch = Scratch()
        let current = scratch.url.appendingPathComponent("current.sqlite").path
        let old = scratch.url.appendingPathComponent("old.sqlite").path
        let currentStorage = try await SQLBackendStorage.sqlite(path: current)
        try await AnalyticsYear.deliver(bodies, to: try year.service(on: currentStorage))
        // The same ledger in the old tables, as an older backend would have left it.
        try await BlockingWork.run { () throws in
            let connection = try SQLiteConnection(path: old, mode: .create)
            try connection.execute(Self.schemaBeforeAnalytics)
            try connection.execute("""
                ATTACH DATABASE '\(current)' AS current;
                INSERT INTO notifications SELECT uuid, type, subtype, signed_ms, transaction_id, original_transaction_id FROM current.notifications;
                INSERT INTO transactions SELECT transaction_id, original_transaction_id, customer_id, signed_ms, payload, jws FROM current.transactions;
                INSERT INTO statuses SELECT * FROM current.statuses;
                DETACH DATABASE current;
                """)
        }
        let migrated = try await SQLBackendStorage.sqlite(path: old)
        let first = CalendarDay(milliseconds: AppStoreJSON.milliseconds(from: AnalyticsYear.start))
        let query = MetricsQuery(from: first, to: first.adding(days: 400))
        let want = try await currentStorage.metrics(query).days
        let got = try await migrated.metrics(query).days
        #expect(got.count == want.count && !want.isEmpty)
        #expect(want.contains { $0.gracePeriod > 0 }, "the year has grace periods")
        // Nor the period each renewal was charged for: the MRR of periods extended or expired early
        // follows their span there. Every other figure is the same.
        // Nor, so, when access ended after a failed renewal (at the grace period's end), nor that a grace
        // period was recovered or cancelled: the starts, conversions, ends and trials' outcomes it finds differ there. They
        // still account for its own active subscriptions and trials every day.
        func withoutMRR(_ day: DailyMetrics) -> DailyMetrics {
            var day = day
            day.mrrMicros = [:]
            day.mrrMovementMicros = [:]
            for figure: WritableKeyPath<DailyMetrics, Int64> in [\.newSubscriptions, \.trialsStarted, \.trialConversions, \.introductoryConversions,
                                                                \.trialCancellations, \.trialBillingFailures, \.reactivations, \.churnedVoluntary,
                                                                \.churnedInvoluntary, \.refundEnds, \.movedIn, \.movedOut, \.trialOutcomesEnded,
                                                                \.trialOutcomesConverted] {
                day[keyPath: figure] = 0
            }
            // A plan left by an upgrade is prorated over the period it was charged for, which those notifications never kept either.
            day.proratedRefundedMicros = [:]
            day.proratedRefundedReducedCommissionMicros = [:]
            return day
        }
        for (yesterday, day) in zip(got, got.dropFirst()) {
            #expect(SubscriptionAnalyticsTests.reconciles(day, after: yesterday), "\(day.day)")
        }
        #expect(zip(want, got).contains { $0.mrrMicros != $1.mrrMicros }, "the year has extensions or early expiries")
        for (before, after) in zip(want, got) {
            if before.gracePeriod == 0 {
                #expect(withoutMRR(after) == withoutMRR(before), "\(before.day)")
            } else {
                // The old notifications never kept when a grace period would end: those days count the subscription lapsed.
                #expect(after.gracePeriod == 0 && after.activeSubscriptions + after.freeTrials == before.activeSubscriptions + before.freeTrials - before.gracePeriod,
                        "\(before.day)")
            }
        }
        // It keeps them from now on like any backend: a rebuild changes nothing.
        try await migrated.rebuildMetrics()
        #expect(try await migrated.metrics(query).days == got)
    }
}
