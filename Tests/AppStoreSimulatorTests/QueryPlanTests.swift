import AppStoreModels
import AppStoreSimulator
@testable import AppStoreSimulatorSQLite
import Foundation
import SQLiteDatabase
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
    static func plan(_ sql: String, _ values: [SQLiteConnection.Value], in path: String) throws -> [String] {
        var steps: [String] = []
        try SQLiteConnection(path: path, mode: .readWrite).query("EXPLAIN QUERY PLAN " + sql, values) { row in steps.append(row.text(3) ?? "") }
        return steps
    }

    /// A ledger of the current layout, empty: the plan comes from the schema alone, as in a new store.
    static func ledger(in scratch: Scratch) throws -> String {
        let path = scratch.url.appendingPathComponent("ledger.sqlite").path
        _ = try SQLiteLedgerStorage(path: path, create: true)
        return path
    }

    @Test("transaction queries are answered by an index", arguments: transactionQueries.indices)
    func transactionQueryUsesAnIndex(_ index: Int) throws {
        let (use, query) = Self.transactionQueries[index]
        let scratch = Scratch()
        let (sql, values) = SQLiteLedgerStorage.Reader.select(query)
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        #expect(!steps.contains { $0.hasPrefix("SCAN transactions") }, "\(use): \(steps)")
        #expect(steps.contains { $0.hasPrefix("SEARCH transactions") }, "\(use): \(steps)")
    }

    @Test("subscription queries are answered by an index", arguments: subscriptionQueries.indices)
    func subscriptionQueryUsesAnIndex(_ index: Int) throws {
        let (use, query) = Self.subscriptionQueries[index]
        let scratch = Scratch()
        let (sql, values) = SQLiteLedgerStorage.Reader.select(query)
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        #expect(!steps.contains { $0.hasPrefix("SCAN subscriptions") }, "\(use): \(steps)")
        #expect(steps.contains { $0.hasPrefix("SEARCH subscriptions") }, "\(use): \(steps)")
    }

    @Test("whether an account owns a product is read from the non-consumables' index, which consumables never enter")
    func ownershipUsesTheCandidatesIndex() throws {
        let scratch = Scratch()
        let (sql, values) = SQLiteLedgerStorage.Reader.select(TransactionQuery(account: "alice", productID: "pro", entitlementCandidatesOnly: true))
        let steps = try Self.plan(sql, values, in: try Self.ledger(in: scratch))
        #expect(steps.contains { $0.contains("transactions_entitlement_candidates_by_product") }, "\(steps)")
    }
}
