import AppStoreModels
import Foundation
import StoreKitCatalog

/// The state the Transaction Manager lists a transaction under, and its `state` filter takes.
///
/// Most of it is the transaction's own record: refunded or revoked, upgraded, waiting for approval,
/// interrupted, declined or purchased. A purchased subscription period that has ended is `expired`,
/// unless it is its subscription's current period in a billing grace period, which keeps access
/// (`inGracePeriod`).
public enum ListedState: String, CaseIterable, Hashable, Sendable, Codable {
    case purchased, pendingApproval, interrupted, declined, refunded, revoked, upgraded, inGracePeriod, expired

    /// The state a transaction's record decides alone, as the ledger stores and indexes it:
    /// every purchased transaction is `purchased` there, ended or not.
    public static func recorded(_ transaction: LedgerTransaction) -> ListedState {
        if let revocation = transaction.revocation { return revocation.type == .familyRevoke ? .revoked : .refunded }
        if transaction.isUpgraded { return .upgraded }
        switch transaction.state {
        case .purchased: return .purchased
        case .pendingApproval: return .pendingApproval
        case .interrupted: return .interrupted
        case .declined: return .declined
        }
    }

    /// A transaction's listed state at `now`; `subscription` is its subscription's record, when it has one.
    public static func of(_ transaction: LedgerTransaction, subscription: SubscriptionRecord?, now: Date) -> ListedState {
        let recorded = recorded(transaction)
        guard recorded == .purchased, let expiration = transaction.expirationDate, expiration <= now else { return recorded }
        if let subscription, subscription.latestTransactionID == transaction.id, subscription.state == .inGracePeriod { return .inGracePeriod }
        return .expired
    }

    /// Whether a transaction's listed state depends on its subscription's record: a purchased
    /// period that has ended (expired, or in grace).
    public static func needsSubscription(_ transaction: LedgerTransaction, now: Date) -> Bool {
        recorded(transaction) == .purchased && (transaction.expirationDate.map { $0 <= now } ?? false)
    }
}

/// One page of the Transaction Manager's list, as the ledger answers it over the whole store: filters,
/// a sort and where the page begins. Every filter and sort is answered through the ledger's indexes,
/// so a page is full or truly the last, whatever the store's size.
public struct TransactionListing: Hashable, Sendable {
    /// What the list is ordered by; ties are broken by transaction identifier, in the same direction.
    public enum SortKey: String, CaseIterable, Hashable, Sendable {
        /// The order the ledger recorded them in (the order of their purchases, imports aside).
        case id
        case account
        case productID
        /// Transactions that never expire come after every date.
        case expirationDate
        /// In the order of ``ListedState/allCases``.
        case state
    }

    /// Where a page begins: after the transaction with this sort value and identifier.
    public struct Cursor: Hashable, Sendable, LosslessStringConvertible {
        /// The sort value, as text: a name, milliseconds, or a state's place in ``ListedState/allCases``.
        public var value: String
        public var id: UInt64

        public init(value: String, id: UInt64) {
            self.value = value
            self.id = id
        }

        /// `ID` or `ID:VALUE` (the identifier has no colon, the value may).
        public init?(_ description: String) {
            let parts = description.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard let id = UInt64(parts[0]) else { return nil }
            self.init(value: parts.count > 1 ? String(parts[1]) : "", id: id)
        }

        public var description: String { value.isEmpty ? String(id) : "\(id):\(value)" }
    }

    public var account: String?
    /// Only these products (`nil`: any).
    public var productIDs: Set<String>?
    /// Only products whose identifiers contain each of these, ignoring case.
    public var productIDParts: [String] = []
    /// Only products of this type.
    public var productKind: CatalogProduct.Kind?
    /// Only transactions in these states at the listing's time (`nil`: any).
    public var states: Set<ListedState>?
    /// Only purchases made at or after this date.
    public var purchasedFrom: Date?
    /// Only purchases made before this date.
    public var purchasedBefore: Date?
    public var sort: SortKey
    public var descending: Bool
    public var after: Cursor?
    /// Rows passed over before the page, when it is asked for by number rather than after a cursor:
    /// `(number − 1) × limit`. The store finds the row before the page along the indexes alone (no
    /// row is read), then reads the page after it as it reads any page.
    public var skip: Int = 0
    public var limit: Int

    public init(account: String? = nil, productIDs: Set<String>? = nil, states: Set<ListedState>? = nil, purchasedFrom: Date? = nil,
                purchasedBefore: Date? = nil, sort: SortKey = .id, descending: Bool = false, after: Cursor? = nil, limit: Int = 100) {
        self.account = account
        self.productIDs = productIDs
        self.states = states
        self.purchasedFrom = purchasedFrom
        self.purchasedBefore = purchasedBefore
        self.sort = sort
        self.descending = descending
        self.after = after
        self.limit = limit
    }

