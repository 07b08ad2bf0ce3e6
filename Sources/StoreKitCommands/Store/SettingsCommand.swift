import AppStoreModels
import AppStoreSimulator
import Foundation
import StoreKitCatalog

/// `storekit settings`: shows or changes the test-environment settings (SKTestSession's properties).
struct SettingsCommand: Command {
    static let declaration = CommandDeclaration("settings", group: .store, abstract: "Show the store's settings, change one (KEY VALUE), or reset them to the file's.", arguments: [
        .positional("DIR", "the store's folder"),
        .optionalPositional("KEY", "the setting to change, or reset"),
        .optionalPositional("VALUE", "its new value"),
    ], discussion: "keys: \(SettingAssignment.keys.joined(separator: ", ")), simulatedError.API")

    static let keys = SettingAssignment.keys

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
            "notificationURL                   \(settings.notificationURL ?? "none")",
        ]
        for api in FailableAPI.allCases {
            lines.append("simulatedError.\(api.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0))\(settings.simulatedErrors[api].map(\.description) ?? "none")")
        }
        console.print(lines.joined(separator: "\n"))
    }

    private func apply(key: String, value: String, to store: SimulatedAppStore) async throws {
        let assignment: SettingAssignment
        do { assignment = try SettingAssignment(key: key, value: value) } catch { throw ValidationError(error.message) }
        try await store.apply([assignment])
    }
}

/// `storekit notifications`: the outbox, decoded, oldest first.
struct NotificationsCommand: Command {
    static let declaration = CommandDeclaration("notifications", group: .subscriptions, abstract: "List the App Store Server Notifications in the outbox, oldest first.", arguments: [
        .positional("DIR", "the store's folder"),
        .option("--after", "SEQUENCE", "only those after this one"),
        .flag("--json", "print JSON"),
    ])

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
                return ["sequence": notification.sequence, "payload": payload, "signedPayload": notification.signedPayload,
                        "sendAttempts": notification.delivery.attempts.map { ["attemptDate": AppStoreJSON.milliseconds(from: $0.date), "sendAttemptResult": $0.result] }]
            }))
        } else {
            console.print(notifications.isEmpty ? "no notifications" : notifications.map { notification in
                "\(notification.sequence)  \(StoreAccess.iso(notification.date))  \(notification.type.rawValue)\(notification.subtype.map { "/\($0.rawValue)" } ?? "")\(notification.transactionID.map { "  #\($0)" } ?? "")\(Self.attempts(notification.delivery))"
            }.joined(separator: "\n"))
        }
    }

    /// The attempts column: nothing when delivery is off, else each attempt's result and what is next.
    static func attempts(_ delivery: NotificationDelivery) -> String {
        guard !delivery.attempts.isEmpty || delivery.nextAttemptDate != nil else { return "" }
        var parts = delivery.attempts.map(\.result)
        if let next = delivery.nextAttemptDate { parts.append("next \(StoreAccess.iso(next))") }
        if delivery.isGivenUp { parts.append("given up") }
        return "  attempts: " + parts.joined(separator: ", ")
    }
}
