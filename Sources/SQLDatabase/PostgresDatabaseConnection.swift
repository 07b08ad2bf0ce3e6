import Foundation
import PostgresClient

/// A connection to a PostgreSQL database, which several processes may share.
public final class PostgresDatabaseConnection: DatabaseConnection, @unchecked Sendable {
    // Unchecked: used from one thread at a time by its owner (see DatabaseConnection).
    public let engine = DatabaseEngine.postgresql
    public let location: String
    public let beginWrite = "BEGIN"
    public let beginRead = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    private let connection: PostgresConnection

    /// Connects with a libpq connection string or URL (`postgres://user@host:port/db`).
    public init(url: String) throws(DatabaseError) {
        location = Self.withoutPassword(url)
        do { connection = try PostgresConnection(url) } catch { throw Self.error(error) }
    }

    /// `url` with any password replaced, for messages and logs.
    public static func withoutPassword(_ url: String) -> String {
        guard var parts = URLComponents(string: url), parts.password != nil else { return url }
        parts.password = "…"
        return parts.string ?? url
    }

    static func error(_ error: PostgresError) -> DatabaseError {
        // 40P01: deadlock detected; 40001: serialization failure. Both abort the whole transaction,
        // which may succeed when run again. Class 08 and 57P01-57P03: the connection is gone (the
        // server restarted, shut down or is starting); libpq reports a broken socket with no SQLSTATE.
        let state = error.sqlState
        return DatabaseError(engine: .postgresql, code: state, message: error.message,
                             isRetryable: state == "40P01" || state == "40001",
                             isConnectionLost: state?.hasPrefix("08") == true || ["57P01", "57P02", "57P03"].contains(state ?? ""),
                             isUnavailable: error.isServerUnavailable || state == "53300")
    }

    /// The failure, marked as a lost connection when libpq's connection is down whatever it said;
    /// when connecting again failed since, that failure, which says why the server is away now
    /// (out of connection slots, shutting down) rather than how the old connection ended.
    private func failure(_ error: PostgresError) -> DatabaseError {
        var failure = Self.error(error)
        if !connection.isConnected {
            if let reconnecting = reconnectFailure { return reconnecting }
            failure.isConnectionLost = true
        }
        return failure
    }

    /// Why the last attempt to connect again failed, until one succeeds.
    private var reconnectFailure: DatabaseError?

    public func reconnectIfLost() throws(DatabaseError) {
        guard !connection.isConnected else { return }
        do {
            try connection.reset()
            reconnectFailure = nil
        } catch {
            let failure = Self.error(error).with(connectionLost: true)
            reconnectFailure = failure
            throw failure
        }
    }

    public func execute(_ sql: String) throws(DatabaseError) {
        do { try connection.execute(sql) } catch { throw failure(error) }
    }

    @discardableResult
    public func query(_ sql: String, _ values: [DatabaseValue], row: (DatabaseRow) -> Void) throws(DatabaseError) -> Int {
        let bound = values.map(Self.value)
        let rows: [PostgresConnection.Row]
        do { rows = try connection.query(sql, bound) } catch { throw failure(error) }
        guard let first = rows.first else { return 0 }
        let columns = DatabaseColumns(names: first.names, engine: .postgresql, statement: sql)
        for each in rows { row(DatabaseRow(storage: .postgres(each), columns: columns)) }
        return rows.count
    }

    public func batch(_ statements: [DatabaseStatement]) throws(DatabaseError) -> [[DatabaseRow]] {
        let bound = statements.map { statement in (sql: statement.sql, values: statement.values.map(Self.value)) }
        let answers: [[PostgresConnection.Row]]
        do { answers = try connection.pipeline(bound) } catch { throw failure(error) }
        return zip(statements, answers).map { statement, rows in
            guard let first = rows.first else { return [] }
            let columns = DatabaseColumns(names: first.names, engine: .postgresql, statement: statement.sql)
            return rows.map { DatabaseRow(storage: .postgres($0), columns: columns) }
        }
    }

    private static func value(_ value: DatabaseValue) -> PostgresConnection.Value {
        switch value {
        case .integer(let number): return .integer(number)
        case .text(let text): return .text(text)
        case .null: return .null
        }
    }

    public func hasTable(_ table: String) throws(DatabaseError) -> Bool {
        try !rows("SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1", [.text(table)]).isEmpty
    }

    public func hasColumn(_ column: String, in table: String) throws(DatabaseError) -> Bool {
        try !rows("""
            SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2
            """, [.text(table), .text(column)]).isEmpty
    }

    /// A transaction-scoped advisory lock keyed by the schema's name: the first process to open the
    /// database migrates it, the others wait here and then find the work done.
    public func lockForMigration(of schema: String) throws(DatabaseError) {
        // FNV-1a of the name, as a signed 64-bit key.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in schema.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        try query("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(Int64(bitPattern: hash))]) { _ in }
    }
}
