import BlockingWork
import Foundation
import SQLDatabase
import Testing
import TestSupport

/// The SQL layer both the backend and the ledger read through: columns by name into Swift types,
/// records made from rows, `$n` parameters in any order, and the database's failures classified by
/// what they mean: on SQLite and on PostgreSQL.
@Suite(.timeLimit(.minutes(5)))
struct DatabaseRowTests {
    struct Purchase: FetchableRecord, Equatable {
        var id: String
        var price: Int64
        var refunded: Bool
        var note: String?

        init(id: String, price: Int64, refunded: Bool, note: String?) {
            (self.id, self.price, self.refunded, self.note) = (id, price, refunded, note)
        }

        init(row: DatabaseRow) throws(DatabaseError) {
            id = try row["id"]
            price = try row["price"]
            refunded = try row["refunded"]
            note = try row["note"]
        }
    }

    /// Runs the checks on one connection, off the cooperative pool.
    static func checkRows(on connection: any DatabaseConnection) async throws {
        try await BlockingWork.run("DatabaseRowTests") { () throws -> Void in
            try connection.execute("CREATE TABLE purchases (id TEXT PRIMARY KEY, price BIGINT NOT NULL, refunded INTEGER NOT NULL, note TEXT)")
            // $2 before $1, and $1 used twice: each value binds by its number, on both engines.
            try connection.query("INSERT INTO purchases (price, id, refunded, note) VALUES ($2, $1, 0, $1 || '-note')", [.text("a"), .integer(499)]) { _ in }
            try connection.query("INSERT INTO purchases (id, price, refunded, note) VALUES ($1, $2, 1, NULL)", [.text("b"), .integer(1299)]) { _ in }

            let purchases = try connection.fetchAll(Purchase.self, "SELECT note, refunded, price, id FROM purchases ORDER BY id")
            #expect(purchases == [Purchase(id: "a", price: 499, refunded: false, note: "a-note"), Purchase(id: "b", price: 1299, refunded: true, note: nil)])
            #expect(try connection.fetchOne(Purchase.self, "SELECT * FROM purchases WHERE id = $1", [.text("zzz")]) == nil)
            #expect(try connection.fetchValue(Int.self, column: "total", "SELECT sum(price) AS total FROM purchases") == 1798)

            // A missing column, a NULL read as a non-optional, and text read as an integer are errors
            // that name the column, never a default value.
            let missing = #expect(throws: DatabaseError.self) { try connection.fetchAll(Purchase.self, "SELECT id, price FROM purchases") }
            #expect(missing?.message.contains("has no column refunded") == true, "\(missing?.message ?? "")")
            let null = #expect(throws: DatabaseError.self) {
                try connection.fetchAll("SELECT note FROM purchases WHERE id = 'b'") { (row) throws(DatabaseError) -> String in try row["note"] }
            }
            #expect(null?.message.contains("holds NULL in column note, which is not text") == true, "\(null?.message ?? "")")
            let text = #expect(throws: DatabaseError.self) {
                try connection.fetchAll("SELECT id AS price FROM purchases") { (row) throws(DatabaseError) -> Int64 in try row["price"] }
            }
            #expect(text?.message.contains("holds 'a' in column price, which is not an integer") == true, "\(text?.message ?? "")")

