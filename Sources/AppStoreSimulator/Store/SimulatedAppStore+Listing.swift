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
    /// one row more. Sources that follow one another in the order (the states of an order by state,
    /// the products of an order by product) are read in turn, until the page is full.
    ///
    /// A page asked for by number (``TransactionListing/skip``) begins after the row before it, found
    /// along the sources' indexes alone: an offset into one source, counts of the sources before it
    /// in the order, or the merged keys of sources that interleave.
    public func listTransactions(_ listing: TransactionListing) throws(AppStoreError) -> TransactionListingPage {
        guard listing.after == nil || listing.cursorValue() != nil else {
            throw .control(.invalidAction, "the page cursor \(listing.after!) does not fit an order by \(listing.sort.rawValue)")
        }
        guard listing.skip == 0 || listing.after == nil else {
            throw .control(.invalidAction, "a page begins after a cursor or at a number, not both")
        }
        return try reading { () throws(AppStoreError) -> TransactionListingPage in
            let now = clock.now()
            var listing = listing
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
            let segments = Self.listingSegments(listing, products: productIDs)
            let order = TransactionListingSource.Order(rawValue: listing.sort.rawValue) ?? .id
            func source(_ part: ListingPart, after: (value: TransactionListing.SortValue, id: UInt64)?, limit: Int) -> TransactionListingSource {
                TransactionListingSource(account: listing.account, productID: part.product, state: part.state, purchasedFrom: listing.purchasedFrom,
                                         purchasedBefore: listing.purchasedBefore, order: order, descending: listing.descending, after: after,
                                         limit: limit, now: now)
            }
            if listing.skip > 0 {
                guard let before = rowAt(listing.skip - 1, of: listing, segments: segments, source: source) else {
                    return TransactionListingPage(transactions: [], states: [:], next: nil)
                }
                listing.after = before
            }
            var found: [(transaction: LedgerTransaction, state: ListedState, value: TransactionListing.SortValue)] = []
            for segment in segments {
                for part in segment {
                    let stateIndex = part.state.flatMap { ListedState.allCases.firstIndex(of: $0) }.map(Int64.init) ?? 0
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
                    for transaction in ledger.transactions(source(part, after: after, limit: limit + 1)) {
                        let listed = part.state ?? ListedState.of(transaction, subscription: ListedState.needsSubscription(transaction, now: now)
                            ? ledger.subscription(transaction.originalID) : nil, now: now)
                        found.append((transaction, listed, listing.sortValue(of: transaction, state: listed)))
                    }
                }
                // Every later segment comes after this one in the order.
                if found.count > limit { break }
            }
            found.sort { listing.precedes(($0.value, $0.transaction.id), ($1.value, $1.transaction.id)) }
            let page = found.prefix(limit)
            let next = found.count > limit ? page.last.map { listing.cursor(after: $0.transaction, state: $0.state) } : nil
            return TransactionListingPage(transactions: page.map(\.transaction),
                                          states: Dictionary(page.map { ($0.transaction.id, $0.state) }, uniquingKeysWith: { first, _ in first }),
                                          next: next)
        }
    }

    /// One source of a listing: a product (or any) in a state (or any).
    struct ListingPart {
        var state: ListedState?
        var product: String?
    }

    /// A listing's sources, in segments that follow one another in its order: one per state in an
    /// order by state, one per product in an order by product, else one segment whose sources interleave.
    static func listingSegments(_ listing: TransactionListing, products productIDs: Set<String>?) -> [[ListingPart]] {
        let products: [String?] = productIDs.map { $0.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map(Optional.some) } ?? [nil]
        let ordered = ListedState.allCases.filter { listing.states?.contains($0) ?? true }
        let states: [ListedState?] = listing.sort == .state || listing.states != nil ? ordered.map(Optional.some) : [nil]
        switch listing.sort {
        case .state:
            return (listing.descending ? states.reversed() : states).map { state in products.map { ListingPart(state: state, product: $0) } }
        case .productID where products.count > 1:
            return (listing.descending ? products.reversed() : products).map { product in states.map { ListingPart(state: $0, product: product) } }
        default:
            return [states.flatMap { state in products.map { ListingPart(state: state, product: $0) } }]
        }
    }

    /// The cursor of the row at `position` (from 0) of a listing, or `nil` past its end: found along
    /// the sources' indexes, reading keys only.
    private func rowAt(_ position: Int, of listing: TransactionListing, segments: [[ListingPart]],
                       source: (ListingPart, (value: TransactionListing.SortValue, id: UInt64)?, Int) -> TransactionListingSource)
        -> TransactionListing.Cursor? {
        var remaining = position
        for segment in segments {
            let cursorOf = { (key: TransactionListing.Key, part: ListingPart) -> TransactionListing.Cursor in
                switch (listing.sort, key.value) {
                case (.state, _):
                    TransactionListing.Cursor(value: String(part.state.flatMap { ListedState.allCases.firstIndex(of: $0) } ?? 0), id: key.id)
                case (.id, _): TransactionListing.Cursor(value: "", id: key.id)
                case (_, .number(let number)): TransactionListing.Cursor(value: String(number), id: key.id)
                case (_, .text(let text)): TransactionListing.Cursor(value: text, id: key.id)
                }
            }
            if segment.count == 1, let part = segment.first {
                // One source: an offset along its index.
                if let key = ledger.transactionKeys(source(part, nil, 1), offset: remaining).first { return cursorOf(key, part) }
                remaining -= ledger.transactionCount(source(part, nil, remaining))
                continue
            }
            var keys: [(key: TransactionListing.Key, part: ListingPart)] = []
            for part in segment {
                keys += ledger.transactionKeys(source(part, nil, remaining + 1), offset: 0).map { ($0, part) }
            }
            if keys.count > remaining {
                keys.sort { listing.precedes(($0.key.value, $0.key.id), ($1.key.value, $1.key.id)) }
                return cursorOf(keys[remaining].key, keys[remaining].part)
            }
            remaining -= keys.count
        }
        return nil
    }

    /// The products the ledger's transactions are of, with their kinds (the Transaction Manager's
    /// type and product filters choose among them).
    public func listedProducts() throws(AppStoreError) -> [String: CatalogProduct.Kind] {
        try reading { ledger.listedProducts() }
    }
}
