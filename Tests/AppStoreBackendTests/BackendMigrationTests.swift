@testable import AppStoreBackend
import BlockingWork
import Foundation
import SQLDatabase
import Testing
import TestSupport

/// A backend database written by an earlier version is migrated once, through the SQL layer's named
/// migrations, however many backend processes open it at the same time: on SQLite and on PostgreSQL.
@Suite(.timeLimit(.minutes(10)), .enabled(if: FileManager.default.isExecutableFile(atPath: builtStorekit.path),
                                          "the storekit binary is not built; run swift build first"))
struct BackendMigrationTests {
    /// The two earlier layouts: before the analytics (no facts, no grace column, no rollups, no
    /// migrations table), and the last one before migrations were recorded (every table, rollup
    /// layout 3 in `metric_layout`, no `schema_migrations`).
    enum EarlierLayout: String, CaseIterable, Sendable {
        case beforeAnalytics, beforeRecordedMigrations
    }

    /// Opens `database` (a `--database` argument) from four `storekit backend key create` processes
    /// at once: each migrates if it is first, then adds its key.
    static func openFromParallelProcesses(_ database: String) async throws {
        try await withThrowingTaskGroup(of: ChildProcess.Result.self) { group in
            for index in 0..<4 {
                group.addTask {
                    try await ChildProcess.run(builtStorekit, ["backend", "key", "create", "--database", database, "--label", "opener-\(index)"])
                }
            }
            for try await ended in group {
                #expect(ended.status == 0, "backend key create: exit \(ended.status): \(ended.standardOutput)\(ended.standardError)")
            }
        }
    }

    /// Writes the earlier layout into an empty database, with one key as its data.
    static func writeEarlierLayout(_ layout: EarlierLayout, on connection: any DatabaseConnection) throws {
        switch layout {
        case .beforeAnalytics:
            try connection.execute(AnalyticsMigrationTests.schemaBeforeAnalytics)
        case .beforeRecordedMigrations:
            try SQLBackendStorage.migrations.migrate(connection)
            try connection.execute("DROP TABLE schema_migrations")
        }
        try connection.execute("INSERT INTO keys (hash, label, created_ms) VALUES ('earlier', 'earlier', 0)")
    }

    /// What the migrated database must hold: every migration recorded once, in order, and the
    /// earlier key beside the four new ones.
    static func expectMigratedOnce(_ connection: any DatabaseConnection) throws {
        let recorded = try connection.fetchAll("SELECT name FROM schema_migrations WHERE schema_name = 'backend' ORDER BY position") {
            (row) throws(DatabaseError) -> String in try row["name"]
        }
        #expect(recorded == SQLBackendStorage.migrations.migrations.map(\.name))
        #expect(try connection.hasColumn("grace_expires_ms", in: "notifications"))
        #expect(try connection.hasColumn("renewal", in: "transactions"))
        #expect(try connection.fetchValue(Int64.self, column: "version", "SELECT version FROM metric_layout WHERE id = 1") == SQLBackendStorage.metricsLayout)
        let labels = try connection.fetchAll("SELECT label FROM keys ORDER BY label") { (row) throws(DatabaseError) -> String in try row["label"] }
        #expect(labels == ["earlier", "opener-0", "opener-1", "opener-2", "opener-3"])
    }

    @Test("an SQLite backend database of an earlier layout opened by four processes at once is migrated once", arguments: EarlierLayout.allCases)
    func sqlite(_ layout: EarlierLayout) async throws {
        let scratch = Scratch()
        let path = scratch.url.appendingPathComponent("backend.sqlite").path
        try await BlockingWork.run { () throws in
            try Self.writeEarlierLayout(layout, on: SQLiteDatabaseConnection(path: path, mode: .create(ownerOnly: true)))
        }
        try await Self.openFromParallelProcesses("sqlite:\(path)")
        try await BlockingWork.run { () throws in try Self.expectMigratedOnce(SQLiteDatabaseConnection(path: path, mode: .readWrite)) }
    }

    @Test("a PostgreSQL backend database of an earlier layout opened by four processes at once is migrated once",
          .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)), arguments: EarlierLayout.allCases)
    func postgres(_ layout: EarlierLayout) async throws {
        try await PostgresCluster.with { cluster in
            let url = cluster.url
            try await BlockingWork.run { () throws in try Self.writeEarlierLayout(layout, on: PostgresDatabaseConnection(url: url)) }
            try await Self.openFromParallelProcesses(url)
            try await BlockingWork.run { () throws in try Self.expectMigratedOnce(PostgresDatabaseConnection(url: url)) }
        }
    }

    @Test("a failing migration leaves the database as it was and names itself")
    func failingMigrationChangesNothing() async throws {
        let scratch = Scratch()
        let path = scratch.url.appendingPathComponent("broken.sqlite").path
        let broken = SchemaMigrations(schema: "example", migrations: [
            .sql("first", "CREATE TABLE first (id INTEGER)"),
            .sql("second", "CREATE TABLE second (id INTEGER); INSERT INTO nowhere VALUES (1)"),
        ])
        try await BlockingWork.run { () throws in
            let connection = try SQLiteDatabaseConnection(path: path, mode: .create(ownerOnly: true))
            #expect {
                try broken.migrate(connection)
            } throws: { error in
                let failure = error as? DatabaseError
                return failure?.engine == .sqlite && failure?.code == "1" && failure?.message.contains("migration second of example") == true
            }
            #expect(try !connection.hasTable("first"), "the migration before it is rolled back with it")
            #expect(try !connection.hasTable("schema_migrations"))
        }
    }
}
