import BlockingWork
import AppStoreModels
import AppStoreSimulator
import Foundation
import SQLDatabase
import StoreKitCatalog
import Synchronization

/// The ledger in a SQL database, the same tables and statements on either engine: by default one
/// SQLite database file in WAL mode with full synchronous commits (``init(path:create:)``), or a
/// PostgreSQL database several `storekit serve` processes on several machines share
/// (``init(postgresURL:create:)``); every process that opens the store shares it.
///
/// On SQLite every ``write(_:)`` is one `BEGIN IMMEDIATE … COMMIT` transaction, so writers in any
/// process serialize on SQLite's write lock and each reads the others' committed work; with
/// `synchronous=FULL` a commit that returned survives a crash or power loss, and one that threw left
/// nothing behind. ``read(_:)`` runs in a read transaction: one consistent snapshot. PostgreSQL's
/// writers take an advisory lock instead (see ``init(postgresURL:create:)``).
///
/// Records are stored as the App Store JSON of their Swift types, keyed by their identifiers, with
/// the columns the views select on (account, original transaction, product, group, family source,
/// next lifecycle event, feed device) beside them and indexed, so every view reads only its rows.
/// Decoded rows are kept in a cache that is valid for one ledger version: the `version` meta row
/// grows with every commit, and a transaction that finds another version than the cache's drops it.
public final class SQLLedgerStorage: LedgerStorage {
    private let state: Mutex<State>
    /// Where the ledger is: the SQLite database file, or the PostgreSQL URL without its password.
    public let path: String
    /// Whether this process can only read the store: its file or folder is not writable by this user,
    /// or it lies on a read-only filesystem. Reads work; a change is refused as read-only.
    public let isReadOnly: Bool

    /// The table layout this code writes, recorded in the `meta` table for earlier versions (which
    /// recorded their layout only there); stores written with an earlier layout are converted when opened.
    static let layoutVersion = 10

    private struct State {
        let database: any DatabaseConnection
        var connection: any DatabaseConnection { database }
        let cache = RowCache()
    }
    /// While writes fail: the latest failure and when the run of them began (see ``writeFailure``).
    private let failingWrites = Mutex<(failure: StorageFailure, since: Date)?>(nil)

    /// How many bytes of `meta` values this process keeps in memory (large values, such as retention
    /// images, stay on disk).
    package var cachedMetaBytes: Int { state.withLock { $0.cache.metaBytes } }

    /// While this process's commits fail (a full disk, a database that went away): the latest
    /// failure, and the real time the first of them came; `nil` once one commits again.
    public var writeFailure: (failure: StorageFailure, since: Date)? { failingWrites.withLock { $0 } }

    /// How a new connection to the same database is made (PostgreSQL: for the lifecycle lease's own
    /// session); `nil` for a file.
    private let connectAgain: (@Sendable () throws(DatabaseError) -> any DatabaseConnection)?

    /// Opens (or, with `create`, creates) the database at `path`.
    ///
    /// Opening never creates or changes a file that is not a store: a missing file, or one that is not
    /// an SQLite database, is reported as ``AppStoreError/storage(_:)``. A store written by the
    /// previous table layout is converted once, in one transaction.
    ///
    /// The initializer blocks its thread (it may wait for SQLite's write lock to convert the store):
    /// from async code, await ``open(path:create:)``.
    @available(*, noasync, message: "opening a ledger blocks its thread; await SQLLedgerStorage.open(path:create:) instead")
    public init(path: String, create: Bool) throws(AppStoreError) {
        self.path = path
        if !create, !FileManager.default.fileExists(atPath: path) {
            throw .storage(.failed("\(path) does not exist"))
        }
        isReadOnly = !create && !Self.isWritable(path)
        let database: SQLiteDatabaseConnection
        do {
            if isReadOnly {
                // Without a write-ahead log to read, nothing can have changed since the last writer
                // closed the store, and nobody can change it while this user cannot write: read the
                // file as immutable (no -shm file to create). With a log present, read through it.
                let hasLog = FileManager.default.fileExists(atPath: path + "-wal")
                database = try SQLiteDatabaseConnection(path: path, mode: .readOnly(immutable: !hasLog))
            } else {
                // Every commit is fsync'd (synchronous=FULL). Checkpoints run every 10,000 WAL pages rather
                // than SQLite's 1,000: a purchase writes several pages, and rarer checkpoints fold repeated
                // writes of the same pages. Temporary data stays in memory (temp_store=MEMORY): a statement
                // that may replace rows keeps a statement journal inside the commit's transaction, and the
                // transactions' INSERT OR REPLACE, with layout 8's indexes, grew it past SQLite's 64 KiB into
                // a temporary file: a year of renewals made 4.5 times the writes and played a third slower
                // (docs/benchmarks.md). New rows are plain INSERTs now; the statements that still replace
                // (meta, accounts, devices) keep theirs in memory. A statement journal only undoes a failed
                // statement, so nothing in it needs to survive a crash.
                database = try SQLiteDatabaseConnection(path: path, mode: create ? .create(ownerOnly: false) : .readWrite,
                                                        pragmas: "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA wal_autocheckpoint=10000; PRAGMA temp_store=MEMORY;")
            }
        } catch {
            throw .storage(.database(error, "\(path) is not a store database", default: .damaged))
        }
        do throws(DatabaseError) {
            let holdsStore = try database.hasTable("meta")
            guard create || holdsStore else { throw DatabaseError(engine: .sqlite, code: nil, message: "the database holds no store") }
            if isReadOnly {
                guard try Self.migrations.isCurrent(on: database, adoptingEarlierLayouts: true) else {
                    throw DatabaseError(engine: .sqlite, code: nil,
                                        message: "the store was written by an earlier version and must be converted once, but it is read-only here")
                }
            } else {
                try Self.migrations.migrate(database)
            }
        } catch {
            throw .storage(.database(error, "cannot prepare the ledger in \(path)"))
        }
        state = Mutex(State(database: database))
        connectAgain = nil
    }

