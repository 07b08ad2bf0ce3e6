import AppStoreModels
import AppStoreSimulator
import Foundation

/// `storekit status`: `Product.SubscriptionInfo.status(for:)` of an account in a group.
struct StatusCommand: Command {
    static let declaration = CommandDeclaration("status", group: .subscriptions, abstract: "Show an account's subscription statuses in a group: state, transaction, renewal info.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("GROUP_ID", "the subscription group"),
        .option("--account", "NAME", "the account"),
        .option("--device", "NAME", "the device, for its account's view"),
        .flag("--json", "print JSON"),
    ], discussion: "Name an --account or a --device.")

    var directory: String
    var group: String
    var account: String?
    var device: String?
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR")
        group = try arguments.positional("GROUP_ID")
        (account, device) = try arguments.accountOrDevice()
    }

    func run(console: Console) async throws {
        let statuses = try await StoreAccess.open(directory).subscriptionStatuses(groupID: group, device: device, account: account)
        if json {
            console.print(try PrettyJSON.string(from: statuses.map { status -> [String: Any] in
                ["state": status.state.rawValue, "transaction": StoreAccess.payloadObject(status.transaction.jws),
                 "renewalInfo": StoreAccess.payloadObject(status.signedRenewalInfo)]
            }))
            return
        }
        guard !statuses.isEmpty else {
            console.print("no subscription in group \(group)")
            return
        }
        for status in statuses {
            let info = status.renewalInfo
            var line = "\(status.state.rawValue): \(StoreAccess.line(status.transaction.transaction))"
            line += "\n  renews: \(info.autoRenewStatus == .on ? "yes, to \(info.autoRenewProductId ?? "?")" : "no")"
            if let date = info.renewalDate { line += " on \(StoreAccess.iso(date))" }
            if let grace = info.gracePeriodExpiresDate { line += "\n  grace period until \(StoreAccess.iso(grace))" }
            if let intent = info.expirationIntent { line += "\n  expiration intent \(intent.rawValue)" }
            if let offers = info.eligibleWinBackOfferIds { line += "\n  win-back offers: \(offers.joined(separator: ", "))" }
            console.print(line)
        }
    }
}

/// `storekit renewal`: turns automatic renewal on or off.
struct RenewalCommand: Command {
    static let declaration = CommandDeclaration("renewal", group: .subscriptions, abstract: "Turn a subscription's automatic renewal on or off (DID_CHANGE_RENEWAL_STATUS).", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("ORIGINAL_TRANSACTION_ID", "the subscription"),
        .option("--auto-renew", "on|off", "renew at the end of the period or not", required: true),
    ])

    var directory: String
    var id: UInt64
    var enabled: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        guard let enabled = try arguments.value("--auto-renew", expected: "on or off", { $0 == "on" ? true : $0 == "off" ? false : nil }) else {
            throw ValidationError("missing --auto-renew on|off")
        }
        self.enabled = enabled
        directory = try arguments.positional("DIR")
        id = try StoreAccess.transactionID(try arguments.positional("ORIGINAL_TRANSACTION_ID"))
    }

    func run(console: Console) async throws {
        try await StoreAccess.open(directory).setAutoRenew(originalTransactionID: id, enabled: enabled)
        console.print("automatic renewal of #\(id) \(enabled ? "on" : "off")")
    }
}

/// `storekit expire` and `storekit force-renew`: the session's subscription controls by product.
struct ExpireCommand: Command {
    static let declaration = CommandDeclaration("expire", group: .subscriptions, abstract: "Expire an account's subscription to a product now (EXPIRED VOLUNTARY).", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("PRODUCT_ID", "the subscription's product"),
        .option("--account", "NAME", "the subscriber (default: default)"),
    ])

    var forceRenewal = false
    var directory: String
    var productID: String
    var account: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        account = try arguments.value("--account") ?? "default"
        directory = try arguments.positional("DIR")
        productID = try arguments.positional("PRODUCT_ID")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        if forceRenewal {
            try await store.forceRenewalOfSubscription(productID: productID, account: account)
            console.print("renewed \(productID) for \(account) now")
        } else {
            try await store.expireSubscription(productID: productID, account: account)
            console.print("expired \(productID) for \(account)")
        }
    }
}

struct ForceRenewCommand: CommandVariant {
    static let declaration = ExpireCommand.declaration.variant("force-renew", abstract: "End the current period of an account's subscription now and renew it.")
    static func adapt(_ base: inout ExpireCommand) { base.forceRenewal = true }
    var base: ExpireCommand
}

/// `storekit price-increase`: request, agree to or decline a price increase.
struct PriceIncreaseCommand: Command {
    static let declaration = CommandDeclaration("price-increase", group: .subscriptions, abstract: "Ask for consent to a price increase, or have the customer agree or decline.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("TRANSACTION_ID", "a transaction of the subscription"),
        .positional("ACTION", "request, agree or decline"),
    ])

    var directory: String
    var id: UInt64
    var action: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        id = try StoreAccess.transactionID(try arguments.positional("TRANSACTION_ID"))
        action = try arguments.positional("ACTION", missing: "request, agree or decline")
        guard ["request", "agree", "decline"].contains(action) else { throw ValidationError("the action is request, agree or decline, not \(action)") }
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        switch action {
        case "request": try await store.requestPriceIncreaseConsent(transactionID: id)
        case "agree": try await store.consentToPriceIncrease(transactionID: id)
        default: try await store.declinePriceIncrease(transactionID: id)
        }
        console.print("price increase of #\(id): \(action == "request" ? "consent requested" : action == "agree" ? "agreed" : "declined")")
    }
}

/// `storekit extend`: extends a renewal date as the App Store Server API does.
struct ExtendCommand: Command {
    static let declaration = CommandDeclaration("extend", group: .subscriptions, abstract: "Extend a subscription's renewal date by whole days (RENEWAL_EXTENDED; at most 90).", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("ORIGINAL_TRANSACTION_ID", "the subscription"),
        .option("--days", "N", "how many days, 1 to 90", required: true),
    ])

    var directory: String
    var id: UInt64
    var days: Int

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        guard let days = try arguments.value("--days", expected: "a whole number of days", { Int($0) }) else { throw ValidationError("missing --days") }
        self.days = days
        directory = try arguments.positional("DIR")
        id = try StoreAccess.transactionID(try arguments.positional("ORIGINAL_TRANSACTION_ID"))
    }

    func run(console: Console) async throws {
        try await StoreAccess.open(directory).extendRenewalDate(originalTransactionID: id, days: days)
        console.print("extended #\(id) by \(days) day\(days == 1 ? "" : "s")")
    }
}

/// `storekit test-notification`: a TEST notification in the outbox.
struct TestNotificationCommand: Command {
    static let declaration = CommandDeclaration("test-notification", group: .subscriptions, abstract: "Put a TEST notification in the outbox, as the App Store Server API's request does.", arguments: [
        .positional("DIR", "the store's folder"),
    ])

    var directory: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let uuid = try await StoreAccess.open(directory).requestTestNotification()
        console.print("TEST notification \(uuid)")
    }
}
