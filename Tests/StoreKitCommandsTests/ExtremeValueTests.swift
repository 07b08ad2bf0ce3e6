import AppStoreSimulator
@testable import AppStoreSimulatorSQL
import Foundation
import SQLiteDatabase
import Testing
import TestSupport

/// Every argument at its extremes: values out of every range, of the wrong kind, or meaningless for
/// the command, get a clear error and a non-zero exit, never a crash or a silent success, and leave
/// the store as it was.
@Suite(.timeLimit(.minutes(10)))
struct ExtremeValueTests {
    struct Case: Sendable, CustomStringConvertible {
        var arguments: [String]
        /// 64 for a usage mistake, 1 for a refusal.
        var status: Int32
        var message: String
        var description: String { arguments.joined(separator: " ") }
    }

    /// `STORE` stands for the store's folder. The store has a weekly subscription (#0) and a gem purchase (#1).
    static let cases: [Case] = [
        Case(arguments: ["advance", "STORE", "P300000000Y"], status: 1, message: "outside the store's time"),
        Case(arguments: ["advance", "STORE", "9223372036854775807s"], status: 64, message: "DURATION must be"),
        Case(arguments: ["advance", "STORE", "P999999999Y"], status: 1, message: "outside the store's time"),
        Case(arguments: ["advance", "STORE", "P7975Y"], status: 1, message: "outside the store's time"),
        Case(arguments: ["advance", "STORE", "-3d"], status: 64, message: "DURATION must be"),
        Case(arguments: ["advance", "STORE", "P1X"], status: 64, message: "DURATION must be"),
        Case(arguments: ["purchase", "STORE", "com.example.shop.plus.basic.weekly", "--account", "bob", "--purchase-date", "0001-01-01"], status: 1,
             message: "outside the store's time"),
        Case(arguments: ["purchase", "STORE", "com.example.shop.gems.small", "--purchase-date", "2025-06-01"], status: 1,
             message: "a purchase date applies to auto-renewable subscriptions"),
        Case(arguments: ["purchase", "STORE", "com.example.shop.gems.small", "--quantity", "9223372036854775807"], status: 1, message: "can be bought"),
        Case(arguments: ["purchase", "STORE", "com.example.shop.gems.small", "--quantity", "99999999999999999999"], status: 64, message: "--quantity"),
        Case(arguments: ["purchase", "STORE", "com.example.shop.gems.small", "--quantity", "-1"], status: 1, message: "can be bought"),
        Case(arguments: ["purchase", "STORE", "com.example.shop.plus.basic.weekly", "--offer", "promotional:x", "--timestamp", "-1"], status: 64,
             message: "--timestamp"),
        Case(arguments: ["purchase", "STORE", "com.example.shop.plus.basic.weekly", "--timestamp", "5"], status: 64, message: "go with a legacy"),
        Case(arguments: ["purchase", "STORE", "com.example.shop.gems.small", "--app-account-token", "not-a-uuid"], status: 64, message: "a UUID"),
        Case(arguments: ["refund", "STORE", "18446744073709551616"], status: 64, message: "must be a number"),
        Case(arguments: ["refund", "STORE", "18446744073709551615"], status: 1, message: "no transaction"),
        Case(arguments: ["finish", "STORE", "-1"], status: 64, message: "must be a number"),
        Case(arguments: ["extend", "STORE", "0", "--days", "2147483648"], status: 1, message: "1 to 90 days"),
        Case(arguments: ["extend", "STORE", "0", "--days", "99999999999999999999"], status: 64, message: "--days"),
        Case(arguments: ["extend", "STORE", "0", "--days", "91"], status: 1, message: "1 to 90 days"),
        Case(arguments: ["transactions", "STORE", "--limit", "0"], status: 64, message: "--limit"),
        Case(arguments: ["transactions", "STORE", "--after", "-1"], status: 64, message: "--after"),
        Case(arguments: ["notifications", "STORE", "--after", "99999999999999999999"], status: 64, message: "--after"),
        Case(arguments: ["settings", "STORE", "timeRate", "99999999999999999999"], status: 64, message: "timeRate is one of"),
        Case(arguments: ["settings", "STORE", "storefront", "\u{0}"], status: 64, message: "unknown storefront"),
        Case(arguments: ["settings", "STORE", "notificationURL", "ftp://x"], status: 64, message: "notificationURL takes"),
        Case(arguments: ["ca", "revoke", "STORE", "root"], status: 64, message: "revoke intermediate or leaf"),
        Case(arguments: ["api-key", "revoke", "STORE", "NOSUCHKEY"], status: 1, message: "no API key"),
        Case(arguments: ["store", "create", "NEW", "--config", "SHOP", "--start", "0001-01-01"], status: 1, message: "outside the store's time"),
        Case(arguments: ["store", "create", "NEW", "--config", "SHOP", "--start", "9999-12-31T23:59:59Z"], status: 0, message: ""),
    ]

