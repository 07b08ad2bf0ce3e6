import AppStoreModels

extension StoreKitConfiguration {
    /// The test-environment defaults of a configuration (`settings`); every key starts with `_`.
    public struct Settings: Hashable, Sendable, ConfigurationNode {
        /// Default localization for names, descriptions and price formatting (`_locale`), such as `en_US`.
        public var locale: String?
        /// Default storefront, ISO 3166-1 alpha-3 (`_storefront`), such as `USA`.
        public var storefront: String?
        /// Subscription renewal rate, a raw `SKTestSession.TimeRate` value (`_timeRate`).
        public var timeRate: Int?
        /// Fallback rate for runtimes that do not know `_timeRate`: an integer or an object keyed by small integers.
        public var compatibilityTimeRate: JSONValue?
        /// Every purchase needs parental approval (`_askToBuyEnabled`).
        public var askToBuyEnabled: Bool?
        /// Interrupted purchases (`_billingIssuesEnabled`).
        public var billingIssuesEnabled: Bool?
        /// Renewals fail and enter billing retry (`_renewalBillingIssuesEnabled`).
        public var renewalBillingIssuesEnabled: Bool?
        /// Failed renewals get a grace period first (`_billingGracePeriodEnabled`).
        public var billingGracePeriodEnabled: Bool?
        /// Legacy switch that fails transactions (`_failTransactionsEnabled`).
        public var failTransactionsEnabled: Bool?
        /// Legacy `SKError.Code` used when failing transactions (`_storeKitError`).
        public var storeKitError: Int?
        /// Simulated StoreKit failures per API (`_storeKitErrors`).
        public var storeKitErrors: [SimulatedError]?
        /// No payment sheets; payment is assumed confirmed (`_disableDialogs`).
        public var disableDialogs: Bool?
        /// App Store Connect app ID of a synced file.
        public var applicationInternalID: String?
        /// Team ID of a synced file.
        public var developerTeamID: String?
        /// Last sync, seconds since 2001-01-01.
        public var lastSynchronizedDate: Double?
        public var additionalFields: [String: JSONValue] = [:]

        public init() {}

        /// One entry of Xcode's "Simulate StoreKit failures" list.
        public struct SimulatedError: Hashable, Sendable, ConfigurationNode {
            /// The API, such as `Load Products` or `Purchase`.
            public var name: String?
            /// Whether the failure is thrown.
            public var enabled: Bool?
            /// The failure chosen in the editor: `{"index": 1, "type": "purchase"}`.
            public var current: JSONValue?
            public var additionalFields: [String: JSONValue] = [:]

            public init(name: String?, enabled: Bool?, current: JSONValue? = nil) {
                self.name = name
                self.enabled = enabled
                self.current = current
            }

            init(reading reader: inout ObjectReader) {
                name = reader.string("name")
                enabled = reader.bool("enabled")
                current = reader.raw("current")
                additionalFields = reader.remaining
            }

            var jsonValue: JSONValue {
                var writer = ObjectWriter(keeping: additionalFields)
                writer.set("name", name)
                writer.set("enabled", enabled)
                writer.set("current", current)
                return writer.jsonValue
            }
        }

        init(reading reader: inout ObjectReader) {
            locale = reader.string("_locale")
            storefront = reader.string("_storefront")
            timeRate = reader.integer("_timeRate")
            compatibilityTimeRate = reader.raw("_compatibilityTimeRate")
            askToBuyEnabled = reader.bool("_askToBuyEnabled")
            billingIssuesEnabled = reader.bool("_billingIssuesEnabled")
            renewalBillingIssuesEnabled = reader.bool("_renewalBillingIssuesEnabled")
            billingGracePeriodEnabled = reader.bool("_billingGracePeriodEnabled")
            failTransactionsEnabled = reader.bool("_failTransactionsEnabled")
            storeKitError = reader.integer("_storeKitError")
            storeKitErrors = reader.objects("_storeKitErrors", SimulatedError.init(reading:))
            disableDialogs = reader.bool("_disableDialogs")
            applicationInternalID = reader.string("_applicationInternalID")
            developerTeamID = reader.string("_developerTeamID")
            lastSynchronizedDate = reader.number("_lastSynchronizedDate")
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("_locale", locale)
            writer.set("_storefront", storefront)
            writer.set("_timeRate", timeRate)
            writer.set("_compatibilityTimeRate", compatibilityTimeRate)
            writer.set("_askToBuyEnabled", askToBuyEnabled)
            writer.set("_billingIssuesEnabled", billingIssuesEnabled)
            writer.set("_renewalBillingIssuesEnabled", renewalBillingIssuesEnabled)
            writer.set("_billingGracePeriodEnabled", billingGracePeriodEnabled)
            writer.set("_failTransactionsEnabled", failTransactionsEnabled)
            writer.set("_storeKitError", storeKitError)
            writer.set("_storeKitErrors", storeKitErrors)
            writer.set("_disableDialogs", disableDialogs)
            writer.set("_applicationInternalID", applicationInternalID)
            writer.set("_developerTeamID", developerTeamID)
            writer.set("_lastSynchronizedDate", lastSynchronizedDate)
            return writer.jsonValue
        }
    }
}
