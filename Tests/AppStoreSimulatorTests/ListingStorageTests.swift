@testable import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// The Transaction Manager's listing on every kind of storage (in memory, SQLite, PostgreSQL): each
/// filter in each order, walked page after page along the cursors, holds the rows the rule computes,
/// and each page asked for by number holds the same rows as the page walked to; accounts are found by
/// part of their names. The statements differ by engine (SQLite is told its indexes), the rows may not.
@Suite(.timeLimit(.minutes(10)))
struct ListingStorageTests {
    static let pageSize = 7

    /// A store with consumables, non-consumables, subscribers (some cancelled, some refunded) and an upgrade.
    static func build(_ store: SimulatedAppStore) async throws {
        try await store.importHistory(productID: Shop.gems, account: "bulk", count: 40)
        try await store.importSubscriberHistories(productID: Shop.premiumMonthly, accountPrefix: "Sub", count: 12, periods: 3)
        for account in ["alice", "bob", "carol"] {
            _ = try await store.purchase(PurchaseRequest(productID: Shop.pro, account: account, device: "\(account)-phone"))
            _ = try await store.purchase(PurchaseRequest(productID: Shop.basicWeekly, account: account, device: "\(account)-phone"))
        }
        _ = try await store.purchase(PurchaseRequest(productID: Shop.premiumYearly, account: "bob", device: "bob-phone"))
        try await store.refundTransaction(try #require(try await store.ledgerTransactions(account: "bulk", limit: 1).first).id)
        _ = try await store.advanceTime(by: 10 * 86_400)
    }

    /// The rule: every transaction, filtered and ordered by the listing's own definitions.
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

    /// Every listing, also within a range of purchase days: the middle of the store's history, which
    /// splits the imported histories (read along the purchase-date index on SQLite, as a narrow range).
    static func listings(in store: SimulatedAppStore) async throws -> [TransactionListing] {
        let dates = try await store.ledgerTransactions().map(\.purchaseDate).sorted()
        let from = dates[dates.count / 3], before = dates[dates.count * 2 / 3]
        return listings + listings.map { listing in
            var dated = listing
            dated.purchasedFrom = from
            dated.purchasedBefore = before
            return dated
        }
    }

    static var listings: [TransactionListing] {
        var listings: [TransactionListing] = []
        for sort in TransactionListing.SortKey.allCases {
            for descending in [false, true] {
                var filters: [TransactionListing] = [TransactionListing()]
                for kind in [CatalogKind.consumable, .autoRenewable, .nonConsumable] {
                    var listing = TransactionListing()
                    listing.productKind = kind
                    filters.append(listing)
                }
                filters += [TransactionListing(states: [.expired]), TransactionListing(states: [.purchased]), TransactionListing(states: [.refunded]),
                            TransactionListing(states: [.purchased, .refunded])]
                for var listing in filters {
                    listing.sort = sort
                    listing.descending = descending
                    listing.limit = pageSize
                    listings.append(listing)
                }
            }
        }
        return listings
    }

    @Test("every filter in every order, by cursor and by page number, holds the rule's rows on every storage", arguments: LedgerStorageTests.Backend.allCases)
    func pagesByCursorAndNumber(backend: LedgerStorageTests.Backend) async throws {
        try await LedgerStorageTests.withStorage(backend) { open in
            let store = try await SimulatedAppStore.create(configuration: TestStore.shopConfiguration, identity: StoreIdentity(bundleId: "com.example.shop"),
                                                           authority: TestStore.authority, storage: try await open(true),
                                                           clock: ManualStoreClock(startingAt: TestStore.start), identifiers: .sequential())
            try await Self.build(store)
            for listing in try await Self.listings(in: store) {
                let described = "\(backend) \(listing.sort.rawValue) \(listing.descending ? "descending" : "ascending") "
                    + "\(listing.productKind?.rawValue ?? "") \(listing.states.map { $0.map(\.rawValue).sorted().joined(separator: ",") } ?? "")"
                    + (listing.purchasedFrom == nil ? "" : " in a range of purchase days")
                let expected = try await Self.expected(listing, in: store)
                var walked: [[UInt64]] = []
                var cursor: TransactionListing.Cursor?
                repeat {
                    var page = listing
                    page.after = cursor
                    let answer = try await store.listTransactions(page)
                    walked.append(answer.transactions.map(\.id))
                    cursor = answer.next
                } while cursor != nil && walked.count < 100
                #expect(walked.flatMap { $0 } == expected, "\(described): walked")
                for number in 1...(walked.count + 1) {
                    var page = listing
                    page.skip = (number - 1) * Self.pageSize
                    let answer = try await store.listTransactions(page)
                    #expect(answer.transactions.map(\.id) == (number <= walked.count ? walked[number - 1] : []), "\(described): page \(number) by number")
                    #expect((answer.next != nil) == (number < walked.count), "\(described): page \(number) says whether another follows")
                }
            }
            #expect(try await store.allAccounts(matching: "sub1", limit: 5).map(\.name) == ["Sub1", "Sub10", "Sub11"])
            #expect(try await store.allAccounts(matching: "o", after: "alice", limit: 1).map(\.name) == ["bob"])
        }
    }
}

private typealias CatalogKind = CatalogProduct.Kind
