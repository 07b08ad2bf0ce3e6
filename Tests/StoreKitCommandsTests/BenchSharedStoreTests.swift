import Foundation
import Testing
import TestSupport

/// `storekit bench shared-store` runs the whole way: a store in PostgreSQL, one then two
/// `storekit serve` processes selling from it under `wrk`, and the ledger checked after the load
/// (identifiers unique and without gaps). Its speed is for release builds, not tests.
@Suite(.timeLimit(.minutes(5)))
struct BenchSharedStoreTests {
    @Test("bench shared-store: one and two serve instances sell from one PostgreSQL store, and the ledger holds every purchase once",
          .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)))
    func runsAndChecksTheLedger() async throws {
        try await PostgresCluster.with { cluster in
            // Unconfined (a CPU cgroup needs privileges a test machine may not give), one short round.
            let run = try await StoreProcess.run(["bench", "shared-store", "--postgres", cluster.url, "--seconds", "1", "--rounds", "1",
                                                  "--instance-cpu", "0", "--connections", "4", "--json"])
            #expect(run.status == 0, "\(run.standardError)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any], "\(run.standardOutput)")
            func number(_ key: String) -> Double { (report[key] as? NSNumber)?.doubleValue ?? -1 }
            #expect(number("one_instance_purchases_per_second") > 0 && number("two_instances_purchases_per_second") > 0, "\(report)")
            #expect(number("two_to_one_instance_ratio") > 0 && number("ratio_aim") == 1.5, "\(report)")
            #expect(number("purchases_in_ledger") > 0, "\(report)")
            #expect(report["load_generator"] as? String == "wrk, 4 keep-alive connections in all", "\(report)")
            for key in ["host_idle_percent_one_instance", "host_idle_percent_two_instances"] {
                #expect(number(key) >= 0 && number(key) <= 100, "\(key): \(report)")
            }
            // The database now holds a store: a second run is refused rather than mixed into it.
            let again = try await StoreProcess.run(["bench", "shared-store", "--postgres", cluster.url, "--seconds", "1", "--rounds", "1",
                                                    "--instance-cpu", "0"])
            #expect(again.status != 0 && again.standardError.contains("already holds a store"), "\(again.standardError)")
        }
    }

    @Test("bench shared-store refuses meaningless options, naming them")
    func arguments() async throws {
        for (arguments, named) in [(["--connections", "3"], "--connections"), (["--rounds", "0"], "--rounds"),
                                   (["--instance-cpu", "many"], "--instance-cpu"), (["--postgres", "sqlite:x"], "--postgres")] {
            let run = try await StoreProcess.run(["bench", "shared-store"] + (arguments.contains("--postgres") ? [] : ["--postgres", "postgres://u@127.0.0.1:1/x"])
                                                 + arguments)
            #expect(run.status != 0 && run.standardError.contains(named), "\(arguments): \(run.standardError)")
        }
    }
}
