import SQLDatabase

/// The backend's statements on a connection of the SQL layer, whichever engine: written once, with
/// `$1`, `$2`, … parameters, rows back as text, and the database's failures as
/// ``BackendError/database(_:)``.
struct BackendDatabase: Sendable {
    let connection: any DatabaseConnection

    /// How a write transaction begins (see ``DatabaseConnection/beginWrite``).
    var beginWrite: String { connection.beginWrite }

    /// What holds other writers' metric updates off during a rebuild, after `beginWrite` (nothing
    /// on SQLite, whose write lock is the whole database already).
    var lockMetrics: String? {
        connection.engine == .postgresql ? "LOCK TABLE metric_subscriptions IN EXCLUSIVE MODE" : nil
    }

    func execute(_ sql: String) throws(BackendError) {
        do { try connection.execute(sql) } catch { throw .database(error) }
    }

    /// Runs one statement and returns its rows, to read by column name (``DatabaseRow/column(_:as:)``).
    @discardableResult
    func query(_ sql: String, _ values: [DatabaseValue]) throws(BackendError) -> [DatabaseRow] {
        do { return try connection.rows(sql, values) } catch { throw .database(error) }
    }

    /// Runs one statement whose rows, if any, are not needed.
    func run(_ sql: String, _ values: [DatabaseValue] = []) throws(BackendError) {
        do { try connection.query(sql, values) } catch { throw .database(error) }
    }

    /// The first row's column `name`, or `nil` when there is no row.
    func value<Value: DatabaseValueConvertible>(_ type: Value.Type, _ name: String, _ sql: String, _ values: [DatabaseValue] = []) throws(BackendError) -> Value? {
        do { return try connection.fetchValue(type, column: name, sql, values) } catch { throw .database(error) }
    }

    /// Runs `body` in one read transaction: its statements see one snapshot of the database.
    func readTransaction<Result>(_ body: () throws(BackendError) -> Result) throws(BackendError) -> Result {
        try connection.readTransaction(wrap: { .database($0) }, body)
    }

    /// Runs `body` in one write transaction, run again when the database aborts it as retryable (a
    /// deadlock between instances sharing PostgreSQL).
    func writeTransaction<Result>(_ body: () throws(BackendError) -> Result) throws(BackendError) -> Result {
        try connection.writeTransaction(databaseError: { error in
            if case .database(let failure) = error { return failure }
            return nil
        }, wrap: { .database($0) }, body)
    }
}

extension DatabaseRow {
    /// The column named `name`, decoded as `Value`: a missing column or a value of another type is a
    /// ``BackendError/database(_:)`` naming it.
    package func column<Value: DatabaseValueConvertible>(_ name: String, as type: Value.Type = Value.self) throws(BackendError) -> Value {
        do { return try decode(type, name) } catch { throw .database(error) }
    }
}