    /// Opens (or, with `create`, makes) a ledger in the PostgreSQL database at `url`, which several
    /// `storekit serve` processes on several machines may share. The tables are those of a SQLite
    /// ledger, made by the same named migrations, run once by whichever process comes first.
    ///
    /// Writers in every process serialize on a transaction-scoped advisory lock, taken first in each
    /// write transaction, as SQLite's writers do on its write lock; readers see one snapshot per unit
    /// of work (`REPEATABLE READ`). Blocks its thread: from async code, await ``open(postgresURL:create:)``.
    @available(*, noasync, message: "opening a ledger blocks its thread; await SQLLedgerStorage.open(postgresURL:create:) instead")
    public init(postgresURL url: String, create: Bool) throws(AppStoreError) {
        let location = PostgresDatabaseConnection.withoutPassword(url)
        path = location
        isReadOnly = false
        let connect = { @Sendable () throws(DatabaseError) -> any DatabaseConnection in try PostgresDatabaseConnection(url: url) }
        let database: any DatabaseConnection
        do throws(DatabaseError) {
            database = try connect()
            let holdsStore = try database.hasTable("meta")
            guard create || holdsStore else {
                throw DatabaseError(engine: .postgresql, code: nil, message: "the database holds no store; create one with `storekit store create --database`")
            }
            try Self.postgresMigrations.migrate(database)
        } catch {
            throw .storage(.database(error, "cannot open the ledger in \(location)"))
        }
        state = Mutex(State(database: database))
        connectAgain = connect
    }

    /// ``init(postgresURL:create:)`` on a thread of its own, never on Swift's cooperative pool.
    public static func open(postgresURL url: String, create: Bool) async throws(AppStoreError) -> SQLLedgerStorage {
        try await BlockingWork.run("SQLLedgerStorage.open") { () throws(AppStoreError) -> SQLLedgerStorage in
            try SQLLedgerStorage(postgresURL: url, create: create)
        }
    }


    /// Opens (or, with `create`, creates) the database at `path` on a thread of its own, never on
    /// Swift's cooperative pool; see ``init(path:create:)``.
    public static func open(path: String, create: Bool) async throws(AppStoreError) -> SQLLedgerStorage {
        try await BlockingWork.run("SQLLedgerStorage.open") { () throws(AppStoreError) -> SQLLedgerStorage in
            try SQLLedgerStorage(path: path, create: create)
        }
    }

    // MARK: Units of work

    public func read<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> Result) throws(AppStoreError) -> Result {
        try transaction("reading the ledger", writes: false) { (reader) throws(AppStoreError) -> (LedgerChanges?, Result) in
            (nil, try body(reader))
        }
    }

    /// On a read-only store the unit of work still runs (it may find nothing to change); a change it
    /// makes is refused with an error that says the store is read-only.
    public func write<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> (LedgerChanges, Result)) throws(AppStoreError) -> Result {
        try transaction("committing a change", writes: !isReadOnly) { (reader) throws(AppStoreError) -> (LedgerChanges?, Result) in
            let (changes, result) = try body(reader)
            if isReadOnly, !changes.isEmpty {
                throw .storage(StorageFailure(.readOnly, "the store is read-only: \(path) cannot be written by this user (a read-only filesystem or missing write permission); reading commands still work"))
            }
            return (changes, result)
        }
    }

    /// One unit of work in one transaction through the SQL layer.
    ///
    /// SQLite: a write transaction takes the write lock at once (`BEGIN IMMEDIATE`), so writers in every
    /// process queue there.
    ///
    /// PostgreSQL: writers in every process take one advisory lock before they read anything, as
    /// SQLite's take its write lock, so each reads the others' commits, and identifiers and versions
    /// never race. A unit makes at most three round trips to the server, since the lock is held for
    /// as long as they take: one begins, locks and reads the version with the change log since the
    /// cache's (the small values every purchase reads, such as the identifier counters, come with it);
    /// one reads what the cache lacks, when it lacks anything; one writes every row and commits. The
    /// commit does not wait for its log to reach the disk while it holds the lock: that wait comes
    /// after, outside it (``waitUntilDurable(_:what:path:)``), so one instance's wait overlaps
    /// another's unit of work.
    private func transaction<Result>(_ what: String, writes: Bool,
                                     _ body: (Reader) throws(AppStoreError) -> (LedgerChanges?, Result)) throws(AppStoreError) -> Result {
        // The result stays with the caller's task: it is handed out of the lock through this variable
        // rather than as the lock's (sending) result.
        var output: Result?
        try state.withLock { (state: inout State) throws(AppStoreError) in
            let connection = state.connection
            let cache = state.cache
            let path = path
            let failed = { (error: DatabaseError) -> AppStoreError in .storage(.database(error, "\(what) failed in \(path)")) }
            let onPostgres = connection.engine == .postgresql
            var applying = false
            // The unit: what it committed, at which version.
            func unit() throws(AppStoreError) -> (LedgerChanges?, Int64) {
                let version: Int64
                let since = cache.version
                var logged: [DatabaseRow]?
                do throws(DatabaseError) {
                    if onPostgres {
                        var statements = [DatabaseStatement(writes ? connection.beginWrite : connection.beginRead)]
                        if writes {
                            statements.append(DatabaseStatement("SET LOCAL synchronous_commit TO off"))
                            statements.append(DatabaseStatement("SELECT pg_advisory_xact_lock($1)", [.integer(Self.ledgerLockKey)]))
                        }
                        statements.append(DatabaseStatement(Self.versionQuery))
                        if since >= 0 { statements.append(ChangeLog.reading(after: since)) }
                        let answers = try connection.batch(statements)
                        version = try Self.version(in: answers[statements.count - (since >= 0 ? 2 : 1)], on: connection)
                        if since >= 0 { logged = answers.last }
                    } else {
                        version = try Self.version(connection)
                    }
                } catch {
                    throw failed(error)
                }
                if cache.version != version {
                    // Other processes committed: on PostgreSQL their change log says which rows to drop
                    // from the cache; otherwise (or when the log is out of reach) all of them go.
                    let changed = logged.flatMap { ChangeLog.changes(in: $0, after: since, through: version) }
                    if let changed { cache.invalidate(changed, version: version) } else { cache.reset(version: version) }
                }
                let reader = Reader(connection: connection, cache: cache, version: version, path: path)
                let (changes, result) = try body(reader)
                if let failure = reader.failure { throw failure }
                do {
                    if let changes, !changes.isEmpty {
                        applying = true
                        if onPostgres {
                            _ = try connection.batch(try Self.statements(writing: changes, version: version + 1, on: connection) + [DatabaseStatement("COMMIT")])
                        } else {
                            try Self.apply(changes, version: version + 1, to: connection)
                        }
                    } else if onPostgres {
                        try connection.execute("COMMIT")
                    }
                } catch let error as DatabaseError {
                    throw failed(error)
                } catch {
                    throw .storage(.failed("\(what) failed in \(path): \(error)", underlying: error))
                }
                output = result
                return (changes, version)
            }
            do throws(AppStoreError) {
                let changes: LedgerChanges?, version: Int64
                if onPostgres {
                    // The unit begins and commits its own transaction, in its round trips.
                    do throws(AppStoreError) { (changes, version) = try unit() } catch {
                        try? connection.execute("ROLLBACK")
                        throw error
                    }
                } else {
                    (changes, version) = writes
                        ? try state.database.writeTransaction(attempts: 1, databaseError: { _ in nil }, wrap: failed, unit)
                        : try state.database.readTransaction(wrap: failed, unit)
                }
                if let changes, !changes.isEmpty {
                    cache.didCommit(changes, version: version + 1)
                    if onPostgres { try Self.waitUntilDurable(connection, what: what, path: path) }
                    failingWrites.withLock { $0 = nil }
                }
            } catch {
                // A write the storage refused (not the unit's own refusal): remembered for /health.
                if writes, case .storage(let failure) = error {
                    // Real time, for people reading /health: not the store's clock.
                    let now = SystemStoreClock().now()
                    failingWrites.withLock { $0 = (failure, $0?.since ?? now) }
                }
                // Rows written by a transaction that was rolled back may be in the cache.
                if applying { cache.reset(version: -1) }
                throw error
            }
        }
        return output!
    }

    /// Returns once everything this connection committed is on the disk: a transaction of its own
    /// that commits synchronously flushes PostgreSQL's log up to its commit record, which follows the
    /// ledger's (several servers' waits share one flush). Nothing is acknowledged before this returns;
    /// a failure here is reported, although the change may be kept.
    private static func waitUntilDurable(_ connection: any DatabaseConnection, what: String, path: String) throws(AppStoreError) {
        do throws(DatabaseError) {
            _ = try connection.batch([DatabaseStatement("BEGIN"), DatabaseStatement("SELECT pg_current_xact_id()"), DatabaseStatement("COMMIT")])
        } catch {
            try? connection.execute("ROLLBACK")
            throw .storage(.database(error, "\(what) in \(path): the commit may not be on disk"))
        }
    }

    // MARK: The lifecycle lease

    /// The lease is an `flock` on `store.sqlite-lifecycle.lock`: exclusive across processes and across
    /// holders in one process, and released by the kernel when its process dies.
    /// A read-only store gets a lease that holds nothing: no process can play events into it through
    /// this user, and any change is refused by ``write(_:)``.
    public func acquireLifecycleLease(wait: Bool) throws(AppStoreError) -> (any LifecycleLease)? {
        if isReadOnly { return ReadOnlyLease() }
        if let connectAgain { return try SessionLease.acquire(connect: connectAgain, wait: wait, location: path) }
        let lock = try FileLock(path: path + "-lifecycle.lock")
        guard try lock.lock(wait: wait) else { return nil }
        return lock
    }

    // MARK: Outbox and checks

    public func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord] {
        try read { (reader) throws(AppStoreError) in
            guard let reader = reader as? Reader else { return [] }
            return try reader.notifications(after: sequence, limit: limit)
        }
    }

    public func integrityProblems() throws(AppStoreError) -> [String] {
        try state.withLock { (state: inout State) throws(AppStoreError) -> [String] in
            let connection = state.connection
            do throws(DatabaseError) {
                // PostgreSQL checks its pages itself (checksums, WAL); SQLite is asked.
                var problems = connection.engine != .sqlite ? [] : try connection.fetchAll("PRAGMA integrity_check") {
                    (row) throws(DatabaseError) -> String in try row["integrity_check"]
                }.filter { $0 != "ok" }
                let duplicates = try connection.fetchValue(Int.self, column: "duplicates",
                                                           "SELECT count(*) - count(DISTINCT uuid) AS duplicates FROM notifications") ?? 0
                if duplicates > 0 { problems.append("\(duplicates) notification UUIDs appear more than once") }
                let duplicateUpdates = try connection.fetchValue(Int.self, column: "duplicates",
                                                                 "SELECT count(*) - count(DISTINCT sequence) AS duplicates FROM updates") ?? 0
                if duplicateUpdates > 0 { problems.append("\(duplicateUpdates) feed entries share a sequence number") }
                return problems
            } catch {
                throw .storage(.database(error, "checking integrity failed in \(path)"))
            }
        }
    }
}

