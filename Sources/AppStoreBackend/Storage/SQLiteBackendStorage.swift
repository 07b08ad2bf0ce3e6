import AppStoreModels
import Foundation
import SQLiteDatabase
import Synchronization

/// The backend's database on SQLite (WAL): one file that several backend processes on one machine
/// share. Every change runs in `BEGIN IMMEDIATE` (SQLite's write lock) and re-reads what it updates.
public final class SQLiteBackendStorage: BackendStorage {
    private let connection: Mutex<SQLiteConnection>
    public let path: String

    /// Opens (creating when missing) the database at `path`.
    public init(path: String) throws(BackendError) {
        self.path = path
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, mode: .create)
            try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
            try connection.execute(Self.schema)
        } catch {
            throw .storage("cannot open the backend database \(path): \(error)")
        }
        self.connection = Mutex(connection)
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS notifications (uuid TEXT PRIMARY KEY, type TEXT NOT NULL, subtype TEXT, signed_ms INTEGER NOT NULL,
                                                  transaction_id TEXT, original_transaction_id TEXT);
        CREATE TABLE IF NOT EXISTS transactions (transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL,
                                                 customer_id TEXT, signed_ms INTEGER NOT NULL, payload TEXT NOT NULL, jws TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS transactions_by_customer ON transactions(customer_id) WHERE customer_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS transactions_by_original ON transactions(original_transaction_id);
        CREATE TABLE IF NOT EXISTS statuses (original_transaction_id TEXT PRIMARY KEY, status INTEGER, renewal_info TEXT,
                                             signed_ms INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS links (original_transaction_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS links_by_customer ON links(customer_id);
        CREATE TABLE IF NOT EXISTS keys (hash TEXT PRIMARY KEY, label TEXT NOT NULL, created_ms INTEGER NOT NULL);
        """

    private func withConnection<Result>(_ body: (SQLiteConnection) throws(SQLiteError) -> Result) throws(BackendError) -> Result {
        do {
            return try connection.withLock { (connection) throws(SQLiteError) -> Result in try body(connection) }
        } catch {
            throw .storage("the backend database \(path) failed: \(error)")
        }
    }

    public func apply(_ change: BackendChange) throws(BackendError) -> Bool {
        try withConnection { (connection) throws(SQLiteError) -> Bool in
            try connection.execute("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                if let notification = change.notification {
                    let inserted = try connection.query("""
                        INSERT INTO notifications (uuid, type, subtype, signed_ms, transaction_id, original_transaction_id)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(uuid) DO NOTHING RETURNING uuid
                        """, [.text(notification.notificationUUID), .text(notification.type), .optionalText(notification.subtype),
                              .integer(AppStoreJSON.milliseconds(from: notification.signedDate)),
                              .optionalText(notification.transactionID), .optionalText(notification.originalTransactionID)])
                    guard inserted == 1 else {
                        try connection.execute("ROLLBACK")
                        return false
                    }
                }
                if let transaction = change.transaction {
                    try connection.query("""
                        INSERT INTO transactions (transaction_id, original_transaction_id, customer_id, signed_ms, payload, jws)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                        ON CONFLICT(transaction_id) DO UPDATE SET
                            customer_id = COALESCE(excluded.customer_id, transactions.customer_id),
                            signed_ms = excluded.signed_ms, payload = excluded.payload, jws = excluded.jws
                        WHERE excluded.signed_ms >= transactions.signed_ms
                        """, [.text(transaction.transactionID), .text(transaction.originalTransactionID), .optionalText(transaction.customerID),
                              .integer(AppStoreJSON.milliseconds(from: transaction.signedDate)), .text(try Self.encode(transaction.payload)),
                              .text(transaction.signedTransaction)])
                    if let customer = transaction.customerID {
                        // An earlier, newer view of the transaction may lack the customer: keep the one learnt now.
                        try connection.query("UPDATE transactions SET customer_id = ?2 WHERE transaction_id = ?1 AND customer_id IS NULL",
                                             [.text(transaction.transactionID), .text(customer)])
                    }
                }
                if let status = change.status {
                    try connection.query("""
                        INSERT INTO statuses (original_transaction_id, status, renewal_info, signed_ms) VALUES (?1, ?2, ?3, ?4)
                        ON CONFLICT(original_transaction_id) DO UPDATE SET
                            status = COALESCE(excluded.status, statuses.status),
                            renewal_info = COALESCE(excluded.renewal_info, statuses.renewal_info), signed_ms = excluded.signed_ms
                        WHERE excluded.signed_ms >= statuses.signed_ms
                        """, [.text(status.originalTransactionID), status.status.map { .integer(Int64($0.rawValue)) } ?? .null,
                              .optionalText(try status.renewalInfo.map(Self.encode)), .integer(AppStoreJSON.milliseconds(from: status.signedDate))])
                }
                if let link = change.link {
                    try connection.query("INSERT INTO links (original_transaction_id, customer_id) VALUES (?1, ?2) ON CONFLICT DO UPDATE SET customer_id = excluded.customer_id",
                                         [.text(link.originalTransactionID), .text(link.customerID)])
                }
                try connection.execute("COMMIT")
                return true
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }

    public func transactions(customer: String) throws(BackendError) -> [BackendTransaction] {
        var rows: [(String, String, String?)] = []
        _ = try withConnection { (connection) throws(SQLiteError) in
            try connection.query("""
                SELECT payload, jws, customer_id FROM transactions
                WHERE customer_id = ?1
                   OR original_transaction_id IN (SELECT original_transaction_id FROM links WHERE customer_id = ?1)
                   OR original_transaction_id IN (SELECT original_transaction_id FROM transactions WHERE customer_id = ?1)
                ORDER BY length(transaction_id), transaction_id
                """, [.text(customer)]) { row in rows.append((row.text(0) ?? "", row.text(1) ?? "", row.text(2))) }
        }
        return try rows.map { (payload, jws, customerID) throws(BackendError) in
            BackendTransaction(payload: try Self.decode(JWSTransactionDecodedPayload.self, payload), signedTransaction: jws, customerID: customerID)
        }
    }

    public func statuses(originalTransactionIDs: Set<String>) throws(BackendError) -> [String: BackendSubscriptionStatus] {
        var found: [String: BackendSubscriptionStatus] = [:]
        var failure: BackendError?
        try withConnection { (connection) throws(SQLiteError) in
            for id in originalTransactionIDs.sorted() {
                try connection.query("SELECT status, renewal_info, signed_ms FROM statuses WHERE original_transaction_id = ?1", [.text(id)]) { row in
                    let status = row.isNull(0) ? nil : Status(rawValue: Int32(row.integer(0)))
                    var renewal: JWSRenewalInfoDecodedPayload?
                    if let text = row.text(1) {
                        do throws(BackendError) { renewal = try Self.decode(JWSRenewalInfoDecodedPayload.self, text) } catch { failure = error }
                    }
                    found[id] = BackendSubscriptionStatus(originalTransactionID: id, status: status, renewalInfo: renewal,
                                                          signedDate: AppStoreJSON.date(fromMilliseconds: row.integer(2)))
                }
            }
        }
        if let failure { throw failure }
        return found
    }

    public func notificationCount() throws(BackendError) -> Int {
        var count = 0
        _ = try withConnection { (connection) throws(SQLiteError) in
            try connection.query("SELECT count(*) FROM notifications") { count = Int($0.integer(0)) }
        }
        return count
    }

    public func addKey(hash: String, label: String, created: Date) throws(BackendError) {
        _ = try withConnection { (connection) throws(SQLiteError) in
            try connection.query("INSERT INTO keys (hash, label, created_ms) VALUES (?1, ?2, ?3)",
                                 [.text(hash), .text(label), .integer(AppStoreJSON.milliseconds(from: created))])
        }
    }

    public func hasKey(hash: String) throws(BackendError) -> Bool {
        try withConnection { (connection) throws(SQLiteError) -> Bool in
            try connection.query("SELECT 1 FROM keys WHERE hash = ?1", [.text(hash)]) > 0
        }
    }

    private static func encode<Value: Encodable>(_ value: Value) throws(SQLiteError) -> String {
        do { return String(decoding: try AppStoreJSON.encode(value), as: UTF8.self) } catch {
            throw SQLiteError(code: 0, message: "cannot encode \(Value.self): \(error)")
        }
    }

    private static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws(BackendError) -> Value {
        do { return try AppStoreJSON.decode(type, from: Data(text.utf8)) } catch {
            throw .storage("a stored \(type) cannot be read: \(error)")
        }
    }
}
