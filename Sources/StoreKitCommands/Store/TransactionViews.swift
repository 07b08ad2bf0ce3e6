import AppStoreModels
import AppStoreSimulator
import Foundation
import StoreKitCatalog

/// `storekit transactions`: the Transaction Manager's list, with its filters and orders.
struct TransactionsCommand: Command {
    static let declaration = CommandDeclaration("transactions", group: .purchases, abstract: "List every transaction (pending, declined and revoked included), filtered and ordered as the Transaction Manager does.", arguments: [
        .positional("DIR", "the store's folder"),
        .option("--account", "NAME", "only this account's"),
        .option("--product", "TEXT", "only products whose identifier contains TEXT (any case)"),
        .option("--type", "TYPE", "only consumable, nonConsumable, autoRenewable or nonRenewing products"),
        .option("--state", "STATE[,STATE…]", "only transactions listed in these states (\(ListedState.allCases.map(\.rawValue).joined(separator: ", ")))"),
        .option("--from", "DAY", "only purchases made on or after this day (2026-01-31, UTC)"),
        .option("--to", "DAY", "only purchases made on or before this day (UTC)"),
        .option("--sort", "KEY", "order by \(TransactionListing.SortKey.allCases.map(\.rawValue).joined(separator: ", ")) (default id)"),
        .option("--order", "ORDER", "ascending (default) or descending"),
        .option("--after", "CURSOR", "start after this transaction (a page's next cursor; an ID when ordered by id)"),
        .option("--limit", "N", "at most this many"),
        .flag("--json", "print JSON"),
    ])

    /// How many rows are read from the ledger at a time; the listing streams page by page.
    static let pageSize = 500

    var directory: String
    var listing: TransactionListing
    var limit: Int
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        listing = TransactionListing(limit: Self.pageSize)
        listing.account = try arguments.value("--account")?.ledgerName
        listing.productIDParts = try arguments.value("--product").map { [$0] } ?? []
        listing.productKind = try arguments.value("--type", expected: "consumable, nonConsumable, autoRenewable or nonRenewing") {
            CatalogProduct.Kind(rawValue: $0)
        }
        listing.states = try arguments.value("--state", expected: "states among \(ListedState.allCases.map(\.rawValue).joined(separator: ", "))") { text in
            let states = text.split(separator: ",").compactMap { ListedState(rawValue: String($0)) }
            return states.count == text.split(separator: ",").count && !states.isEmpty ? Set(states) : nil
        }
        listing.purchasedFrom = try arguments.value("--from", expected: "a day like 2026-01-31") { TransactionListing.day($0, end: false) }
        listing.purchasedBefore = try arguments.value("--to", expected: "a day like 2026-01-31") { TransactionListing.day($0, end: true) }
        listing.sort = try arguments.value("--sort", expected: TransactionListing.SortKey.allCases.map(\.rawValue).joined(separator: ", ")) {
            TransactionListing.SortKey(rawValue: $0)
        } ?? .id
        listing.descending = try arguments.value("--order", expected: "ascending or descending") {
            $0 == "ascending" ? false : $0 == "descending" ? true : nil
        } ?? false
        listing.after = try arguments.value("--after", expected: "a page cursor or a transaction ID") { TransactionListing.Cursor($0) }
        limit = try arguments.value("--limit", expected: "a positive number of transactions") { Int($0).flatMap { $0 > 0 ? $0 : nil } } ?? .max
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR")
        if let from = listing.purchasedFrom, let before = listing.purchasedBefore, before <= from {
            throw ValidationError("--to comes before --from")
        }
        if listing.after != nil, listing.cursorValue() == nil {
            throw ValidationError("--after \(listing.after!) is not a cursor of an order by \(listing.sort.rawValue)")
        }
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        var objects: [[String: Any]] = []
        var listing = self.listing
        var listed = 0
        while listed < limit {
            listing.limit = min(Self.pageSize, limit - listed)
            let page = try await store.listTransactions(listing)
            listed += page.transactions.count
            if json {
                for transaction in page.transactions {
                    var object = try await Self.object(transaction, in: store)
                    object["listedState"] = page.states[transaction.id]?.rawValue
                    objects.append(object)
                }
            } else if !page.transactions.isEmpty {
                console.print(page.transactions.map(StoreAccess.line).joined(separator: "\n"))
            }
            guard let next = page.next else { break }
            listing.after = next
        }
        if json {
            console.print(try PrettyJSON.string(from: objects))
        } else if listed == 0 {
            console.print("no transactions")
        }
    }

    private static func object(_ transaction: LedgerTransaction, in store: SimulatedAppStore) async throws -> [String: Any] {
        let signed = try await store.transaction(transaction.id)
        let state: String
        switch transaction.state {
        case .purchased: state = "purchased"
        case .pendingApproval: state = "pendingAskToBuy"
        case .interrupted: state = "interrupted"
        case .declined: state = "declined"
        }
        return ["account": transaction.account, "state": state, "finished": transaction.isFinished, "orderId": transaction.orderID,
                "origin": transaction.isImported ? "imported" : "local",
                "transaction": StoreAccess.payloadObject(signed.jws)]
    }
}

