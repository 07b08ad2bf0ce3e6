import AppStoreModels
import BlockingWork
import Foundation
import SQLDatabase
import Synchronization

/// The backend's ledger in a SQL database, SQLite (one machine, the default) or PostgreSQL (several
/// backend processes sharing it). The statements are the same for both.
///
/// Every change is one database transaction that re-reads what it changes: the notification's UUID
/// is unique (a second delivery, from this process or another, inserts nothing and the change is
/// skipped), and a transaction or status row is replaced only by data signed at the same time or later
/// (`ON CONFLICT … DO UPDATE … WHERE`; of two views of a transaction signed at one millisecond, the
/// revoked one), so instances racing on the same rows cannot roll them back.
/// Writes are grouped (``GroupCommit``): callers submit their change and suspend; a drain on the
/// writer lane commits everything waiting in one transaction, each change in a savepoint of its own,
/// group after group, and each caller resumes after its group's commit.
/// A transaction that PostgreSQL aborts as a deadlock between instances is run again.
public final class SQLBackendStorage: BackendStorage {
    /// Where the data is, for messages.
    public let location: String
    /// Where changes are committed, one grouped transaction after another: a connection and a thread
    /// of its own.
    private let writerLane: DatabaseLane
    /// Where reads run: reader connections beside the writer, each on a thread of its own, never the
    /// cooperative pool.
    private let readers: DatabaseReaders

    /// Opens (creating and migrating the tables when needed) a SQLite database file, off the cooperative pool.
    public static func sqlite(path: String) async throws(BackendError) -> SQLBackendStorage {
        // Another user who can write the file could grant themselves anything: refused, as ssh refuses
        // a key others can read.
        var status = stat()
        if lstat(path, &status) == 0, status.st_mode & 0o022 != 0 {
            throw .unsafeFile("\(path) can be written by other users (mode \(String(status.st_mode & 0o7777, radix: 8))); run chmod 600 \(path)")
        }
        return try await open("SQLBackendStorage.open", location: path) { () throws(DatabaseError) in
            // WAL with every commit synced; a 32 MiB page cache per connection (SQLite's default is
            // 2 MiB): a backend's tables are keyed by UUIDs and ids that arrive in no order, so with
            // millions of rows each write touches pages all over its indexes. Bounded, so memory
            // stays flat as the tables grow. The file is private to its owner from its first byte:
            // it holds customers' transactions, tokens and user ids.
            let connection = "PRAGMA synchronous = FULL; PRAGMA cache_size = -32768;"
            return try SQLiteDatabaseConnection(path: path, mode: .create(ownerOnly: true), pragmas: "PRAGMA journal_mode = WAL; " + connection)
        } readers: { () throws(DatabaseError) -> any DatabaseConnection in
            // Opened once the writer has put the file in WAL and migrated it: a reader never races
            // another process's change of journal mode.
            try SQLiteDatabaseConnection(path: path, mode: .readWrite, pragmas: "PRAGMA synchronous = FULL; PRAGMA cache_size = -32768;")
        }
    }

    /// Connects to a PostgreSQL database (`postgres://user@host:port/db`), creating and migrating
    /// the tables when needed, off the cooperative pool.
    public static func postgres(url: String) async throws(BackendError) -> SQLBackendStorage {
        try await open("SQLBackendStorage.connect", location: PostgresDatabaseConnection.withoutPassword(url)) { () throws(DatabaseError) in
            try PostgresDatabaseConnection(url: url)
        } readers: { () throws(DatabaseError) -> any DatabaseConnection in
            try PostgresDatabaseConnection(url: url)
        }
    }

    /// Connects the writer, migrates through it, then connects the readers (``DatabaseReaders/defaultCount``).
    private static func open(_ label: String, location: String, _ connect: @escaping @Sendable () throws(DatabaseError) -> any DatabaseConnection,
                             readers connectReader: @escaping @Sendable () throws(DatabaseError) -> any DatabaseConnection) async throws(BackendError) -> SQLBackendStorage {
        try await BlockingWork.run(label) { () throws(BackendError) in
            let writer: any DatabaseConnection
            let readers: [any DatabaseConnection]
            do throws(DatabaseError) {
                writer = try connect()
                // Whichever instance opens first migrates; the others wait for its commit and find it done.
                try migrations.migrate(writer)
                readers = try (0..<DatabaseReaders.defaultCount).map { (_) throws(DatabaseError) in try connectReader() }
            } catch {
                throw .database(error.during("cannot open the backend database \(location)"))
            }
            return SQLBackendStorage(writer: writer, readers: readers)
        }
    }

