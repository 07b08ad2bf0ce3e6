import AppStoreModels
import AppStoreSimulator
import Foundation
import SQLDatabase
import StoreKitCatalog

extension SQLLedgerStorage {
    /// Reads the ledger inside one transaction (on SQLite or PostgreSQL), by key and by index, through the row cache.
    final class Reader: LedgerReader {
        private let connection: any DatabaseConnection
        private let cache: RowCache
        private let path: String
        let version: Int64
        private(set) var failure: AppStoreError?

        init(connection: any DatabaseConnection, cache: RowCache, version: Int64, path: String) {
            self.connection = connection
            self.cache = cache
            self.version = version
            self.path = path
        }

        // MARK: Plumbing

        /// Runs a query, keeping the first failure instead of throwing (see ``LedgerReader``): the
        /// statement's, or the first of `row`'s (a column missing or not of its type).
        private func rows(_ sql: String, _ values: [DatabaseValue] = [], _ row: (DatabaseRow) throws(DatabaseError) -> Void) {
            guard failure == nil else { return }
            var rowFailure: DatabaseError?
            do throws(DatabaseError) {
                try connection.query(sql, values) { each in
                    guard rowFailure == nil else { return }
                    do throws(DatabaseError) { try row(each) } catch { rowFailure = error }
                }
                if let rowFailure { throw rowFailure }
            } catch {
                failure = .storage(.database(error, "reading the ledger failed in \(path)"))
            }
        }

        private func decode<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
            guard let text else { return nil }
            do {
                return try AppStoreJSON.decode(type, from: Data(text.utf8))
            } catch {
                if failure == nil { failure = .storage(.damaged("a \(type) record in \(path) cannot be read: \(error)", underlying: error)) }
                return nil
            }
        }

        private func records<T: Decodable>(_ type: T.Type, _ sql: String, _ values: [DatabaseValue]) -> [T] {
            var result: [T] = []
            rows(sql, values) { (row) throws(DatabaseError) in if let record = decode(type, try row["record"] as String) { result.append(record) } }
            return result
        }

        private static func limit(_ limit: Int) -> DatabaseValue { .integer(Int64(min(limit, Int(Int64.max)))) }

        // MARK: Meta, accounts, devices

        func meta(_ key: String) -> String? {
            if let cached = cache.meta[key] { return cached }
            var value: String?
            rows("SELECT value FROM meta WHERE key = $1", [.text(key)]) { (row) throws(DatabaseError) in value = try row["value"] }
            if failure == nil, RowCache.keeps(value) { cache.meta[key] = .some(value) }
            return value
        }

        func account(_ name: String) -> StoreAccount? {
            if let cached = cache.accounts[name] { return cached }
            let account = records(StoreAccount.self, "SELECT record FROM accounts WHERE name = $1", [.text(name)]).first
            if failure == nil { cache.accounts[name] = .some(account) }
            return account
        }

        func accounts(after name: String?, limit: Int) -> [StoreAccount] {
            records(StoreAccount.self, "SELECT record FROM accounts WHERE name > $1 ORDER BY name LIMIT $2", [.text(name ?? ""), Self.limit(limit)])
        }

        func accounts(matching text: String, after name: String?, limit: Int) -> [StoreAccount] {
            // Along the names' index: only the names are compared, only the matching rows read.
            let contains = connection.engine == .sqlite ? "instr(lower(name), lower($1)) > 0" : "strpos(lower(name), lower($1)) > 0"
            return records(StoreAccount.self, "SELECT record FROM accounts WHERE \(contains) AND name > $2 ORDER BY name LIMIT $3",
                           [.text(text), .text(name ?? ""), Self.limit(limit)])
        }

        func accounts(familyGroup: String) -> [StoreAccount] {
            records(StoreAccount.self, "SELECT record FROM accounts WHERE family_group = $1 ORDER BY name", [.text(familyGroup)])
        }

