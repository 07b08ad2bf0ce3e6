import Foundation
import PostgresClient
import SQLiteDatabase

/// One result row, read while the statement runs (SQLite) or from the answer (PostgreSQL).
///
/// Columns are read by name, as the statement names them (`SELECT record, customer_id AS customer`),
/// into the type the caller asks for:
///
/// ```swift
/// let price: Int64 = try row["price"]
/// let customer: String? = try row["customer"]   // nil for NULL
/// ```
///
/// A column the statement does not have, a NULL read as a non-optional type, or a value that is not
/// of the type asked for is a ``DatabaseError`` naming the column, never a default value.
public struct DatabaseRow {
    enum Storage {
        case sqlite(SQLiteConnection.Row)
        case postgres(PostgresConnection.Row)
        /// The row's values, copied as text: valid after its statement has moved on.
        case copied([String?])
    }
    let storage: Storage
    let columns: DatabaseColumns

    /// How many columns the row has.
    public var columnCount: Int { columns.names.count }

    /// The column's value, as text (`nil` for NULL; an integer reads as its digits).
    func text(at column: Int) -> String? {
        switch storage {
        case .sqlite(let row): return row.isNull(Int32(column)) ? nil : row.text(Int32(column))
        case .postgres(let row): return row.text(column)
        case .copied(let values): return values[column]
        }
    }

    /// The row with its values copied, to keep after the statement has moved on to the next row (an
    /// SQLite row is read from its statement while it runs).
    public func copy() -> DatabaseRow {
        switch storage {
        case .sqlite: return DatabaseRow(storage: .copied((0..<columnCount).map { text(at: $0) }), columns: columns)
        case .postgres, .copied: return self
        }
    }

    /// The column's value as an integer, or `nil` for NULL or a value that is not an integer.
    func integer(at column: Int) -> Int64? {
        switch storage {
        case .sqlite(let row):
            let index = Int32(column)
            if row.isNull(index) { return nil }
            if row.isInteger(index) { return row.integer(index) }
            return row.text(index).flatMap { Int64($0) }
        case .postgres(let row): return row.text(column).flatMap { Int64($0) }
        case .copied(let values): return values[column].flatMap { Int64($0) }
        }
    }

    func isNull(at column: Int) -> Bool {
        switch storage {
        case .sqlite(let row): return row.isNull(Int32(column))
        case .postgres(let row): return row.isNull(column)
        case .copied(let values): return values[column] == nil
        }
    }

    /// The value of the column named `name`, decoded as `Value`.
    public subscript<Value: DatabaseValueConvertible>(_ name: String) -> Value {
        get throws(DatabaseError) { try decode(Value.self, name) }
    }

    /// The value of the column named `name`, decoded as `type`.
    public func decode<Value: DatabaseValueConvertible>(_ type: Value.Type = Value.self, _ name: String) throws(DatabaseError) -> Value {
        guard let column = columns.index[name] else {
            throw columns.failure("has no column \(name) (its columns: \(columns.names.joined(separator: ", ")))")
        }
        if let value = Value.decode(from: self, at: column) { return value }
        let found = text(at: column).map { "'\($0.prefix(40))'" } ?? "NULL"
        throw columns.failure("holds \(found) in column \(name), which is not \(Value.databaseTypeName)")
    }

    /// Whether the statement has a column named `name`.
    public func hasColumn(_ name: String) -> Bool { columns.index[name] != nil }
}

/// The names of a result's columns, worked out once per statement and shared by its rows.
final class DatabaseColumns: @unchecked Sendable {
    // Unchecked: never changed after it is made.
    let names: [String]
    let index: [String: Int]
    let engine: DatabaseEngine
    let statement: String

    init(names: [String], engine: DatabaseEngine, statement: String) {
        self.names = names
        self.engine = engine
        self.statement = statement
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil { index[name] = position }
        self.index = index
    }

    func failure(_ what: String) -> DatabaseError {
        let sql = statement.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        return DatabaseError(engine: engine, code: nil, message: "a row of \(sql.prefix(120)) \(what)")
    }
}

