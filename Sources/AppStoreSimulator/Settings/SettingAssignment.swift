import Foundation
import StoreKitCatalog

/// One setting change written as text, as the command line and the admin API take it
/// (`askToBuyEnabled true`, `timeRate 1005`, `simulatedError.purchase generic.networkError`).
public struct SettingAssignment: Sendable, Hashable {
    /// The keys that take a value (besides `simulatedError.API`).
    public static let keys = ["storefront", "locale", "timeRate", "askToBuyEnabled", "interruptedPurchasesEnabled", "shouldEnterBillingRetryOnRenewal",
                              "billingGracePeriodIsEnabled", "failTransactionsEnabled", "disableDialogs", "includesConsumablesInHistory",
                              "notificationURL"]

    private enum Change: Hashable {
        case storefront(String), locale(String), timeRate(TimeRate), flag(Flag, Bool), notificationURL(String)
        case simulatedError(FailableAPI, SimulatedFailure?)
    }

    private enum Flag: String, Hashable {
        case askToBuyEnabled, interruptedPurchasesEnabled, shouldEnterBillingRetryOnRenewal, billingGracePeriodIsEnabled
        case failTransactionsEnabled, disableDialogs, includesConsumablesInHistory
    }

    public let key: String
    private let change: Change

    /// Parses a key and its value, refusing unknown keys and values with a message naming both.
    public init(key: String, value: String) throws(AppStoreError) {
        self.key = key
        func flag() throws(AppStoreError) -> Bool {
            switch value {
            case "true", "on", "yes", "1": return true
            case "false", "off", "no", "0": return false
            default: throw .control(.invalidAction, "\(key) takes true or false, not \"\(value)\"")
            }
        }
        if key.hasPrefix("simulatedError.") {
            guard let api = FailableAPI(rawValue: String(key.dropFirst("simulatedError.".count))) else {
                throw .control(.invalidAction, "unknown API in \(key); expected one of \(FailableAPI.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if value == "none" {
                change = .simulatedError(api, nil)
                return
            }
            guard let failure = SimulatedFailure(text: value) else {
                throw .control(.invalidAction, "\(value) is not a failure such as generic.networkError, purchase.productUnavailable or none")
            }
            guard failure.applies(to: api) else { throw .control(.invalidAction, "\(api.rawValue) cannot fail with \(failure)") }
            change = .simulatedError(api, failure)
            return
        }
        switch key {
        case "storefront":
            guard Storefront(code: value) != nil else { throw .control(.invalidAction, "unknown storefront \(value)") }
            change = .storefront(value.uppercased())
        case "locale": change = .locale(value)
        case "notificationURL":
            if value == "none" {
                change = .notificationURL("")
            } else {
                guard let url = URL(string: value), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                    throw .control(.invalidURL, "notificationURL takes an http(s) URL or none, not \"\(value)\"")
                }
                change = .notificationURL(value)
            }
        case "timeRate":
            guard let rate = Int(value).flatMap(TimeRate.init(rawValue:)) else {
                throw .control(.invalidAction, "timeRate is one of \(TimeRate.allCases.map { String($0.rawValue) }.joined(separator: ", "))")
            }
            change = .timeRate(rate)
        case "askToBuyEnabled": change = .flag(.askToBuyEnabled, try flag())
        case "interruptedPurchasesEnabled": change = .flag(.interruptedPurchasesEnabled, try flag())
        case "shouldEnterBillingRetryOnRenewal": change = .flag(.shouldEnterBillingRetryOnRenewal, try flag())
        case "billingGracePeriodIsEnabled": change = .flag(.billingGracePeriodIsEnabled, try flag())
        case "failTransactionsEnabled": change = .flag(.failTransactionsEnabled, try flag())
        case "disableDialogs": change = .flag(.disableDialogs, try flag())
        case "includesConsumablesInHistory": change = .flag(.includesConsumablesInHistory, try flag())
        default:
            throw .control(.invalidAction, "unknown setting \(key); expected one of \(Self.keys.joined(separator: ", ")) or simulatedError.API")
        }
    }

    /// Applies the change to a set of runtime settings.
    public func apply(to overrides: inout SettingsOverrides) {
        switch change {
        case .storefront(let code): overrides.storefront = code
        case .locale(let locale): overrides.locale = locale
        case .notificationURL(let url): overrides.notificationURL = url
        case .timeRate(let rate): overrides.timeRate = rate
        case .flag(let flag, let value):
            switch flag {
            case .askToBuyEnabled: overrides.askToBuyEnabled = value
            case .interruptedPurchasesEnabled: overrides.interruptedPurchasesEnabled = value
            case .shouldEnterBillingRetryOnRenewal: overrides.shouldEnterBillingRetryOnRenewal = value
            case .billingGracePeriodIsEnabled: overrides.billingGracePeriodIsEnabled = value
            case .failTransactionsEnabled: overrides.failTransactionsEnabled = value
            case .disableDialogs: overrides.disableDialogs = value
            case .includesConsumablesInHistory: overrides.includesConsumablesInHistory = value
            }
        case .simulatedError(let api, let failure):
            var errors = overrides.simulatedErrors ?? [:]
            errors[api] = .some(failure)
            overrides.simulatedErrors = errors
        }
    }
}

extension SimulatedAppStore {
    /// Applies setting changes given as text, all in one unit of work.
    public func apply(_ assignments: [SettingAssignment]) throws(AppStoreError) {
        try updateSettings { overrides in for assignment in assignments { assignment.apply(to: &overrides) } }
    }
}
