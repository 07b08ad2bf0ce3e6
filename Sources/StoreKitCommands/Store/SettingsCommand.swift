import AppStoreModels
import AppStoreSimulator
import Foundation
import StoreKitCatalog

/// `storekit settings`: shows or changes the test-environment settings (SKTestSession's properties).
struct SettingsCommand: Command {
    static let name = "settings"
    static let abstract = "Show the store's settings, change one (KEY VALUE), or reset them to the file's."
    static let usage = "DIR [KEY VALUE | reset]   (keys: \(SettingsCommand.keys.joined(separator: ", ")), simulatedError.API)"

    static let keys = ["storefront", "locale", "timeRate", "askToBuyEnabled", "interruptedPurchasesEnabled", "shouldEnterBillingRetryOnRenewal",
                       "billingGracePeriodIsEnabled", "failTransactionsEnabled", "disableDialogs", "includesConsumablesInHistory"]

    var directory: String
    var key: String?
    var value: String?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        key = arguments.nextWord()
        value = arguments.nextWord()
        if let key, key != "reset", value == nil { throw ValidationError("\(key) needs a VALUE") }
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        if key == "reset" {
            try await store.resetToDefaultState()
        } else if let key, let value {
            try await apply(key: key, value: value, to: store)
        }
        let settings = try await store.currentSettings()
        var lines = [
            "storefront                        \(settings.storefront)",
            "locale                            \(settings.locale)",
            "timeRate                          \(settings.timeRate.rawValue) (\(settings.timeRate))",
            "askToBuyEnabled                   \(settings.askToBuyEnabled)",
            "interruptedPurchasesEnabled       \(settings.interruptedPurchasesEnabled)",
            "shouldEnterBillingRetryOnRenewal  \(settings.shouldEnterBillingRetryOnRenewal)",
            "billingGracePeriodIsEnabled       \(settings.billingGracePeriodIsEnabled)",
            "failTransactionsEnabled           \(settings.failTransactionsEnabled)",
            "disableDialogs                    \(settings.disableDialogs)",
            "includesConsumablesInHistory      \(settings.includesConsumablesInHistory)",
        ]
        for api in FailableAPI.allCases {
            lines.append("simulatedError.\(api.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0))\(settings.simulatedErrors[api].map(\.description) ?? "none")")
        }
        console.print(lines.joined(separator: "\n"))
    }

    private func apply(key: String, value: String, to store: SimulatedAppStore) async throws {
        func flag() throws(ValidationError) -> Bool {
            switch value {
            case "true", "on", "yes", "1": return true
            case "false", "off", "no", "0": return false
            default: throw ValidationError("\(key) takes true or false, not \"\(value)\"")
            }
        }
        if key.hasPrefix("simulatedError.") {
            guard let api = FailableAPI(rawValue: String(key.dropFirst("simulatedError.".count))) else {
                throw ValidationError("unknown API in \(key); expected one of \(FailableAPI.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            guard value == "none" || SimulatedFailure(text: value) != nil else {
                throw ValidationError("\(value) is not a failure such as generic.networkError, purchase.productUnavailable or none")
            }
            try await store.setSimulatedError(value == "none" ? nil : SimulatedFailure(text: value), forAPI: api)
            return
        }
        switch key {
        case "storefront":
            guard Storefront(code: value) != nil else { throw ValidationError("unknown storefront \(value)") }
            try await store.updateSettings { $0.storefront = value.uppercased() }
        case "locale": try await store.updateSettings { $0.locale = value }
        case "timeRate":
            guard let rate = Int(value).flatMap(TimeRate.init(rawValue:)) else {
                throw ValidationError("timeRate is one of \(TimeRate.allCases.map { String($0.rawValue) }.joined(separator: ", "))")
            }
            try await store.updateSettings { $0.timeRate = rate }
        case "askToBuyEnabled": let on = try flag(); try await store.updateSettings { $0.askToBuyEnabled = on }
        case "interruptedPurchasesEnabled": let on = try flag(); try await store.updateSettings { $0.interruptedPurchasesEnabled = on }
        case "shouldEnterBillingRetryOnRenewal": let on = try flag(); try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = on }
        case "billingGracePeriodIsEnabled": let on = try flag(); try await store.updateSettings { $0.billingGracePeriodIsEnabled = on }
        case "failTransactionsEnabled": let on = try flag(); try await store.updateSettings { $0.failTransactionsEnabled = on }
        case "disableDialogs": let on = try flag(); try await store.updateSettings { $0.disableDialogs = on }
        case "includesConsumablesInHistory": let on = try flag(); try await store.updateSettings { $0.includesConsumablesInHistory = on }
        default: throw ValidationError("unknown setting \(key); expected one of \(Self.keys.joined(separator: ", ")) or simulatedError.API")
        }
    }
}

/// `storekit notifications`: the outbox, decoded, oldest first.
struct NotificationsCommand: Command {
    static let name = "notifications"
    static let abstract = "List the App Store Server Notifications in the outbox, oldest first."
    static let usage = "DIR [--after SEQUENCE] [--json]"

    var directory: String
    var after: Int64
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        after = try arguments.value("--after", expected: "a sequence number") { Int64($0) } ?? 0
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let notifications = try await StoreAccess.open(directory).notifications(after: after)
        if json {
            console.print(try PrettyJSON.string(from: notifications.map { notification -> [String: Any] in
                var payload = StoreAccess.payloadObject(notification.signedPayload) as? [String: Any] ?? [:]
                if var data = payload["data"] as? [String: Any] {
                    if let transaction = data["signedTransactionInfo"] as? String { data["transactionInfo"] = StoreAccess.payloadObject(transaction) }
                    if let renewal = data["signedRenewalInfo"] as? String { data["renewalInfo"] = StoreAccess.payloadObject(renewal) }
                    payload["data"] = data
                }
                return ["sequence": notification.sequence, "payload": payload, "signedPayload": notification.signedPayload]
            }))
        } else {
            console.print(notifications.isEmpty ? "no notifications" : notifications.map { notification in
                "\(notification.sequence)  \(StoreAccess.iso(notification.date))  \(notification.type.rawValue)\(notification.subtype.map { "/\($0.rawValue)" } ?? "")\(notification.transactionID.map { "  #\($0)" } ?? "")"
            }.joined(separator: "\n"))
        }
    }
}
