import AppStoreModels
import AppStoreSimulator
@testable import AppStoreSimulatorSQL
import Foundation
import SQLDatabase
import Testing
import TestSupport

/// Every query the engine asks of the SQLite ledger is answered by an index: its cost depends on the
/// rows it selects (an account's, a subscription's), never on the size of the ledger.
@Suite(.timeLimit(.minutes(10)))
struct QueryPlanTests {
    /// The transaction queries the engine makes, each named for where it is used.
    static let transactionQueries: [(String, TransactionQuery)] = [
        ("an account's transactions (transactions --account)", TransactionQuery(account: "alice")),
        ("a page of an account's, newest first", TransactionQuery(account: "alice", afterID: 40, newestFirst: true, limit: 20)),
        ("whether the account owns a product", TransactionQuery(account: "alice", productID: "pro", entitlementCandidatesOnly: true, newestFirst: true)),
        ("the latest transaction of a consumable", TransactionQuery(account: "alice", productID: "gems")),
        ("current entitlements", TransactionQuery(account: "alice", entitlementCandidatesOnly: true)),
        ("Transaction.unfinished", TransactionQuery(account: "alice", unfinishedOnly: true)),
        ("Transaction.all", TransactionQuery(account: "alice", historyOnly: true)),
        ("a subscription group's transactions (intro offer eligibility)", TransactionQuery(account: "alice", subscriptionGroupID: "G")),
        ("a subscription's renewals", TransactionQuery(originalID: 7)),
        ("a purchase's family copies", TransactionQuery(familySourceID: 7)),
        ("the next page of every transaction", TransactionQuery(afterID: 1_000, limit: 100)),
    ]

    static let subscriptionQueries: [(String, SubscriptionQuery)] = [
        ("an account's subscriptions in a group", SubscriptionQuery(account: "alice", groupID: "G")),
        ("an account's subscriptions", SubscriptionQuery(account: "alice")),
        ("a subscription's family copies", SubscriptionQuery(familySourceID: 7)),
    ]

    /// SQLite's plan for a statement, one line per step.
    static func plan(_ sql: String, _ values: [DatabaseValue], in path: String) throws -> [String] {
        try SQLiteDatabaseConnection(path: path, mode: .readWrite).fetchAll("EXPLAIN QUERY PLAN " + sql, values) {
            (row) throws(DatabaseError) -> String in try row["detail"]
        }
    }

    /// A ledger of the current layout, empty: the plan comes from the schema alone, as in a new store.
    static func ledger(in scratch: Scratch) throws -> String {
        let path = scratch.url.appendingPathComponent("ledger.sqlite").path
        _ = try SQLLedgerStorage(path: path, create: true)
        return path
    }

    @Test("transaction queries are answered by an index", arguments: transactionQueries.indices)
    func transactionQueryUsesAnIndex(_ index: Int) throws {
        let (use, query) = Self.transactionQueries[index]
        let scratch = Scratch()
        let (sql, values) = SQLLedgerStorage.Reader.select(query)
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        #expect(!steps.contains { $0.hasPrefix("SCAN transactions") }, "\(use): \(steps)")
        #expect(steps.contains { $0.hasPrefix("SEARCH transactions") }, "\(use): \(steps)")
    }

    @Test("subscription queries are answered by an index", arguments: subscriptionQueries.indices)
    func subscriptionQueryUsesAnIndex(_ index: Int) throws {
        let (use, query) = Self.subscriptionQueries[index]
        let scratch = Scratch()
        let (sql, values) = SQLLedgerStorage.Reader.select(query)
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        #expect(!steps.contains { $0.hasPrefix("SCAN subscriptions") }, "\(use): \(steps)")
        #expect(steps.contains { $0.hasPrefix("SEARCH subscriptions") }, "\(use): \(steps)")
    }

    /// The Transaction Manager's list: each source that holds many rows (any, a product, a purchased
    /// state, current or ended) is read in its order from an index, so a page reads its rows and no
    /// more, never every match sorted in memory. (The rare states are read by the state index.)
    static let listingSources: [TransactionListingSource] = {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        var sources: [TransactionListingSource] = []
        for order in [TransactionListingSource.Order.id, .account, .productID, .expirationDate] {
            for state in [nil, ListedState.purchased, .expired] {
                for product in [nil, "gems"] where !(product != nil && state != nil) {
                    for after in [nil, (TransactionListing.SortValue.text("m"), UInt64(40))] {
                        let cursor = after.map { after in order == .expirationDate ? (TransactionListing.SortValue.number(5), after.1) : after }
                        sources.append(TransactionListingSource(account: nil, productID: product, state: state, purchasedFrom: nil, purchasedBefore: nil,
                                                                order: order, descending: after != nil, after: cursor, limit: 51, now: now))
                    }
                }
            }
        }
        return sources
    }()