/// A Swift type a column's value can be read as (as GRDB's `DatabaseValueConvertible`).
public protocol DatabaseValueConvertible {
    /// The value in `row`'s `column`, or `nil` when it is NULL or not of this type.
    static func decode(from row: DatabaseRow, at column: Int) -> Self?
    /// What the type is called in messages ("an integer").
    static var databaseTypeName: String { get }
}

extension String: DatabaseValueConvertible {
    public static func decode(from row: DatabaseRow, at column: Int) -> String? { row.text(at: column) }
    public static var databaseTypeName: String { "text" }
}

extension Int64: DatabaseValueConvertible {
    public static func decode(from row: DatabaseRow, at column: Int) -> Int64? { row.integer(at: column) }
    public static var databaseTypeName: String { "an integer" }
}

extension Int: DatabaseValueConvertible {
    public static func decode(from row: DatabaseRow, at column: Int) -> Int? { row.integer(at: column).flatMap { Int(exactly: $0) } }
    public static var databaseTypeName: String { "an integer" }
}

extension Int32: DatabaseValueConvertible {
    public static func decode(from row: DatabaseRow, at column: Int) -> Int32? { row.integer(at: column).flatMap { Int32(exactly: $0) } }
    public static var databaseTypeName: String { "a 32-bit integer" }
}

extension Bool: DatabaseValueConvertible {
    /// 0 and 1 (SQLite, and PostgreSQL integers), or PostgreSQL's `t` and `f`.
    public static func decode(from row: DatabaseRow, at column: Int) -> Bool? {
        if let number = row.integer(at: column) { return number == 0 ? false : number == 1 ? true : nil }
        switch row.text(at: column) {
        case "t", "true": return true
        case "f", "false": return false
        default: return nil
        }
    }
    public static var databaseTypeName: String { "a boolean" }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// `.some(nil)` for NULL; otherwise the wrapped type's value, or `nil` when it is not one.
    public static func decode(from row: DatabaseRow, at column: Int) -> Wrapped?? {
        if row.isNull(at: column) { return .some(nil) }
        return Wrapped.decode(from: row, at: column).map { .some($0) }
    }
    public static var databaseTypeName: String { "NULL or \(Wrapped.databaseTypeName)" }
}

/// A type made from one result row, by column name (as GRDB's `FetchableRecord`).
public protocol FetchableRecord {
    init(row: DatabaseRow) throws(DatabaseError)
}

extension DatabaseConnection {
    /// Every row of the statement's result, each made into a `Record`.
    public func fetchAll<Record: FetchableRecord>(_ type: Record.Type, _ sql: String, _ values: [DatabaseValue] = []) throws(DatabaseError) -> [Record] {
        try fetchAll(sql, values) { (row) throws(DatabaseError) in try Record(row: row) }
    }

    /// The first row of the statement's result made into a `Record`, or `nil` when there is none.
    public func fetchOne<Record: FetchableRecord>(_ type: Record.Type, _ sql: String, _ values: [DatabaseValue] = []) throws(DatabaseError) -> Record? {
        try fetchAll(type, sql, values).first
    }

    /// Each row of the statement's result made into a value by `make`; the first failure is thrown
    /// once the statement has run.
    public func fetchAll<Element>(_ sql: String, _ values: [DatabaseValue] = [],
                                  _ make: (DatabaseRow) throws(DatabaseError) -> Element) throws(DatabaseError) -> [Element] {
        var elements: [Element] = []
        var failure: DatabaseError?
        try query(sql, values) { row in
            guard failure == nil else { return }
            do throws(DatabaseError) { elements.append(try make(row)) } catch { failure = error }
        }
        if let failure { throw failure }
        return elements
    }

    /// The value of the first row's column `column`, or `nil` when there is no row.
    public func fetchValue<Value: DatabaseValueConvertible>(_ type: Value.Type, column: String, _ sql: String,
                                                            _ values: [DatabaseValue] = []) throws(DatabaseError) -> Value? {
        try fetchAll(sql, values) { (row) throws(DatabaseError) in try row.decode(type, column) }.first
    }
}