// MARK: - Layout

extension SQLLedgerStorage {
    /// The tables of layout 1, which layout 2 extends with indexed columns.
    private static let baseTables = """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS accounts (name TEXT PRIMARY KEY, record TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS devices (name TEXT PRIMARY KEY, record TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS transactions (id INTEGER PRIMARY KEY, account TEXT NOT NULL, record TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS subscriptions (original_id INTEGER PRIMARY KEY, record TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS updates (sequence INTEGER PRIMARY KEY, device TEXT NOT NULL, channel TEXT NOT NULL,
                                            transaction_id INTEGER NOT NULL, kind TEXT NOT NULL, signed_transaction TEXT NOT NULL,
                                            signed_renewal_info TEXT, renewal_state TEXT, group_id TEXT, created_ms INTEGER NOT NULL,
                                            delivered INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE IF NOT EXISTS notifications (sequence INTEGER PRIMARY KEY, uuid TEXT NOT NULL, type TEXT NOT NULL,
                                                  subtype TEXT, transaction_id INTEGER, body TEXT NOT NULL,
                                                  created_ms INTEGER NOT NULL);
        """

    /// What layout 2 adds: the columns views select on, and their indexes.
    private static let layoutTwoColumns = """
        ALTER TABLE accounts ADD COLUMN family_group TEXT;
        ALTER TABLE devices ADD COLUMN account TEXT;
        ALTER TABLE transactions ADD COLUMN original_id INTEGER;
        ALTER TABLE transactions ADD COLUMN product_id TEXT;
        ALTER TABLE transactions ADD COLUMN product_kind TEXT;
        ALTER TABLE transactions ADD COLUMN group_id TEXT;
        ALTER TABLE transactions ADD COLUMN family_source_id INTEGER;
        ALTER TABLE transactions ADD COLUMN unfinished INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE transactions ADD COLUMN history INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE subscriptions ADD COLUMN account TEXT;
        ALTER TABLE subscriptions ADD COLUMN group_id TEXT;
        ALTER TABLE subscriptions ADD COLUMN family_source_id INTEGER;
        ALTER TABLE subscriptions ADD COLUMN next_event_ms INTEGER;
        """

