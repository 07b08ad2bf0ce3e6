import Foundation
import Testing
import TestSupport

/// `storekit bench pipeline` runs the whole way (store, sender, `backend serve` processes, the
/// balancer) and reports every renewal recorded once; its speed is for release builds, not tests.
@Suite(.timeLimit(.minutes(10)))
struct BenchPipelineTests {
    static func expectEveryRenewalRecordedOnce(_ run: StoreProcess, subscribers: Int) throws {
        #expect(run.status == 0, "\(run.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(report["renewals"] as? Int == subscribers)
        #expect(report["recorded_once"] as? Int == subscribers)
        #expect((report["delivery_in_flight_max"] as? Int ?? 0) > 1, "deliveries overlapped")
        for key in ["renewals_seconds", "end_to_end_seconds", "notifications_per_second", "backend_ingest_per_second",
                    "backend_ingest_per_second_before_pipeline", "backend_ingest_per_second_after_pipeline",
                    "end_to_end_to_ingest_ratio", "peak_rss_mb_store", "peak_rss_mb_backend"] {
            #expect((report[key] as? Double ?? 0) > 0, "\(key)")
        }
        // The limit's two stretches, before and after the pipeline, share the sample; the limit is
        // their rate together, so it lies between theirs.
        #expect(report["backend_ingest_sample"] as? Int == subscribers)
        let before = report["backend_ingest_per_second_before_pipeline"] as? Double ?? 0
        let after = report["backend_ingest_per_second_after_pipeline"] as? Double ?? 0
        let limit = report["backend_ingest_per_second"] as? Double ?? 0
        #expect(limit >= min(before, after) - 1 && limit <= max(before, after) + 1, "limit \(limit) between \(before) and \(after)")
        // Mean posts in flight (summed time in flight over each stretch): within the slots, give or
        // take the posts that straddle the end of the renewals, and some after them.
        let slots = Double(report["in_flight"] as? Int ?? 0)
        for key in ["delivery_in_flight_mean_renewing", "delivery_in_flight_mean_after"] {
            let mean = report[key] as? Double ?? -1
            #expect(mean >= 0 && mean <= slots + 0.5, "\(key) \(mean) with \(slots) slots")
        }
        #expect((report["delivery_in_flight_mean_after"] as? Double ?? 0) > 0)
        // How the machine's cores went in each stretch, in percent, and the ratio corrected for steal.
        for key in ["machine_steal_percent_pipeline", "machine_steal_percent_limit", "machine_steal_percent_limit_before_pipeline",
                    "machine_steal_percent_limit_after_pipeline", "machine_idle_percent_pipeline", "machine_idle_percent_limit"] {
            let percent = report[key] as? Double ?? -1
            #expect(percent >= 0 && percent <= 100, "\(key) \(percent)")
        }
        #expect((report["end_to_end_to_ingest_ratio_steal_corrected"] as? Double ?? 0) > 0)
    }

    @Test("bench pipeline on SQLite: every renewal delivered to backend serve and recorded once")
    func sqlite() async throws {
        try Self.expectEveryRenewalRecordedOnce(try await StoreProcess.run(["bench", "pipeline", "--subscribers", "1500", "--json"]), subscribers: 1_500)
    }

    @Test("bench pipeline on PostgreSQL with two backend processes behind the balancer: every renewal recorded once",
          .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)))
    func postgres() async throws {
        try await PostgresCluster.with { cluster in
            let run = try await StoreProcess.run(["bench", "pipeline", "--subscribers", "1500", "--instances", "2", "--postgres", cluster.url, "--json"])
            try Self.expectEveryRenewalRecordedOnce(run, subscribers: 1_500)
            let again = try await StoreProcess.run(["bench", "pipeline", "--subscribers", "100", "--postgres", cluster.url])
            #expect(again.status != 0 && again.standardError.contains("empty database"), "a database with notifications is refused: \(again.standardError)")
        }
    }

    @Test("bench pipeline refuses meaningless sizes")
    func arguments() async throws {
        for arguments in [["--subscribers", "5"], ["--instances", "0"], ["--in-flight", "x"]] {
            #expect(try await StoreProcess.run(["bench", "pipeline"] + arguments).status != 0, "\(arguments)")
        }
    }
}
