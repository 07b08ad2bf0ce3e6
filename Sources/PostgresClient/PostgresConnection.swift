import CLibPQ
import Foundation

/// A failure reported by PostgreSQL or libpq, with its SQLSTATE when the server gave one.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public var message: String
    /// The five-character SQLSTATE (`23505` unique violation, `40P01` deadlock, `40001` serialization failure).
    public var sqlState: String?

    public init(_ message: String, sqlState: String? = nil) {
        self.message = message
        self.sqlState = sqlState
    }

    public var description: String { sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message }

    /// Whether running the same transaction again may succeed (a deadlock or serialization failure).
    public var isRetryable: Bool { sqlState == "40P01" || sqlState == "40001" }

    /// Whether the server could not be reached or would not take a connection for now (down, starting,
    /// stopping, in recovery, out of connection slots), as against refusing it for good (a wrong
    /// password, a database that does not exist): set when connecting fails, from what libpq says, which
    /// has no code for it. This is the one place that reads libpq's words.
    public var isServerUnavailable = false

    static func connectFailure(_ message: String) -> PostgresError {
        var error = PostgresError("cannot connect to PostgreSQL: \(message)")
        let passing = ["Connection refused", "No such file or directory", "could not connect", "the database system is starting up",
                       "the database system is shutting down", "the database system is in recovery mode", "the database system is not yet accepting connections",
                       "timeout expired", "server closed the connection", "too many clients", "remaining connection slots are reserved",
                       "Connection reset by peer", "Network is unreachable", "No route to host"]
        error.isServerUnavailable = passing.contains { message.localizedCaseInsensitiveContains($0) }
        if message.localizedCaseInsensitiveContains("too many clients") || message.localizedCaseInsensitiveContains("connection slots") {
            error.sqlState = "53300"
        }
        return error
    }
}

/// One connection to a PostgreSQL server through libpq: the only code that touches libpq.
///
/// Not thread-safe by itself: its owner serialises every use, which is why it is `@unchecked Sendable`.
/// Statements take text parameters (`$1`, `$2`, …) and give text results.
public final class PostgresConnection: @unchecked Sendable {
    private let connection: OpaquePointer
    /// The statements prepared on this session, by their SQL: each is parsed and planned by the
    /// server once instead of on every call. Bounded: a statement past the bound (SQL built with
    /// values in it) runs unprepared.
    private var prepared: [String: String] = [:]
    private static let preparedLimit = 512
    /// Statements run once so far: a statement is prepared when it comes again, so SQL made once (a
    /// list of values written into it) does not take a place.
    private var seenOnce: Set<String> = []

    /// Connects with a libpq connection string or URL (`postgres://user@host:port/db`).
    public init(_ url: String) throws(PostgresError) {
        guard let connection = PQconnectdb(url) else { throw PostgresError("libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(connection)
            throw PostgresError.connectFailure(message)
        }
        self.connection = connection
        // Notices ("relation already exists, skipping") would go to standard error; warnings still do.
        if let result = PQexec(connection, "SET client_min_messages TO WARNING") { PQclear(result) }
    }

    deinit { PQfinish(connection) }

    /// Whether the connection to the server is up, as libpq last saw it.
    public var isConnected: Bool { PQstatus(connection) == CONNECTION_OK }

    /// Connects again with the same parameters: after the server restarted or the connection broke,
    /// libpq's connection stays broken until it is reset.
    public func reset() throws(PostgresError) {
        PQreset(connection)
        // A new session has none of the old one's prepared statements.
        prepared.removeAll()
        seenOnce.removeAll()
        guard isConnected else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            var failure = PostgresError.connectFailure(message)
            failure.message = "cannot connect to PostgreSQL again: \(message)"
            throw failure
        }
        if let result = PQexec(connection, "SET client_min_messages TO WARNING") { PQclear(result) }
    }

    /// A parameter value: text, or SQL NULL.
    public enum Value: Sendable {
        case text(String)
        case null

        public static func integer(_ value: Int64) -> Value { .text(String(value)) }
        public static func optionalText(_ text: String?) -> Value { text.map { .text($0) } ?? .null }
    }

    /// A result row's columns, as text (`nil` for NULL).
    public struct Row {
        public let columns: [String?]
        /// The columns' names (their aliases, when the statement gives them), shared by a result's rows.
        public let names: [String]
        public func text(_ column: Int) -> String? { columns[column] }
        public func integer(_ column: Int) -> Int64 { columns[column].flatMap { Int64($0) } ?? 0 }
        public func isNull(_ column: Int) -> Bool { columns[column] == nil }
    }

    /// Runs SQL without parameters (several statements allowed).
    public func execute(_ sql: String) throws(PostgresError) {
        _ = try query(sql, [], simple: true)
    }

