import AppStoreModels
import AppStoreSimulator
@testable import AppStoreSimulatorSQL
import Foundation
import SQLDatabase
import SQLiteDatabase
import Testing
import TestSupport

/// Stores written with table layout 1 (records as JSON only, every view computed in memory) open
/// with this version: converted once, atomically, seeing exactly what they held.
@Suite(.timeLimit(.minutes(10)), .enabled(if: FileManager.default.isExecutableFile(atPath: BuiltTool.storekit.path), "the storekit binary is not built; run swift build first"))
struct LedgerMigrationTests {
    /// Turns a layout-2 database back into layout 1, as the previous version wrote it.
    static func downgradeToLayoutOne(_ path: String) throws {
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        var indexes: [String] = []
        try connection.query("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL") { row in indexes.append(row.text(0)!) }
        for index in indexes { try connection.execute("DROP INDEX \(index)") }
        let added = ["accounts": ["family_group"], "devices": ["account"],
                     "transactions": ["original_id", "product_id", "product_kind", "group_id", "family_source_id", "unfinished", "history",
                                      "listed_state", "purchase_ms", "expires_ms"],
                     "subscriptions": ["account", "group_id", "family_source_id", "next_event_ms", "grace_latest_id"],
                     "notifications": ["attempts", "next_attempt_ms", "claimed_until_ms"], "updates": ["detail"]]
        for (table, columns) in added {
            for column in columns { try connection.execute("ALTER TABLE \(table) DROP COLUMN \(column)") }
        }
        try connection.execute("""
            CREATE INDEX updates_waiting ON updates(delivered, sequence);
            DELETE FROM meta WHERE key IN ('layout', 'version');
            UPDATE meta SET value = '1' WHERE key = 'schema';
            DROP TABLE schema_migrations;
            """)
    }

    /// What a store shows: its transactions, subscriptions, an account's entitlements and a device's feed.
    static func views(_ store: SimulatedAppStore) async throws -> [String] {
        let transactions = try await store.ledgerTransactions()
        let subscriptions = try await store.subscriptionRecords()
        let entitled = try await store.entitledTransactions(of: "alice").map(\.id)
        let waiting = try await store.waitingUpdates(device: "tablet").map(\.sequence)
        return [String(decoding: try AppStoreJSON.encode(transactions), as: UTF8.self),
                String(decoding: try AppStoreJSON.encode(subscriptions), as: UTF8.self), "\(entitled)", "\(waiting)"]
    }

