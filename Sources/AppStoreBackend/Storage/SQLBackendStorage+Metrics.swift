import AppStoreModels
import Foundation
import SQLDatabase

/// The subscription metrics in the database: each subscription's facts (columns of its transactions'
/// rows, and the grace period each notification told), the daily rollup (`metric_days`), the cohort table
/// (`metric_cohorts`) and each subscription's last entitled period (`metric_subscriptions`, also the
/// row a change locks before it reads the subscription, so instances sharing PostgreSQL take turns
/// on one subscription).
///
/// Each grouped commit adds, for every subscription its recorded changes touched, the difference
/// between the subscription's contribution after them and before (``SubscriptionContribution``), in
/// the same transaction: the rollups are committed with the notifications or never, and always equal
/// what ``SQLBackendStorage/rebuildMetrics()`` computes. Rollup rows carry a shard (this process's),
/// so two instances never wait on each other's counters.
extension SQLBackendStorage {
    static let metricsSchema = """
        CREATE INDEX IF NOT EXISTS notifications_by_original ON notifications(original_transaction_id);
        CREATE INDEX IF NOT EXISTS notifications_by_signed ON notifications(signed_ms);
        CREATE TABLE IF NOT EXISTS metric_subscriptions (subscription TEXT PRIMARY KEY, last_start_ms BIGINT, last_end_ms BIGINT, last_period TEXT);
        CREATE INDEX IF NOT EXISTS metric_subscriptions_by_last_end ON metric_subscriptions(last_end_ms);
        CREATE TABLE IF NOT EXISTS metric_days (day BIGINT NOT NULL, metric TEXT NOT NULL, currency TEXT NOT NULL, product_id TEXT NOT NULL,
                                                group_id TEXT NOT NULL, shard INTEGER NOT NULL, value BIGINT NOT NULL,
                                                PRIMARY KEY (day, metric, currency, product_id, group_id, shard));
        CREATE TABLE IF NOT EXISTS metric_cohorts (cohort BIGINT NOT NULL, months INTEGER NOT NULL, shard INTEGER NOT NULL, subscriptions BIGINT NOT NULL,
                                                   PRIMARY KEY (cohort, months, shard));
        CREATE TABLE IF NOT EXISTS metric_layout (id INTEGER PRIMARY KEY, version INTEGER NOT NULL);
        """

    /// How the rollup rows are laid out; a database whose rollups were written another way (or not at
    /// all: made before the analytics) is rebuilt when opened. 3: the facts in the transactions' rows;
    /// counts without currency, and each row also summed into its group's (product `*`) and the whole
    /// app's (product and group `*`). 4: sales of every purchase, the reduced commission's part, and
    /// the movements of MRR. 5: MRR by the period each renewal was charged for, as its first
    /// notification told it (an extension or an early expiry no longer rewrites it). 6: active
    /// subscriptions are the paying ones; free trials count apart, and a grace period also as what it was.
    /// 7: starts, conversions and ends dated when they happen, from the entitled periods; each last
    /// period keeps what its end counts as. 8: a refund reversed returns access on its day (each
    /// notification keeps its transaction's revocation date); refunds in grace end by refund; proration
    /// of upgrades, paid transactions and trial outcomes by their day; MRR movements per product apart
    /// from the group's; cohorts retain paying subscriptions only.
    static let metricsLayout: Int64 = 8

    /// The product and group of the rows that add up every product (of a group, or of the app).
    static let allRows = "*"

    /// This process's rollup rows.
    static let rollupShard = Int64(getpid() % 4_096)

