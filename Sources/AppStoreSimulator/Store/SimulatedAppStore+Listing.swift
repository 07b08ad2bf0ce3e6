import Foundation
import StoreKitCatalog

extension SimulatedAppStore {
    /// A page of the Transaction Manager's list over the whole store, at the store's time: every
    /// filter and sort is answered by the ledger's indexes, so the page is full unless it is the last,
    /// whatever the store's size. The same listing gives the same rows to every caller (the admin API,
    /// `storekit transactions`).
    ///
    /// Several products, several states, or an order by state are read as one source each (a
    /// product in a state, in an indexed order) and merged: each source reads at most one page and
    /// one row more.
    public func listTransactions(_ listing: TransactionListing) throws(AppStoreError) -> TransactionListingPage {
        guard listing.after == nil || listing.cursorValue() != nil else {
            throw .control(.invalidAction, "the page cursor \(listing.after!) does not fit an order by \(listing.sort.rawValue)")
        }
        return try reading { () throws(AppStoreError) -> TransactionListingPage in
            let now = clock.now()
            let limit = max(1, listing.limit)
            var productIDs = listing.productIDs
            if !listing.productIDParts.isEmpty || listing.productKind != nil {
                // Product filters become the set of the ledger's products they match: each is read through the product index.
                let parts = listing.productIDParts.map { $0.lowercased() }
                let matching = Set(ledger.listedProducts().filter { id, kind in
                    (listing.productKind.map { kind == $0 } ?? true) && parts.allSatisfy { id.lowercased().contains($0) }
                }.keys)
                productIDs = productIDs.map { $0.intersection(matching) } ?? matching
            }
            let products: [String?] = productIDs.map { $0.sorted().map(Optional.some) } ?? [nil]
            let ordered = ListedState.allCases.filter { listing.states?.contains($0) ?? true }
            let states: [ListedState?] = listing.sort == .state || listing.states != nil ? ordered.map(Optional.some) : [nil]
            let order = TransactionListingSource.Order(rawValue: listing.sort.rawValue) ?? .id
            var found: [(transaction: LedgerTransaction, state: ListedState, value: TransactionListing.SortValue)] = []
            for state in states {
                let stateIndex = state.flatMap { ListedState.allCases.firstIndex(of: $0) }.map(Int64.init) ?? 0
                var after: (value: TransactionListing.SortValue, id: UInt64)?
                if let cursor = listing.after, let value = listing.cursorValue() {
                    if listing.sort == .state, case .number(let cursorIndex) = value {
                        // A state's rows come wholly before or after the cursor's state, or continue after its row.
                        if stateIndex == cursorIndex {
                            after = (.number(0), cursor.id)
                        } else if listing.descending ? stateIndex > cursorIndex : stateIndex < cursorIndex {
                            continue
                        }
                    } else {
                        after = (value, cursor.id)
                    }
                }
                for product in products {
                    let source = TransactionListingSource(
                        account: listing.account, productID: product, state: state, purchasedFrom: listing.purchasedFrom,
                        purchasedBefore: listing.purchasedBefore, order: order, descending: listing.descending, after: after,
                        limit: limit + 1, now: now)
                    for transaction in ledger.transactions(source) {
                        let listed = state ?? ListedState.of(transaction, subscription: ListedState.needsSubscription(transaction, now: now)
                            ? ledger.subscription(transaction.originalID) : nil, now: now)
                        found.append((transaction, listed, listing.sortValue(of: transaction, state: listed)))
                    }
                }
            }
            found.sort { listing.precedes(($0.value, $0.transaction.id), ($1.value, $1.transaction.id)) }
            let page = found.prefix(limit)
            let next = found.count > limit ? page.last.map { listing.cursor(after: $0.transaction, state: $0.state) } : nil
            return TransactionListingPage(transactions: page.map(\.transaction),
                                          states: Dictionary(page.map { ($0.transaction.id, $0.state) }, uniquingKeysWith: { first, _ in first }),
                                          next: next)
        }
    }

    /// The products the ledger's transactions are of, with their kinds (the Transaction Manager's
    /// type and product filters choose among them).
    public func listedProducts() throws(AppStoreError) -> [String: CatalogProduct.Kind] {
        try reading { ledger.listedProducts() }
    }
}
