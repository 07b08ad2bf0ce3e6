import Foundation
import AppStoreModels
import StoreKitCatalog

/// The test-environment settings of a store: the `.storekit` file's defaults, overridden at runtime.
///
/// Names follow `SKTestSession`. ``StoreSettings/init(configuration:)`` reads the defaults;
/// overrides are kept separately by the store so `resetToDefaultState()` can drop them.
public struct StoreSettings: Hashable, Sendable, Codable {
    /// The storefront, ISO 3166-1 alpha-3 (`_storefront`, default USA).
    public var storefront: String = "USA"
    /// The locale names and prices are presented in (`_locale`, default en_US).
    public var locale: String = "en_US"
    /// How fast subscription time runs (`_timeRate`).
    public var timeRate: TimeRate = .realTime
    /// Every purchase needs parental approval (`_askToBuyEnabled`).
    public var askToBuyEnabled = false
    /// Every purchase is interrupted until its issue is resolved (`_billingIssuesEnabled`).
    public var interruptedPurchasesEnabled = false
    /// Renewals fail and enter billing retry (`_renewalBillingIssuesEnabled`).
    public var shouldEnterBillingRetryOnRenewal = false
    /// Failed renewals get a grace period first (`_billingGracePeriodEnabled`).
    public var billingGracePeriodIsEnabled = false
    /// The legacy switch that fails every purchase with ``failureError`` (`_failTransactionsEnabled`).
    public var failTransactionsEnabled = false
    /// The error of the legacy switch.
    public var failureError: SimulatedFailure = .generic(.unknown)
    /// No payment sheets (`_disableDialogs`).
    public var disableDialogs = false
    /// Simulated failures per API (`_storeKitErrors`).
    public var simulatedErrors: [FailableAPI: SimulatedFailure] = [:]
    /// Whether `Transaction.all` keeps finished consumables (`SKIncludeConsumableInAppPurchaseHistory`).
    public var includesConsumablesInHistory = false
    /// Products taken off sale: they cannot be bought, and subscriptions to them expire at renewal
    /// with `EXPIRED` `PRODUCT_NOT_FOR_SALE`.
    public var unavailableProducts: Set<String> = []
    /// Where App Store Server Notifications V2 are POSTed (`storekit serve` delivers them); `nil` sends none.
    public var notificationURL: String?

    public init() {}

    /// The defaults written in a configuration file.
    public init(configuration: StoreKitConfiguration) {
        guard let settings = configuration.settings else { return }
        if let code = settings.storefront, Storefront(code: code) != nil { storefront = code.uppercased() }
        if let locale = settings.locale { self.locale = locale }
        if let rate = settings.timeRate.flatMap(TimeRate.init(rawValue:)) {
            timeRate = rate
        } else if case .integer(let fallback)? = settings.compatibilityTimeRate, let rate = TimeRate(rawValue: Int(fallback)) {
            timeRate = rate
        }
        askToBuyEnabled = settings.askToBuyEnabled ?? false
        interruptedPurchasesEnabled = settings.billingIssuesEnabled ?? false
        shouldEnterBillingRetryOnRenewal = settings.renewalBillingIssuesEnabled ?? false
        billingGracePeriodIsEnabled = settings.billingGracePeriodEnabled ?? false
        failTransactionsEnabled = settings.failTransactionsEnabled ?? false
        disableDialogs = settings.disableDialogs ?? false
        for entry in settings.storeKitErrors ?? [] where entry.enabled == true {
            guard let name = entry.name, let api = FailableAPI(configurationName: name),
                  case .object(let current)? = entry.current,
                  case .string(let type)? = current["type"], case .integer(let index)? = current["index"],
                  let failure = SimulatedFailure(configurationType: type, index: Int(index)), failure.applies(to: api)
            else { continue }
            simulatedErrors[api] = failure
        }
    }
}

/// Runtime changes to the settings; `nil` means "as the file says".
public struct SettingsOverrides: Hashable, Sendable, Codable {
    public var storefront: String?
    public var locale: String?
    public var timeRate: TimeRate?
    public var askToBuyEnabled: Bool?
    public var interruptedPurchasesEnabled: Bool?
    public var shouldEnterBillingRetryOnRenewal: Bool?
    public var billingGracePeriodIsEnabled: Bool?
    public var failTransactionsEnabled: Bool?
    public var failureError: SimulatedFailure?
    public var disableDialogs: Bool?
    /// Replacement simulated failures per API; an entry whose value is `nil` clears the file's failure.
    public var simulatedErrors: [FailableAPI: SimulatedFailure?]?
    public var includesConsumablesInHistory: Bool?
    public var unavailableProducts: Set<String>?
    /// The notification URL; an empty string turns delivery off.
    public var notificationURL: String?

    public init() {}

    /// Checks what every way of writing settings must respect (the admin API's `PATCH` and `PUT`,
    /// the command line, a test session): a notification URL is `http` or `https` with a host (or
    /// empty: delivery off), and a storefront is one the App Store has.
    public func validate() throws(AppStoreError) {
        if let notificationURL, !notificationURL.isEmpty {
            guard Self.isAcceptableNotificationURL(notificationURL) else {
                throw .control(.invalidURL, "notificationURL takes an http(s) URL or none, not \"\(notificationURL.prefix(200))\"")
            }
        }
        if let storefront, Storefront(code: storefront) == nil {
            throw .control(.invalidAction, "unknown storefront \(storefront.prefix(20))")
        }
    }

    /// Whether a notification URL is one the settings take: `http` or `https` with a host. Checked
    /// again when notifications are posted to a stored URL (a store folder is data).
    public static func isAcceptableNotificationURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host else { return false }
        return (scheme == "http" || scheme == "https") && !host.isEmpty
    }

    /// The names of the overrides as their JSON spells them.
    public static let keys: Set<String> = Set(Mirror(reflecting: SettingsOverrides()).children.compactMap(\.label))

    /// The defaults with these overrides applied.
    public func applied(to defaults: StoreSettings) -> StoreSettings {
        var settings = defaults
        if let storefront { settings.storefront = storefront }
        if let locale { settings.locale = locale }
        if let timeRate { settings.timeRate = timeRate }
        if let askToBuyEnabled { settings.askToBuyEnabled = askToBuyEnabled }
        if let interruptedPurchasesEnabled { settings.interruptedPurchasesEnabled = interruptedPurchasesEnabled }
        if let shouldEnterBillingRetryOnRenewal { settings.shouldEnterBillingRetryOnRenewal = shouldEnterBillingRetryOnRenewal }
        if let billingGracePeriodIsEnabled { settings.billingGracePeriodIsEnabled = billingGracePeriodIsEnabled }
        if let failTransactionsEnabled { settings.failTransactionsEnabled = failTransactionsEnabled }
        if let failureError { settings.failureError = failureError }
        if let disableDialogs { settings.disableDialogs = disableDialogs }
        if let includesConsumablesInHistory { settings.includesConsumablesInHistory = includesConsumablesInHistory }
        if let unavailableProducts { settings.unavailableProducts = unavailableProducts }
        if let notificationURL { settings.notificationURL = notificationURL.isEmpty ? nil : notificationURL }
        for (api, failure) in simulatedErrors ?? [:] { settings.simulatedErrors[api] = failure }
        return settings
    }
}