        func device(_ name: String) -> StoreDevice? {
            if let cached = cache.devices[name] { return cached }
            let device = records(StoreDevice.self, "SELECT record FROM devices WHERE name = $1", [.text(name)]).first
            if failure == nil { cache.devices[name] = .some(device) }
            return device
        }

        func devices(account: String) -> [StoreDevice] {
            if let cached = cache.devicesByAccount[account], let devices = cached { return devices }
            let devices = records(StoreDevice.self, "SELECT record FROM devices WHERE account = $1 ORDER BY name", [.text(account)])
            if failure == nil { cache.devicesByAccount[account] = .some(devices) }
            return devices
        }

        func devices(after name: String?, limit: Int) -> [StoreDevice] {
            records(StoreDevice.self, "SELECT record FROM devices WHERE name > $1 ORDER BY name LIMIT $2", [.text(name ?? ""), Self.limit(limit)])
        }

        // MARK: Transactions

        func transaction(_ id: UInt64) -> LedgerTransaction? {
            if let cached = cache.transactions[id] { return cached }
            let transaction = records(LedgerTransaction.self, "SELECT record FROM transactions WHERE id = $1", [.integer(Int64(clamping: id))]).first
            if failure == nil { cache.remember(transaction, id: id) }
            return transaction
        }

        func transactions(_ query: TransactionQuery) -> [LedgerTransaction] {
            let (sql, values) = Self.select(query, engine: connection.engine)
            return cachedRows(sql, values, in: \.transactions)
        }

        func transactions(_ source: TransactionListingSource) -> [LedgerTransaction] {
            let (sql, values) = Self.select(source, engine: connection.engine, alongPurchaseDates: readsAlongPurchaseDates(source))
            return cachedRows(sql, values, in: \.transactions)
        }

        /// The most purchases a range of days may hold to be read along the purchase-date index and
        /// sorted: about 20 ms of index entries here. A wider range is read along its order's index,
        /// where its rows are no longer rare.
        static let narrowRangeLimit = 100_000

        /// A range of purchase days in milliseconds, `from..<before`.
        private struct DayRange: Hashable {
            let from: Int64
            let before: Int64
        }

        /// Whether each range of purchase days this reader was asked for is narrow (``narrowRangeLimit``).
        private var narrowRanges: [DayRange: Bool] = [:]

        /// Whether a source is read along the purchase-date index and sorted, rather than along its
        /// order's index: on SQLite, for a narrow range of purchase days (counted once per reader along
        /// that index, up to the limit), unless an account's own rows or the grace period's few are read.
        /// A narrow range walked along another order can pass most of the store before its first row.
        func readsAlongPurchaseDates(_ source: TransactionListingSource) -> Bool {
            guard connection.engine == .sqlite, source.account == nil, source.state != .inGracePeriod,
                  source.purchasedFrom != nil || source.purchasedBefore != nil else { return false }
            let range = DayRange(from: source.purchasedFrom.map { AppStoreJSON.milliseconds(from: $0) } ?? Int64.min,
                                 before: source.purchasedBefore.map { AppStoreJSON.milliseconds(from: $0) } ?? Int64.max)
            if let narrow = narrowRanges[range] { return narrow }
            var counted = Int64(Self.narrowRangeLimit)
            rows("""
                SELECT count(*) AS counted FROM (SELECT 1 FROM transactions INDEXED BY transactions_by_purchase_date
                WHERE purchase_ms >= $1 AND purchase_ms < $2 LIMIT $3) AS dated
                """, [.integer(range.from), .integer(range.before), Self.limit(Self.narrowRangeLimit)]) { (row) throws(DatabaseError) in counted = try row["counted"] }
            let narrow = counted < Self.narrowRangeLimit
            narrowRanges[range] = narrow
            return narrow
        }

