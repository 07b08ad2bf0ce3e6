import AppStoreModels
import AppStoreSimulator
import Foundation

/// A command that acts on one transaction of a store: refund, approve, decline, delete, resolve.
struct TransactionControl: Command {
    enum Action { case refund, approve, decline, delete, resolve, requestRefund, reverseRefund }

    static let declaration = CommandDeclaration("refund", group: .purchases, abstract: "Refund a transaction now (REFUND; family copies are revoked).", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("TRANSACTION_ID", "the transaction"),
        .option("--reason", "developerIssue|other", "why (default other)"),
    ])

    var action: Action = .refund
    var directory: String
    var id: UInt64
    var reason: RevocationReason
    /// For `request-refund`: the App Store declines the request (`REFUND_DECLINED`).
    var declinesRequest: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        declinesRequest = arguments.flag("--decline")
        reason = try arguments.value("--reason", expected: "developerIssue or other") { text -> RevocationReason? in
            text == "developerIssue" ? .refundedDueToIssue : text == "other" ? .refundedForOtherReason : nil
        } ?? .refundedForOtherReason
        directory = try arguments.positional("DIR")
        id = try StoreAccess.transactionID(try arguments.positional("TRANSACTION_ID"))
    }

    func run(console: Console) async throws {
        guard !declinesRequest || action == .requestRefund else { throw CommandFailure("--decline applies to request-refund only") }
        let store = try await StoreAccess.open(directory)
        switch action {
        case .refund: try await store.refundTransaction(id, reason: reason)
        case .requestRefund:
            try await store.requestRefund(id, reason: reason == .refundedDueToIssue ? .fulfillmentIssue : .unintendedPurchase, declined: declinesRequest)
        case .reverseRefund: try await store.reverseRefund(id)
        case .approve: try await store.approveAskToBuyTransaction(id)
        case .decline: try await store.declineAskToBuyTransaction(id)
        case .delete: try await store.deleteTransaction(id)
        case .resolve: try await store.resolveIssueForTransaction(id)
        }
        let verb: String
        switch action {
        case .refund: verb = "refunded"
        case .requestRefund: verb = declinesRequest ? "declined the refund request of" : "refunded"
        case .reverseRefund: verb = "reversed the refund of"
        case .approve: verb = "approved"
        case .decline: verb = "declined"
        case .delete: verb = "deleted"
        case .resolve: verb = "resolved the issue of"
        }
        console.print("\(verb) #\(id)")
    }
}

struct ReverseRefundCommand: CommandVariant {
    static let declaration = TransactionControl.declaration.variant("reverse-refund", abstract: "Reverse a refund after a dispute (REFUND_REVERSED): the purchase, or the subscription period still running, is entitled again.", dropping: ["--reason"])
    static func adapt(_ base: inout TransactionControl) { base.action = .reverseRefund }
    var base: TransactionControl
}

struct ApproveCommand: CommandVariant {
    static let declaration = TransactionControl.declaration.variant("approve", abstract: "Approve a pending Ask to Buy purchase; it arrives through the account's updates.", dropping: ["--reason"])
    static func adapt(_ base: inout TransactionControl) { base.action = .approve }
    var base: TransactionControl
}

struct DeclineCommand: CommandVariant {
    static let declaration = TransactionControl.declaration.variant("decline", abstract: "Decline a pending Ask to Buy purchase; no transaction ever appears.", dropping: ["--reason"])
    static func adapt(_ base: inout TransactionControl) { base.action = .decline }
    var base: TransactionControl
}

struct DeleteCommand: CommandVariant {
    static let declaration = TransactionControl.declaration.variant("delete", abstract: "Delete a transaction with its renewals and family copies, as if it never happened.", dropping: ["--reason"])
    static func adapt(_ base: inout TransactionControl) { base.action = .delete }
    var base: TransactionControl
}

struct ResolveCommand: CommandVariant {
    static let declaration = TransactionControl.declaration.variant("resolve", abstract: "Resolve an interrupted purchase or a subscription's billing issue.", dropping: ["--reason"])
    static func adapt(_ base: inout TransactionControl) { base.action = .resolve }
    var base: TransactionControl
}

struct RequestRefundCommand: CommandVariant {
    static let declaration = TransactionControl.declaration.variant("request-refund", abstract: "Ask for a refund in the app (beginRefundRequest): CONSUMPTION_REQUEST where it applies, then REFUND (or REFUND_DECLINED).", adding: [.flag("--decline", "the App Store declines the request (REFUND_DECLINED)")])
    static func adapt(_ base: inout TransactionControl) { base.action = .requestRefund }
    var base: TransactionControl
}

/// `storekit account`: creates or changes an account.
struct AccountCommand: Command {
    static let declaration = CommandDeclaration("account", group: .purchases, abstract: "Create or change an account: storefront, Ask to Buy, family group, in-app purchase restriction, app account token, devices.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("NAME", "the account"),
        .option("--storefront", "CODE|default", "where it buys (ISO 3166-1 alpha-3), or the store's default"),
        .option("--ask-to-buy", "on|off", "whether a parent approves its purchases"),
        .option("--family", "GROUP|none", "its family group, sharing family-shareable purchases"),
        .option("--purchases", "allowed|restricted", "whether it may buy in apps (Screen Time)"),
        .option("--app-account-token", "UUID|none", "the token its storefront purchases carry"),
        .repeating("--device", "NAME", "a device signed in to it"),
    ])

    var directory: String
    var account: String
    var storefront: String??
    var askToBuy: Bool?
    var family: String??
    var purchasesAllowed: Bool?
    /// The token the storefront's purchases carry for this customer (`.some(nil)` removes it).
    var appAccountToken: UUID??
    var devices: [String]

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        storefront = try arguments.value("--storefront").map { $0 == "default" ? String?.none : .some($0) }
        askToBuy = try arguments.value("--ask-to-buy", expected: "on or off") { $0 == "on" ? true : $0 == "off" ? false : nil }
        family = try arguments.value("--family").map { $0 == "none" ? String?.none : .some($0) }
        purchasesAllowed = try arguments.value("--purchases", expected: "allowed or restricted") {
            $0 == "allowed" ? true : $0 == "restricted" ? false : nil
        }
        appAccountToken = try arguments.value("--app-account-token", expected: "a UUID or none") { text -> UUID?? in
            text == "none" ? .some(nil) : UUID(uuidString: text).map { .some($0) }
        }
        devices = try arguments.values("--device")
        directory = try arguments.positional("DIR")
        account = try arguments.positional("NAME")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        try await store.configureAccount(account, storefront: storefront, askToBuy: askToBuy, appAccountToken: appAccountToken)
        if let family { try await store.setFamilyGroup(family, for: account) }
        if let purchasesAllowed { try await store.setPurchasesAllowed(purchasesAllowed, account: account) }
        for device in devices { try await store.addDevice(device, account: account) }
        guard let record = try await store.account(named: account) else { return }
        let deviceNames = try await store.devices(ofAccount: account).map(\.name)
        console.print("account \(record.name): storefront \(record.storefront ?? "(store's)"), Ask to Buy \(record.askToBuy ? "on" : "off"), purchases \(record.purchasesAllowed ? "allowed" : "restricted"), family \(record.familyGroup ?? "none"), app account token \(record.appAccountToken?.uuidString.lowercased() ?? "none"), devices \(deviceNames.isEmpty ? "none" : deviceNames.joined(separator: ", "))")
    }
}