    private init(writer: any DatabaseConnection, readers: [any DatabaseConnection]) {
        location = writer.location
        writerLane = DatabaseLane(writer, label: "SQLBackendStorage.writer")
        self.readers = DatabaseReaders(readers, label: "SQLBackendStorage.reader")
    }

    /// The backend's tables, one named migration after another (recorded in `schema_migrations`
    /// by the SQL layer, run once by whichever instance opens the database first).
    static let migrations = SchemaMigrations(schema: "backend", migrations: [
        .sql("tables", schema),
        .sql("notification-grace-period", "ALTER TABLE notifications ADD COLUMN grace_expires_ms BIGINT"),
        .sql("transaction-facts", factColumnTypes.map { "ALTER TABLE transactions ADD COLUMN \($0.key) \($0.value);" }.joined(separator: "\n")),
        // Before the rollups are rebuilt, which read it.
        .sql("notification-transaction-expiry", "ALTER TABLE notifications ADD COLUMN transaction_expires_ms BIGINT"),
        .sql("metric-tables", metricsSchema),
        // Before the rollups are rebuilt, which read it.
        .sql("metric-time-zone", "CREATE TABLE IF NOT EXISTS metric_time_zone (id INTEGER PRIMARY KEY, identifier TEXT NOT NULL)"),
        // Before the rollups are rebuilt, which read it.
        .sql("notification-transaction-revocation", "ALTER TABLE notifications ADD COLUMN transaction_revoked_ms BIGINT"),
        Migration("metric-rollups-\(metricsLayout)") { (connection) throws(DatabaseError) in
            do throws(BackendError) { try rebuildRollups(on: BackendDatabase(connection: connection)) } catch {
                if case .database(let failure) = error { throw failure }
                throw DatabaseError(engine: connection.engine, code: nil, message: error.description)
            }
        },
        .sql("dashboard-sessions", """
            CREATE TABLE IF NOT EXISTS dashboard_sessions (id_hash TEXT PRIMARY KEY, key_hash TEXT NOT NULL, expires_ms BIGINT NOT NULL);
            CREATE INDEX IF NOT EXISTS dashboard_sessions_by_key ON dashboard_sessions(key_hash);
            """),
        // A range's figures read the rows of one scope (a product, a group's sum or the app's) by day,
        // not every scope's rows of those days.
        .sql("metric-days-by-scope", "CREATE INDEX IF NOT EXISTS metric_days_by_scope ON metric_days(product_id, group_id, day)"),
        .sql("reconciliation", """
            CREATE TABLE IF NOT EXISTS reconciliation (id INTEGER PRIMARY KEY, complete_through_ms BIGINT NOT NULL);
            CREATE INDEX IF NOT EXISTS statuses_current ON statuses(status) WHERE status IN (1, 4);
            """),
        .sql("retention-rules", retentionSchema),
        .sql("retention-offer-rules", "ALTER TABLE retention_rules ADD COLUMN offer_id TEXT"),
        .sql("retention-message-names", "ALTER TABLE retention_rules ADD COLUMN message_name TEXT"),
    ], alreadyApplied: { (connection) throws(DatabaseError) in
        // A database written before the migrations were recorded: what its tables hold.
        guard try connection.hasTable("notifications") else { return [] }
        var applied = ["tables"]
        if try connection.hasColumn("grace_expires_ms", in: "notifications") { applied.append("notification-grace-period") }
        if try connection.hasColumn("renewal", in: "transactions") { applied.append("transaction-facts") }
        if try connection.hasColumn("transaction_expires_ms", in: "notifications") { applied.append("notification-transaction-expiry") }
        if try connection.hasTable("metric_days") { applied.append("metric-tables") }
        if try connection.hasTable("metric_time_zone") { applied.append("metric-time-zone") }
        if try connection.hasColumn("transaction_revoked_ms", in: "notifications") { applied.append("notification-transaction-revocation") }
        if try connection.hasTable("dashboard_sessions") { applied.append("dashboard-sessions") }
        if try connection.hasTable("metric_layout"),
           try connection.fetchValue(Int64.self, column: "version", "SELECT version FROM metric_layout WHERE id = 1") == metricsLayout {
            applied.append("metric-rollups-\(metricsLayout)")
        }
        if try connection.hasTable("retention_rules") { applied.append("retention-rules") }
        if try connection.hasTable("retention_rules"), try connection.hasColumn("offer_id", in: "retention_rules") { applied.append("retention-offer-rules") }
        if try connection.hasTable("retention_rules"), try connection.hasColumn("message_name", in: "retention_rules") { applied.append("retention-message-names") }
        return applied
    })