        func transactionKeys(_ source: TransactionListingSource, offset: Int) -> [TransactionListing.Key] {
            let (sql, values) = Self.selectKeys(source, offset: offset, engine: connection.engine, alongPurchaseDates: readsAlongPurchaseDates(source))
            var keys: [TransactionListing.Key] = []
            rows(sql, values) { (row) throws(DatabaseError) in
                let id = UInt64(clamping: try row["id"] as Int64)
                let value: TransactionListing.SortValue = switch source.order {
                case .id: .number(0)
                case .expirationDate: .number(try row["sort_value"])
                case .account, .productID: .text(try row["sort_value"])
                }
                keys.append(TransactionListing.Key(value: value, id: id))
            }
            return keys
        }

        func transactionCount(_ source: TransactionListingSource) -> Int {
            let (sql, values) = Self.selectCount(source, engine: connection.engine, alongPurchaseDates: readsAlongPurchaseDates(source))
            var counted = 0
            rows(sql, values) { (row) throws(DatabaseError) in counted = Int(try row["counted"] as Int64) }
            return counted
        }

        func listedProducts() -> [String: CatalogProduct.Kind] {
            var products: [String: CatalogProduct.Kind] = [:]
            // A skip scan of the product index: one seek per product, whatever the ledger's size.
            rows("""
                WITH RECURSIVE products(id) AS (
                    SELECT (SELECT min(product_id) FROM transactions)
                    UNION ALL
                    SELECT (SELECT min(product_id) FROM transactions WHERE product_id > products.id) FROM products WHERE products.id IS NOT NULL)
                SELECT id, (SELECT product_kind FROM transactions WHERE product_id = products.id LIMIT 1) AS kind FROM products WHERE id IS NOT NULL
                """) { (row) throws(DatabaseError) in
                if let kind = CatalogProduct.Kind(rawValue: try row["kind"]) { products[try row["id"]] = kind }
            }
            return products
        }

        // MARK: Subscriptions

        func subscription(_ originalTransactionID: UInt64) -> SubscriptionRecord? {
            if let cached = cache.subscriptions[originalTransactionID] { return cached }
            let record = records(SubscriptionRecord.self, "SELECT record FROM subscriptions WHERE original_id = $1",
                                 [.integer(Int64(clamping: originalTransactionID))]).first
            if failure == nil { cache.remember(record, id: originalTransactionID) }
            return record
        }

        func subscriptions(_ query: SubscriptionQuery) -> [SubscriptionRecord] {
            let (sql, values) = Self.select(query, engine: connection.engine)
            return cachedRows(sql, values, in: \.subscriptions)
        }

        /// The statement that answers a transaction query: `id, record` rows in identifier order.
        static func select(_ query: TransactionQuery, engine: DatabaseEngine = .sqlite) -> (String, [DatabaseValue]) {
            var conditions = Conditions(engine: engine)
            if let account = query.account { conditions.add("account = ?", .text(account)) }
            if let productID = query.productID {
                // With an account, the account's own rows are few: `+` keeps SQLite from reading every
                // customer's rows of the product through the product index instead.
                let throughAccount = query.account != nil && !query.entitlementCandidatesOnly && query.subscriptionGroupID == nil
                conditions.add(throughAccount ? conditions.hinted("+product_id = ?", plain: "product_id = ?") : "product_id = ?", .text(productID))
            }
            if let originalID = query.originalID { conditions.add("original_id = ?", .integer(Int64(clamping: originalID))) }
            if let familySourceID = query.familySourceID { conditions.add("family_source_id = ?", .integer(Int64(clamping: familySourceID))) }
            if let group = query.subscriptionGroupID { conditions.add("group_id = ?", .text(group)) }
            // Written exactly as the partial indexes' conditions, so SQLite uses them. A subscription
            // group's transactions are never consumables, so they are found among the candidates.
            if query.entitlementCandidatesOnly || query.subscriptionGroupID != nil { conditions.add("product_kind <> 'consumable'") }
            if query.unfinishedOnly { conditions.add("unfinished = 1") }
            if query.historyOnly { conditions.add("history = 1") }
            if let after = query.afterID { conditions.add(query.newestFirst ? "id < ?" : "id > ?", .integer(Int64(clamping: after))) }
            return conditions.select("id, record", from: "transactions", orderBy: "id \(query.newestFirst ? "DESC" : "ASC")", limit: query.limit)
        }