/// The StoreKit views of one account or device: `entitlements`, `unfinished`, `all`.
struct TransactionViewCommand: Command {
    enum View { case entitlements, unfinished }

    static let declaration = CommandDeclaration("entitlements", group: .purchases, abstract: "List an account's current entitlements (Transaction.currentEntitlements).", arguments: [
        .positional("DIR", "the store's folder"),
        .option("--account", "NAME", "the account"),
        .option("--device", "NAME", "the device, for its account's view"),
        .flag("--json", "print JSON"),
    ], discussion: "Name an --account or a --device.")

    var view: View = .entitlements
    var directory: String
    var account: String?
    var device: String?
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR")
        (account, device) = try arguments.accountOrDevice()
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        let signed: [SignedTransaction]
        switch view {
        case .entitlements: signed = try await store.currentEntitlements(device: device, account: account)
        case .unfinished: signed = try await store.unfinishedTransactions(device: device, account: account)
        }
        if json {
            console.print(try PrettyJSON.string(from: signed.map { StoreAccess.payloadObject($0.jws) }))
        } else {
            console.print(signed.isEmpty ? "none" : signed.map { StoreAccess.line($0.transaction) }.joined(separator: "\n"))
        }
    }
}

/// `storekit unfinished`: `Transaction.unfinished` of a device.
struct UnfinishedCommand: CommandVariant {
    static let declaration = TransactionViewCommand.declaration.variant("unfinished", abstract: "List the transactions a device's app has not finished (Transaction.unfinished).", dropping: ["--account", "--device"], adding: [.option("--device", "NAME", "the device", required: true)], discussion: nil)

    static func adapt(_ base: inout TransactionViewCommand) { base.view = .unfinished }
    var base: TransactionViewCommand
}

/// `storekit finish`: `transaction.finish()`.
struct FinishCommand: Command {
    static let declaration = CommandDeclaration("finish", group: .purchases, abstract: "Finish a transaction, as the app does after delivering it.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("TRANSACTION_ID", "the transaction"),
    ])

    var directory: String
    var id: UInt64

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        id = try StoreAccess.transactionID(try arguments.positional("TRANSACTION_ID"))
    }

    func run(console: Console) async throws {
        try await StoreAccess.open(directory).finish(id)
        console.print("finished #\(id)")
    }
}

/// `storekit updates`: takes a device's `Transaction.updates` (or status updates) entries.
struct UpdatesCommand: Command {
    static let declaration = CommandDeclaration("updates", group: .purchases, abstract: "Take what waits in a device's Transaction.updates (or, with --statuses, Status.updates).", arguments: [
        .positional("DIR", "the store's folder"),
        .option("--device", "NAME", "the device", required: true),
        .flag("--statuses", "take Product.SubscriptionInfo.Status.updates instead"),
        .flag("--json", "print JSON"),
    ])

    var directory: String
    var device: String
    var statuses: Bool
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        device = try arguments.requiredValue("--device")
        statuses = arguments.flag("--statuses")
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        let updates = try await store.takeUpdates(device: device, channel: statuses ? .statuses : .transactions)
        if json {
            console.print(try PrettyJSON.string(from: updates.map { update -> [String: Any] in
                var object: [String: Any] = ["sequence": update.sequence, "kind": update.kind.rawValue,
                                             "transaction": StoreAccess.payloadObject(update.signedTransaction)]
                if let renewal = update.signedRenewalInfo { object["renewalInfo"] = StoreAccess.payloadObject(renewal) }
                if let state = update.renewalState { object["state"] = state.rawValue }
                return object
            }))
        } else {
            console.print(updates.isEmpty ? "no updates" : updates.map { "\($0.kind.rawValue): #\($0.transactionID)\($0.renewalState.map { " \($0.rawValue)" } ?? "")" }
                .joined(separator: "\n"))
        }
    }
}

/// `storekit launch`: the app starts on a device.
struct LaunchCommand: Command {
    static let declaration = CommandDeclaration("launch", group: .purchases, abstract: "Launch the app on a device: unfinished transactions are queued in its updates again.", arguments: [
        .positional("DIR", "the store's folder"),
        .option("--device", "NAME", "the device", required: true),
        .option("--account", "NAME", "the account a new device signs in to"),
    ])

    var directory: String
    var device: String
    var account: String?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        device = try arguments.requiredValue("--device")
        account = try arguments.value("--account")
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let queued = try await StoreAccess.open(directory).launch(device: device, account: account)
        console.print("launched on \(device); \(queued) unfinished transaction\(queued == 1 ? "" : "s") queued in its updates")
    }
}
