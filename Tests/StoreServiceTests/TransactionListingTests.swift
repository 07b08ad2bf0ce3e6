import AppStoreModels
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import StoreService
import Testing
import TestSupport

/// A store of about ten thousand transactions, as a Transaction Manager user meets one: a long
/// consumable history, 1,800 subscribers two months into weekly and monthly plans (a quarter of the
/// monthly ones with renewal off, so their periods ended), refunds, Ask to Buy requests and declines.
enum ListingStore {
    static let monthlySubscribers = 1_200
    static let weeklySubscribers = 600

    static func build(_ store: SimulatedAppStore) async throws {
        try await store.importHistory(productID: ExampleShop.gems, account: "bulk", count: 1_500)
        try await store.importSubscribers(productID: ExampleShop.premiumMonthly, accountPrefix: "m", count: monthlySubscribers)
        try await store.importSubscribers(productID: ExampleShop.basicWeekly, accountPrefix: "w", count: weeklySubscribers)
        for index in stride(from: 0, to: monthlySubscribers, by: 4) {
            let first = try #require(try await store.ledgerTransactions(account: "m\(index)").first)
            try await store.setAutoRenew(originalTransactionID: first.originalID, enabled: false)
        }
        for history in try await store.ledgerTransactions(account: "bulk", limit: 20) { try await store.refundTransaction(history.id) }
        try await store.addDevice("ipad", account: "kid")
        try await store.configureAccount("kid", askToBuy: true)
        for product in [ExampleShop.pro, ExampleShop.wizard, ExampleShop.premiumYearly] {
            _ = try await store.purchase(PurchaseRequest(productID: product, account: "kid", device: "ipad"))
        }
        _ = try await store.advanceTime(by: 60 * 86_400)
        for index in stride(from: 1, to: weeklySubscribers, by: 50) {
            let latest = try #require(try await store.ledgerTransactions(account: "w\(index)", newestFirst: true).first)
            try await store.refundTransaction(latest.id)
        }
    }

    /// What a listing must give, computed from every transaction of the store by rule, with no index:
    /// the oracle the store's answers are compared with.
    static func expected(_ listing: TransactionListing, in store: SimulatedAppStore) async throws -> [UInt64] {
        let now = try await store.currentTime()
        var listed: [(transaction: LedgerTransaction, state: ListedState)] = []
        for transaction in try await store.ledgerTransactions() {
            let subscription = ListedState.needsSubscription(transaction, now: now)
                ? try await store.subscriptionRecord(originalTransactionID: transaction.originalID) : nil
            listed.append((transaction, ListedState.of(transaction, subscription: subscription, now: now)))
        }
        return listed.filter { listing.matches($0.transaction, state: $0.state) }
            .sorted { listing.precedes((listing.sortValue(of: $0.transaction, state: $0.state), $0.transaction.id),
                                       (listing.sortValue(of: $1.transaction, state: $1.state), $1.transaction.id)) }
            .map(\.transaction.id)
    }
}

// The limit catches a hang, not slowness: these are the suite's heaviest tests, they start with it and
// share two cores with everything else, so they end last (a clean-clone run whose machine was busier
// took 645 s in all and stopped them at 600 s).
@Suite(.timeLimit(.minutes(15)))
struct TransactionListingTests {
    /// Each filter, search and sort, as the admin API's query and as `storekit transactions`' arguments.
    static let cases: [(query: String, arguments: [String])] = [
        ("", []),
        ("state=expired", ["--state", "expired"]),
        ("state=purchased&sort=account", ["--state", "purchased", "--sort", "account"]),
        ("type=autoRenewable&order=descending", ["--type", "autoRenewable", "--order", "descending"]),
        ("search=premium&sort=expirationDate", ["--product", "premium", "--sort", "expirationDate"]),
        ("state=refunded", ["--state", "refunded"]),
        ("sort=state&order=descending", ["--sort", "state", "--order", "descending"]),
        ("account=kid&sort=productID", ["--account", "kid", "--sort", "productID"]),
        ("state=pendingApproval,expired&sort=productID", ["--state", "pendingApproval,expired", "--sort", "productID"]),
        ("from=2026-01-20&to=2026-02-10&type=autoRenewable", ["--from", "2026-01-20", "--to", "2026-02-10", "--type", "autoRenewable"]),
    ]