    @Test("a layout-1 store opens converted, with the same ledger; parallel first openers convert it once")
    func convertsLayoutOne() async throws {
        let scratch = Scratch()
        let (directory, store) = try await TestStores.directory(in: scratch)
        try await store.addDevice("tablet", account: "alice")
        _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone"))
        _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.basicWeekly, account: "alice", device: "phone"))
        _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "bob", device: "laptop"))
        try await store.setFamilyGroup("smiths", for: "alice")
        try await store.setFamilyGroup("smiths", for: "bob")
        try await store.advanceTime(by: 10 * 86_400)
        let before = try await Self.views(store)
        // A copy left in layout 2 shows what the converted store must do next.
        let control = scratch.url.appendingPathComponent("control")
        try FileManager.default.copyItem(at: directory, to: control)
        let database = StoreDirectory.databaseURL(in: directory).path
        try Self.downgradeToLayoutOne(database)

        let opens = try await StoreProcess.parallel(Array(repeating: ["transactions", directory.path], count: 4))
        ConcurrentProcessTests.expectAllSucceeded(opens)
        #expect(Set(opens.map(\.standardOutput)).count == 1)
        let reopened = try await TestStores.open(directory)
        #expect(try await Self.views(reopened) == before)
        var layout: String?
        try SQLiteConnection(path: database, mode: .readWrite).query("SELECT value FROM meta WHERE key = 'layout'") { layout = $0.text(0) }
        #expect(layout == String(SQLLedgerStorage.layoutVersion))
        // Each layout is recorded once as a named migration of the SQL layer, by whichever opener was first.
        var recorded: [String] = []
        try SQLiteConnection(path: database, mode: .readWrite).query("SELECT name FROM schema_migrations WHERE schema_name = 'ledger' ORDER BY position") {
            recorded.append($0.text(0) ?? "")
        }
        #expect(recorded == SQLLedgerStorage.migrations.migrations.map(\.name))
        #expect(recorded.count == SQLLedgerStorage.layoutVersion)
        #expect(try await reopened.integrityProblems().isEmpty)
        // Renewals are found by the new index: a month later the converted store has played what the
        // copy that was never converted plays.
        let controlStore = try await TestStores.open(control)
        // The Transaction Manager's columns were filled from the records: every listing is the copy's.
        for listing in [TransactionListing(states: [.purchased]), TransactionListing(states: [.expired]),
                        TransactionListing(sort: .expirationDate, descending: true), TransactionListing(sort: .state)] {
            #expect(try await reopened.listTransactions(listing).transactions.map(\.id) == controlStore.listTransactions(listing).transactions.map(\.id))
        }
        #expect(try await reopened.listTransactions(TransactionListing(states: [.expired])).transactions.isEmpty == false)
        let played = try await reopened.advanceTime(by: 30 * 86_400)
        #expect(played >= 4)
        #expect(try await controlStore.advanceTime(by: 30 * 86_400) == played)
        #expect(try await Self.views(reopened) == Self.views(controlStore))
    }

    /// Writes every account and device name of a store in Unicode's decomposed form, as an earlier
    /// version kept a name typed that way, and marks the store as layout 5.
    static func decomposeNames(_ path: String) throws {
        let connection = try SQLiteConnection(path: path, mode: .readWrite)
        for (table, columns) in [("accounts", ["name", "record"]), ("devices", ["name", "account", "record"]),
                                 ("transactions", ["account", "record"]), ("subscriptions", ["account", "record"]), ("updates", ["device"])] {
            var rows: [(Int64, [String?])] = []
            try connection.query("SELECT rowid, \(columns.joined(separator: ", ")) FROM \(table)") { row in
                rows.append((row.integer(0), columns.indices.map { row.text(Int32($0 + 1))?.decomposedStringWithCanonicalMapping }))
            }
            for (rowid, values) in rows {
                try connection.query("UPDATE \(table) SET \(columns.indices.map { "\(columns[$0]) = ?\($0 + 2)" }.joined(separator: ", ")) WHERE rowid = ?1",
                                     [.integer(rowid)] + values.map { SQLiteConnection.Value.optionalText($0) })
            }
        }
        try connection.execute("""
            DROP INDEX transactions_by_listed_state; DROP INDEX transactions_by_product;
            DROP INDEX transactions_by_product_account; DROP INDEX transactions_by_product_expiration;
            DROP INDEX transactions_by_state_account; DROP INDEX transactions_by_state_product;
            DROP INDEX transactions_by_state_expiration; DROP INDEX transactions_by_id;
            DROP INDEX transactions_by_expiration_date; DROP INDEX transactions_by_purchase_date; DROP INDEX subscriptions_in_grace; DROP INDEX notifications_by_transaction;
            DROP INDEX transactions_by_account; CREATE INDEX transactions_by_account ON transactions(account, id);
            ALTER TABLE transactions DROP COLUMN listed_state; ALTER TABLE transactions DROP COLUMN purchase_ms;
            ALTER TABLE transactions DROP COLUMN expires_ms; ALTER TABLE subscriptions DROP COLUMN grace_latest_id;
            ALTER TABLE notifications DROP COLUMN claimed_until_ms;
            UPDATE meta SET value = '5' WHERE key = 'layout'; DROP TABLE schema_migrations;
            """)
    }

    @Test("a store whose names an earlier version kept in another Unicode form opens with them composed; two names that become one stop it, untouched")
    func composesNames() async throws {
        let scratch = Scratch()
        let (directory, store) = try await TestStores.directory(in: scratch)
        try await store.addDevice("tablet-caf\u{E9}", account: "Ren\u{E9}e")
        _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "Ren\u{E9}e", device: "tablet-caf\u{E9}"))
        let database = StoreDirectory.databaseURL(in: directory).path
        var stored: String?
        try SQLiteConnection(path: database, mode: .readWrite).query("SELECT name FROM accounts WHERE name LIKE 'Ren%'") { stored = $0.text(0) }
        #expect(stored?.unicodeScalars.count == 5, "kept composed")

        let collision = scratch.url.appendingPathComponent("collision")
        try FileManager.default.copyItem(at: directory, to: collision)
        try Self.decomposeNames(database)
        var decomposed: String?
        try SQLiteConnection(path: database, mode: .readWrite).query("SELECT name FROM accounts WHERE name LIKE 'Ren%'") { decomposed = $0.text(0) }
        #expect(decomposed?.unicodeScalars.count == 6, "the earlier form")

        let reopened = try await TestStores.open(directory)
        try SQLiteConnection(path: database, mode: .readWrite).query("SELECT name FROM accounts WHERE name LIKE 'Ren%'") { stored = $0.text(0) }
        #expect(stored?.unicodeScalars.count == 5, "composed when opened")
        #expect(try await reopened.device(named: "tablet-cafe\u{301}")?.account.unicodeScalars.count == 5)
        #expect(try await reopened.currentEntitlements(account: "Rene\u{301}e").map(\.transaction.productID) == [ExampleShop.pro])
        #expect(try await reopened.integrityProblems().isEmpty)

        // A store holding both forms of one account as two accounts.
        let collisionDatabase = StoreDirectory.databaseURL(in: collision).path
        try SQLiteConnection(path: collisionDatabase, mode: .readWrite).query(
            "INSERT INTO accounts (name, record) SELECT ?1, record FROM accounts WHERE name = ?2", [.text("Rene\u{301}e"), .text("Ren\u{E9}e")])
        try SQLiteConnection(path: collisionDatabase, mode: .readWrite).execute("UPDATE meta SET value = '5' WHERE key = 'layout'; DROP TABLE schema_migrations;")
        func contents() throws -> [String] {
            var rows: [String] = []
            let connection = try SQLiteConnection(path: collisionDatabase, mode: .readWrite)
            try connection.query("SELECT name, record FROM accounts ORDER BY rowid") { rows.append("\($0.text(0) ?? "") \($0.text(1) ?? "")") }
            try connection.query("SELECT key, value FROM meta ORDER BY key") { rows.append("\($0.text(0) ?? "") \($0.text(1) ?? "")") }
            return rows
        }
        let before = try contents()
        await #expect {
            _ = try await TestStores.open(collision)
        } throws: { error in
            String(describing: error).contains("two accounts named") && String(describing: error).contains("rename one of them")
        }
        #expect(try contents() == before, "the store is left as it was")
    }
}