        /// The statement that answers a source of the Transaction Manager's list: `id, record` rows in
        /// its order, along the listing index of its filter and order (``listingIndex(_:keysOnly:)``),
        /// or `alongPurchaseDates`: its range's keys sorted, then only the page's rows read.
        static func select(_ source: TransactionListingSource, engine: DatabaseEngine = .sqlite,
                           alongPurchaseDates: Bool = false) -> (String, [DatabaseValue]) {
            let parts = listingParts(source, engine: engine, alongPurchaseDates: alongPurchaseDates)
            guard alongPurchaseDates else { return parts.conditions.select("id, record", from: parts.table, orderBy: parts.order, limit: source.limit) }
            let (keys, values) = parts.conditions.select("id", from: parts.table, orderBy: parts.order, limit: source.limit)
            return ("SELECT id, record FROM transactions WHERE id IN (\(keys)) ORDER BY \(parts.order)", values)
        }

        /// The statement that answers a source's keys from `offset` on: `id, sort_value` rows in its
        /// order, read from its index alone (no row is read), at most its limit.
        static func selectKeys(_ source: TransactionListingSource, offset: Int, engine: DatabaseEngine = .sqlite,
                               alongPurchaseDates: Bool = false) -> (String, [DatabaseValue]) {
            let parts = listingParts(source, keysOnly: true, engine: engine, alongPurchaseDates: alongPurchaseDates)
            return parts.conditions.select("id, \(parts.column) AS sort_value", from: parts.table, orderBy: parts.order, limit: source.limit,
                                           offset: offset)
        }

        /// The statement that counts a source's rows, at most its limit: `count` along its index.
        static func selectCount(_ source: TransactionListingSource, engine: DatabaseEngine = .sqlite,
                                alongPurchaseDates: Bool = false) -> (String, [DatabaseValue]) {
            let parts = listingParts(source, keysOnly: true, engine: engine, alongPurchaseDates: alongPurchaseDates)
            // A count up to a limit needs no order: any rows of the source, as many as there are, up to it.
            let (inner, values) = parts.conditions.select("1 AS one", from: parts.table, orderBy: nil, limit: source.limit)
            return ("SELECT count(*) AS counted FROM (\(inner)) AS counted_rows", values)
        }

        /// The index a source is read along on SQLite, named so that its planner (which keeps no
        /// statistics here) cannot take another order's index and walk past every row that does not
        /// match: one per filter (an account, a product, a recorded state, a product in a state) and
        /// order. `nil` where the table's own order is the source's (but for `keysOnly`, the keys of
        /// a page asked for by number, and a range of purchase days, which walk the identifiers' index
        /// rather than the rows), or the grace period's few rows are looked up by identifier.
        static func listingIndex(_ source: TransactionListingSource, keysOnly: Bool = false) -> String? {
            if source.state == .inGracePeriod { return nil }
            if source.account != nil { return "transactions_by_account" }
            let dated = source.purchasedFrom != nil || source.purchasedBefore != nil
            switch (source.productID != nil, source.state != nil, source.order) {
            case (false, false, .id): return keysOnly || dated ? "transactions_by_id" : nil
            case (false, false, .account): return "transactions_by_account"
            case (false, false, .productID): return "transactions_by_product"
            case (false, false, .expirationDate): return "transactions_by_expiration_date"
            case (true, false, .id), (true, false, .productID): return "transactions_by_product"
            case (true, _, .account): return "transactions_by_product_account"
            case (true, _, .expirationDate): return "transactions_by_product_expiration"
            case (false, true, .id): return "transactions_by_listed_state"
            case (_, true, .id), (_, true, .productID): return "transactions_by_state_product"
            case (false, true, .account): return "transactions_by_state_account"
            case (false, true, .expirationDate): return "transactions_by_state_expiration"
            }
        }

