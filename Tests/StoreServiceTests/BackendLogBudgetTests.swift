import AppStoreSigning
import AppStoreSimulator
import Foundation
import Testing
import TestSupport

/// `storekit backend serve` as its own process, its refusal log attacked over HTTP (#53, item 13):
/// on loopback every local process is 127.0.0.1, so one process flooding refused requests must not
/// keep another's forged notifications out of the log. `BackendSecurityTests` checks the budget on
/// the service in process.
@Suite(.timeLimit(.minutes(10)), .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
struct BackendLogBudgetTests {
    @Test("one local process floods storekit backend serve with wrong keys until its refusals are no longer logged; a forged notification from another connection is still logged, while the flood stays muted")
    func forgedNotificationsKeepTheirShareOfTheLog() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        let database = "sqlite:" + scratch.url.appendingPathComponent("backend.sqlite").path
        let backend = try await ServeProcess.start(command: ["backend", "serve", "--database", database, "--bundle-id", "com.example.shop",
                                                            "--environment", "Xcode", "--root", root.path, "--port", "0"])
        do {
            func lines() -> Int { backend.standardError.split(separator: "\n").count }
            let entitlements = backend.url.appendingPathComponent("v1/customers/alice/entitlements")
            let notifications = backend.url.appendingPathComponent("apple/notifications")
            /// One refused request of the flood; whether it added a line to the log (written before the answer).
            func flood() async throws -> Bool {
                let before = lines()
                let answer = try await Exchange.send("GET", entitlements, headers: [("Authorization", "Bearer osk_guess")])
                #expect(answer.status == 401)
                return lines() > before
            }
            // A window of the budget may end during a round on a loaded machine: then the forged line
            // proves nothing, and the round is made again.
            var proven = false
            for _ in 0..<5 where !proven {
                var muted = false
                for _ in 0..<10_000 where !muted { muted = try await !flood() }
                #expect(muted, "the flood's refusals were all logged")
                let before = lines()
                let forged = try await Exchange.send("POST", notifications, body: Data(#"{"signedPayload":"forged.by.mallory"}"#.utf8),
                                                     headers: [("Content-Type", "application/json")])
                #expect(forged.status == 422)
                let added = backend.standardError.split(separator: "\n").dropFirst(before)
                #expect(added.contains { $0.contains("/apple/notifications") && $0.contains("422") }, "\(added)")
                proven = try await !flood()
            }
            #expect(proven, "the flood's budget never stayed spent past the forged notification")
            await backend.stop()
        } catch {
            await backend.stop()
            throw error
        }
    }
}
