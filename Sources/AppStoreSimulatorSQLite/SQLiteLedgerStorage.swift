import AppStoreModels
import AppStoreSimulator
import Foundation
import Synchronization

/// The default ledger storage: one SQLite database file in WAL mode with full synchronous commits.
///
/// Every ``commit(_:)`` is one `BEGIN IMMEDIATE … COMMIT` transaction; with `synchronous=FULL` a
/// commit that returned survives a crash or power loss, and one that threw left nothing behind.
/// Records are stored as the App Store JSON of their Swift types, keyed by their identifiers, so the
/// format follows the types without migrations for added optional fields.
public final class SQLiteLedgerStorage: LedgerStorage {
    private let connection: SQLiteConnection
    /// Serialises every use of the connection.
    private let lock = Mutex(())
    /// The database file.
    public let path: String

    private static let schema = """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS accounts (name TEXT PRIMARY KEY, record TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS devices (name TEXT PRIMARY KEY, record TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS transactions (id INTEGER PRIMARY KEY, account TEXT NOT NULL, record TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS subscriptions (original_id INTEGER PRIMARY KEY, record TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS updates (sequence INTEGER PRIMARY KEY, device TEXT NOT NULL, channel TEXT NOT NULL,
                                            transaction_id INTEGER NOT NULL, kind TEXT NOT NULL, signed_transaction TEXT NOT NULL,
                                            signed_renewal_info TEXT, renewal_state TEXT, group_id TEXT, created_ms INTEGER NOT NULL,
                                            delivered INTEGER NOT NULL DEFAULT 0);
        CREATE INDEX IF NOT EXISTS updates_waiting ON updates(delivered, sequence);
        CREATE TABLE IF NOT EXISTS notifications (sequence INTEGER PRIMARY KEY, uuid TEXT NOT NULL, type TEXT NOT NULL,
                                                  subtype TEXT, transaction_id INTEGER, body TEXT NOT NULL,
                                                  created_ms INTEGER NOT NULL);
        """

    /// Opens (or, with `create`, creates) the database at `path`.
    ///
    /// Opening never creates or changes a file that is not a store: a missing file, or one that is not
    /// an SQLite database, is reported as ``AppStoreError/storage(_:)``.
    public init(path: String, create: Bool) throws(AppStoreError) {
        self.path = path
        if !create, !FileManager.default.fileExists(atPath: path) {
            throw .storage("\(path) does not exist")
        }
        do {
            let connection = try SQLiteConnection(path: path, create: create)
            // Reading the schema makes SQLite check the file header before anything is written.
            try connection.query("SELECT count(*) FROM sqlite_master")
            // Every commit is fsync'd (synchronous=FULL). Checkpoints run every 10,000 WAL pages rather
            // than SQLite's 1,000: a purchase writes several pages (its record and a signed
            // notification), and rarer checkpoints fold repeated writes of the same pages.
            try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=10000;")
            if create { try connection.execute(Self.schema) }
            self.connection = connection
        } catch {
            throw .storage("\(path) is not a store database: \(error.message)")
        }
    }

