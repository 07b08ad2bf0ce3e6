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

    public init(engine: DatabaseEngine, code: String?, message: String, isRetryable: Bool = false, isConnectionLost: Bool = false) {
        self.engine = engine
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
        self.isConnectionLost = isConnectionLost
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
        return error
    }
}