    /// What layout 3 adds: the delivery state of outbox notifications.
    private static let layoutThree = """
        ALTER TABLE notifications ADD COLUMN attempts TEXT;
        ALTER TABLE notifications ADD COLUMN next_attempt_ms INTEGER;
        CREATE INDEX IF NOT EXISTS notifications_due ON notifications(next_attempt_ms, sequence) WHERE next_attempt_ms IS NOT NULL;
        CREATE INDEX IF NOT EXISTS notifications_by_date ON notifications(created_ms, sequence);
        """

    /// What layout 4 changes: fewer index entries per write. Every index keyed by account puts a
    /// new transaction on a page of its own (accounts are scattered, and a renewal or purchase is
    /// written among other customers' rows), so each costs a page or two of log per transaction; a
    /// year of renewals wrote 14 pages per renewal with six of them. Three remain: every transaction
    /// by account; the non-consumables by account and product (entitlements, ownership, a group's
    /// subscriptions: few rows per account, so no order by date is kept for them); and the unfinished
    /// ones. `Transaction.all` reads the account's transactions and leaves finished consumables out.
    /// Notifications are found by UUID only for `TEST` notifications (the test notification token),
    /// so no purchase inserts a random UUID into an index.
    private static let layoutFour = """
        DROP INDEX IF EXISTS transactions_by_account_product;
        DROP INDEX IF EXISTS transactions_by_account_group;
        DROP INDEX IF EXISTS transactions_entitlement_candidates;
        DROP INDEX IF EXISTS transactions_history;
        CREATE INDEX IF NOT EXISTS transactions_entitlement_candidates_by_product ON transactions(account, product_id, id)
            WHERE product_kind <> 'consumable';
        DROP INDEX IF EXISTS notifications_by_uuid;
        CREATE INDEX IF NOT EXISTS notifications_test_by_uuid ON notifications(uuid) WHERE type = 'TEST';
        """

    /// What layout 5 adds: the detail of feed entries that are not transactions (messages, purchase
    /// intents, storefront changes), as JSON.
    private static let layoutFive = """
        ALTER TABLE updates ADD COLUMN detail TEXT;
        """

    /// What layout 7 adds: a sender's claim on a notification, in real time (milliseconds), apart
    /// from when its next attempt is due on the store's clock.
    private static let layoutSeven = """
        ALTER TABLE notifications ADD COLUMN claimed_until_ms INTEGER;
        """

    /// What layout 8 adds: what the Transaction Manager lists and orders by, so that every filter
    /// and sort is answered over the whole store through an index. A transaction's state as its record
    /// decides it, its purchase and expiration dates (a transaction that never expires sorts after
    /// every date), and a subscription's current period while it is in a billing grace period.
    private static let layoutEight = """
        ALTER TABLE transactions ADD COLUMN listed_state TEXT;
        ALTER TABLE transactions ADD COLUMN purchase_ms INTEGER;
        ALTER TABLE transactions ADD COLUMN expires_ms INTEGER;
        ALTER TABLE subscriptions ADD COLUMN grace_latest_id INTEGER;
        """

    /// The product and expiration-date indexes carry the state columns after their order, so a state
    /// filter along them is checked without reading rows. Each index costs every renewal and purchase
    /// an entry, so there is no purchase-date index (the identifier order is the order of purchase,
    /// imports aside; date filters read along the order, filtered), and the account index, whose
    /// entries land all over it, is not widened (a tenth of a year of renewals, docs/benchmarks.md).
    private static let layoutEightIndexes = """
        CREATE INDEX IF NOT EXISTS transactions_by_listed_state ON transactions(listed_state, id, expires_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_product ON transactions(product_id, id, listed_state, expires_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_expiration_date ON transactions(expires_ms, id, listed_state);
        CREATE INDEX IF NOT EXISTS notifications_by_transaction ON notifications(transaction_id, sequence) WHERE transaction_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS subscriptions_in_grace ON subscriptions(grace_latest_id) WHERE grace_latest_id IS NOT NULL;
        """

    /// What layout 9 adds: an index for each filter of the Transaction Manager (a product, which a
    /// type filter becomes, or a recorded state) in each order it lists by, so that every filter ×
    /// sort combination's page is a seek and a walk along one index whatever the store's size (layout
    /// 8 read some of them by walking another order's index past every row that did not match:
    /// consumables by expiration date walked every subscription first). Each carries the state
    /// columns and the purchase date after its order (layout 8's state and product indexes are made
    /// again with it), so a purchased period's end and a range of purchase days are checked without
    /// reading rows, and a page's position (a page asked for by number) is counted along the index
    /// alone. A product in a state is read
    /// along the state-and-product index, in identifier order. The identifiers alone, in order, are an
    /// index too: a page of the whole list asked for by number is counted along it rather than along
    /// the table's rows, records and all. Six more entries per write (the last at the index's end).
    private static let layoutNineIndexes = """
        DROP INDEX IF EXISTS transactions_by_listed_state;
        DROP INDEX IF EXISTS transactions_by_product;
        CREATE INDEX IF NOT EXISTS transactions_by_listed_state ON transactions(listed_state, id, expires_ms, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_product ON transactions(product_id, id, listed_state, expires_ms, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_product_account ON transactions(product_id, account, id, listed_state, expires_ms, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_product_expiration ON transactions(product_id, expires_ms, id, listed_state, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_state_account ON transactions(listed_state, account, id, expires_ms, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_state_product ON transactions(listed_state, product_id, id, expires_ms, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_state_expiration ON transactions(listed_state, expires_ms, id, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_id ON transactions(id);
        """

    /// What layout 10 adds for a range of purchase days: an index led by the purchase date that
    /// carries every column a listing filters or sorts by (a narrow range's rows are read along it and
    /// sorted, only the page's records read), and the purchase date on the indexes of the account,
    /// expiration-date and identifier orders (a wide range is read along its order's index, each
    /// date checked in the index rather than in the row). One more entry per write.
    private static let layoutTenIndexes = """
        DROP INDEX IF EXISTS transactions_by_account;
        DROP INDEX IF EXISTS transactions_by_expiration_date;
        DROP INDEX IF EXISTS transactions_by_id;
        CREATE INDEX IF NOT EXISTS transactions_by_account ON transactions(account, id, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_expiration_date ON transactions(expires_ms, id, listed_state, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_id ON transactions(id, purchase_ms);
        CREATE INDEX IF NOT EXISTS transactions_by_purchase_date ON transactions(purchase_ms, id, listed_state, account, product_id, expires_ms);
        """