        /// A source's table (with its index on SQLite), conditions, order and sort column.
        private static func listingParts(_ source: TransactionListingSource, keysOnly: Bool = false, engine: DatabaseEngine,
                                         alongPurchaseDates: Bool = false) -> (table: String, conditions: Conditions, order: String, column: String) {
            var conditions = Conditions(engine: engine)
            if let account = source.account { conditions.add("account = ?", .text(account)) }
            if let productID = source.productID { conditions.add("product_id = ?", .text(productID)) }
            let now = DatabaseValue.integer(AppStoreJSON.milliseconds(from: source.now))
            let inGrace = "id IN (SELECT grace_latest_id FROM subscriptions WHERE grace_latest_id IS NOT NULL)"
            switch source.state {
            case nil: break
            case .purchased?: conditions.add("listed_state = 'purchased' AND expires_ms > ?", now)
            case .expired?: conditions.add("listed_state = 'purchased' AND expires_ms <= ? AND NOT \(inGrace)", now)
            case .inGracePeriod?:
                // Its few rows are looked up by identifier and sorted: on SQLite, `+` keeps the planner
                // from walking a state index past every purchased row to find them in order.
                conditions.add("\(inGrace) AND \(conditions.hinted("+listed_state", plain: "listed_state")) = 'purchased' AND "
                               + "\(conditions.hinted("+expires_ms", plain: "expires_ms")) <= ?", now)
            case let state?: conditions.add("listed_state = ?", .text(state.rawValue))
            }
            if let from = source.purchasedFrom { conditions.add("purchase_ms >= ?", .integer(AppStoreJSON.milliseconds(from: from))) }
            if let before = source.purchasedBefore { conditions.add("purchase_ms < ?", .integer(AppStoreJSON.milliseconds(from: before))) }
            let column = switch source.order {
            case .id: "id"
            case .account: "account"
            case .productID: "product_id"
            case .expirationDate: "expires_ms"
            }
            let comparison = source.descending ? "<" : ">"
            if let after = source.after {
                let id = DatabaseValue.integer(Int64(clamping: after.id))
                switch (source.order, after.value) {
                case (.id, _): conditions.add("id \(comparison) ?", id)
                case (.productID, .text(let product)) where source.productID != nil:
                    // One product's rows, in identifier order: after the cursor's row in its product,
                    // all of a product the order puts after the cursor's, none of one before it.
                    let mine = source.productID!
                    if mine == product {
                        conditions.add("id \(comparison) ?", id)
                    } else if source.descending ? mine.utf8.lexicographicallyPrecedes(product.utf8) : product.utf8.lexicographicallyPrecedes(mine.utf8) {
                        break
                    } else {
                        conditions.add("0 = 1")
                    }
                case (_, .number(let number)): conditions.add("(\(column), id) \(comparison) (?, ?)", [.integer(number), id])
                case (_, .text(let text)): conditions.add("(\(column), id) \(comparison) (?, ?)", [.text(text), id])
                }
            }
            let direction = source.descending ? "DESC" : "ASC"
            // Within one product, the product order is the identifier order.
            let order = source.order == .id || (source.order == .productID && source.productID != nil) ? "id \(direction)"
                : "\(column) \(direction), id \(direction)"
            let index = alongPurchaseDates ? "transactions_by_purchase_date" : listingIndex(source, keysOnly: keysOnly)
            let table = engine == .sqlite ? index.map { "transactions INDEXED BY \($0)" } ?? "transactions" : "transactions"
            return (table, conditions, order, column)
        }

