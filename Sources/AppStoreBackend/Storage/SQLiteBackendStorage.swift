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

    /// A change waiting to be committed, with the JSON it stores encoded beforehand (the costly part,
    /// kept off the writer).
    private struct Ticket: Sendable {
        let change: BackendChange
        let transactionJSON: String?
        let renewalJSON: String?
        let answer: CheckedContinuation<Result<Bool, BackendError>, Never>
    }

    /// Changes waiting for the writer, and whether the writer is running.
    private struct Queue {
        var tickets: [Ticket] = []
        var writing = false
    }

    private let queue = Mutex(Queue())
    private let writer = DispatchQueue(label: "SQLiteBackendStorage.writer")

    /// Applies a change, committed together with the changes that wait while the writer is busy: the
    /// writer commits every waiting change in one transaction (each in a savepoint of its own, so a
    /// duplicate notification undoes only itself), and each caller resumes once the transaction
    /// holding its change is durable. One commit then serves many deliveries, and no caller blocks a
    /// thread while it waits.
    public func apply(_ change: BackendChange) async throws(BackendError) -> Bool {
        let transactionJSON: String?, renewalJSON: String?
        do {
            transactionJSON = try change.transaction.map { (transaction) throws(SQLiteError) in try Self.encode(transaction.payload) }
            renewalJSON = try change.status?.renewalInfo.map { (info) throws(SQLiteError) in try Self.encode(info) }
        } catch {
            throw .storage("cannot encode the change: \(error)")
        }
        let result = await withCheckedContinuation { (answer: CheckedContinuation<Result<Bool, BackendError>, Never>) in
            let startsWriter = queue.withLock { queue -> Bool in
                queue.tickets.append(Ticket(change: change, transactionJSON: transactionJSON, renewalJSON: renewalJSON, answer: answer))
                defer { queue.writing = true }
                return !queue.writing
            }
            if startsWriter { writer.async { self.writeWaiting() } }
        }
        return try result.get()
    }

    /// The writer: commits what waits, batch after batch, until nothing does.
    private func writeWaiting() {
        while true {
            let batch = queue.withLock { queue -> [Ticket] in
                defer { queue.tickets = [] }
                if queue.tickets.isEmpty { queue.writing = false }
                return queue.tickets
            }
            guard !batch.isEmpty else { return }
            let results: Result<[Bool], BackendError>
            do {
                results = .success(try withConnection { (connection) throws(SQLiteError) -> [Bool] in
                    try connection.execute("BEGIN IMMEDIATE")
                    do throws(SQLiteError) {
                        var results: [Bool] = []
                        for ticket in batch { results.append(try Self.write(ticket, on: connection)) }
                        try connection.execute("COMMIT")
                        return results
                    } catch {
                        try? connection.execute("ROLLBACK")
                        throw error
                    }
                })
            } catch {
                results = .failure(error)
            }
            for (index, ticket) in batch.enumerated() {
                switch results {
                case .success(let recorded): ticket.answer.resume(returning: .success(recorded[index]))
                case .failure(let error): ticket.answer.resume(returning: .failure(error))
                }
            }
        }
    }

    /// Writes one change inside the open transaction, in a savepoint: `false` (and nothing written)
    /// when its notification was recorded before.
    private static func write(_ ticket: Ticket, on connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        let change = ticket.change
        try connection.execute("SAVEPOINT change")
        if let notification = change.notification {
            let inserted = try connection.query("""
                INSERT INTO notifications (uuid, type, subtype, signed_ms, transaction_id, original_transaction_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(uuid) DO NOTHING RETURNING uuid
                """, [.text(notification.notificationUUID), .text(notification.type), .optionalText(notification.subtype),
                      .integer(AppStoreJSON.milliseconds(from: notification.signedDate)),
                      .optionalText(notification.transactionID), .optionalText(notification.originalTransactionID)])
            guard inserted == 1 else {
                try connection.execute("ROLLBACK TO change; RELEASE change")
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
                      .integer(AppStoreJSON.milliseconds(from: transaction.signedDate)), .text(ticket.transactionJSON ?? "{}"),
                      .text(transaction.signedTransaction)])
            if let customer = transaction.customerID {
                // A newer view of the transaction stored earlier may lack the customer: keep the one learnt now.
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
                      .optionalText(ticket.renewalJSON), .integer(AppStoreJSON.milliseconds(from: status.signedDate))])
        }
        if let link = change.link {
            try connection.query("""
                INSERT INTO links (original_transaction_id, customer_id) VALUES (?1, ?2)
                ON CONFLICT DO UPDATE SET customer_id = excluded.customer_id
                """, [.text(link.originalTransactionID), .text(link.customerID)])
        }
        try connection.execute("RELEASE change")
        return true
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