    private static let layoutTwoIndexes = """
        CREATE INDEX IF NOT EXISTS accounts_by_family_group ON accounts(family_group, name) WHERE family_group IS NOT NULL;
        CREATE INDEX IF NOT EXISTS devices_by_account ON devices(account, name);
        CREATE INDEX IF NOT EXISTS transactions_by_account ON transactions(account, id);
        CREATE INDEX IF NOT EXISTS transactions_by_original ON transactions(original_id, id);
        CREATE INDEX IF NOT EXISTS transactions_by_family_source ON transactions(family_source_id, id) WHERE family_source_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS transactions_unfinished ON transactions(account, id) WHERE unfinished = 1;
        CREATE INDEX IF NOT EXISTS subscriptions_by_account ON subscriptions(account, group_id, original_id);
        CREATE INDEX IF NOT EXISTS subscriptions_by_family_source ON subscriptions(family_source_id, original_id) WHERE family_source_id IS NOT NULL;
        CREATE INDEX IF NOT EXISTS subscriptions_due ON subscriptions(next_event_ms, original_id) WHERE next_event_ms IS NOT NULL;
        DROP INDEX IF EXISTS updates_waiting;
        CREATE INDEX IF NOT EXISTS updates_waiting_by_device ON updates(device, channel, sequence) WHERE delivered = 0;
        CREATE INDEX IF NOT EXISTS updates_waiting_by_transaction ON updates(transaction_id) WHERE delivered = 0;
        """

    /// Whether this user can change the database: the file and its folder (where SQLite keeps its log
    /// and lock files) are writable, on a filesystem mounted read-write.
    private static func isWritable(_ path: String) -> Bool {
        let folder = (path as NSString).deletingLastPathComponent
        return access(path, W_OK) == 0 && access(folder.isEmpty ? "." : folder, W_OK) == 0
    }

    /// The ledger's layouts as named migrations of the SQL layer, run once per store by whichever
    /// process opens it first. A store written before they were recorded (its layout only in `meta`)
    /// has its layouts adopted as done.
    static let migrations = SchemaMigrations(schema: "ledger", migrations: [
        layout("layout-1-tables") { (connection) throws(DatabaseError) in try schema(baseTables, on: connection) },
        layout("layout-2-view-columns") { (connection) throws(DatabaseError) in
            try schema(layoutTwoColumns, on: connection)
            try fillLayoutTwoColumns(connection)
            try schema(layoutTwoIndexes, on: connection)
        },
        layout("layout-3-notification-delivery") { (connection) throws(DatabaseError) in try schema(layoutThree, on: connection) },
        layout("layout-4-fewer-index-entries") { (connection) throws(DatabaseError) in try schema(layoutFour, on: connection) },
        layout("layout-5-feed-details") { (connection) throws(DatabaseError) in try schema(layoutFive, on: connection) },
        layout("layout-6-composed-names") { (connection) throws(DatabaseError) in try composeNames(connection) },
        layout("layout-7-delivery-leases") { (connection) throws(DatabaseError) in try schema(layoutSeven, on: connection) },
        layout("layout-8-listing-columns") { (connection) throws(DatabaseError) in
            try schema(layoutEight, on: connection)
            try fillListingColumns(connection)
            try schema(layoutEightIndexes, on: connection)
        },
        layout("layout-9-listing-indexes") { (connection) throws(DatabaseError) in try schema(layoutNineIndexes, on: connection) },
        layout("layout-10-purchase-date-index") { (connection) throws(DatabaseError) in try schema(layoutTenIndexes, on: connection) },
    ], alreadyApplied: layoutsApplied)

    /// A PostgreSQL ledger's migrations: the layouts, then the change log other instances read to keep
    /// their caches (see ``ChangeLog``).
    static let postgresMigrations = SchemaMigrations(schema: "ledger", migrations: migrations.migrations + [
        Migration.sql("postgres-change-log", "CREATE TABLE IF NOT EXISTS ledger_changes (version BIGINT PRIMARY KEY, keys TEXT NOT NULL)"),
    ], alreadyApplied: layoutsApplied)

    /// The layouts a store written before migrations were recorded holds (its layout number in `meta`).
    @Sendable private static func layoutsApplied(_ connection: any DatabaseConnection) throws(DatabaseError) -> [String] {
        guard try connection.hasTable("meta") else { return [] }
        let stored = try connection.fetchValue(String.self, column: "value", "SELECT value FROM meta WHERE key = 'layout'")
        let layout = stored.flatMap { Int($0) } ?? 1
        return layoutNames.prefix(layout).map { $0 }
    }

    /// The layouts' migrations by number (``layoutVersion`` of them).
    private static let layoutNames = ["layout-1-tables", "layout-2-view-columns", "layout-3-notification-delivery",
                                      "layout-4-fewer-index-entries", "layout-5-feed-details", "layout-6-composed-names",
                                      "layout-7-delivery-leases", "layout-8-listing-columns", "layout-9-listing-indexes",
                                      "layout-10-purchase-date-index"]

    /// A layout's migration: its SQLite statements, then the layout number and (for a store that
    /// holds records already) the records' schema, as earlier versions read them from `meta`.
    private static func layout(_ name: String, _ change: @escaping @Sendable (any DatabaseConnection) throws(DatabaseError) -> Void) -> Migration {
        let number = (layoutNames.firstIndex(of: name) ?? 0) + 1
        return Migration(name) { (connection) throws(DatabaseError) in
            try change(connection)
            try connection.query(upsertMeta, [.text("layout"), .text(String(number))])
            if number > 1 { try connection.query("UPDATE meta SET value = '2' WHERE key = 'schema'") }
        }
    }

    /// Runs a layout's statements, written for SQLite: on PostgreSQL its integers are 64-bit
    /// (`BIGINT`), as SQLite's always are. Every other statement of the layouts is the same on both.
    private static func schema(_ statements: String, on connection: any DatabaseConnection) throws(DatabaseError) {
        switch connection.engine {
        case .sqlite: try connection.execute(statements)
        case .postgresql: try connection.execute(statements.replacingOccurrences(of: " INTEGER", with: " BIGINT"))
        }
    }

    /// Whether a layout has rows of an earlier one to convert: a PostgreSQL ledger is new, made at the
    /// latest layout with nothing in it, so only SQLite stores are converted.
    private static func hasRowsToConvert(_ connection: any DatabaseConnection) -> Bool { connection.engine == .sqlite }