    static let schema = """
        CREATE TABLE IF NOT EXISTS notifications (uuid TEXT PRIMARY KEY, type TEXT NOT NULL, subtype TEXT, signed_ms BIGINT NOT NULL,
                                                  transaction_id TEXT, original_transaction_id TEXT);
        CREATE TABLE IF NOT EXISTS transactions (transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL,
                                                 customer_id TEXT, signed_ms BIGINT NOT NULL, payload TEXT NOT NULL, jws TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS transactions_by_customer ON transactions(customer_id) WHERE customer_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS transactions_by_original ON transactions(original_transaction_id);
        CREATE TABLE IF NOT EXISTS statuses (original_transaction_id TEXT PRIMARY KEY, status INTEGER, renewal_info TEXT,
                                             signed_ms BIGINT NOT NULL);
        CREATE TABLE IF NOT EXISTS links (original_transaction_id TEXT PRIMARY KEY, customer_id TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS links_by_customer ON links(customer_id);
        CREATE TABLE IF NOT EXISTS keys (hash TEXT PRIMARY KEY, label TEXT NOT NULL, created_ms BIGINT NOT NULL);
        """

    // MARK: Writing

    /// A change waiting to be committed, with the JSON it stores encoded beforehand (kept off the writer).
    private struct Ticket: Sendable {
        let change: BackendChange
        let transactionJSON: String?
        let renewalJSON: String?
    }

    /// Changes committed together, a group at a time, on the writer lane.
    private let commits = GroupCommit<Ticket, Result<Bool, BackendError>>()
    private let commitObserver = Mutex<(@Sendable (_ seconds: Double, _ changes: Int) -> Void)?>(nil)

    /// Calls `observer` after each commit of the writer with how long it took and how many changes
    /// it held (a server's metrics).
    public func observeCommits(_ observer: @escaping @Sendable (_ seconds: Double, _ changes: Int) -> Void) {
        commitObserver.withLock { $0 = observer }
    }

    public func apply(_ change: BackendChange) async throws(BackendError) -> Bool {
        let transactionJSON = try change.transaction.map { (transaction) throws(BackendError) in try Self.encode(transaction.payload) }
        let renewalJSON = try change.status?.renewalInfo.map { (info) throws(BackendError) in try Self.encode(info) }
        let ticket = Ticket(change: change, transactionJSON: transactionJSON, renewalJSON: renewalJSON)
        let lane = writerLane
        return try await commits.submit(ticket, drainingWith: { lane.async($0) }) { batch in
            lane.runHere { connection in
                let started = ContinuousClock.now
                let results = Self.commit(batch, on: BackendDatabase(connection: connection))
                self.commitObserver.withLock { $0 }?((ContinuousClock.now - started) / .seconds(1), batch.count)
                switch results {
                case .success(let outcomes):
                    self.noteWrite(nil)
                    return outcomes
                case .failure(let error):
                    self.noteWrite(error)
                    return Array(repeating: .failure(error), count: batch.count)
                }
            }
        }.get()
    }

