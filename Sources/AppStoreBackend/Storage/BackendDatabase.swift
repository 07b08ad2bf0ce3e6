import Foundation
import PostgresClient
import SQLiteDatabase

/// A parameter of a backend statement.
enum BackendValue: Sendable {
    case text(String)
    case integer(Int64)
    case null

    static func optionalText(_ text: String?) -> BackendValue { text.map { .text($0) } ?? .null }
}

/// One connection to the backend's database, whichever engine: statements are written once, with
/// `$1`, `$2`, … parameters (numbered in order of first use, which SQLite and PostgreSQL both take),
/// and rows come back as text.
protocol BackendDatabase: AnyObject, Sendable {
    /// How a write transaction begins: SQLite takes its write lock at once; PostgreSQL locks rows as it goes.
    var beginWrite: String { get }
    /// What holds other writers' metric updates off during a rebuild, after `beginWrite` (nothing
    /// on SQLite, whose write lock is the whole database already).
    var lockMetrics: String? { get }
    func execute(_ sql: String) throws(BackendError)
    @discardableResult
    func query(_ sql: String, _ values: [BackendValue]) throws(BackendError) -> [[String?]]
    /// Whether a failed transaction may succeed when run again (a deadlock between instances).
    func isRetryable(_ error: BackendError) -> Bool
}

/// The backend's database on SQLite (WAL, `synchronous=FULL`). Used under its storage's lock only.
final class SQLiteBackendDatabase: BackendDatabase, @unchecked Sendable {
    private let connection: SQLiteConnection
    let beginWrite = "BEGIN IMMEDIATE"
    let lockMetrics: String? = nil

    init(path: String) throws(BackendError) {
        // The database holds customers' transactions, tokens and user ids: private to its owner from
        // its first byte (SQLite gives its -wal and -shm files the database's own permissions).
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if created >= 0 { close(created) }
        do {
            connection = try SQLiteConnection(path: path, mode: .create)
            // A 32 MiB page cache per connection (SQLite's default is 2 MiB): a backend's tables are
            // keyed by UUIDs and ids that arrive in no order, so with millions of rows each write
            // touches pages all over its indexes. Bounded, so memory stays flat as the tables grow.
            try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -32768;")
        } catch {
            throw .storage("cannot open the backend database \(path): \(error)")
        }
    }

    func execute(_ sql: String) throws(BackendError) {
        do {
            // One statement (a savepoint, BEGIN, COMMIT) is prepared once and reused; a script is run as it comes.
            if sql.contains(";") { try connection.execute(sql) } else { try connection.query(sql) }
        } catch {
            throw .storage("the backend database failed: \(error)")
        }
    }

    func query(_ sql: String, _ values: [BackendValue]) throws(BackendError) -> [[String?]] {
        var rows: [[String?]] = []
        let bound = values.map { value -> SQLiteConnection.Value in
            switch value {
            case .text(let text): return .text(text)
            case .integer(let number): return .integer(number)
            case .null: return .null
            }
        }
        do {
            try connection.query(sql, bound) { row in
                rows.append((0..<row.columnCount).map { row.isNull($0) ? nil : row.text($0) })
            }
        } catch {
            throw .storage("the backend database failed: \(error)")
        }
        return rows
    }

    func isRetryable(_ error: BackendError) -> Bool { false }
}

/// The backend's database on PostgreSQL: several backend processes may share it. Used under its
/// storage's lock only.
final class PostgresBackendDatabase: BackendDatabase, @unchecked Sendable {
    private let connection: PostgresConnection
    let beginWrite = "BEGIN"
    let lockMetrics: String? = "LOCK TABLE metric_subscriptions IN EXCLUSIVE MODE"
    private var lastError: PostgresError?

    init(url: String) throws(BackendError) {
        do { connection = try PostgresConnection(url) } catch { throw .storage("\(error)") }
    }

    func execute(_ sql: String) throws(BackendError) {
        do { try connection.execute(sql) } catch {
            lastError = error
            throw .storage("the backend database failed: \(error)")
        }
    }

    func query(_ sql: String, _ values: [BackendValue]) throws(BackendError) -> [[String?]] {
        let bound = values.map { value -> PostgresConnection.Value in
            switch value {
            case .text(let text): return .text(text)
            case .integer(let number): return .integer(number)
            case .null: return .null
            }
        }
        do {
            return try connection.query(sql, bound).map(\.columns)
        } catch {
            lastError = error
            throw .storage("the backend database failed: \(error)")
        }
    }

    func isRetryable(_ error: BackendError) -> Bool { lastError?.isRetryable ?? false }
}