    public func load() throws(AppStoreError) -> LedgerSnapshot? {
        try run("reading the ledger") { connection throws(SQLiteError) in
            var snapshot = LedgerSnapshot()
            let hasMeta = try connection.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
            guard hasMeta > 0 else { return nil }
            try connection.query("SELECT key, value FROM meta") { row in
                if let key = row.text(0), let value = row.text(1) { snapshot.meta[key] = value }
            }
            guard !snapshot.meta.isEmpty else { return nil }
            var failure: String?
            func decode<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
                guard let text, let value = try? AppStoreJSON.decode(type, from: Data(text.utf8)) else {
                    failure = "a \(type) record cannot be read"
                    return nil
                }
                return value
            }
            try connection.query("SELECT record FROM accounts") { row in
                if let account = decode(StoreAccount.self, row.text(0)) { snapshot.accounts.append(account) }
            }
            try connection.query("SELECT record FROM devices") { row in
                if let device = decode(StoreDevice.self, row.text(0)) { snapshot.devices.append(device) }
            }
            try connection.query("SELECT record FROM transactions ORDER BY id") { row in
                if let transaction = decode(LedgerTransaction.self, row.text(0)) { snapshot.transactions.append(transaction) }
            }
            try connection.query("SELECT record FROM subscriptions") { row in
                if let subscription = decode(SubscriptionRecord.self, row.text(0)) { snapshot.subscriptions.append(subscription) }
            }
            try connection.query("""
                SELECT sequence, device, channel, transaction_id, kind, signed_transaction, signed_renewal_info, renewal_state,
                       group_id, created_ms FROM updates WHERE delivered = 0 ORDER BY sequence
                """) { row in
                guard let device = row.text(1), let channel = row.text(2).flatMap(LedgerUpdate.Channel.init(rawValue:)),
                      let kind = row.text(4).flatMap(LedgerUpdate.Kind.init(rawValue:)), let signed = row.text(5)
                else {
                    failure = "a feed entry cannot be read"
                    return
                }
                var update = LedgerUpdate(sequence: row.integer(0), device: device, transactionID: UInt64(row.integer(3)), kind: kind,
                                          signedTransaction: signed, date: AppStoreJSON.date(fromMilliseconds: row.integer(9)))
                update.channel = channel
                update.signedRenewalInfo = row.text(6)
                update.renewalState = row.text(7).flatMap(SubscriptionRecord.State.init(rawValue:))
                update.subscriptionGroupID = row.text(8)
                snapshot.pendingUpdates.append(update)
            }
            if let failure { throw SQLiteError(code: 0, message: failure) }
            return snapshot
        }
    }

    public func commit(_ changes: LedgerChanges) throws(AppStoreError) {
        var rows: [(String, [SQLiteConnection.Value])] = []
        for (key, value) in changes.meta {
            rows.append(("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", [.text(key), .text(value)]))
        }
        for account in changes.accounts.values {
            rows.append(("INSERT OR REPLACE INTO accounts (name, record) VALUES (?1, ?2)", [.text(account.name), .text(try encode(account))]))
        }
        for device in changes.devices.values {
            rows.append(("INSERT OR REPLACE INTO devices (name, record) VALUES (?1, ?2)", [.text(device.name), .text(try encode(device))]))
        }
        for id in changes.deletedTransactions.sorted() {
            rows.append(("DELETE FROM transactions WHERE id = ?1", [.integer(Int64(id))]))
            rows.append(("DELETE FROM updates WHERE transaction_id = ?1 AND delivered = 0", [.integer(Int64(id))]))
        }
        for transaction in changes.transactions.values.sorted(by: { $0.id < $1.id }) {
            rows.append(("INSERT OR REPLACE INTO transactions (id, account, record) VALUES (?1, ?2, ?3)",
                         [.integer(Int64(transaction.id)), .text(transaction.account), .text(try encode(transaction))]))
        }
        for id in changes.deletedSubscriptions.sorted() {
            rows.append(("DELETE FROM subscriptions WHERE original_id = ?1", [.integer(Int64(id))]))
        }
        for subscription in changes.subscriptions.values {
            rows.append(("INSERT OR REPLACE INTO subscriptions (original_id, record) VALUES (?1, ?2)",
                         [.integer(Int64(subscription.originalTransactionID)), .text(try encode(subscription))]))
        }
        for update in changes.appendedUpdates {
            rows.append(("""
                INSERT INTO updates (sequence, device, channel, transaction_id, kind, signed_transaction, signed_renewal_info,
                                     renewal_state, group_id, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                """, [.integer(update.sequence), .text(update.device), .text(update.channel.rawValue), .integer(Int64(update.transactionID)),
                      .text(update.kind.rawValue), .text(update.signedTransaction), update.signedRenewalInfo.map { .text($0) } ?? .null,
                      update.renewalState.map { .text($0.rawValue) } ?? .null, update.subscriptionGroupID.map { .text($0) } ?? .null,
                      .integer(AppStoreJSON.milliseconds(from: update.date))]))
        }
        for sequence in changes.deliveredUpdates {
            rows.append(("UPDATE updates SET delivered = 1 WHERE sequence = ?1", [.integer(sequence)]))
        }
        for notification in changes.appendedNotifications {
            rows.append(("""
                INSERT INTO notifications (sequence, uuid, type, subtype, transaction_id, body, created_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                """, [.integer(notification.sequence), .text(notification.notificationUUID), .text(notification.type.rawValue),
                      notification.subtype.map { .text($0.rawValue) } ?? .null, notification.transactionID.map { .integer(Int64($0)) } ?? .null,
                      .text(String(decoding: notification.body.appStoreJSONData(), as: UTF8.self)),
                      .integer(AppStoreJSON.milliseconds(from: notification.date))]))
        }
        try run("committing a change") { connection throws(SQLiteError) in
            try connection.query("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                for (sql, values) in rows { try connection.query(sql, values) }
                try connection.query("COMMIT")
            } catch {
                _ = try? connection.query("ROLLBACK")
                throw error
            }
        }
    }

    public func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord] {
        try run("reading the outbox") { connection throws(SQLiteError) in
            var result: [NotificationRecord] = []
            var failure: String?
            try connection.query("""
                SELECT sequence, uuid, type, subtype, transaction_id, body, created_ms FROM notifications
                WHERE sequence > ?1 ORDER BY sequence LIMIT ?2
                """, [.integer(sequence), .integer(Int64(min(limit, Int(Int64.max))))]) { row in
                guard failure == nil else { return }
                guard let uuid = row.text(1), let type = row.text(2), let text = row.text(5),
                      let body = try? AppStoreJSON.decode(NotificationRecord.Body.self, from: Data(text.utf8)) else {
                    failure = "notification \(row.integer(0)) cannot be read"
                    return
                }
                result.append(NotificationRecord(
                    sequence: row.integer(0), notificationUUID: uuid, type: NotificationTypeV2(rawValue: type),
                    subtype: row.text(3).map(Subtype.init(rawValue:)), transactionID: row.isNull(4) ? nil : UInt64(row.integer(4)),
                    date: AppStoreJSON.date(fromMilliseconds: row.integer(6)), payload: body.payload, transaction: body.transaction))
            }
            if let failure { throw SQLiteError(code: 0, message: failure) }
            return result
        }
    }


    public func integrityProblems() throws(AppStoreError) -> [String] {
        try run("checking integrity") { connection throws(SQLiteError) in
            var problems: [String] = []
            try connection.query("PRAGMA integrity_check") { row in
                if let text = row.text(0), text != "ok" { problems.append(text) }
            }
            var duplicates = 0
            try connection.query("SELECT count(*) - count(DISTINCT uuid) FROM notifications") { row in duplicates = Int(row.integer(0)) }
            if duplicates > 0 { problems.append("\(duplicates) notification UUIDs appear more than once") }
            return problems
        }
    }

    private func run<T>(_ what: String, _ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(AppStoreError) -> T {
        do {
            return try lock.withLock { _ throws(SQLiteError) in try body(connection) }
        } catch {
            throw .storage("\(what) failed in \(path): \(error.message)")
        }
    }

    private func encode<T: Encodable>(_ value: T) throws(AppStoreError) -> String {
        do { return String(decoding: try AppStoreJSON.encode(value), as: UTF8.self) } catch {
            throw .storage("cannot encode a \(T.self) record: \(error)")
        }
    }
}

extension SQLiteLedgerStorage {
    /// How many single-row durable commits per second SQLite manages in `directory`, with the same
    /// settings the ledger uses (WAL, `synchronous=FULL`); the limit a durable purchase is measured against.
    public static func durableCommitRate(in directory: URL, seconds: Double) throws(AppStoreError) -> Double {
        let path = directory.appendingPathComponent("commit-probe-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let connection = try SQLiteConnection(path: path, create: true)
            try connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE probe (id INTEGER PRIMARY KEY, value TEXT NOT NULL);")
            let clock = ContinuousClock()
            let start = clock.now
            var commits = 0
            var elapsed = Duration.zero
            repeat {
                try connection.query("BEGIN IMMEDIATE")
                try connection.query("INSERT INTO probe (value) VALUES (?1)", [.text(String(repeating: "x", count: 1_000))])
                try connection.query("COMMIT")
                commits += 1
                elapsed = clock.now - start
            } while elapsed < .milliseconds(Int64(seconds * 1000))
            return Double(commits) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        } catch {
            throw .storage("the commit probe failed: \(error.message)")
        }
    }
}
