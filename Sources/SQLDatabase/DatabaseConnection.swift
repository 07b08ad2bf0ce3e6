import Foundation
import PostgresClient
import SQLiteDatabase

/// A value bound to a statement's parameter.
public enum DatabaseValue: Sendable, Hashable {
    case integer(Int64)
    case text(String)
    case null

    public static func optionalText(_ text: String?) -> DatabaseValue { text.map { .text($0) } ?? .null }
    public static func optionalInteger(_ number: Int64?) -> DatabaseValue { number.map { .integer($0) } ?? .null }
}

/// A statement with its parameters' values, for ``DatabaseConnection/batch(_:)``.
public struct DatabaseStatement: Sendable {
    public var sql: String
    public var values: [DatabaseValue]

    public init(_ sql: String, _ values: [DatabaseValue] = []) {
        self.sql = sql
        self.values = values
    }
}

/// One connection to a database, SQLite or PostgreSQL, through which the ledger and the backend
/// open, migrate, read and commit. Statements take `$1`, `$2`, … parameters (numbered in order of
/// first use, which both engines accept).
///
/// A connection is not thread-safe: its owner uses it from one thread at a time (a lane's queue, or
/// the store's serial executor), which is why it may be `@unchecked Sendable`. Every call blocks its
/// thread until the engine answers: never call it on Swift's cooperative pool (``DatabaseLane`` runs
/// calls on a thread of its own).
public protocol DatabaseConnection: AnyObject, Sendable {
    var engine: DatabaseEngine { get }
    /// Where the database is, for messages (a path, or a URL without its password).
    var location: String { get }
    /// The statement that begins a write transaction: SQLite takes its write lock at once
    /// (`BEGIN IMMEDIATE`), so writers in every process queue there; PostgreSQL locks rows as it goes.
    var beginWrite: String { get }
    /// The statement that begins a read transaction whose statements all see one snapshot: SQLite's
    /// `BEGIN` (WAL readers keep theirs); PostgreSQL's `REPEATABLE READ, READ ONLY` (its default, read
    /// committed, would give each statement a newer one).
    var beginRead: String { get }
    /// Runs SQL without results; a script of several statements is allowed.
    func execute(_ sql: String) throws(DatabaseError)
    /// Runs one statement, calling `row` for each result row, and returns how many there were.
    @discardableResult
    func query(_ sql: String, _ values: [DatabaseValue], row: (DatabaseRow) -> Void) throws(DatabaseError) -> Int
    /// Whether `table` exists (in the connection's schema).
    func hasTable(_ table: String) throws(DatabaseError) -> Bool
    /// Whether `table` has `column`.
    func hasColumn(_ column: String, in table: String) throws(DatabaseError) -> Bool
    /// Holds off every other process's migration of the schema named `schema` until the current
    /// transaction ends (SQLite's write lock already does; PostgreSQL takes an advisory lock).
    func lockForMigration(of schema: String) throws(DatabaseError)
    /// Connects again when the connection to the server was lost (nothing to do for a file).
    func reconnectIfLost() throws(DatabaseError)
    /// Runs statements in order and returns each one's rows (copied); the first that fails ends the
    /// batch with its error. PostgreSQL gets them in one round trip (a pipeline), so a transaction's
    /// statements that need no answer in between wait for the server once; SQLite runs them one by
    /// one, which costs nothing more in process.
    func batch(_ statements: [DatabaseStatement]) throws(DatabaseError) -> [[DatabaseRow]]
}

extension DatabaseConnection {
    /// Runs one statement and returns how many rows it answered (a statement with `RETURNING`
    /// answers a row for each row it changed).
    @discardableResult
    public func query(_ sql: String, _ values: [DatabaseValue] = []) throws(DatabaseError) -> Int {
        try query(sql, values) { _ in }
    }

    /// Runs one statement and returns its rows, copied (to read by column name after it has run).
    @discardableResult
    public func rows(_ sql: String, _ values: [DatabaseValue] = []) throws(DatabaseError) -> [DatabaseRow] {
        var rows: [DatabaseRow] = []
        try query(sql, values) { rows.append($0.copy()) }
        return rows
    }

    public func batch(_ statements: [DatabaseStatement]) throws(DatabaseError) -> [[DatabaseRow]] {
        var answers: [[DatabaseRow]] = []
        for statement in statements { answers.append(try rows(statement.sql, statement.values)) }
        return answers
    }

    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    /// A transaction the engine aborted as retryable (a deadlock between PostgreSQL clients) is run
    /// again, up to `attempts` times; `body` must be safe to run again (it re-reads what it changes).
    ///
    /// `databaseError` finds the database's failure in an error `body` threw (to tell whether it is
    /// retryable); `wrap` turns the layer's own failures (beginning, committing) into `Failure`.
    public func writeTransaction<Result, Failure: Error>(
        attempts: Int = 10, databaseError: (Failure) -> DatabaseError?, wrap: (DatabaseError) -> Failure,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var attempt = 0
        while true {
            attempt += 1
            do throws(Failure) {
                return try transaction(beginning: beginWrite, wrap: wrap, body)
            } catch {
                guard attempt < attempts, databaseError(error)?.isRetryable == true else { throw error }
            }
        }
    }

    /// Runs `body` in one read transaction (one consistent snapshot), ended when it returns or throws.
    public func readTransaction<Result, Failure: Error>(wrap: (DatabaseError) -> Failure, _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try transaction(beginning: beginRead, wrap: wrap, body)
    }

    /// One transaction begun with `begin`: committed when `body` returns, rolled back when it throws.
    private func transaction<Result, Failure: Error>(beginning begin: String, wrap: (DatabaseError) -> Failure,
                                                     _ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        do throws(DatabaseError) { try execute(begin) } catch { throw wrap(error) }
        do throws(Failure) {
            let result = try body()
            do throws(DatabaseError) { try execute("COMMIT") } catch { throw wrap(error) }
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// ``writeTransaction(attempts:databaseError:wrap:_:)`` for a body that throws only database errors.
    public func writeTransaction<Result>(attempts: Int = 10, _ body: () throws(DatabaseError) -> Result) throws(DatabaseError) -> Result {
        try writeTransaction(attempts: attempts, databaseError: { $0 }, wrap: { $0 }, body)
    }
}