    /// Commits a batch; each change's own outcome (recorded, a duplicate, or refused as a conflict),
    /// or the failure of the whole batch.
    private static func commit(_ batch: [Ticket], on database: BackendDatabase) -> Result<[Result<Bool, BackendError>], BackendError> {
        Result { () throws(BackendError) in
            try database.writeTransaction { () throws(BackendError) in
                // The subscriptions' metrics: every subscription the batch touches locked and read
                // before its changes, then updated once for the changes that were recorded.
                let metricsBefore = try lockAndReadSubscriptions(of: batch.map(\.change), on: database)
                var results: [Result<Bool, BackendError>] = []
                for ticket in batch {
                    do throws(BackendError) {
                        results.append(.success(try write(ticket, on: database)))
                    } catch .conflict(let message) {
                        // Only this change is refused (its savepoint is rolled back); the others commit.
                        results.append(.failure(.conflict(message)))
                    }
                }
                let recorded = zip(batch, results).compactMap { ticket, result in (try? result.get()) == true ? ticket.change : nil }
                try updateMetrics(after: recorded, before: metricsBefore, on: database)
                return results
            }
        }
    }

    /// Writes one change inside the open transaction, in a savepoint: `false` (and nothing written)
    /// when its notification was recorded before.
    private static func write(_ ticket: Ticket, on database: BackendDatabase) throws(BackendError) -> Bool {
        let change = ticket.change
        try database.execute("SAVEPOINT change")
        if let notification = change.notification {
            let inserted = try database.query("""
                INSERT INTO notifications (uuid, type, subtype, signed_ms, transaction_id, original_transaction_id, grace_expires_ms,
                                           transaction_expires_ms, transaction_revoked_ms)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (uuid) DO NOTHING RETURNING uuid
                """, [.text(notification.notificationUUID), .text(notification.type), .optionalText(notification.subtype),
                      .integer(AppStoreJSON.milliseconds(from: notification.signedDate)),
                      .optionalText(notification.transactionID), .optionalText(notification.originalTransactionID),
                      Self.optionalInteger(notification.gracePeriodExpiresDate.map(AppStoreJSON.milliseconds(from:))),
                      Self.optionalInteger(notification.transactionExpiresDate.map(AppStoreJSON.milliseconds(from:))),
                      Self.optionalInteger(notification.transactionRevocationDate.map(AppStoreJSON.milliseconds(from:)))])
            guard inserted.count == 1 else {
                try database.execute("ROLLBACK TO SAVEPOINT change")
                try database.execute("RELEASE SAVEPOINT change")
                return false
            }
        }
        if let transaction = change.transaction {
            // The row keeps the metrics' facts of the transaction beside its payload (see `Self.factColumns`).
            try database.query("""
                INSERT INTO transactions (transaction_id, original_transaction_id, customer_id, signed_ms, payload, jws, \(Self.factColumns))
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
                ON CONFLICT (transaction_id) DO UPDATE SET
                    customer_id = COALESCE(excluded.customer_id, transactions.customer_id),
                    signed_ms = excluded.signed_ms, payload = excluded.payload, jws = excluded.jws, \(Self.factUpdates)
                WHERE excluded.signed_ms > transactions.signed_ms
                   OR (excluded.signed_ms = transactions.signed_ms AND (excluded.revoked_ms IS NOT NULL OR transactions.revoked_ms IS NULL))
                """, [.text(transaction.transactionID), .text(transaction.originalTransactionID), .optionalText(transaction.customerID),
                      .integer(AppStoreJSON.milliseconds(from: transaction.signedDate)), .text(ticket.transactionJSON ?? "{}"),
                      .text(transaction.signedTransaction)] + Self.factValues(TransactionFact(transaction)))
            if let customer = transaction.customerID {
                // A newer view of the transaction stored earlier may lack the customer: keep the one learnt now.
                try database.query("UPDATE transactions SET customer_id = $2 WHERE transaction_id = $1 AND customer_id IS NULL",
                                   [.text(transaction.transactionID), .text(customer)])
            }
        }
        if let status = change.status {
            try database.query("""
                INSERT INTO statuses (original_transaction_id, status, renewal_info, signed_ms) VALUES ($1, $2, $3, $4)
                ON CONFLICT (original_transaction_id) DO UPDATE SET
                    status = COALESCE(excluded.status, statuses.status),
                    renewal_info = COALESCE(excluded.renewal_info, statuses.renewal_info), signed_ms = excluded.signed_ms
                WHERE excluded.signed_ms >= statuses.signed_ms
                """, [.text(status.originalTransactionID), status.status.map { .integer(Int64($0.rawValue)) } ?? .null,
                      .optionalText(ticket.renewalJSON), .integer(AppStoreJSON.milliseconds(from: status.signedDate))])
        }
        if let link = change.link {
            // The first link stands: a purchase linked to one customer is never moved to another.
            try database.query("""
                INSERT INTO links (original_transaction_id, customer_id) VALUES ($1, $2)
                ON CONFLICT (original_transaction_id) DO NOTHING
                """, [.text(link.originalTransactionID), .text(link.customerID)])
            let linked = try database.query("SELECT customer_id FROM links WHERE original_transaction_id = $1", [.text(link.originalTransactionID)])
            if let existing = try linked.first?.column("customer_id", as: String?.self) ?? nil, existing != link.customerID {
                try database.execute("ROLLBACK TO SAVEPOINT change")
                try database.execute("RELEASE SAVEPOINT change")
                throw .conflict("purchase \(link.originalTransactionID) is linked to another customer; a user id links only a purchase no one has yet")
            }
        }
        try database.execute("RELEASE SAVEPOINT change")
        return true
    }