        /// The statement that answers a subscription query: `original_id, record` rows in identifier order.
        static func select(_ query: SubscriptionQuery, engine: DatabaseEngine = .sqlite) -> (String, [DatabaseValue]) {
            var conditions = Conditions(engine: engine)
            if let account = query.account { conditions.add("account = ?", .text(account)) }
            if let group = query.groupID { conditions.add("group_id = ?", .text(group)) }
            if let source = query.familySourceID { conditions.add("family_source_id = ?", .integer(Int64(clamping: source))) }
            if let after = query.afterID { conditions.add("original_id > ?", .integer(Int64(clamping: after))) }
            return conditions.select("original_id AS id, record", from: "subscriptions", orderBy: "original_id", limit: query.limit)
        }

        /// Records from rows of `id, record`, each decoded once per ledger version: taken from the row
        /// cache when there, remembered in it when decoded.
        private func cachedRows<Row: Decodable>(_ sql: String, _ values: [DatabaseValue],
                                                in rows: ReferenceWritableKeyPath<RowCache, Generations<UInt64, Row>>) -> [Row] {
            var result: [Row] = []
            self.rows(sql, values) { (row) throws(DatabaseError) in
                let id = UInt64(clamping: try row["id"] as Int64)
                if let cached = cache[keyPath: rows][id], let cached {
                    result.append(cached)
                } else if let record = decode(Row.self, try row["record"] as String) {
                    cache[keyPath: rows][id] = .some(record)
                    result.append(record)
                }
            }
            return result
        }

        func nextEventDate(after: Date?, notAfter limit: Date) -> Date? {
            var next: Int64?
            rows("""
                SELECT next_event_ms FROM subscriptions WHERE next_event_ms IS NOT NULL AND next_event_ms > $1 AND next_event_ms <= $2
                ORDER BY next_event_ms LIMIT 1
                """, [.integer(after.map { AppStoreJSON.milliseconds(from: $0) } ?? Int64.min), .integer(AppStoreJSON.milliseconds(from: limit))]) {
                (row) throws(DatabaseError) in next = try row["next_event_ms"]
            }
            return next.map { AppStoreJSON.date(fromMilliseconds: $0) }
        }

        func subscriptions(dueAt date: Date) -> [SubscriptionRecord] {
            cachedRows("SELECT original_id AS id, record FROM subscriptions WHERE next_event_ms IS NOT NULL AND next_event_ms = $1 ORDER BY original_id",
                       [.integer(AppStoreJSON.milliseconds(from: date))], in: \.subscriptions)
        }

        // MARK: Feeds and outbox

        func waitingUpdates(device: String, channel: LedgerUpdate.Channel, limit: Int) -> [LedgerUpdate] {
            var result: [LedgerUpdate] = []
            rows("""
                SELECT sequence, device, channel, transaction_id, kind, signed_transaction, signed_renewal_info, renewal_state,
                       group_id, created_ms, detail FROM updates WHERE device = $1 AND channel = $2 AND delivered = 0 ORDER BY sequence LIMIT $3
                """, [.text(device), .text(channel.rawValue), Self.limit(limit)]) { (row) throws(DatabaseError) in
                let sequence: Int64 = try row["sequence"]
                guard let channel = LedgerUpdate.Channel(rawValue: try row["channel"]), let kind = LedgerUpdate.Kind(rawValue: try row["kind"]) else {
                    if failure == nil { failure = .storage(.damaged("feed entry \(sequence) in \(path) cannot be read")) }
                    return
                }
                var update = LedgerUpdate(sequence: sequence, device: try row["device"], transactionID: UInt64(clamping: try row["transaction_id"] as Int64),
                                          kind: kind, signedTransaction: try row["signed_transaction"],
                                          date: AppStoreJSON.date(fromMilliseconds: try row["created_ms"]))
                update.channel = channel
                update.signedRenewalInfo = try row["signed_renewal_info"]
                update.renewalState = (try row["renewal_state"] as String?).flatMap(SubscriptionRecord.State.init(rawValue:))
                update.subscriptionGroupID = try row["group_id"]
                if let detail = try row["detail"] as String? {
                    guard let decoded = try? AppStoreJSON.decode(LedgerUpdate.Detail.self, from: Data(detail.utf8)) else {
                        if failure == nil { failure = .storage(.damaged("the detail of feed entry \(sequence) in \(path) cannot be read")) }
                        return
                    }
                    update.detail = decoded
                }
                result.append(update)
            }
            return result
        }