    /// Runs one statement with parameters and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ values: [Value] = []) throws(PostgresError) -> [Row] {
        try query(sql, values, simple: false)
    }

    /// The name `sql` is prepared under on this session, preparing it first; `nil` past the bound.
    private func preparedName(_ sql: String, parameters: Int) throws(PostgresError) -> String? {
        if let name = prepared[sql] { return name }
        guard prepared.count < Self.preparedLimit else { return nil }
        guard seenOnce.remove(sql) != nil else {
            if seenOnce.count >= 4 * Self.preparedLimit { seenOnce.removeAll() }
            seenOnce.insert(sql)
            return nil
        }
        let name = "openstorekit_\(prepared.count + 1)"
        guard let result = PQprepare(connection, name, sql, Int32(parameters), nil) else {
            throw PostgresError(String(cString: PQerrorMessage(connection)))
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            throw PostgresError(message.isEmpty ? "preparing the statement failed" : message, sqlState: state)
        }
        prepared[sql] = name
        return name
    }

    /// Runs statements in order in one round trip to the server (libpq's pipeline mode) and returns
    /// each one's rows. The first statement that fails ends the batch: the server skips the rest,
    /// and its error is thrown. Statements that begin, end or need a transaction may be among them,
    /// as in separate calls; each runs as one statement with parameters (no scripts).
    public func pipeline(_ statements: [(sql: String, values: [Value])]) throws(PostgresError) -> [[Row]] {
        // Statements seen before are prepared first, outside the pipeline (preparing waits for an answer).
        var names: [String?] = []
        for statement in statements { names.append(try preparedName(statement.sql, parameters: statement.values.count)) }
        guard PQenterPipelineMode(connection) == 1 else { throw PostgresError(String(cString: PQerrorMessage(connection))) }
        defer { PQexitPipelineMode(connection) }
        for (statement, name) in zip(statements, names) {
            let sent = Self.withParameters(statement.values) { count, parameters in
                if let name { return PQsendQueryPrepared(connection, name, count, parameters, nil, nil, 0) }
                return PQsendQueryParams(connection, statement.sql, count, nil, parameters, nil, nil, 0)
            }
            guard sent == 1 else { throw abandonPipeline() }
        }
        guard PQpipelineSync(connection) == 1 else { throw abandonPipeline() }
        var answers: [[Row]] = []
        var failure: PostgresError?
        // Each statement's result, then a NULL; after the last, the synchronization point.
        while true {
            guard let result = PQgetResult(connection) else {
                // Between statements; a connection gone gives no more results.
                guard isConnected else { throw failure ?? PostgresError(String(cString: PQerrorMessage(connection))) }
                continue
            }
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC { break }
            if status == PGRES_PIPELINE_ABORTED { continue }
            do throws(PostgresError) {
                answers.append(try Self.rows(of: result))
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
        return answers
    }

    /// Ends a pipeline that could not be sent whole: what was sent is answered up to a synchronization
    /// point and thrown away, so the connection can leave pipeline mode. Returns libpq's reason.
    private func abandonPipeline() -> PostgresError {
        let error = PostgresError(String(cString: PQerrorMessage(connection)))
        guard isConnected, PQpipelineSync(connection) == 1 else { return error }
        while true {
            guard let result = PQgetResult(connection) else {
                if isConnected { continue } else { break }
            }
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        return error
    }

    /// Calls `body` with the values as C strings (NULL for SQL NULL) that live until it returns.
    private static func withParameters<Answer>(_ values: [Value], _ body: (Int32, UnsafePointer<UnsafePointer<CChar>?>?) -> Answer) -> Answer {
        guard !values.isEmpty else { return body(0, nil) }
        let strings = values.map { value -> String? in if case .text(let text) = value { return text } else { return nil } }
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0) } ?? nil }
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { parameters in
                body(Int32(values.count), UnsafePointer(parameters))
            }
        }
    }

    private func query(_ sql: String, _ values: [Value], simple: Bool) throws(PostgresError) -> [Row] {
        let result: OpaquePointer?
        if simple {
            result = PQexec(connection, sql)
        } else {
            let name = try preparedName(sql, parameters: values.count)
            result = Self.withParameters(values) { count, parameters in
                if let name { return PQexecPrepared(connection, name, count, parameters, nil, nil, 0) }
                return PQexecParams(connection, sql, count, nil, parameters, nil, nil, 0)
            }
        }
        guard let result else { throw PostgresError(String(cString: PQerrorMessage(connection))) }
        defer { PQclear(result) }
        return try Self.rows(of: result)
    }

    /// A statement's rows, or its error.
    private static func rows(of result: OpaquePointer) throws(PostgresError) -> [Row] {
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            throw PostgresError(message.isEmpty ? "the statement failed" : message, sqlState: state)
        }
        let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
        let names = (0..<columns).map { column in PQfname(result, Int32(column)).map { String(cString: $0) } ?? "" }
        return (0..<rows).map { row in
            Row(columns: (0..<columns).map { column in
                PQgetisnull(result, Int32(row), Int32(column)) == 1 ? nil : String(cString: PQgetvalue(result, Int32(row), Int32(column)))
            }, names: names)
        }
    }
}