    @Test("every source of the Transaction Manager's list is read in an index's order, never sorted after reading every match",
          arguments: listingSources.indices)
    func listingSourceReadsInIndexOrder(_ index: Int) throws {
        let source = Self.listingSources[index]
        let scratch = Scratch()
        let (sql, values) = SQLLedgerStorage.Reader.select(source)
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        let described = "\(source.order) \(source.state?.rawValue ?? "any state") \(source.productID ?? "any product")"
        #expect(!steps.contains { $0.contains("TEMP B-TREE FOR ORDER BY") }, "\(described): \(steps)")
    }

    /// Every filter the Transaction Manager offers alone (none, a product — which a type filter or a
    /// product search becomes —, each state, and a product in a state, as an order by state with a
    /// type reads it) in every order, each way, from the start, after a cursor and within a range of purchase days.
    static let everyCombination: [TransactionListingSource] = {
        let now = Date(timeIntervalSince1970: 1_767_225_600)
        var sources: [TransactionListingSource] = []
        for order in [TransactionListingSource.Order.id, .account, .productID, .expirationDate] {
            for state in [nil] + ListedState.allCases.map(Optional.some) {
                for product in [nil, "gems"] {
                    for descending in [false, true] {
                        for (cursor, dated) in [(false, false), (true, false), (false, true)] {
                            let after: (value: TransactionListing.SortValue, id: UInt64)? = !cursor ? nil
                                : order == .expirationDate ? (.number(5), 40) : order == .id ? (.number(0), 40) : (.text("m"), 40)
                            sources.append(TransactionListingSource(account: nil, productID: product, state: state,
                                                                    purchasedFrom: dated ? now.addingTimeInterval(-30 * 86_400) : nil,
                                                                    purchasedBefore: dated ? now : nil, order: order, descending: descending,
                                                                    after: after, limit: 51, now: now))
                        }
                    }
                }
            }
        }
        return sources
    }()

    /// Whether a plan reads the whole table or sorts what it read: a walk of the table itself is its
    /// identifier order, allowed only where that is the order asked for (with nothing to filter by an index).
    static func problems(_ steps: [String], _ source: TransactionListingSource, keys: Bool) -> [String] {
        var problems: [String] = []
        let tableWalk = steps.contains { $0.hasPrefix("SCAN transactions") && !$0.contains("INDEX") }
        let dated = source.purchasedFrom != nil || source.purchasedBefore != nil
        if tableWalk && !(source.order == .id && source.productID == nil && source.state == nil && !keys && !dated) {
            problems.append("reads the table's rows in turn")
        }
        // The grace period's few transactions are looked up by identifier and sorted.
        if source.state != .inGracePeriod && steps.contains(where: { $0.contains("TEMP B-TREE") }) { problems.append("sorts what it read") }
        if keys && source.state != .inGracePeriod && !steps.contains(where: { $0.contains("COVERING INDEX") }) {
            problems.append("reads rows to count a page's place (no covering index)")
        }
        return problems
    }