        private static let notificationColumns = "sequence, uuid, type, subtype, transaction_id, body, created_ms, attempts, next_attempt_ms, claimed_until_ms"

        private func notificationRows(_ condition: String, _ values: [DatabaseValue]) -> [NotificationRecord] {
            var result: [NotificationRecord] = []
            rows("SELECT \(Self.notificationColumns) FROM notifications WHERE \(condition)", values) { (row) throws(DatabaseError) in
                let sequence: Int64 = try row["sequence"]
                guard let body = decode(NotificationRecord.Body.self, try row["body"] as String) else {
                    if failure == nil { failure = .storage(.damaged("notification \(sequence) in \(path) cannot be read")) }
                    return
                }
                var record = NotificationRecord(
                    sequence: sequence, notificationUUID: try row["uuid"], type: NotificationTypeV2(rawValue: try row["type"]),
                    subtype: (try row["subtype"] as String?).map(Subtype.init(rawValue:)),
                    transactionID: (try row["transaction_id"] as Int64?).map { UInt64(clamping: $0) },
                    date: AppStoreJSON.date(fromMilliseconds: try row["created_ms"]), payload: body.payload, transaction: body.transaction,
                    renewalInfo: body.renewalInfo)
                record.delivery = try delivery(row)
                result.append(record)
            }
            return result
        }

        /// A notification's delivery state, from its `attempts`, `next_attempt_ms` and `claimed_until_ms` columns.
        private func delivery(_ row: DatabaseRow) throws(DatabaseError) -> NotificationDelivery {
            let attempts = (try row["attempts"] as String?).flatMap { decode([NotificationDelivery.Attempt].self, $0) } ?? []
            return NotificationDelivery(attempts: attempts,
                                        nextAttemptDate: (try row["next_attempt_ms"] as Int64?).map(AppStoreJSON.date(fromMilliseconds:)),
                                        claimedUntil: (try row["claimed_until_ms"] as Int64?).map(AppStoreJSON.date(fromMilliseconds:)))
        }

