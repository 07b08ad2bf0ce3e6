import Foundation
import SQLiteDatabase

/// A connection to an SQLite database file.
public final class SQLiteDatabaseConnection: DatabaseConnection, @unchecked Sendable {
    // Unchecked: used from one thread at a time by its owner (see DatabaseConnection).
    public let engine = DatabaseEngine.sqlite
    public let location: String
    public let beginWrite = "BEGIN IMMEDIATE"
    public let beginRead = "BEGIN"
    /// The connection underneath.
    private let sqlite: SQLiteConnection
    /// Each statement's result columns, by name.
    private var columnsByStatement: [String: DatabaseColumns] = [:]

    /// How the file is opened.
    public enum Mode: Sendable {
        /// Reads and writes an existing file.
        case readWrite
        /// Reads and writes, creating the file when it is missing. With `ownerOnly`, a file created
        /// here is readable and writable by its owner only, from its first byte (SQLite gives its
        /// -wal and -shm files the database's own permissions).
        case create(ownerOnly: Bool)
        /// Reads only; `immutable` for a file nobody can change meanwhile (a read-only filesystem,
        /// or a folder this user cannot write): SQLite then takes no locks and makes no -shm file.
        case readOnly(immutable: Bool)
    }

    /// Opens the database at `path`, checks that it is an SQLite database (reading its schema before
    /// anything is written), and runs `pragmas` (a script of `PRAGMA` statements).
    public init(path: String, mode: Mode, pragmas: String = "") throws(DatabaseError) {
        location = path
        let openMode: SQLiteConnection.OpenMode
        switch mode {
        case .readWrite: openMode = .readWrite
        case .create(let ownerOnly):
            if ownerOnly {
                let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                if created >= 0 { close(created) }
            }
            openMode = .create
        case .readOnly(let immutable): openMode = .readOnly(immutable: immutable)
        }
        do {
            sqlite = try SQLiteConnection(path: path, mode: openMode)
            try sqlite.query("SELECT count(*) FROM sqlite_master")
            if !pragmas.isEmpty { try sqlite.execute(pragmas) }
        } catch {
            throw Self.error(error)
        }
    }

    package static func error(_ error: SQLiteError) -> DatabaseError {
        DatabaseError(engine: .sqlite, code: String(error.code), message: error.message)
    }

    public func execute(_ sql: String) throws(DatabaseError) {
        do {
            // One statement (BEGIN, COMMIT, a savepoint) is prepared once and reused; a script runs as it comes.
            if sql.contains(";") { try sqlite.execute(sql) } else { try sqlite.query(sql) }
        } catch {
            throw Self.error(error)
        }
    }

    @discardableResult
    public func query(_ sql: String, _ values: [DatabaseValue], row: (DatabaseRow) -> Void) throws(DatabaseError) -> Int {
        let bound = values.map { value -> SQLiteConnection.Value in
            switch value {
            case .integer(let number): return .integer(number)
            case .text(let text): return .text(text)
            case .null: return .null
            }
        }
        do {
            // A statement's column names are worked out once, as its prepared form is kept once.
            var columns = columnsByStatement[sql]
            return try sqlite.query(sql, bound) { each in
                let named = columns ?? DatabaseColumns(names: (0..<each.columnCount).map(each.name), engine: .sqlite, statement: sql)
                if columns == nil {
                    columns = named
                    columnsByStatement[sql] = named
                }
                row(DatabaseRow(storage: .sqlite(each), columns: named))
            }
        } catch {
            throw Self.error(error)
        }
    }

    public func hasTable(_ table: String) throws(DatabaseError) -> Bool {
        var found = false
        try query("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $1", [.text(table)]) { found = ($0.integer(at: 0) ?? 0) > 0 }
        return found
    }

    public func hasColumn(_ column: String, in table: String) throws(DatabaseError) -> Bool {
        var found = false
        try query("SELECT count(*) FROM pragma_table_info($1) WHERE name = $2", [.text(table), .text(column)]) { found = ($0.integer(at: 0) ?? 0) > 0 }
        return found
    }

    /// A file is never disconnected.
    public func reconnectIfLost() throws(DatabaseError) {}

    /// Nothing to take: the transaction began with `BEGIN IMMEDIATE` holds the database's write lock.
    public func lockForMigration(of schema: String) throws(DatabaseError) {}
}
