import AppStoreModels
import AppStoreSimulator
import Foundation

/// `storekit status`: `Product.SubscriptionInfo.status(for:)` of an account in a group.
struct StatusCommand: Command {
    static let name = "status"
    static let abstract = "Show an account's subscription statuses in a group: state, transaction, renewal info."
    static let usage = "DIR GROUP_ID (--account NAME | --device NAME) [--json]"

    var directory: String
    var group: String
    var account: String?
    var device: String?
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        (account, device) = try arguments.accountOrDevice()
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR")
        group = try arguments.positional("GROUP_ID")
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
    static let name = "renewal"
    static let abstract = "Turn a subscription's automatic renewal on or off (DID_CHANGE_RENEWAL_STATUS)."
    static let usage = "DIR ORIGINAL_TRANSACTION_ID --auto-renew on|off"

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
    static let name = "expire"
    static let abstract = "Expire an account's subscription to a product now (EXPIRED VOLUNTARY)."
    static let usage = "DIR PRODUCT_ID [--account NAME]"

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
    static let name = "force-renew"
    static let abstract = "End the current period of an account's subscription now and renew it."
    static let usage = "DIR PRODUCT_ID [--account NAME]"
    static func adapt(_ base: inout ExpireCommand) { base.forceRenewal = true }
    var base: ExpireCommand
}

/// `storekit price-increase`: request, agree to or decline a price increase.
struct PriceIncreaseCommand: Command {
    static let name = "price-increase"
    static let abstract = "Ask for consent to a price increase, or have the customer agree or decline."
    static let usage = "DIR TRANSACTION_ID request|agree|decline"

    var directory: String
    var id: UInt64
    var action: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        id = try StoreAccess.transactionID(try arguments.positional("TRANSACTION_ID"))
        action = try arguments.positional("request|agree|decline")
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
    static let name = "extend"
    static let abstract = "Extend a subscription's renewal date by whole days (RENEWAL_EXTENDED; at most 90)."
    static let usage = "DIR ORIGINAL_TRANSACTION_ID --days N"

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
    static let name = "test-notification"
    static let abstract = "Put a TEST notification in the outbox, as the App Store Server API's request does."
    static let usage = "DIR"

    var directory: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let uuid = try await StoreAccess.open(directory).requestTestNotification()
        console.print("TEST notification \(uuid)")
    }
}