    /// Runs `body` as one transaction on the writer connection, after the writes waiting now.
    func write<Result: Sendable>(_ body: @escaping @Sendable (BackendDatabase) throws(BackendError) -> Result) async throws(BackendError) -> Result {
        try await writerLane.run { (connection) throws(BackendError) -> Result in
            let database = BackendDatabase(connection: connection)
            do throws(BackendError) {
                let result = try database.writeTransaction { () throws(BackendError) -> Result in try body(database) }
                self.noteWrite(nil)
                return result
            } catch {
                self.noteWrite(error)
                throw error
            }
        }
    }

    /// ``write(_:)`` with other instances' metric updates held off (a rebuild).
    func writeExclusively(_ body: @escaping @Sendable (BackendDatabase) throws(BackendError) -> Void) async throws(BackendError) {
        try await write { (database) throws(BackendError) in
            if let lock = database.lockMetrics { try database.execute(lock) }
            try body(database)
        }
    }

    // MARK: Reading

    func read<Result: Sendable>(_ body: @escaping @Sendable (BackendDatabase) throws(BackendError) -> Result) async throws(BackendError) -> Result {
        try await readers.run { (connection) throws(BackendError) -> Result in try body(BackendDatabase(connection: connection)) }
    }

    public func transactions(customer: String) async throws(BackendError) -> [BackendTransaction] {
        let rows = try await read { (database) throws(BackendError) in try Self.transactionRows(customer: customer, on: database) }
        return try Self.transactions(from: rows)
    }

    public func customerRecords(customer: String) async throws(BackendError) -> CustomerRecords {
        // One hop to the reader lane and one snapshot for both reads; the JSON is decoded here, on
        // the caller's thread, so concurrent reads decode on every core.
        let (transactionRows, statusRows) = try await read { (database) throws(BackendError) in
            try database.readTransaction { () throws(BackendError) in
                let transactions = try Self.transactionRows(customer: customer, on: database)
                let statuses = try Self.statusRows(originalTransactionIDs: Set(transactions.compactMap(\.originalTransactionID)), on: database)
                return (transactions, statuses)
            }
        }
        return CustomerRecords(transactions: try Self.transactions(from: transactionRows), statuses: try Self.statuses(from: statusRows))
    }

    /// A customer's transaction rows: payload, JWS, customer, original transaction identifier.
    private static func transactionRows(customer: String, on database: BackendDatabase) throws(BackendError) -> [TransactionRow] {
        try database.query("""
            SELECT payload, jws, customer_id, original_transaction_id FROM transactions
            WHERE customer_id = $1
               OR original_transaction_id IN (SELECT original_transaction_id FROM links WHERE customer_id = $1)
               OR original_transaction_id IN (SELECT original_transaction_id FROM transactions WHERE customer_id = $1)
            ORDER BY length(transaction_id), transaction_id
            """, [.text(customer)]).map(TransactionRow.init)
    }

    /// A stored transaction's columns, read on a lane and decoded on the caller's thread.
    struct TransactionRow: Sendable {
        var payload: String
        var jws: String
        var customerID: String?
        var originalTransactionID: String?

        init(_ row: DatabaseRow) throws(BackendError) {
            payload = try row.column("payload")
            jws = try row.column("jws")
            customerID = try row.column("customer_id")
            originalTransactionID = row.hasColumn("original_transaction_id") ? try row.column("original_transaction_id") : nil
        }
    }

