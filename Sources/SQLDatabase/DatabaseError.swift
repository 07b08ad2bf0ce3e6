/// Which database engine a connection talks to.
public enum DatabaseEngine: String, Sendable, Hashable {
    case sqlite = "SQLite"
    case postgresql = "PostgreSQL"
}

/// A failure of the database, typed: the engine, the engine's own code for it (SQLite's result code as
/// a number, PostgreSQL's five-character SQLSTATE), its message, and whether running the same
/// transaction again may succeed.
public struct DatabaseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var engine: DatabaseEngine
    /// SQLite's result code (`"5"` busy, `"11"` corrupt, `"13"` full, …) or PostgreSQL's SQLSTATE
    /// (`"23505"` unique violation, `"40P01"` deadlock, …); `nil` when the failure came from this
    /// layer or the client library rather than the engine.
    public var code: String?
    public var message: String
    /// Whether the transaction that failed may succeed when run again unchanged: a deadlock or a
    /// serialization failure between PostgreSQL clients. (SQLite's writers queue on its write lock
    /// with a timeout; a busy error after it is reported, not retried.)
    public var isRetryable: Bool
    /// Whether the connection to the server was lost (PostgreSQL restarted or went away): the lane
    /// connects again before its next statement.
    public var isConnectionLost: Bool
    /// Whether the server is not there for now (the connection was lost, or could not be made because
    /// the server is down, starting, stopping or out of connection slots): trying again later may
    /// work, and nothing was done.
    public var isUnavailable: Bool

    public init(engine: DatabaseEngine, code: String?, message: String, isRetryable: Bool = false, isConnectionLost: Bool = false,
                isUnavailable: Bool = false) {
        self.engine = engine
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
        self.isConnectionLost = isConnectionLost
        self.isUnavailable = isUnavailable || isConnectionLost
    }

    /// Whether the database's disk (or quota) is full: SQLite's `SQLITE_FULL`, PostgreSQL's
    /// `disk_full` (`53100`). Nothing was written; writes work again once there is room.
    public var isStorageFull: Bool {
        switch engine {
        case .sqlite: return code == "13"
        case .postgresql: return code == "53100"
        }
    }

    /// Whether the database file is not a database, or its contents are damaged (SQLite's
    /// `SQLITE_CORRUPT` and `SQLITE_NOTADB`).
    public var isDamaged: Bool { engine == .sqlite && (code == "11" || code == "26") }

    /// Whether the database cannot be written by this user (SQLite's `SQLITE_READONLY`, PostgreSQL's
    /// `read_only_sql_transaction` or `insufficient_privilege`).
    public var isReadOnly: Bool {
        switch engine {
        case .sqlite: return code == "8"
        case .postgresql: return code == "25006" || code == "42501"
        }
    }

    public var description: String {
        switch (engine, code) {
        case (.postgresql, let state?): return "\(message) (SQLSTATE \(state))"
        case (.sqlite, let result?) where result != "0": return "\(message) (SQLite result code \(result))"
        default: return message
        }
    }

    /// The same failure, its message prefixed with what was being done.
    public func during(_ doing: String) -> DatabaseError {
        var error = self
        error.message = "\(doing): \(message)"
        return error
    }

    func with(connectionLost: Bool) -> DatabaseError {
        var error = self
        error.isConnectionLost = connectionLost
        if connectionLost { error.isUnavailable = true }
        return error
    }
}