    /// A day given to a date filter: `2026-01-31` (UTC; with `end`, the start of the next day, so that
    /// the day is included) or milliseconds since 1970; `nil` when the text is neither.
    public static func day(_ text: String, end: Bool) -> Date? {
        if let milliseconds = Int64(text) { return AppStoreJSON.date(fromMilliseconds: milliseconds) }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard text.count == 10, parts.count == 3, let year = parts[0], let month = parts[1], let day = parts[2] else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let asked = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: asked), calendar.dateComponents([.year, .month, .day], from: date) == asked else { return nil }
        return end ? calendar.date(byAdding: .day, value: 1, to: date) : date
    }

    /// The milliseconds the ledger sorts a transaction without an expiration date by: after every date.
    public static let neverExpires = Int64.max

    /// A transaction's sort value under ``sort``, compared as ``SortValue``.
    public func sortValue(of transaction: LedgerTransaction, state: ListedState) -> SortValue {
        switch sort {
        case .id: .number(0)
        case .account: .text(transaction.account)
        case .productID: .text(transaction.productID)
        case .expirationDate: .number(transaction.expirationDate.map(AppStoreJSON.milliseconds(from:)) ?? Self.neverExpires)
        case .state: .number(Int64(ListedState.allCases.firstIndex(of: state) ?? 0))
        }
    }

    /// The cursor after a transaction, for the next page.
    public func cursor(after transaction: LedgerTransaction, state: ListedState) -> Cursor {
        switch sortValue(of: transaction, state: state) {
        case .number(let number): Cursor(value: sort == .id ? "" : String(number), id: transaction.id)
        case .text(let text): Cursor(value: text, id: transaction.id)
        }
    }

    /// The cursor's sort value, read as ``sort`` needs it; `nil` when it cannot be.
    public func cursorValue() -> SortValue? {
        guard let after else { return nil }
        switch sort {
        case .id: return .number(0)
        case .account, .productID: return .text(after.value)
        case .expirationDate, .state: return Int64(after.value).map(SortValue.number)
        }
    }

    /// Where a row stands in a source's order: its sort value and identifier.
    public struct Key: Hashable, Sendable {
        public var value: SortValue
        public var id: UInt64

        public init(value: SortValue, id: UInt64) {
            self.value = value
            self.id = id
        }
    }

    /// A sort value: text compares by its UTF-8 bytes (as SQLite's default collation does), numbers as numbers.
    public enum SortValue: Hashable, Sendable, Comparable {
        case number(Int64)
        case text(String)

        public static func < (lhs: SortValue, rhs: SortValue) -> Bool {
            switch (lhs, rhs) {
            case let (.number(a), .number(b)): a < b
            case let (.text(a), .text(b)): a.utf8.lexicographicallyPrecedes(b.utf8)
            case (.number, .text): true
            case (.text, .number): false
            }
        }
    }

    /// Whether a transaction passes the filters (sort, cursor and limit aside).
    public func matches(_ transaction: LedgerTransaction, state: ListedState) -> Bool {
        if let account, transaction.account != account { return false }
        if let productIDs, !productIDs.contains(transaction.productID) { return false }
        if let productKind, transaction.productKind != productKind { return false }
        if !productIDParts.allSatisfy({ transaction.productID.lowercased().contains($0.lowercased()) }) { return false }
        if let states, !states.contains(state) { return false }
        if let purchasedFrom, transaction.purchaseDate < purchasedFrom { return false }
        if let purchasedBefore, transaction.purchaseDate >= purchasedBefore { return false }
        return true
    }

    /// Whether a transaction comes after the cursor in this listing's order.
    public func isAfterCursor(_ transaction: LedgerTransaction, state: ListedState) -> Bool {
        guard let after else { return true }
        guard let cursorValue = cursorValue() else { return false }
        let value = sortValue(of: transaction, state: state)
        if value == cursorValue { return descending ? transaction.id < after.id : transaction.id > after.id }
        return descending ? value < cursorValue : cursorValue < value
    }

    /// Whether `a` comes before `b` in this listing's order.
    public func precedes(_ a: (value: SortValue, id: UInt64), _ b: (value: SortValue, id: UInt64)) -> Bool {
        if a.value == b.value { return descending ? a.id > b.id : a.id < b.id }
        return descending ? b.value < a.value : a.value < b.value
    }
}

/// A page of ``TransactionListing``: the transactions with their listed states, and where the next
/// page begins (`nil` on the last).
public struct TransactionListingPage: Sendable {
    public var transactions: [LedgerTransaction]
    public var states: [UInt64: ListedState]
    public var next: TransactionListing.Cursor?
}

/// What a ledger reader answers for ``TransactionListing``: one product (or any) in one state (or
/// any), in an order an index keeps. The store merges such sources into a listing's page: one per
/// product when several match, one per state when the list is ordered by state.
public struct TransactionListingSource: Sendable {
    /// The orders a source is read in; ties broken by identifier.
    public enum Order: String, Hashable, Sendable {
        case id, account, productID, expirationDate
    }

    public var account: String?
    public var productID: String?
    public var state: ListedState?
    public var purchasedFrom: Date?
    public var purchasedBefore: Date?
    public var order: Order
    public var descending: Bool
    /// Only transactions after this sort value and identifier, in the source's order.
    public var after: (value: TransactionListing.SortValue, id: UInt64)?
    public var limit: Int
    /// The listing's time: when a purchased period has ended.
    public var now: Date

    public init(account: String?, productID: String?, state: ListedState?, purchasedFrom: Date?, purchasedBefore: Date?, order: Order,
                descending: Bool, after: (value: TransactionListing.SortValue, id: UInt64)?, limit: Int, now: Date) {
        self.account = account
        self.productID = productID
        self.state = state
        self.purchasedFrom = purchasedFrom
        self.purchasedBefore = purchasedBefore
        self.order = order
        self.descending = descending
        self.after = after
        self.limit = limit
        self.now = now
    }
}