    /// A subscription status's columns, read on a lane and decoded on the caller's thread.
    struct StatusRow: Sendable {
        var originalTransactionID: String
        var status: Int32?
        var renewalInfo: String?
        var signedMilliseconds: Int64

        init(_ row: DatabaseRow) throws(BackendError) {
            originalTransactionID = try row.column("original_transaction_id")
            status = try row.column("status")
            renewalInfo = try row.column("renewal_info")
            signedMilliseconds = try row.column("signed_ms")
        }
    }

    private static func transactions(from rows: [TransactionRow]) throws(BackendError) -> [BackendTransaction] {
        try rows.map { (row) throws(BackendError) in
            BackendTransaction(payload: try decode(JWSTransactionDecodedPayload.self, row.payload), signedTransaction: row.jws, customerID: row.customerID)
        }
    }

    public func transactions(sharingOriginalOf transactionID: String) async throws(BackendError) -> [BackendTransaction] {
        let rows = try await read { (database) throws(BackendError) in
            try database.query("""
                SELECT payload, jws, customer_id FROM transactions
                WHERE original_transaction_id = $1
                   OR original_transaction_id = (SELECT original_transaction_id FROM transactions WHERE transaction_id = $1)
                ORDER BY length(transaction_id), transaction_id
                """, [.text(transactionID)]).map(TransactionRow.init)
        }
        return try Self.transactions(from: rows)
    }

    public func linkedCustomer(originalTransactionID: String) async throws(BackendError) -> String? {
        try await read { (database) throws(BackendError) in
            try database.value(String?.self, "customer_id", "SELECT customer_id FROM links WHERE original_transaction_id = $1",
                               [.text(originalTransactionID)]) ?? nil
        }
    }

    public func notifications(originalTransactionIDs: Set<String>, limit: Int) async throws(BackendError) -> [BackendNotification] {
        guard !originalTransactionIDs.isEmpty, limit > 0 else { return [] }
        let ids = originalTransactionIDs.sorted()
        let placeholders = ids.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return try await read { (database) throws(BackendError) in
            try database.query("""
                SELECT uuid, type, subtype, signed_ms, transaction_id, original_transaction_id, grace_expires_ms FROM notifications
                WHERE original_transaction_id IN (\(placeholders))
                ORDER BY signed_ms DESC, uuid LIMIT \(limit)
                """, ids.map { .text($0) }).map { (row) throws(BackendError) in
                BackendNotification(notificationUUID: try row.column("uuid"), type: try row.column("type"), subtype: try row.column("subtype"),
                                    signedDate: AppStoreJSON.date(fromMilliseconds: try row.column("signed_ms")), transactionID: try row.column("transaction_id"),
                                    originalTransactionID: try row.column("original_transaction_id"),
                                    gracePeriodExpiresDate: (try row.column("grace_expires_ms", as: Int64?.self)).map(AppStoreJSON.date(fromMilliseconds:)))
            }
        }
    }

    public func statuses(originalTransactionIDs: Set<String>) async throws(BackendError) -> [String: BackendSubscriptionStatus] {
        guard !originalTransactionIDs.isEmpty else { return [:] }
        let rows = try await read { (database) throws(BackendError) in try Self.statusRows(originalTransactionIDs: originalTransactionIDs, on: database) }
        return try Self.statuses(from: rows)
    }

    private static func statusRows(originalTransactionIDs: Set<String>, on database: BackendDatabase) throws(BackendError) -> [StatusRow] {
        guard !originalTransactionIDs.isEmpty else { return [] }
        let ids = originalTransactionIDs.sorted()
        let placeholders = ids.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        return try database.query("""
            SELECT original_transaction_id, status, renewal_info, signed_ms FROM statuses
            WHERE original_transaction_id IN (\(placeholders))
            """, ids.map { .text($0) }).map(StatusRow.init)
    }

