import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import HTTPClient
import HTTPService
import Foundation
import Testing
import TestSupport

/// A backend on PostgreSQL outlives a restart of the server: its lanes connect again on their own,
/// so writes, reads and `/health` work again without restarting the backend.
@Suite(.timeLimit(.minutes(10)), .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)))
struct BackendReconnectionTests {
    @Test("after PostgreSQL restarts, fast or immediate, the backend connects again by itself", arguments: ["fast", "immediate"])
    func reconnectsAfterRestart(_ mode: String) async throws {
        try await PostgresCluster.with { cluster in
            let storage = try await SQLBackendStorage.postgres(url: cluster.url)
            try await storage.addKey(hash: "before", label: "before", created: Date(timeIntervalSince1970: 0))
            try await storage.checkHealth()
            try await cluster.restart(mode: mode)
            // The call that meets the broken connection fails (503 to its client); the next ones connect again.
            let written = Counter()
            try await eventually("a write after the restart") {
                (try? await storage.addKey(hash: "after-\(written.next())", label: "after", created: Date(timeIntervalSince1970: 0))) != nil
            }
            try await eventually("a read after the restart") { (try? await storage.hasKey(hash: "before")) == true }
            try await eventually("the health check after the restart") { (try? await storage.checkHealth()) != nil }
            #expect(try await storage.hasKey(hash: "before"))
        }
    }
}

extension BackendReconnectionTests {
    @Test("a backend started while PostgreSQL is down waits for it, and starts serving once it answers")
    func startsWhenPostgresAnswers() async throws {
        try await PostgresCluster.with { cluster in
            let scratch = Scratch()
            let root = scratch.url.appendingPathComponent("root.pem")
            try Data(try CertificateAuthority.make().rootCertificate.pemRepresentation.utf8).write(to: root)
            try await cluster.stopServer(mode: "fast")
            let configuration = BackendApplication.Configuration(
                database: cluster.url, verification: .init(bundleID: "com.example.shop", environment: .xcode, rootCertificates: [root.path]))
            let started = Counter()
            let starting = Task {
                defer { _ = started.next() }
                return try await BackendApplication.start(configuration)
            }
            // Down for a second and more: the start keeps waiting (it would have failed at once before).
            try await Task.sleep(for: .seconds(1.5))
            #expect(started.value == 0, "the backend must wait for the database, not give up")
            try await cluster.startAgain()
            let application = try await starting.value
            let health = try await HTTPClient.shared.send(.init("GET", application.server.url.appendingPathComponent("/health"), timeout: .seconds(180)))
            #expect(health.status == 200)
            await application.stop()
        }
    }
}

private final class Counter: @unchecked Sendable {
    // Unchecked: the lock guards `count`.
    private let lock = NSLock()
    private var count = 0
    func next() -> Int { lock.withLock { count += 1; return count } }
    var value: Int { lock.withLock { count } }
}