    static func prepare(_ scratch: Scratch) async throws -> String {
        let store = scratch.path("store")
        for arguments in [["store", "create", store, "--config", ExampleShop.file.path, "--bundle-id", "com.example.shop", "--start", "2026-01-01"],
                          ["purchase", store, ExampleShop.basicWeekly, "--account", "alice", "--device", "phone"],
                          ["purchase", store, ExampleShop.gems, "--account", "alice", "--device", "phone"]] {
            let run = await CommandRun.run(arguments)
            guard run.status == 0 else { throw TestFailure("\(arguments): \(run.standardError)") }
        }
        return store
    }

    @Test("extreme and meaningless argument values are refused clearly and change nothing", arguments: cases)
    func refused(_ extreme: Case) async throws {
        let scratch = Scratch()
        let store = try await Self.prepare(scratch)
        let before = await CommandRun.run(["transactions", store]).standardOutput + (await CommandRun.run(["now", store])).standardOutput
        let arguments = extreme.arguments.map { $0 == "STORE" ? store : $0 == "NEW" ? scratch.path("new") : $0 == "SHOP" ? ExampleShop.file.path : $0 }
        let run = await CommandRun.run(arguments)
        #expect(run.status == extreme.status, "\(run.standardOutput)\(run.standardError)")
        if extreme.status != 0 {
            #expect(run.standardError.hasPrefix("error: "), "\(run.standardError)")
            #expect(run.standardError.contains(extreme.message), "\(run.standardError)")
            let after = await CommandRun.run(["transactions", store]).standardOutput + (await CommandRun.run(["now", store])).standardOutput
            #expect(after == before, "a refused command changed the store")
        }
    }

    @Test("a damaged stored clock is reported by every command, never read as 1970 or trapped on", arguments: [
        "abc", "1.5", "-5", "99999999999999999999", "9223372036854775807", "253402300800000",
    ])
    func damagedClock(_ value: String) async throws {
        let scratch = Scratch()
        let store = try await Self.prepare(scratch)
        let database = StoreDirectory.databaseURL(in: URL(fileURLWithPath: store)).path
        try SQLiteConnection(path: database, mode: .readWrite).query("UPDATE meta SET value = ?1 WHERE key = 'clock'", [.text(value)])
        for arguments in [["now", store], ["transactions", store], ["advance", store, "1d"], ["purchase", store, ExampleShop.gems]] {
            let run = await CommandRun.run(arguments)
            #expect(run.status == 1, "\(arguments): \(run.standardOutput)")
            #expect(run.standardError.contains("clock record is damaged"), "\(run.standardError)")
        }
        var stored: String?
        try SQLiteConnection(path: database, mode: .readWrite).query("SELECT value FROM meta WHERE key = 'clock'") { stored = $0.text(0) }
        #expect(stored == value, "the damaged value was rewritten")
    }
}