    @Test("at ten thousand transactions every filter, search and sort gives full pages over the whole store, the rows the CLI lists and the rule computes, page after page",
          .enabled(if: Built.available, "the storekit executable is not built"))
    func wholeStoreListing() async throws {
        let scratch = Scratch()
        let (directory, store) = try await TestStores.directory(in: scratch)
        try await ListingStore.build(store)
        let total = try await store.ledgerTransactions().count
        #expect(total >= 10_000, "the store holds \(total) transactions")
        try await StoreServer.serving(store) { server in
            for (query, arguments) in Self.cases {
                // The API, a page of 500 at a time: every page but the last is full.
                var pages: [[UInt64]] = []
                var after: String?
                repeat {
                    let address = "\(server.url.absoluteString)/v1/admin/transactions?limit=500&\(query)"
                        + (after.map { "&after=\($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)" } ?? "")
                    let answer = try await Exchange.send("GET", URL(string: address)!)
                    #expect(answer.status == 200, "\(query): \(String(decoding: answer.body, as: UTF8.self))")
                    let rows = try #require(answer.json?["transactions"] as? [[String: Any]], "\(query)")
                    pages.append(rows.compactMap { ($0["id"] as? Int).map(UInt64.init) })
                    after = answer.json?["next"] as? String
                    if after != nil { #expect(rows.count == 500, "\(query): page \(pages.count) is full when another follows") }
                } while after != nil && pages.count < 100
                let listed = pages.flatMap { $0 }
                let expected = try await ListingStore.expected(try Self.listing(query), in: store)
                #expect(!expected.isEmpty, "\(query) selects something in this store")
                #expect(listed == expected, "\(query): the API's \(listed.count) rows are the rule's \(expected.count)")
                // The CLI lists the same rows, in the same order.
                let run = try await ChildProcess.run(Built.storekit, ["transactions", directory.path] + arguments)
                #expect(run.status == 0, "\(arguments): \(run.standardError)")
                let printed = run.standardOutput.split(separator: "\n").compactMap { line in
                    line.hasPrefix("#") ? line.dropFirst().split(separator: " ").first.flatMap { UInt64($0) } : nil
                }
                #expect(printed == expected, "storekit transactions \(arguments.joined(separator: " ")) lists \(printed.count) rows")
                // A page by number holds the rows at its place in the order, without the pages before it.
                for number in [1, 3, (expected.count + 499) / 500, (expected.count + 499) / 500 + 1] {
                    let answer = try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/transactions?limit=500&\(query)&page=\(number)")!)
                    let rows = try #require(answer.json?["transactions"] as? [[String: Any]], "\(query) page \(number)")
                    let start = min((number - 1) * 500, expected.count)
                    #expect(rows.compactMap { ($0["id"] as? Int).map(UInt64.init) } == Array(expected[start..<min(start + 500, expected.count)]),
                            "\(query): page \(number) by number")
                }
            }
            // An account's name searched for lists that account's transactions; a name unknown is searched for in products.
            let named = try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/transactions?limit=500&search=w599")!)
            let own = try await ListingStore.expected(TransactionListing(account: "w599", limit: 500), in: store)
            #expect(!own.isEmpty)
            #expect((named.json?["transactions"] as? [[String: Any]])?.compactMap { ($0["id"] as? Int).map(UInt64.init) } == own)
            let accounts = try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/accounts?search=W59&limit=5&devices=true")!)
            #expect((accounts.json?["accounts"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["w59", "w590", "w591", "w592", "w593"],
                    "accounts found by part of their names, ignoring case: \(String(decoding: accounts.body, as: UTF8.self).prefix(300))")
            #expect(accounts.json?["next"] as? String == "w593")
            #expect(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/transactions?page=0")!).status == 400)
            #expect(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/transactions?page=2&after=12")!).status == 400)
            // A cursor that does not fit the order is refused, as is an unknown sort.
            #expect(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/transactions?sort=account&after=12:x")!).status == 200)
            #expect(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/transactions?sort=expirationDate&after=12:x")!).status == 400)
            #expect(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/transactions?sort=price")!).status == 400)
            #expect(try await Exchange.send("GET", URL(string: "\(server.url.absoluteString)/v1/admin/transactions?from=2026-02-30")!).status == 400)
        }
    }

    /// The listing a test query asks for, read as the admin API reads it.
    static func listing(_ query: String) throws -> TransactionListing {
        var listing = TransactionListing(limit: 500)
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            let value = parts.count > 1 ? parts[1] : ""
            switch parts[0] {
            case "state": listing.states = Set(value.split(separator: ",").compactMap { ListedState(rawValue: String($0)) })
            case "sort": listing.sort = try #require(TransactionListing.SortKey(rawValue: value))
            case "order": listing.descending = value == "descending"
            case "type": listing.productKind = CatalogProduct.Kind(rawValue: value)
            case "search", "product": listing.productIDParts.append(value)
            case "account": listing.account = value
            case "from": listing.purchasedFrom = TransactionListing.day(value, end: false)
            case "to": listing.purchasedBefore = TransactionListing.day(value, end: true)
            default: throw TestFailure("unknown test query \(parts[0])")
            }
        }
        return listing
    }
}