    /// What layout 6 changes: account and device names are kept in Unicode's composed form (NFC),
    /// as every way in now writes and looks them up, so "café" written with a combining accent is the
    /// same account as "café" written with one character. Earlier stores may hold names in other
    /// forms; they are composed here, in the columns and in the JSON records. Two names that become
    /// one (an account "café" in each form) cannot be merged without a choice only their owner can
    /// make, so the conversion stops and names them, and the store stays as it was.
    private static func composeNames(_ connection: any DatabaseConnection) throws(DatabaseError) {
        guard hasRowsToConvert(connection) else { return }
        let tables: [(table: String, unique: String?, columns: [String])] = [
            ("accounts", "name", ["name", "family_group", "record"]),
            ("devices", "name", ["name", "account", "record"]),
            ("transactions", nil, ["account", "record"]),
            ("subscriptions", nil, ["account", "record"]),
            ("updates", nil, ["device"]),
        ]
        for (table, unique, columns) in tables {
            var changes: [(rowid: Int64, values: [String?])] = []
            let rows = try connection.fetchAll("SELECT rowid AS row_number, \(columns.joined(separator: ", ")) FROM \(table)") {
                (row) throws(DatabaseError) -> (rowid: Int64, values: [String?]) in
                var values: [String?] = []
                for column in columns { values.append(try row[column]) }
                return (try row["row_number"], values)
            }
            for (rowid, values) in rows {
                let composed = values.map { $0?.ledgerName }
                // Compared by scalars: Swift's `==` already counts the two forms as equal.
                if zip(values, composed).contains(where: { !($0?.unicodeScalars.elementsEqual($1?.unicodeScalars ?? "".unicodeScalars) ?? true) }) {
                    changes.append((rowid, composed))
                }
            }
            for change in changes {
                if let unique, let index = columns.firstIndex(of: unique), let name = change.values[index] {
                    let others = try connection.query("SELECT \(unique) FROM \(table) WHERE \(unique) = $1 AND rowid <> $2",
                                                      [.text(name), .integer(change.rowid)])
                    if others > 0 {
                        throw DatabaseError(engine: connection.engine, code: nil, message: """
                            the store has two \(table) named "\(name)", written in two Unicode forms; this version keeps one form (NFC), \
                            so rename one of them with the earlier version before opening the store here
                            """)
                    }
                }
                let assignments = columns.indices.map { "\(columns[$0]) = $\($0 + 2)" }.joined(separator: ", ")
                try connection.query("UPDATE \(table) SET \(assignments) WHERE rowid = $1",
                                     [.integer(change.rowid)] + change.values.map { DatabaseValue.optionalText($0) })
            }
        }
    }

    /// Layout 1 kept everything in the JSON records; layout 2 copies the selected fields into columns.
    private static func fillLayoutTwoColumns(_ connection: any DatabaseConnection) throws(DatabaseError) {
        guard hasRowsToConvert(connection) else { return }
        func decodeAll<T: Decodable>(_ sql: String, _ type: T.Type) throws(DatabaseError) -> [T] {
            try connection.fetchAll(sql) { (row) throws(DatabaseError) -> T in try Self.decodeRecord(type, try row["record"], on: connection) }
        }
        for account in try decodeAll("SELECT record FROM accounts", StoreAccount.self) {
            try connection.query("UPDATE accounts SET family_group = $2 WHERE name = $1", [.text(account.name), .optionalText(account.familyGroup)])
        }
        for device in try decodeAll("SELECT record FROM devices", StoreDevice.self) {
            try connection.query("UPDATE devices SET account = $2 WHERE name = $1", [.text(device.name), .text(device.account)])
        }
        // Layout 2's columns only: the later layouts' are not there yet.
        for transaction in try decodeAll("SELECT record FROM transactions", LedgerTransaction.self) {
            try connection.query("""
                UPDATE transactions SET account = $2, original_id = $3, product_id = $4, product_kind = $5, group_id = $6,
                                        family_source_id = $7, unfinished = $8, history = $9 WHERE id = $1
                """, Array(Columns.transactionValues(transaction).prefix(9)))
        }
        for subscription in try decodeAll("SELECT record FROM subscriptions", SubscriptionRecord.self) {
            try connection.query("UPDATE subscriptions SET account = $2, group_id = $3, family_source_id = $4, next_event_ms = $5 WHERE original_id = $1",
                                 Array(Columns.subscriptionValues(subscription).prefix(5)))
        }
    }

    /// Layout 8 copies what the Transaction Manager lists by into columns, a thousand rows at a time.
    private static func fillListingColumns(_ connection: any DatabaseConnection) throws(DatabaseError) {
        guard hasRowsToConvert(connection) else { return }
        var after: Int64 = -1
        while true {
            let batch = try connection.fetchAll("SELECT id, record FROM transactions WHERE id > $1 ORDER BY id LIMIT 1000", [.integer(after)]) {
                (row) throws(DatabaseError) -> (id: Int64, transaction: LedgerTransaction) in
                (try row["id"], try decodeRecord(LedgerTransaction.self, try row["record"], on: connection))
            }
            guard let last = batch.last else { break }
            after = last.id
            for (_, transaction) in batch {
                try connection.query(Columns.transactionUpdate, Columns.transactionValues(transaction))
            }
        }
        let subscriptions = try connection.fetchAll("SELECT record FROM subscriptions") { (row) throws(DatabaseError) -> SubscriptionRecord in
            try decodeRecord(SubscriptionRecord.self, try row["record"], on: connection)
        }
        for subscription in subscriptions {
            try connection.query(Columns.subscriptionUpdate, Columns.subscriptionValues(subscription))
        }
    }

    /// A stored JSON record, or a failure naming its type.
    private static func decodeRecord<T: Decodable>(_ type: T.Type, _ text: String, on connection: any DatabaseConnection) throws(DatabaseError) -> T {
        do { return try AppStoreJSON.decode(type, from: Data(text.utf8)) } catch {
            throw DatabaseError(engine: connection.engine, code: nil, message: "a \(type) record cannot be read: \(error)")
        }
    }

    static let versionQuery = "SELECT value FROM meta WHERE key = 'version'"

    static func version(_ connection: any DatabaseConnection) throws(DatabaseError) -> Int64 {
        try version(in: connection.rows(versionQuery), on: connection)
    }

    /// The version ``versionQuery`` answered (0 before the first commit).
    static func version(in rows: [DatabaseRow], on connection: any DatabaseConnection) throws(DatabaseError) -> Int64 {
        guard let row = rows.first else { return 0 }
        let stored = try row.decode(String.self, "value")
        guard let version = Int64(stored) else {
            throw DatabaseError(engine: connection.engine, code: nil, message: "the ledger's version is not a number: \(stored)")
        }
        return version
    }

    // MARK: Writing rows

    /// Runs the statements that write `changes` as `version`: on SQLite one by one, each row changed in
    /// place where it can be.
    private static func apply(_ changes: LedgerChanges, version: Int64, to connection: any DatabaseConnection) throws {
        var writer = ChangeWriter(connection: connection, gathering: false)
        try write(changes, version: version, with: &writer)
    }

