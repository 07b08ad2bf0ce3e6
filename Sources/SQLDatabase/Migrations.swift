/// One named change to a schema, run once per database.
public struct Migration: Sendable {
    /// The name recorded in `schema_migrations` once the change is committed (never renamed).
    public let name: String
    let apply: @Sendable (any DatabaseConnection) throws(DatabaseError) -> Void

    public init(_ name: String, _ apply: @escaping @Sendable (any DatabaseConnection) throws(DatabaseError) -> Void) {
        self.name = name
        self.apply = apply
    }

    /// A migration that runs one SQL script.
    public static func sql(_ name: String, _ script: String) -> Migration {
        Migration(name) { (connection) throws(DatabaseError) in try connection.execute(script) }
    }
}

/// A schema's migrations, in order, and how to recognise a database written before they were
/// recorded.
///
/// Whichever process opens a database first migrates it: in one write transaction it takes the
/// schema's migration lock, reads which migrations `schema_migrations` records, runs the others in
/// order and records each, and commits, so every migration runs once however many processes open
/// the database at the same time, and a failure leaves the database as it was. A database all of
/// whose migrations are recorded is opened with one read and no lock (also when it is read-only).
public struct SchemaMigrations: Sendable {
    /// The schema's name: the key of its rows in `schema_migrations`, and of its migration lock.
    public let schema: String
    public let migrations: [Migration]
    /// For a database that has no rows of this schema yet: the migrations its tables already hold
    /// (written by a version that recorded its layout another way), so they are recorded instead
    /// of run. Called inside the migrating transaction, after the lock.
    let alreadyApplied: @Sendable (any DatabaseConnection) throws(DatabaseError) -> [String]

    public init(schema: String, migrations: [Migration],
                alreadyApplied: @escaping @Sendable (any DatabaseConnection) throws(DatabaseError) -> [String] = { _ in [] }) {
        precondition(Set(migrations.map(\.name)).count == migrations.count, "migration names of \(schema) repeat")
        self.schema = schema
        self.migrations = migrations
        self.alreadyApplied = alreadyApplied
    }

    static let table = """
        CREATE TABLE IF NOT EXISTS schema_migrations (schema_name TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL,
                                                      PRIMARY KEY (schema_name, name))
        """

    /// The migrations `connection`'s database records for this schema (none when the table is missing).
    public func recorded(on connection: any DatabaseConnection) throws(DatabaseError) -> Set<String> {
        guard try connection.hasTable("schema_migrations") else { return [] }
        return Set(try connection.fetchAll("SELECT name FROM schema_migrations WHERE schema_name = $1", [.text(schema)]) {
            (row) throws(DatabaseError) -> String in try row["name"]
        })
    }

    /// Whether every migration is recorded; with `adoptingEarlierLayouts`, also when none is
    /// recorded but the tables already hold them all (a database this version can read as it is,
    /// although it will record them when it first writes).
    public func isCurrent(on connection: any DatabaseConnection, adoptingEarlierLayouts: Bool = false) throws(DatabaseError) -> Bool {
        var done = try recorded(on: connection)
        if done.isEmpty, adoptingEarlierLayouts { done = Set(try alreadyApplied(connection)) }
        return done.isSuperset(of: migrations.map(\.name))
    }

    /// Brings the database up to date: returns the names of the migrations this call ran (empty
    /// when another process had done them, or none was missing).
    @discardableResult
    public func migrate(_ connection: any DatabaseConnection) throws(DatabaseError) -> [String] {
        if try isCurrent(on: connection) { return [] }
        return try connection.writeTransaction { () throws(DatabaseError) -> [String] in
            try connection.lockForMigration(of: schema)
            try connection.execute(Self.table)
            var done = try recorded(on: connection)
            if done.isEmpty {
                // Adopt a database written before this schema's migrations were recorded.
                for name in try alreadyApplied(connection) where !done.contains(name) {
                    try record(name, on: connection)
                    done.insert(name)
                }
            }
            var ran: [String] = []
            for migration in migrations where !done.contains(migration.name) {
                do throws(DatabaseError) {
                    try migration.apply(connection)
                } catch {
                    throw error.during("migration \(migration.name) of \(schema) in \(connection.location)")
                }
                try record(migration.name, on: connection)
                ran.append(migration.name)
            }
            return ran
        }
    }

    private func record(_ name: String, on connection: any DatabaseConnection) throws(DatabaseError) {
        let position = migrations.firstIndex { $0.name == name } ?? -1
        try connection.query("INSERT INTO schema_migrations (schema_name, name, position) VALUES ($1, $2, $3)",
                             [.text(schema), .text(name), .integer(Int64(position))]) { _ in }
    }
}