        func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord] {
            let result = notificationRows("sequence > $1 ORDER BY sequence LIMIT $2", [.integer(sequence), Self.limit(limit)])
            if let failure { throw failure }
            return result
        }

        func notification(sequence: Int64) -> NotificationRecord? {
            notificationRows("sequence = $1", [.integer(sequence)]).first
        }

        func notificationBacklog() -> (count: Int, oldest: Date?) {
            var found: (count: Int, oldest: Date?) = (0, nil)
            // Written as the partial index's condition, so SQLite reads only the waiting ones.
            rows("SELECT count(*) AS waiting, min(created_ms) AS oldest FROM notifications WHERE next_attempt_ms IS NOT NULL", []) {
                (row) throws(DatabaseError) in
                found = (try row["waiting"], (try row["oldest"] as Int64?).map(AppStoreJSON.date(fromMilliseconds:)))
            }
            return found
        }

        func notificationDelivery(sequence: Int64) -> NotificationDelivery? {
            var found: NotificationDelivery?
            rows("SELECT attempts, next_attempt_ms, claimed_until_ms FROM notifications WHERE sequence = $1", [.integer(sequence)]) {
                (row) throws(DatabaseError) in found = try delivery(row)
            }
            return found
        }

        func testNotification(uuid: String) -> NotificationRecord? {
            // Written as the partial index's condition, so SQLite uses it.
            notificationRows("type = 'TEST' AND uuid = $1 ORDER BY sequence LIMIT 1", [.text(uuid)]).first
        }

        func notificationsDue(notAfter date: Date, unclaimedAt realTime: Date, limit: Int) -> [NotificationRecord] {
            // The due index finds them; claimed ones (at most the pages senders hold) are passed over.
            notificationRows("""
                next_attempt_ms IS NOT NULL AND next_attempt_ms <= $1 AND (claimed_until_ms IS NULL OR claimed_until_ms <= $3)
                ORDER BY next_attempt_ms, sequence LIMIT $2
                """, [.integer(AppStoreJSON.milliseconds(from: date)), Self.limit(limit), .integer(AppStoreJSON.milliseconds(from: realTime))])
        }

        func notifications(aboutTransactions ids: [UInt64]) -> [NotificationRecord] {
            var found: [NotificationRecord] = []
            // A few hundred identifiers per statement, each looked up in the notifications' transaction index.
            for chunk in stride(from: 0, to: ids.count, by: 500).map({ Array(ids[$0..<min($0 + 500, ids.count)]) }) {
                let marks = chunk.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
                found += notificationRows("transaction_id IN (\(marks))", chunk.map { .integer(Int64(clamping: $0)) })
            }
            return found.sorted { $0.sequence < $1.sequence }
        }

        func notifications(from start: Date, to end: Date, after sequence: Int64, limit: Int) -> [NotificationRecord] {
            notificationRows("created_ms >= $1 AND created_ms <= $2 AND sequence > $3 ORDER BY sequence LIMIT $4",
                             [.integer(AppStoreJSON.milliseconds(from: start)), .integer(AppStoreJSON.milliseconds(from: end)),
                              .integer(sequence), Self.limit(limit)])
        }
    }
}

extension SQLLedgerStorage.Reader {
    /// A query's conditions and their bound values, numbered in the order they are added.
    struct Conditions {
        /// The engine the statement is for: SQLite's planner, which keeps no statistics here, is told
        /// how rows spread (`likely`, `likelihood`, `+column`); PostgreSQL's keeps its own.
        let engine: DatabaseEngine
        private var terms: [String] = []

        init(engine: DatabaseEngine) { self.engine = engine }

        /// `sqlite` on SQLite, `plain` (the same condition without the planner's hints) elsewhere.
        func hinted(_ sqlite: String, plain: String) -> String { engine == .sqlite ? sqlite : plain }
        private var values: [DatabaseValue] = []

        mutating func add(_ condition: String, _ value: DatabaseValue) {
            values.append(value)
            terms.append(condition.replacingOccurrences(of: "?", with: "$\(values.count)"))
        }

        mutating func add(_ condition: String) { terms.append(condition) }

        /// A condition with several values, each `?` taking the next.
        mutating func add(_ condition: String, _ values: [DatabaseValue]) {
            var text = ""
            var remaining = values[...]
            for character in condition {
                if character == "?", let value = remaining.popFirst() {
                    self.values.append(value)
                    text += "$\(self.values.count)"
                } else {
                    text.append(character)
                }
            }
            terms.append(text)
        }

        /// `SELECT columns FROM table WHERE … ORDER BY … LIMIT … [OFFSET …]` with its values.
        func select(_ columns: String, from table: String, orderBy: String?, limit: Int, offset: Int = 0) -> (String, [DatabaseValue]) {
            var values = self.values + [.integer(Int64(min(limit, Int(Int64.max))))]
            let filter = terms.isEmpty ? "" : " WHERE " + terms.joined(separator: " AND ")
            var sql = "SELECT \(columns) FROM \(table)\(filter)\(orderBy.map { " ORDER BY \($0)" } ?? "") LIMIT $\(values.count)"
            if offset > 0 {
                values.append(.integer(Int64(offset)))
                sql += " OFFSET $\(values.count)"
            }
            return (sql, values)
        }
    }
}