    private static func statuses(from rows: [StatusRow]) throws(BackendError) -> [String: BackendSubscriptionStatus] {
        var found: [String: BackendSubscriptionStatus] = [:]
        for row in rows {
            found[row.originalTransactionID] = BackendSubscriptionStatus(
                originalTransactionID: row.originalTransactionID, status: row.status.map(Status.init(rawValue:)),
                renewalInfo: try row.renewalInfo.map { (text) throws(BackendError) in try decode(JWSRenewalInfoDecodedPayload.self, text) },
                signedDate: AppStoreJSON.date(fromMilliseconds: row.signedMilliseconds))
        }
        return found
    }

    public func notificationCount() async throws(BackendError) -> Int {
        try await read { (database) throws(BackendError) in try database.value(Int.self, "count", "SELECT count(*) AS count FROM notifications") ?? 0 }
    }

    /// How many notifications of a type were recorded, and about how many original transactions:
    /// a benchmark's check that each subscription's notification was recorded once.
    package func notificationTally(type: String) async throws(BackendError) -> (notifications: Int, originalTransactions: Int) {
        try await read { (database) throws(BackendError) in
            let row = try database.query("""
                SELECT count(*) AS notifications, count(DISTINCT original_transaction_id) AS subscriptions FROM notifications WHERE type = $1
                """, [.text(type)]).first
            return (try row?.column("notifications") ?? 0, try row?.column("subscriptions") ?? 0)
        }
    }

    public func latestNotificationDate() async throws(BackendError) -> Date? {
        let newest = try await read { (database) throws(BackendError) in try database.value(Int64?.self, "newest", Self.newestSignedDate) ?? nil }
        return newest.map(AppStoreJSON.date(fromMilliseconds:))
    }

    public func reconciledThrough() async throws(BackendError) -> Date? {
        let value = try await read { (database) throws(BackendError) in
            try database.value(Int64.self, "complete_through_ms", "SELECT complete_through_ms FROM reconciliation WHERE id = 1")
        }
        return value.map(AppStoreJSON.date(fromMilliseconds:))
    }

    public func markReconciled(through date: Date) async throws(BackendError) {
        let milliseconds = AppStoreJSON.milliseconds(from: date)
        _ = try await write { (database) throws(BackendError) in
            // Re-read in the write: instances reconciling at once keep the furthest.
            if let known = try database.value(Int64.self, "complete_through_ms", "SELECT complete_through_ms FROM reconciliation WHERE id = 1") {
                if known < milliseconds {
                    try database.query("UPDATE reconciliation SET complete_through_ms = $1 WHERE id = 1", [.integer(milliseconds)])
                }
            } else {
                try database.query("INSERT INTO reconciliation (id, complete_through_ms) VALUES (1, $1)", [.integer(milliseconds)])
            }
        }
    }

    public func resetReconciled(to date: Date) async throws(BackendError) {
        let milliseconds = AppStoreJSON.milliseconds(from: date)
        try await write { (database) throws(BackendError) in
            try database.run("""
                INSERT INTO reconciliation (id, complete_through_ms) VALUES (1, $1)
                ON CONFLICT (id) DO UPDATE SET complete_through_ms = excluded.complete_through_ms
                """, [.integer(milliseconds)])
        }
    }

    public func subscriptionsPastExpiry(at date: Date, limit: Int) async throws(BackendError) -> [String] {
        try await read { (database) throws(BackendError) in
            // Active (1) or in grace (4); a grace period's own end is in the renewal info, so one in
            // grace is listed once its period ended, and a status check tells whether grace still holds.
            try database.query("""
                SELECT s.original_transaction_id FROM statuses s
                WHERE s.status IN (1, 4)
                  AND (SELECT max(t.expires_ms) FROM transactions t WHERE t.original_transaction_id = s.original_transaction_id) <= $1
                ORDER BY s.original_transaction_id LIMIT $2
                """, [.integer(AppStoreJSON.milliseconds(from: date)), .integer(Int64(limit))]).map { (row) throws(BackendError) in
                    try row.column("original_transaction_id", as: String.self)
                }
        }
    }

    public func addKey(hash: String, label: String, created: Date) async throws(BackendError) {
        try await write { (database) throws(BackendError) in
            try database.run("INSERT INTO keys (hash, label, created_ms) VALUES ($1, $2, $3)",
                               [.text(hash), .text(label), .integer(AppStoreJSON.milliseconds(from: created))])
        }
    }