    /// The rollups recomputed from what is recorded, for a database whose rollups were written
    /// another way (or not at all: made before the analytics); the layout is recorded beside them
    /// for the versions that read it.
    static func rebuildRollups(on database: BackendDatabase) throws(BackendError) {
        if let lock = database.lockMetrics { try database.execute(lock) }
        try rebuildMetrics(on: database)
        try database.query("INSERT INTO metric_layout (id, version) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                           [.integer(metricsLayout)])
    }

    /// The days the rollups are kept in: the database's time zone (`metric_time_zone`), UTC when it names none.
    static func calendar(on database: BackendDatabase) throws(BackendError) -> ReportingCalendar {
        guard let identifier = try database.value(String.self, "identifier", "SELECT identifier FROM metric_time_zone WHERE id = 1") else { return .utc }
        return try ReportingCalendar(timeZone: identifier)
    }

    // MARK: Keeping them with each change

    /// A subscription's facts: as read (after locking it) before a batch's changes, or with them.
    struct SubscriptionFacts {
        var transactions: [TransactionFact]
        var notifications: [NotificationFact]
    }

    /// The subscriptions a change adds to the figures through: a subscription's, or any purchase's
    /// refund (a purchase that is not a subscription counts only when refunded; its facts are kept all
    /// the same, and a refund's notification carries the transaction again).
    static func subscriptions(touchedBy change: BackendChange) -> Set<String> {
        // Every purchase adds its price to the sales; a subscription's also its periods and events.
        guard change.transaction != nil || change.notification?.type == "REFUND" else { return [] }
        return Set([change.transaction?.originalTransactionID, change.notification?.originalTransactionID].compactMap { $0 })
    }

    /// The subscriptions a batch of changes touches, locked in one order (so instances sharing
    /// PostgreSQL take turns on each, and never wait on each other crosswise) and read as they were,
    /// in two statements however many there are.
    static func lockAndReadSubscriptions(of changes: [BackendChange], on database: BackendDatabase) throws(BackendError) -> [String: SubscriptionFacts] {
        let touched = changes.reduce(into: Set<String>()) { $0.formUnion(subscriptions(touchedBy: $1)) }.sorted()
        var facts: [String: SubscriptionFacts] = [:]
        for chunk in stride(from: 0, to: touched.count, by: 500).map({ Array(touched[$0..<min($0 + 500, touched.count)]) }) {
            // Taking each row (an update on conflict) holds its lock in PostgreSQL until the commit.
            try insertRows("INSERT INTO metric_subscriptions (subscription)", chunk.map { [.text($0)] },
                           "ON CONFLICT (subscription) DO UPDATE SET subscription = excluded.subscription", on: database)
            for (subscription, read) in try readFacts(of: chunk, on: database) { facts[subscription] = read }
        }
        return facts
    }

    /// The facts' columns of a transaction's row, in the order ``factValues(_:)`` gives them.
    static let factColumnTypes: KeyValuePairs<String, String> = [
        "product_id": "TEXT", "group_id": "TEXT", "currency": "TEXT", "price": "BIGINT", "offer": "TEXT", "purchase_ms": "BIGINT",
        "expires_ms": "BIGINT", "revoked_ms": "BIGINT", "family_shared": "INTEGER", "renewal": "INTEGER",
    ]
    static let factColumns = factColumnTypes.map(\.key).joined(separator: ", ")
    static let factUpdates = factColumnTypes.map { "\($0.key) = excluded.\($0.key)" }.joined(separator: ", ")

    static func factValues(_ fact: TransactionFact) -> [DatabaseValue] {
        [.text(fact.productID), .text(fact.groupID), .text(fact.currency), .integer(fact.price), .text(fact.offer.rawValue),
         .integer(fact.purchaseMilliseconds), optionalInteger(fact.expiresMilliseconds), optionalInteger(fact.revokedMilliseconds),
         .integer(fact.isFamilyShared ? 1 : 0), .integer(fact.isRenewal ? 1 : 0)]
    }

    /// The facts of each of `subscriptions` (every one present, with no facts when it has none): their
    /// transactions' fact columns, then their notifications'.
    static func readFacts(of subscriptions: [String], on database: BackendDatabase) throws(BackendError) -> [String: SubscriptionFacts] {
        var facts = Dictionary(uniqueKeysWithValues: subscriptions.map { ($0, SubscriptionFacts(transactions: [], notifications: [])) })
        guard !subscriptions.isEmpty else { return facts }
        let list = subscriptions.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let values = subscriptions.map { DatabaseValue.text($0) }
        for row in try database.query("""
            SELECT original_transaction_id, transaction_id, signed_ms, \(factColumns)
            FROM transactions WHERE original_transaction_id IN (\(list))
            """, values) {
            let subscription: String = try row.column("original_transaction_id")
            guard facts[subscription] != nil else { continue }
            facts[subscription]!.transactions.append(TransactionFact(
                transactionID: try row.column("transaction_id"), subscription: subscription, signedMilliseconds: try row.column("signed_ms"),
                productID: try row.column("product_id", as: String?.self) ?? "", groupID: try row.column("group_id", as: String?.self) ?? "",
                currency: try row.column("currency", as: String?.self) ?? "", price: try row.column("price", as: Int64?.self) ?? 0,
                offer: TransactionFact.Offer(rawValue: try row.column("offer", as: String?.self) ?? "") ?? .none,
                purchaseMilliseconds: try row.column("purchase_ms", as: Int64?.self) ?? 0,
                expiresMilliseconds: try row.column("expires_ms"), revokedMilliseconds: try row.column("revoked_ms"),
                isFamilyShared: try row.column("family_shared", as: Int64?.self) == 1, isRenewal: try row.column("renewal", as: Int64?.self) == 1))
        }
        for row in try database.query("""
            SELECT original_transaction_id, uuid, signed_ms, type, subtype, transaction_id, grace_expires_ms, transaction_expires_ms,
                   transaction_revoked_ms
            FROM notifications WHERE original_transaction_id IN (\(list))
            """, values) {
            let subscription: String = try row.column("original_transaction_id")
            guard facts[subscription] != nil else { continue }
            facts[subscription]!.notifications.append(NotificationFact(
                notificationUUID: try row.column("uuid"), type: try row.column("type"), subtype: try row.column("subtype"),
                signedMilliseconds: try row.column("signed_ms"), transactionID: try row.column("transaction_id"),
                graceExpiresMilliseconds: try row.column("grace_expires_ms"), transactionExpiresMilliseconds: try row.column("transaction_expires_ms"),
                transactionRevokedMilliseconds: try row.column("transaction_revoked_ms")))
        }
        return facts
    }

    /// Adds the difference the recorded changes of a batch make to each subscription they touched,
    /// in three statements at most (rollup rows, cohort cells, last periods).
    static func updateMetrics(after changes: [BackendChange], before: [String: SubscriptionFacts], on database: BackendDatabase) throws(BackendError) {
        var after = before
        for change in changes {
            for subscription in subscriptions(touchedBy: change) {
                guard var facts = after[subscription] else { continue }
                if let transaction = change.transaction, transaction.originalTransactionID == subscription {
                    let fact = TransactionFact(transaction)
                    if let index = facts.transactions.firstIndex(where: { $0.transactionID == fact.transactionID }) {
                        // As the row itself is replaced (see `SQLBackendStorage.write`).
                        if fact.supersedes(facts.transactions[index]) { facts.transactions[index] = fact }
                    } else {
                        facts.transactions.append(fact)
                    }
                }
                if let notification = change.notification, notification.originalTransactionID == subscription {
                    facts.notifications.append(NotificationFact(notification))
                }
                after[subscription] = facts
            }
        }
        var days: [MetricKey: Int64] = [:]
        var cohorts: [CohortKey: Int64] = [:]
        var lastPeriods: [(subscription: String, period: EntitledPeriod?)] = []
        // Read after the subscriptions are locked: a rebuild into another time zone has committed, or waits for this.
        let calendar = try Self.calendar(on: database)
        for (subscription, old) in before.sorted(by: { $0.key < $1.key }) {
            guard let new = after[subscription], new.transactions != old.transactions || new.notifications != old.notifications else { continue }
            let was = SubscriptionContribution(transactions: old.transactions, notifications: old.notifications, calendar: calendar)
            let now = SubscriptionContribution(transactions: new.transactions, notifications: new.notifications, calendar: calendar)
            let difference = now.difference(from: was)
            for (key, value) in difference.days { days[key, default: 0] += value }
            for (key, value) in difference.cohorts { cohorts[key, default: 0] += value }
            if was.lastPeriod != now.lastPeriod { lastPeriods.append((subscription, now.lastPeriod)) }
        }
        try addToRollups(days: days.filter { $0.value != 0 }, cohorts: cohorts.filter { $0.value != 0 }, on: database)
        try recordLastPeriods(lastPeriods, on: database)
    }

    /// Each subscription's last period, many to a statement.
    static func recordLastPeriods(_ periods: [(subscription: String, period: EntitledPeriod?)], on database: BackendDatabase) throws(BackendError) {
        try insertRows("INSERT INTO metric_subscriptions (subscription, last_start_ms, last_end_ms, last_period)", periods.map { subscription, period in
            [.text(subscription), optionalInteger(period?.start), optionalInteger(period?.end), .optionalText(period?.encoded)]
        }, """
            ON CONFLICT (subscription) DO UPDATE SET last_start_ms = excluded.last_start_ms, last_end_ms = excluded.last_end_ms,
                                                     last_period = excluded.last_period
            """, on: database)
    }

    /// Runs `head VALUES (…), (…) tail` for `rows`, as many rows to a statement as keep it under 1,000
    /// parameters (one round trip each, and within SQLite's and PostgreSQL's limits).
    static func insertRows(_ head: String, _ rows: [[DatabaseValue]], _ tail: String, on database: BackendDatabase) throws(BackendError) {
        guard let width = rows.first?.count, width > 0 else { return }
        let perStatement = max(1, 999 / width)
        for start in stride(from: 0, to: rows.count, by: perStatement) {
            let chunk = rows[start..<min(start + perStatement, rows.count)]
            let tuples = chunk.indices.map { row in
                "(" + (0..<width).map { "$\((row - start) * width + $0 + 1)" }.joined(separator: ", ") + ")"
            }
            try database.query("\(head) VALUES \(tuples.joined(separator: ", ")) \(tail)", chunk.flatMap { $0 })
        }
    }

    /// The rollup rows a contribution's cells add to (see ``metricsLayout``): counts without their currency (no
    /// answer splits them by it), each cell also in its group's row and the app's; MRR movements are
    /// computed per product and per group apart (product `*`), each group's also in the app's row.
    static func rollupRows(_ days: [MetricKey: Int64]) -> [MetricKey: Int64] {
        var rows: [MetricKey: Int64] = [:]
        for (key, value) in days {
            var cell = key
            if !cell.metric.isMoney { cell.currency = "" }
            if cell.metric.isMRRMovement {
                // A group's movements are its own (a plan change moves only the difference), a product's its own.
                rows[cell, default: 0] += value
                if cell.productID == allRows {
                    cell.groupID = allRows
                    rows[cell, default: 0] += value
                }
                continue
            }
            rows[cell, default: 0] += value
            var group = cell
            group.productID = allRows
            rows[group, default: 0] += value
            var app = group
            app.groupID = allRows
            rows[app, default: 0] += value
        }
        return rows.filter { $0.value != 0 }
    }

    private static func addToRollups(days: [MetricKey: Int64], cohorts: [CohortKey: Int64], on database: BackendDatabase) throws(BackendError) {
        // In one order everywhere, so two transactions of one process never wait on each other crosswise.
        let dayRows = rollupRows(days).sorted { ($0.key.day, $0.key.metric.rawValue, $0.key.currency, $0.key.productID, $0.key.groupID)
                                    < ($1.key.day, $1.key.metric.rawValue, $1.key.currency, $1.key.productID, $1.key.groupID) }
        try insertRows("INSERT INTO metric_days (day, metric, currency, product_id, group_id, shard, value)", dayRows.map { key, value in
            [.integer(key.day), .text(key.metric.rawValue), .text(key.currency), .text(key.productID), .text(key.groupID), .integer(rollupShard), .integer(value)]
        }, "ON CONFLICT (day, metric, currency, product_id, group_id, shard) DO UPDATE SET value = metric_days.value + excluded.value", on: database)
        let cohortRows = cohorts.sorted { ($0.key.cohort, $0.key.months) < ($1.key.cohort, $1.key.months) }
        try insertRows("INSERT INTO metric_cohorts (cohort, months, shard, subscriptions)", cohortRows.map { key, value in
            [.integer(key.cohort), .integer(key.months), .integer(rollupShard), .integer(value)]
        }, "ON CONFLICT (cohort, months, shard) DO UPDATE SET subscriptions = metric_cohorts.subscriptions + excluded.subscriptions", on: database)
    }

    // MARK: Rebuilding

    /// Recomputes every fact and rollup from the recorded transactions and notifications, in one
    /// transaction: the rollups a running backend keeps must equal what this computes.
    static func rebuildMetrics(on database: BackendDatabase) throws(BackendError) {
        let calendar = try Self.calendar(on: database)
        for table in ["metric_days", "metric_cohorts", "metric_subscriptions"] {
            try database.query("DELETE FROM \(table)", [])
        }
        // The facts, from every transaction's stored payload, a page at a time.
        var after = ""
        while true {
            let rows = try database.query("""
                SELECT transaction_id, original_transaction_id, customer_id, payload FROM transactions
                WHERE transaction_id > $1 ORDER BY transaction_id LIMIT 1000
                """, [.text(after)])
            guard let last = try rows.last?.column("transaction_id", as: String.self) else { break }
            for row in rows {
                let payload = try decode(JWSTransactionDecodedPayload.self, try row.column("payload"))
                let fact = TransactionFact(BackendTransaction(payload: payload, signedTransaction: "", customerID: try row.column("customer_id")))
                try database.query("UPDATE transactions SET (\(factColumns)) = ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) WHERE transaction_id = $11",
                                   factValues(fact) + [.text(fact.transactionID)])
            }
            after = last
        }
        // Each subscription's contribution, summed in memory (the rollups are as small as days × products).
        var days: [MetricKey: Int64] = [:]
        var cohorts: [CohortKey: Int64] = [:]
        after = ""
        while true {
            let subscriptions = try database.query("""
                SELECT DISTINCT original_transaction_id FROM transactions WHERE original_transaction_id > $1 ORDER BY original_transaction_id LIMIT 500
                """, [.text(after)]).map { (row) throws(BackendError) -> String in try row.column("original_transaction_id") }
            guard let last = subscriptions.last else { break }
            var lastPeriods: [(subscription: String, period: EntitledPeriod?)] = []
            for (subscription, facts) in try readFacts(of: subscriptions, on: database).sorted(by: { $0.key < $1.key }) {
                let contribution = SubscriptionContribution(transactions: facts.transactions, notifications: facts.notifications, calendar: calendar)
                for (key, value) in contribution.days { days[key, default: 0] += value }
                for (key, value) in contribution.cohorts { cohorts[key, default: 0] += value }
                lastPeriods.append((subscription, contribution.lastPeriod))
            }
            try recordLastPeriods(lastPeriods, on: database)
            after = last
        }
        try addToRollups(days: days.filter { $0.value != 0 }, cohorts: cohorts.filter { $0.value != 0 }, on: database)
    }

    /// Recomputes the rollups from the ledger (`storekit backend metrics rebuild`), after the writes
    /// waiting now, as one transaction; in the days of `timeZone` from now on, when given.
    public func rebuildMetrics(timeZone: String?) async throws(BackendError) {
        let calendar = try timeZone.map { (identifier) throws(BackendError) in try ReportingCalendar(timeZone: identifier) }
        try await writeExclusively { (database) throws(BackendError) in
            if let calendar {
                try database.query("""
                    INSERT INTO metric_time_zone (id, identifier) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET identifier = excluded.identifier
                    """, [.text(calendar.identifier)])
            }
            try Self.rebuildMetrics(on: database)
        }
    }

    public func metricsTimeZone() async throws(BackendError) -> String {
        try await read { (database) throws(BackendError) in try Self.calendar(on: database).identifier }
    }

    // MARK: Reading

    public func metricScopes() async throws(BackendError) -> [MetricScope] {
        try await read { (database) throws(BackendError) in
            // A product's own rows carry its group; the group sums and the app's carry `*` as the product.
            try database.query("SELECT DISTINCT product_id, group_id FROM metric_days WHERE product_id <> $1 AND group_id <> $1 ORDER BY group_id, product_id",
                               [.text(Self.allRows)]).map { (row) throws(BackendError) in
                MetricScope(productID: try row.column("product_id"), groupID: try row.column("group_id"))
            }
        }
    }

    public func metrics(_ query: MetricsQuery) async throws(BackendError) -> MetricsReport {
        guard query.from <= query.to else { throw .badRequest("from (\(query.from)) is after to (\(query.to))") }
        guard query.to.number - query.from.number < MetricsQuery.longestRange else {
            throw .badRequest("ask for at most \(MetricsQuery.longestRange) days at once")
        }
        return try await read { (database) throws(BackendError) in
            let calendar = try Self.calendar(on: database)
            guard let asOf = try database.value(Int64?.self, "newest", Self.newestSignedDate) ?? nil else {
                return MetricsReport(asOf: nil, days: [], timeZone: calendar.identifier)
            }
            // The rows of one product, of a group's products summed, or of the whole app.
            let rowsOf: [DatabaseValue] = [.text(query.productID ?? Self.allRows), .text(query.groupID ?? Self.allRows)]
            let filter = "product_id = $1 AND group_id \(query.productID != nil && query.groupID == nil ? "<>" : "=") $2"
            let lastDay = min(query.to, calendar.day(asOf))
            let stock = SubscriptionMetric.allCases.filter(\.isStock).map { "'\($0.rawValue)'" }.joined(separator: ", ")
            var before: [(SubscriptionMetric, String, Int64)] = []
            for row in try database.query("""
                SELECT metric, \(Self.moneyCurrency) AS currency, CAST(sum(value) AS BIGINT) AS total FROM metric_days
                WHERE \(filter) AND day < $3 AND metric IN (\(stock))
                GROUP BY metric, \(Self.moneyCurrency)
                """, rowsOf + [.integer(query.from.number)]) {
                guard let metric = SubscriptionMetric(rawValue: try row.column("metric")) else { continue }
                before.append((metric, try row.column("currency"), try row.column("total")))
            }
            var rows: [(day: Int64, metric: SubscriptionMetric, currency: String, value: Int64)] = []
            for row in try database.query("""
                SELECT day, metric, \(Self.moneyCurrency) AS currency, CAST(sum(value) AS BIGINT) AS total FROM metric_days
                WHERE \(filter) AND day >= $3 AND day <= $4
                GROUP BY day, metric, \(Self.moneyCurrency)
                """, rowsOf + [.integer(query.from.number), .integer(lastDay.number)]) {
                guard let metric = SubscriptionMetric(rawValue: try row.column("metric")) else { continue }
                rows.append((try row.column("day"), metric, try row.column("currency"), try row.column("total")))
            }
            let endOfDay = calendar.lastMilliseconds(of: calendar.day(asOf))
            var running: [EntitledPeriod] = []
            for row in try database.query("""
                SELECT last_start_ms, last_end_ms, last_period FROM metric_subscriptions
                WHERE last_end_ms > $1 AND last_end_ms <= $2 AND last_start_ms <= $1
                """, [.integer(asOf), .integer(endOfDay)]) {
                guard let period = EntitledPeriod(encoded: try row.column("last_period"), start: try row.column("last_start_ms"), end: try row.column("last_end_ms")),
                      query.productID.map({ $0 == period.productID }) ?? true, query.groupID.map({ $0 == period.groupID }) ?? true
                else { continue }
                running.append(period)
            }
            return MetricsReport.assemble(query: query, asOf: asOf, before: before, rows: rows, running: running, calendar: calendar)
        }
    }

    public func cohorts(from: CalendarDay, to: CalendarDay) async throws(BackendError) -> CohortReport {
        guard from <= to else { throw .badRequest("from (\(from)) is after to (\(to))") }
        return try await read { (database) throws(BackendError) in
            let calendar = try Self.calendar(on: database)
            let asOf = try database.value(Int64?.self, "newest", Self.newestSignedDate) ?? nil
            var cells: [CohortKey: Int64] = [:]
            for row in try database.query("""
                SELECT cohort, months, CAST(sum(subscriptions) AS BIGINT) AS total FROM metric_cohorts
                WHERE cohort >= $1 AND cohort <= $2 GROUP BY cohort, months
                """, [.integer(from.firstOfMonth.number), .integer(to.number)]) {
                cells[CohortKey(cohort: try row.column("cohort"), months: try row.column("months"))] = try row.column("total")
            }
            return CohortReport.assemble(from: from, to: to, asOf: asOf, cells: cells, calendar: calendar)
        }
    }

    /// The currency where it matters (money), nothing for counts: a range's rows are then one per
    /// day and count, and one per day, amount and currency.
    static let moneyCurrency = "CASE WHEN metric IN (\(SubscriptionMetric.allCases.filter(\.isMoney).map { "'\($0.rawValue)'" }.joined(separator: ", "))) THEN currency ELSE '' END"

    /// The backend's latest signed date: when its newest notification was signed (indexed).
    static let newestSignedDate = "SELECT max(signed_ms) AS newest FROM notifications"

    static func integer(_ text: String?) -> Int64? { text.flatMap { Int64($0) } }
    static func optionalInteger(_ value: Int64?) -> DatabaseValue { value.map { .integer($0) } ?? .null }
}

extension NotificationFact {
    init(_ notification: BackendNotification) {
        self.init(notificationUUID: notification.notificationUUID, type: notification.type, subtype: notification.subtype,
                  signedMilliseconds: AppStoreJSON.milliseconds(from: notification.signedDate), transactionID: notification.transactionID,
                  graceExpiresMilliseconds: notification.gracePeriodExpiresDate.map(AppStoreJSON.milliseconds(from:)),
                  transactionExpiresMilliseconds: notification.transactionExpiresDate.map(AppStoreJSON.milliseconds(from:)),
                  transactionRevokedMilliseconds: notification.transactionRevocationDate.map(AppStoreJSON.milliseconds(from:)))
    }
}

extension SQLBackendStorage {
    /// Writes rollups computed elsewhere (a benchmark's synthetic subscribers, summed as a rebuild
    /// sums them), each subscription's last period, and a notification signed at `asOf` so the
    /// figures are taken then, in one transaction.
    package func loadRollups(days: [MetricKey: Int64], cohorts: [CohortKey: Int64], lastPeriods: [(subscription: String, period: EntitledPeriod?)],
                             asOf: Date) async throws(BackendError) {
        try await writeExclusively { (database) throws(BackendError) in
            try Self.addToRollups(days: days.filter { $0.value != 0 }, cohorts: cohorts.filter { $0.value != 0 }, on: database)
            try Self.recordLastPeriods(lastPeriods, on: database)
            try database.query("""
                INSERT INTO notifications (uuid, type, signed_ms) VALUES ($1, 'TEST', $2) ON CONFLICT (uuid) DO NOTHING
                """, [.text("loaded-rollups-\(AppStoreJSON.milliseconds(from: asOf))"), .integer(AppStoreJSON.milliseconds(from: asOf))])
        }
    }
}
