import CSQLite
import Foundation

/// A failure reported by SQLite, with its message.
public struct SQLiteError: Error, CustomStringConvertible {
    public var code: Int32
    public var message: String
    public var description: String { message }

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }
}

/// One SQLite connection with its prepared statements: the only code that touches SQLite's C API
/// (the store's ledger and the backend's database both go through it).
///
/// Not thread-safe by itself (it is opened `NOMUTEX`): the storage that owns it serialises every use
/// behind a mutex, which is why it can be `@unchecked Sendable`.
public final class SQLiteConnection: @unchecked Sendable {
    private let database: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    /// For each prepared statement, which value each of its parameters takes.
    private var parameterOrders: [String: [(index: Int32, offset: Int)]] = [:]

    /// How a connection opens its file.
    public enum OpenMode {
        /// Reads and writes an existing file.
        case readWrite
        /// Reads and writes, creating the file when it is missing.
        case create
        /// Reads only. With `immutable`, SQLite takes no locks and keeps no `-shm` file: for a file on
        /// a read-only filesystem or in a folder this user cannot write, which nobody can change meanwhile.
        case readOnly(immutable: Bool)
    }

    /// Opens a database file.
    public init(path: String, mode: OpenMode) throws(SQLiteError) {
        var handle: OpaquePointer?
        var location = path
        var flags = SQLITE_OPEN_NOMUTEX
        switch mode {
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .create: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        case .readOnly(let immutable):
            flags |= SQLITE_OPEN_READONLY
            if immutable {
                flags |= SQLITE_OPEN_URI
                location = "file:" + Self.uriPath(path) + "?immutable=1"
            }
        }
        let status = sqlite3_open_v2(location, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let handle { sqlite3_close_v2(handle) }
            throw SQLiteError(code: status, message: message)
        }
        database = handle
        // Writers queue on the write lock; a long advance commits in chunks well below this.
        sqlite3_busy_timeout(database, 60_000)
    }

    /// A file path as the path of an SQLite `file:` URI: the characters a URI gives meaning to are escaped.
    private static func uriPath(_ path: String) -> String {
        var escaped = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), 0..<0x21, 0x7F...:
                escaped += String(format: "%%%02X", byte)
            default:
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return escaped
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(database)
    }

    private func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status, message: String(cString: sqlite3_errmsg(database)))
    }

    /// Runs SQL without results (several statements allowed).
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(database, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(database))
            sqlite3_free(message)
            throw SQLiteError(code: status, message: text)
        }
    }

    /// A value to bind to a statement parameter.
    public enum Value {
        case integer(Int64)
        case text(String)
        case null

        public static func optionalText(_ text: String?) -> Value { text.map { .text($0) } ?? .null }
    }

    /// Runs one statement, reusing its prepared form, and returns its rows.
    ///
    /// Parameters are numbered: `$1`, `$2`, … (as PostgreSQL writes them) or `?1`, `?2`, …; the value
    /// at `values[n - 1]` binds to parameter `n` wherever it appears, in any order.
    @discardableResult
    public func query(_ sql: String, _ values: [Value] = [], row: (Row) -> Void = { _ in }) throws(SQLiteError) -> Int {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, offset) in parameterOrder(statement, sql: sql) {
            guard offset < values.count else { throw SQLiteError(code: SQLITE_RANGE, message: "parameter \(offset + 1) has no value in: \(sql)") }
            let value = values[offset]
            let status: Int32
            switch value {
            case .integer(let number): status = sqlite3_bind_int64(statement, index, number)
            case .text(let text): status = shim_sqlite3_bind_text_transient(statement, index, text, -1)
            case .null: status = sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else { throw error(status) }
        }
        var count = 0
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw error(status) }
            count += 1
            row(Row(statement: statement))
        }
        return count
    }

    /// Each parameter's index in the statement and the offset of its value: `$n` and `?n` take value `n - 1`.
    private func parameterOrder(_ statement: OpaquePointer, sql: String) -> [(index: Int32, offset: Int)] {
        if let known = parameterOrders[sql] { return known }
        let count = sqlite3_bind_parameter_count(statement)
        let order = (1...max(count, 1)).compactMap { index -> (Int32, Int)? in
            guard index <= count else { return nil }
            guard let name = sqlite3_bind_parameter_name(statement, index).map({ String(cString: $0) }),
                  let number = Int(name.dropFirst()), number >= 1 else { return (index, Int(index) - 1) }
            return (index, number - 1)
        }
        parameterOrders[sql] = order
        return order
    }

    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(database, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        statements[sql] = statement
        return statement
    }

    /// A result row.
    public struct Row {
        let statement: OpaquePointer

        /// How many columns the row has.
        public var columnCount: Int32 { sqlite3_column_count(statement) }

        /// A column's name (its alias, when the statement gives one).
        public func name(_ column: Int32) -> String {
            sqlite3_column_name(statement, column).map { String(cString: $0) } ?? ""
        }

        public func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

        public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

        /// Whether the column holds an integer (as stored, not converted).
        public func isInteger(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_INTEGER }

        public func text(_ column: Int32) -> String? {
            guard let pointer = sqlite3_column_text(statement, column) else { return nil }
            return String(cString: pointer)
        }
    }
}