    @Test("every filter × order of the Transaction Manager is read along an index of its own, in its order, never by walking the table or sorting")
    func everyCombinationReadsAnIndexInOrder() throws {
        let scratch = Scratch()
        let path = try Self.ledger(in: scratch)
        var failures: [String] = []
        for source in Self.everyCombination {
            let (sql, values) = SQLLedgerStorage.Reader.select(source)
            let steps = try Self.plan(sql, values, in: path)
            let described = "\(source.order) \(source.descending ? "descending" : "ascending") \(source.state?.rawValue ?? "any state") "
                + "\(source.productID ?? "any product")\(source.after == nil ? "" : " after a cursor")\(source.purchasedFrom == nil ? "" : " in a range of days")"
            let problems = Self.problems(steps, source, keys: false)
            if !problems.isEmpty { failures.append("\(described): \(problems.joined(separator: ", ")): \(steps)") }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(Self.everyCombination.count):\n\(failures.joined(separator: "\n"))")
    }

    @Test("a page asked for by number is found along a covering index of every filter × order (its place counted without reading a row)")
    func pageByNumberReadsKeysOnly() throws {
        let scratch = Scratch()
        let path = try Self.ledger(in: scratch)
        var failures: [String] = []
        for source in Self.everyCombination where source.after == nil {
            for (sql, values) in [SQLLedgerStorage.Reader.selectKeys(source, offset: 2_450), SQLLedgerStorage.Reader.selectCount(source)] {
                let steps = try Self.plan(sql, values, in: path)
                let problems = Self.problems(steps, source, keys: true)
                if !problems.isEmpty {
                    failures.append("\(source.order) \(source.state?.rawValue ?? "any state") \(source.productID ?? "any product"): \(problems): \(steps)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count):\n\(failures.joined(separator: "\n"))")
    }

    @Test("a narrow range of purchase days is read along the purchase-date index alone: its keys sorted, then only the page's rows read")
    func narrowRangeReadsThePurchaseDateIndex() throws {
        let scratch = Scratch()
        let path = try Self.ledger(in: scratch)
        var failures: [String] = []
        for source in Self.everyCombination where source.purchasedFrom != nil && source.state != .inGracePeriod {
            let statements = [("page", SQLLedgerStorage.Reader.select(source, alongPurchaseDates: true)),
                              ("keys", SQLLedgerStorage.Reader.selectKeys(source, offset: 2_450, alongPurchaseDates: true)),
                              ("count", SQLLedgerStorage.Reader.selectCount(source, alongPurchaseDates: true))]
            for (name, (sql, values)) in statements {
                let steps = try Self.plan(sql, values, in: path)
                let alongDates = steps.contains { $0.contains("COVERING INDEX transactions_by_purchase_date (purchase_ms>? AND purchase_ms<?)") }
                let rowsRead = steps.filter { $0.hasPrefix("SCAN transactions") || ($0.contains("transactions") && !$0.contains("COVERING") && !$0.contains("PRIMARY KEY")) }
                if !alongDates || !rowsRead.isEmpty {
                    failures.append("\(name) \(source.order) \(source.state?.rawValue ?? "any state") \(source.productID ?? "any product"): \(steps)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count):\n\(failures.joined(separator: "\n"))")
    }

    @Test("a rare state's rows are read through a state index", arguments: [ListedState.refunded, .pendingApproval, .upgraded])
    func rareStateUsesTheStateIndex(_ state: ListedState) throws {
        let scratch = Scratch()
        let source = TransactionListingSource(account: nil, productID: nil, state: state, purchasedFrom: nil, purchasedBefore: nil,
                                              order: .account, descending: false, after: nil, limit: 51, now: Date())
        let (sql, values) = SQLLedgerStorage.Reader.select(source)
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        #expect(steps.contains { $0.contains("transactions_by_state_account") }, "\(steps)")
    }

    @Test("the products of the ledger are found by seeking through the product index, not by reading every transaction")
    func listedProductsSkipScan() throws {
        let scratch = Scratch()
        let steps = try Self.plan("""
            WITH RECURSIVE products(id) AS (
                SELECT (SELECT min(product_id) FROM transactions)
                UNION ALL
                SELECT (SELECT min(product_id) FROM transactions WHERE product_id > products.id) FROM products WHERE products.id IS NOT NULL)
            SELECT id, (SELECT product_kind FROM transactions WHERE product_id = products.id LIMIT 1) FROM products WHERE id IS NOT NULL
            """, [], in: try Self.ledger(in: scratch))
        #expect(!steps.contains { $0.hasPrefix("SCAN transactions") && !$0.contains("INDEX") }, "\(steps)")
        #expect(steps.contains { $0.contains("transactions_by_product") }, "\(steps)")
    }

    @Test("an account's transactions of a product are read through the account's index, never every customer's rows of the product")
    func accountProductUsesTheAccountIndex() throws {
        let scratch = Scratch()
        let (sql, values) = SQLLedgerStorage.Reader.select(TransactionQuery(account: "alice", productID: "gems"))
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        #expect(steps.contains { $0.contains("transactions_by_account") }, "\(steps)")
    }

    @Test("whether an account owns a product is read from an index keyed by product and account, never every customer's rows of the product")
    func ownershipUsesTheCandidatesIndex() throws {
        let scratch = Scratch()
        let (sql, values) = SQLLedgerStorage.Reader.select(TransactionQuery(account: "alice", productID: "pro", entitlementCandidatesOnly: true))
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        // The listing's product-and-account index serves it as well: a seek to the account's rows of the product.
        #expect(steps.contains { $0.contains("transactions_entitlement_candidates_by_product") || $0.contains("transactions_by_product_account") },
                "\(steps)")
    }
}
