import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import Synchronization
import Testing
import TestSupport

/// Purchases survive `kill -9` at any instant: every acknowledged transaction is in the ledger
/// exactly once, nothing half-written remains, and the database passes its integrity check.
@Suite(.timeLimit(.minutes(10)), .enabled(if: FileManager.default.isExecutableFile(atPath: BuiltTool.storekit.path), "the storekit binary is not built; run swift build first"))
struct CrashTests {
    @Test("kill -9 during a purchase loop, 20 times: acknowledged purchases are durable and unique")
    func killNine() async throws {
        let scratch = Scratch()
        let directory = try await TestStores.directory(in: scratch).url
        var random = SplitMix64(state: 0xC0FFEE)
        var acknowledged: [UInt64] = []
        for _ in 0..<20 {
            let output = scratch.url.appendingPathComponent("stress.out")
            let process = try Subprocess(BuiltTool.storekit, ["stress", "purchase", directory.path, "com.example.shop.gems.small", "--count", "1000000"],
                                         output: .file(output.path))
            // Purchases are under way (one committed and printed); the kill then comes at a random moment.
            try await eventually("a purchase printed") { ((try? Data(contentsOf: output)) ?? Data()).contains(UInt8(ascii: "\n")) }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...300, using: &random)))
            process.signal(SIGKILL)
            let ended = await process.termination()
            let text = String(decoding: try Data(contentsOf: output), as: UTF8.self)
            // Only complete lines count: a line is printed after its purchase was committed.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            acknowledged += lines.compactMap { UInt64($0) }
            #expect(ended.wasSignaled)
        }
        #expect(acknowledged.count >= 20)
        #expect(Set(acknowledged).count == acknowledged.count, "an identifier was acknowledged twice")
        let store = try await TestStores.open(directory)
        let ledger = try await store.ledgerTransactions()
        let ids = ledger.map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(Set(acknowledged).isSubset(of: Set(ids)), "acknowledged purchases are missing: \(Set(acknowledged).subtracting(ids).sorted().prefix(5))")
        #expect(ids == Array(0..<UInt64(ids.count)), "identifiers have gaps or repeats")
        let notifications = try await store.notifications()
        #expect(notifications.count == ledger.count, "each purchase commits with its notification")
        #expect(Set(notifications.compactMap(\.transactionID)) == Set(ids))
        #expect(try await store.integrityProblems().isEmpty)
        print("kill -9: \(acknowledged.count) acknowledged purchases over 20 kills, \(ledger.count) in the ledger")
    }
}

/// The `storekit` executable of this build.
enum BuiltTool {
    static let storekit = SharedTestData.packageRoot.appendingPathComponent(".build/debug/storekit")
}
