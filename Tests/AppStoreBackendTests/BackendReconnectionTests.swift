import AppStoreBackend
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

private final class Counter: @unchecked Sendable {
    // Unchecked: the lock guards `value`.
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.withLock { value += 1; return value } }
}