    public func keys() async throws(BackendError) -> [ServiceKeyRecord] {
        try await read { (database) throws(BackendError) in
            try database.query("SELECT hash, label, created_ms FROM keys ORDER BY created_ms, hash", []).map(Self.keyRecord)
        }
    }

    public func revokeKeys(digestPrefix: String) async throws(BackendError) -> [ServiceKeyRecord] {
        guard !digestPrefix.isEmpty, digestPrefix.allSatisfy(\.isHexDigit) else { throw .badRequest("a key is named by the hexadecimal id backend key list shows") }
        let pattern = digestPrefix.lowercased() + "%"
        return try await write { (database) throws(BackendError) in
            let removed = try database.query("SELECT hash, label, created_ms FROM keys WHERE hash LIKE $1", [.text(pattern)]).map(Self.keyRecord)
            try database.query("DELETE FROM dashboard_sessions WHERE key_hash IN (SELECT hash FROM keys WHERE hash LIKE $1)", [.text(pattern)])
            try database.query("DELETE FROM keys WHERE hash LIKE $1", [.text(pattern)])
            return removed
        }
    }

    private static func keyRecord(_ row: DatabaseRow) throws(BackendError) -> ServiceKeyRecord {
        ServiceKeyRecord(digest: try row.column("hash"), label: try row.column("label"), created: AppStoreJSON.date(fromMilliseconds: try row.column("created_ms")))
    }

    public func openSession(hash: String, keyHash: String, expires: Date) async throws(BackendError) {
        try await write { (database) throws(BackendError) in
            try database.run("INSERT INTO dashboard_sessions (id_hash, key_hash, expires_ms) VALUES ($1, $2, $3)",
                               [.text(hash), .text(keyHash), .integer(AppStoreJSON.milliseconds(from: expires))])
        }
    }

    public func hasSession(hash: String, now: Date) async throws(BackendError) -> Bool {
        try await read { (database) throws(BackendError) in
            !(try database.query("""
                SELECT 1 FROM dashboard_sessions JOIN keys ON keys.hash = dashboard_sessions.key_hash
                WHERE dashboard_sessions.id_hash = $1 AND dashboard_sessions.expires_ms > $2
                """, [.text(hash), .integer(AppStoreJSON.milliseconds(from: now))])).isEmpty
        }
    }

    public func endSession(hash: String) async throws(BackendError) {
        try await write { (database) throws(BackendError) in
            try database.run("DELETE FROM dashboard_sessions WHERE id_hash = $1", [.text(hash)])
        }
    }

    /// Fails while the database does not answer, and while writes fail (a full disk, a role that may
    /// not write), with the latest reason: the reconciliation then tries again soon, and its writes
    /// tell when they work again.
    public func checkHealth() async throws(BackendError) {
        try await read { (database) throws(BackendError) in try database.run("SELECT 1") }
        if let failing = failingWrites.withLock({ $0 }) {
            let full = failing.error.isStorageFull ? "the database's disk is full: " : ""
            throw .unavailable("writes fail since \(failing.since.formatted(.iso8601)): \(full)\(failing.error.message)")
        }
    }

    /// While writes fail: the latest failure, and when the run of them began (real time).
    private let failingWrites = Mutex<(error: DatabaseError, since: Date)?>(nil)

    /// Notes how a write ended: a database failure starts (or continues) a run of failing writes,
    /// a commit ends it.
    private func noteWrite(_ failure: BackendError?) {
        switch failure {
        case nil: failingWrites.withLock { $0 = nil }
        case .database(let error)?:
            let now = Date()
            failingWrites.withLock { $0 = (error, $0?.since ?? now) }
        default: break
        }
    }

    public func hasKey(hash: String) async throws(BackendError) -> Bool {
        try await read { (database) throws(BackendError) in !(try database.query("SELECT 1 FROM keys WHERE hash = $1", [.text(hash)])).isEmpty }
    }

    private static func encode<Value: Encodable>(_ value: Value) throws(BackendError) -> String {
        do { return String(decoding: try AppStoreJSON.encode(value), as: UTF8.self) } catch {
            throw .encoding("cannot encode \(Value.self): \(error)")
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws(BackendError) -> Value {
        do { return try AppStoreJSON.decode(type, from: Data(text.utf8)) } catch {
            throw .encoding("a stored \(type) cannot be read: \(error)")
        }
    }
}
