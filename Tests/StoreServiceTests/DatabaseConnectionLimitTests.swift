import AppStoreSigning
import AppStoreSimulator
import BlockingWork
import Foundation
import SQLDatabase
import Testing
import TestSupport

/// PostgreSQL out of connection slots (`max_connections` held by other clients): a backend started
/// then waits, saying why, and starts once a slot is free; a running backend's `/health` names the
/// failure of now, not how its old connections ended.
@Suite(.timeLimit(.minutes(5)), .serialized, .enabled(if: Built.available, "the storekit binary is not built"),
       .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)))
struct DatabaseConnectionLimitTests {
    /// Takes every connection slot the cluster has (it allows 50), on threads of their own.
    static func holdEverySlot(_ url: String) async -> [any DatabaseConnection] {
        await BlockingWork.run("hold slots") { () -> [any DatabaseConnection] in
            var held: [any DatabaseConnection] = []
            while let connection = try? PostgresDatabaseConnection(url: url) { held.append(connection) }
            return held
        }
    }

    static func backendCommand(_ url: String, root: URL) -> [String] {
        ["backend", "serve", "--database", url, "--bundle-id", "com.example.shop", "--environment", "Xcode", "--root", root.path, "--port", "0"]
    }

    @Test("a backend started while PostgreSQL has no free connection slot waits, says why, and starts when one frees up; after a restart with the slots taken, /health names that, not the old connection's end")
    func outOfConnectionSlots() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let root = scratch.url.appendingPathComponent("root.pem")
        try Data(store.rootCertificate.pemRepresentation.utf8).write(to: root)
        try await PostgresCluster.with { cluster in
            var held = await Self.holdEverySlot(cluster.url)
            #expect(held.count >= 40, "the cluster's slots were taken (\(held.count))")
            let refusedBefore = cluster.refusedForWantOfSlots()
            let command = Self.backendCommand(cluster.url, root: root)
            let started = StopFlag()
            let starting = Task {
                defer { started.set() }
                return try await ServeProcess.start(command: command)
            }
            // The backend was refused a slot twice (it tried again rather than exit), and has not
            // started listening meanwhile.
            try await eventually("the backend tried again after being refused a slot") { cluster.refusedForWantOfSlots() >= refusedBefore + 2 }
            #expect(!started.isSet, "the backend did not start, nor end, while every slot was taken")
            held.removeAll()
            let backend = try await starting.value
            #expect(backend.standardError.contains("waiting for the database to answer"), "\(backend.standardError)")
            #expect(backend.standardError.contains("too many clients") || backend.standardError.contains("connection slots"), "\(backend.standardError)")
            #expect(try await Exchange.send("GET", backend.url.appendingPathComponent("/health")).status == 200)

            // A restart breaks the backend's connections; the slots are then taken before it reconnects.
            try await cluster.restart()
            held = await Self.holdEverySlot(cluster.url)
            try await eventually("/health says degraded, naming the full slots") {
                let health = try await Exchange.send("GET", backend.url.appendingPathComponent("/health"))
                let reason = health.json?["reason"] as? String ?? ""
                return health.status == 503 && (reason.contains("too many clients") || reason.contains("connection slots"))
            }
            held.removeAll()
            try await eventually("/health ok once a slot is free", within: .seconds(30)) {
                (try? await Exchange.send("GET", backend.url.appendingPathComponent("/health")).status) == 200
            }
            await backend.stop()
        }
    }
}