            // A batch (one round trip on PostgreSQL): each statement's rows in order, a transaction
            // begun and committed inside it, each statement run twice so the second batch runs prepared.
            for round in 0..<2 {
                let answers = try connection.batch([
                    DatabaseStatement("BEGIN"),
                    DatabaseStatement("INSERT INTO purchases (id, price, refunded) VALUES ($1, $2, 0)", [.text("batch\(round)"), .integer(100)]),
                    DatabaseStatement("SELECT id, price FROM purchases WHERE id LIKE $1 ORDER BY id", [.text("batch%")]),
                    DatabaseStatement("SELECT count(*) AS n FROM purchases WHERE price < $1", [.integer(0)]),
                    DatabaseStatement("COMMIT"),
                ])
                #expect(answers.count == 5)
                #expect(try answers[2].map { (row) throws(DatabaseError) -> String in try row["id"] } == (0...round).map { "batch\($0)" })
                #expect(try answers[3].first.map { (row) throws(DatabaseError) -> Int64 in try row["n"] } == 0)
            }
            // The first statement that fails ends the batch with its error: the statements after it
            // do not run, and the transaction it was in is rolled back; the connection goes on working.
            let failed = #expect(throws: DatabaseError.self) {
                try connection.batch([
                    DatabaseStatement("BEGIN"),
                    DatabaseStatement("INSERT INTO purchases (id, price, refunded) VALUES ('c', 1, 0)"),
                    DatabaseStatement("INSERT INTO purchases (id, price, refunded) VALUES ('a', 1, 0)"),
                    DatabaseStatement("INSERT INTO purchases (id, price, refunded) VALUES ('d', 1, 0)"),
                    DatabaseStatement("COMMIT"),
                ])
            }
            #expect(failed?.message.localizedCaseInsensitiveContains("unique") == true, "\(failed?.message ?? "")")
            try connection.execute("ROLLBACK")
            #expect(try connection.fetchValue(Int.self, column: "n", "SELECT count(*) AS n FROM purchases WHERE id IN ('c', 'd')") == 0)
            #expect(try connection.fetchValue(Int.self, column: "n", "SELECT count(*) AS n FROM purchases") == 4)
        }
    }

    @Test("SQLite: columns by name into types, records from rows, $n parameters by number, errors naming the column")
    func sqliteRows() async throws {
        let scratch = Scratch()
        let connection = try SQLiteDatabaseConnection(path: scratch.path("rows.sqlite"), mode: .create(ownerOnly: true))
        try await Self.checkRows(on: connection)
    }

    @Test("PostgreSQL: columns by name into types, records from rows, $n parameters by number, errors naming the column",
          .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)))
    func postgresRows() async throws {
        try await PostgresCluster.with { cluster in
            let connection = try await BlockingWork.run("connect") { () throws(DatabaseError) in try PostgresDatabaseConnection(url: cluster.url) }
            try await Self.checkRows(on: connection)
        }
    }

    @Test("a full SQLite database is a failure that says so (isStorageFull), and nothing of the statement is written")
    func sqliteFull() async throws {
        let scratch = Scratch()
        let connection = try SQLiteDatabaseConnection(path: scratch.path("full.sqlite"), mode: .create(ownerOnly: true))
        try await BlockingWork.run("full") { () throws -> Void in
            try connection.execute("CREATE TABLE blobs (body TEXT)")
            // The file may not grow past its current pages: the next page it needs is "disk full".
            let pages = try #require(try connection.fetchValue(Int64.self, column: "page_count", "PRAGMA page_count"))
            try connection.execute("PRAGMA max_page_count = \(pages)")
            let failure = #expect(throws: DatabaseError.self) {
                try connection.writeTransaction { () throws(DatabaseError) in
                    try connection.query("INSERT INTO blobs (body) VALUES ($1)", [.text(String(repeating: "x", count: 100_000))]) { _ in }
                }
            }
            #expect(failure?.isStorageFull == true, "\(String(describing: failure))")
            #expect(failure?.isUnavailable == false)
            #expect(try connection.fetchValue(Int.self, column: "n", "SELECT count(*) AS n FROM blobs") == 0)
        }
    }

    @Test("a PostgreSQL server that is not there is unavailable (wait and try again), a database that does not exist is not",
          .enabled(if: PostgresCluster.isAvailable, Comment(rawValue: PostgresCluster.skipReason)))
    func postgresUnavailable() async throws {
        try await PostgresCluster.with { cluster in
            let missingDatabase = cluster.url.replacingOccurrences(of: "/postgres?", with: "/nosuchdatabase?")
            let refused = await BlockingWork.run("connect") { () -> DatabaseError? in
                do throws(DatabaseError) { _ = try PostgresDatabaseConnection(url: missingDatabase); return nil } catch { return error }
            }
            #expect(refused?.isUnavailable == false, "\(String(describing: refused))")
            try await cluster.stopServer()
            let away = await BlockingWork.run("connect") { () -> DatabaseError? in
                do throws(DatabaseError) { _ = try PostgresDatabaseConnection(url: cluster.url); return nil } catch { return error }
            }
            #expect(away?.isUnavailable == true, "\(String(describing: away))")
        }
    }
}