    /// The statements that write `changes` as `version`, to send in one round trip (PostgreSQL): rows
    /// that may exist are written with one upsert each, which needs no answer.
    private static func statements(writing changes: LedgerChanges, version: Int64, on connection: any DatabaseConnection) throws -> [DatabaseStatement] {
        var writer = ChangeWriter(connection: connection, gathering: true)
        try write(changes, version: version, with: &writer)
        return writer.gathered
    }

    /// Where a change's statements go: run at once, or gathered to be sent together.
    private struct ChangeWriter {
        let connection: any DatabaseConnection
        let gathering: Bool
        var gathered: [DatabaseStatement] = []

        init(connection: any DatabaseConnection, gathering: Bool) {
            self.connection = connection
            self.gathering = gathering
        }

        mutating func run(_ sql: String, _ values: [DatabaseValue] = []) throws {
            if gathering { gathered.append(DatabaseStatement(sql, values)) } else { try connection.query(sql, values) }
        }

        /// A row that may exist: gathered, one upsert; run at once, changed in place first (`changeInPlace`
        /// answers a row when it found one) unless `isNew`, then inserted.
        mutating func write(_ values: [DatabaseValue], isNew: Bool, changeInPlace: String, insert: String, upsert: String) throws {
            if gathering { return gathered.append(DatabaseStatement(upsert, values)) }
            if try isNew || connection.query(changeInPlace, values) == 0 { try connection.query(insert, values) }
        }
    }

    private static func write(_ changes: LedgerChanges, version: Int64, with writer: inout ChangeWriter) throws {
        try writer.run(upsertMeta, [.text("version"), .text(String(version))])
        if writer.connection.engine == .postgresql {
            for statement in try ChangeLog.recording(changes, version: version) { try writer.run(statement.sql, statement.values) }
        }
        for (key, value) in changes.meta {
            try writer.run(upsertMeta, [.text(key), .text(value)])
        }
        for account in changes.accounts.values {
            try writer.run("""
                INSERT INTO accounts (name, family_group, record) VALUES ($1, $2, $3)
                ON CONFLICT (name) DO UPDATE SET family_group = excluded.family_group, record = excluded.record
                """, [.text(account.name), .optionalText(account.familyGroup), .text(try encode(account))])
        }
        for device in changes.devices.values {
            try writer.run("""
                INSERT INTO devices (name, account, record) VALUES ($1, $2, $3)
                ON CONFLICT (name) DO UPDATE SET account = excluded.account, record = excluded.record
                """, [.text(device.name), .text(device.account), .text(try encode(device))])
        }
        if changes.deletesEveryTransaction {
            try writer.run("DELETE FROM transactions")
            try writer.run("DELETE FROM subscriptions")
            try writer.run("DELETE FROM updates WHERE delivered = 0")
        }
        for id in changes.deletedTransactions.sorted() {
            try writer.run("DELETE FROM transactions WHERE id = $1", [.integer(Int64(id))])
            try writer.run("DELETE FROM updates WHERE transaction_id = $1 AND delivered = 0", [.integer(Int64(id))])
        }
        // Identifiers above the newest stored one are new rows (most of a commit's, renewals all), so
        // only the others are first tried as changes in place. A plain INSERT of a new row, not INSERT
        // OR REPLACE: on SQLite a statement that may replace rows needs a statement journal of every
        // page it changes, one per index, and an update in place rewrites only the index entries whose
        // columns changed.
        // Gathered statements upsert every row and need no newest identifier.
        let newestStored = writer.gathering || changes.transactions.isEmpty ? Int64.max
            : try writer.connection.fetchValue(Int64.self, column: "newest", "SELECT coalesce(max(id), -1) AS newest FROM transactions") ?? -1
        for transaction in changes.transactions.values.sorted(by: { $0.id < $1.id }) {
            let values = Columns.transactionValues(transaction) + [.text(try encode(transaction))]
            try writer.write(values, isNew: Int64(transaction.id) > newestStored, changeInPlace: Columns.transactionChangeInPlace,
                             insert: Columns.transactionInsert, upsert: Columns.transactionUpsert)
        }
        for id in changes.deletedSubscriptions.sorted() {
            try writer.run("DELETE FROM subscriptions WHERE original_id = $1", [.integer(Int64(id))])
        }
        for subscription in changes.subscriptions.values {
            // A subscription keeps its account, group and family source: changing it in place touches
            // only the due-events index, where replacing the row would rewrite every index entry.
            let values = Columns.subscriptionValues(subscription) + [.text(try encode(subscription))]
            try writer.write(values, isNew: false, changeInPlace: Columns.subscriptionChangeInPlace,
                             insert: Columns.subscriptionInsert, upsert: Columns.subscriptionInsert)
        }
        for update in changes.appendedUpdates {
            try writer.run("""
                INSERT INTO updates (sequence, device, channel, transaction_id, kind, signed_transaction, signed_renewal_info,
                                     renewal_state, group_id, created_ms, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                """, [.integer(update.sequence), .text(update.device), .text(update.channel.rawValue), .integer(Int64(update.transactionID)),
                      .text(update.kind.rawValue), .text(update.signedTransaction), .optionalText(update.signedRenewalInfo),
                      .optionalText(update.renewalState?.rawValue), .optionalText(update.subscriptionGroupID),
                      .integer(AppStoreJSON.milliseconds(from: update.date)),
                      .optionalText(try update.detail.map { try Self.encode($0) })])
        }
        for sequence in changes.deliveredUpdates {
            try writer.run("UPDATE updates SET delivered = 1 WHERE sequence = $1", [.integer(sequence)])
        }
        for notification in changes.appendedNotifications {
            try writer.run("""
                INSERT INTO notifications (sequence, uuid, type, subtype, transaction_id, body, created_ms, attempts, next_attempt_ms, claimed_until_ms)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                """, [.integer(notification.sequence), .text(notification.notificationUUID), .text(notification.type.rawValue),
                      .optionalText(notification.subtype?.rawValue), notification.transactionID.map { .integer(Int64($0)) } ?? .null,
                      .text(String(decoding: notification.body.appStoreJSONData(), as: UTF8.self)),
                      .integer(AppStoreJSON.milliseconds(from: notification.date))] + (try deliveryValues(notification.delivery)))
        }
        for (sequence, delivery) in changes.notificationDeliveries.sorted(by: { $0.key < $1.key }) {
            try writer.run("UPDATE notifications SET attempts = $2, next_attempt_ms = $3, claimed_until_ms = $4 WHERE sequence = $1",
                           [.integer(sequence)] + (try deliveryValues(delivery)))
        }
    }

    private static func deliveryValues(_ delivery: NotificationDelivery) throws -> [DatabaseValue] {
        [delivery.attempts.isEmpty ? .null : .text(try encode(delivery.attempts)),
         delivery.nextAttemptDate.map { .integer(AppStoreJSON.milliseconds(from: $0)) } ?? .null,
         delivery.claimedUntil.map { .integer(AppStoreJSON.milliseconds(from: $0)) } ?? .null]
    }

    private static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try AppStoreJSON.encode(value), as: UTF8.self)
    }

    /// Sets a `meta` row, as an update in place when it is there.
    static let upsertMeta = "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"

    /// The indexed columns of the transaction and subscription tables.
    enum Columns {
        static let transactionInsert = """
            INSERT INTO transactions (id, account, original_id, product_id, product_kind, group_id, family_source_id,
                                                 unfinished, history, listed_state, purchase_ms, expires_ms, record)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
            """
        static let transactionUpsert = transactionInsert + """

            ON CONFLICT (id) DO UPDATE SET account = excluded.account, original_id = excluded.original_id,
                product_id = excluded.product_id, product_kind = excluded.product_kind, group_id = excluded.group_id,
                family_source_id = excluded.family_source_id, unfinished = excluded.unfinished, history = excluded.history,
                listed_state = excluded.listed_state, purchase_ms = excluded.purchase_ms, expires_ms = excluded.expires_ms,
                record = excluded.record
            """
        static let transactionChangeInPlace = """
            UPDATE transactions SET account = $2, original_id = $3, product_id = $4, product_kind = $5, group_id = $6,
                                    family_source_id = $7, unfinished = $8, history = $9, listed_state = $10, purchase_ms = $11,
                                    expires_ms = $12, record = $13 WHERE id = $1 RETURNING id
            """
        static let transactionUpdate = """
            UPDATE transactions SET account = $2, original_id = $3, product_id = $4, product_kind = $5, group_id = $6,
                                    family_source_id = $7, unfinished = $8, history = $9, listed_state = $10, purchase_ms = $11,
                                    expires_ms = $12 WHERE id = $1
            """

        static func transactionValues(_ transaction: LedgerTransaction) -> [DatabaseValue] {
            let unfinished = transaction.isPurchased && !transaction.isFinished
            let history = transaction.isPurchased && !(transaction.productKind == .consumable && transaction.isFinished)
            return [.integer(Int64(transaction.id)), .text(transaction.account), .integer(Int64(transaction.originalID)),
                    .text(transaction.productID), .text(transaction.productKind.rawValue), .optionalText(transaction.subscriptionGroupID),
                    transaction.familySourceID.map { .integer(Int64($0)) } ?? .null, .integer(unfinished ? 1 : 0), .integer(history ? 1 : 0),
                    .text(ListedState.recorded(transaction).rawValue), .integer(AppStoreJSON.milliseconds(from: transaction.purchaseDate)),
                    .integer(transaction.expirationDate.map(AppStoreJSON.milliseconds(from:)) ?? TransactionListing.neverExpires)]
        }

        static let subscriptionInsert = """
            INSERT INTO subscriptions (original_id, account, group_id, family_source_id, next_event_ms, grace_latest_id, record)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (original_id) DO UPDATE SET account = excluded.account, group_id = excluded.group_id,
                family_source_id = excluded.family_source_id, next_event_ms = excluded.next_event_ms,
                grace_latest_id = excluded.grace_latest_id, record = excluded.record
            """
        static let subscriptionChangeInPlace = """
            UPDATE subscriptions SET next_event_ms = $5, grace_latest_id = $6, record = $7
            WHERE original_id = $1 AND account = $2 AND group_id = $3 AND family_source_id IS NOT DISTINCT FROM $4 RETURNING original_id
            """
        static let subscriptionUpdate = """
            UPDATE subscriptions SET account = $2, group_id = $3, family_source_id = $4, next_event_ms = $5, grace_latest_id = $6
            WHERE original_id = $1
            """

        static func subscriptionValues(_ record: SubscriptionRecord) -> [DatabaseValue] {
            [.integer(Int64(record.originalTransactionID)), .text(record.account), .text(record.groupID),
             record.familySourceID.map { .integer(Int64($0)) } ?? .null,
             record.nextEventDate.map { .integer(AppStoreJSON.milliseconds(from: $0)) } ?? .null,
             record.state == .inGracePeriod ? .integer(Int64(record.latestTransactionID)) : .null]
        }
    }
}

/// The lifecycle lease of a read-only store: there is nothing to serialize.
private final class ReadOnlyLease: LifecycleLease {
    func release() {}
}

extension SQLLedgerStorage {
    /// The advisory lock PostgreSQL writers of a ledger take in each write transaction (and, as a
    /// session lock, the lifecycle lease's key beside it): a constant, as one database holds one ledger.
    static let ledgerLockKey: Int64 = 0x4F53_4B4C_6564_6700 // "OSKLedg"
    static let lifecycleLockKey: Int64 = 0x4F53_4B4C_6966_6500 // "OSKLife"
}

/// The lifecycle lease of a ledger in PostgreSQL: a session-level advisory lock held on a connection
/// of its own, released when the lease is given up or when its process dies, however it dies (the
/// server ends the session).
private final class SessionLease: LifecycleLease {
    private let connection: Mutex<(any DatabaseConnection)?>

    private init(_ connection: any DatabaseConnection) { self.connection = Mutex(connection) }

    /// Takes the lease on a new connection; without `wait`, `nil` at once when another holds it.
    static func acquire(connect: () throws(DatabaseError) -> any DatabaseConnection, wait: Bool, location: String) throws(AppStoreError) -> SessionLease? {
        do throws(DatabaseError) {
            let connection = try connect()
            let key = DatabaseValue.integer(SQLLedgerStorage.lifecycleLockKey)
            if wait {
                try connection.query("SELECT pg_advisory_lock($1)", [key])
                return SessionLease(connection)
            }
            let taken = try connection.fetchValue(Bool.self, column: "taken", "SELECT pg_try_advisory_lock($1) AS taken", [key]) ?? false
            return taken ? SessionLease(connection) : nil
        } catch {
            throw .storage(.database(error, "cannot take the lifecycle lease in \(location)"))
        }
    }

    /// Ends the session, which lets the lock go.
    func release() {
        connection.withLock { $0 = nil }
    }
}
