import AppStoreModels

/// An Xcode StoreKit configuration file (`.storekit`), every format version from 1.0 to 5.0.
///
/// Every key is optional, as Xcode treats it; arrays stay `nil` when the file leaves them out, and
/// keys this package does not know are kept in `additionalFields` at every level, so a file read and
/// written back is unchanged in meaning. Reading never trusts the `version` number: Xcode writes the
/// lowest version able to hold a file's contents, not its own.
///
/// Read one with ``read(_:fileName:)`` or ``load(contentsOf:)``; build products from it with ``Catalog``.
public struct StoreKitConfiguration: Hashable, Sendable {
    /// The file-format version, such as 4.0.
    public var version: Version?
    /// The identifier of the configuration itself (8 hex digits in Xcode-made files).
    public var identifier: String?
    /// Test-environment defaults.
    public var settings: Settings?
    /// Consumables and non-consumables.
    public var products: [Product]?
    /// Non-renewing subscriptions.
    public var nonRenewingSubscriptions: [Product]?
    /// Auto-renewable subscriptions, by group.
    public var subscriptionGroups: [SubscriptionGroup]?
    /// The key Xcode generated for signing promotional offers locally.
    public var subscriptionOffersKeyPair: KeyPair?
    /// EULA and privacy-policy texts shown by StoreKit views.
    public var appPolicies: AppPolicies?
    /// Keys this package does not know, kept as they are.
    public var additionalFields: [String: JSONValue] = [:]

    public init() {}

    /// The configuration as a device may see it: the promotional offers' private key removed (in the
    /// App Store only the developer's server holds it; devices get offers signed elsewhere), its
    /// identifier kept.
    public var withoutPrivateKeys: StoreKitConfiguration {
        var copy = self
        copy.subscriptionOffersKeyPair?.privateKey = nil
        return copy
    }

    /// The format version, `{"major": 4, "minor": 0}`.
    public struct Version: Hashable, Sendable, ConfigurationNode {
        public var major: Int?
        public var minor: Int?
        public var additionalFields: [String: JSONValue] = [:]

        public init(major: Int?, minor: Int?) {
            self.major = major
            self.minor = minor
        }

        init(reading reader: inout ObjectReader) {
            major = reader.integer("major")
            minor = reader.integer("minor")
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("major", major)
            writer.set("minor", minor)
            return writer.jsonValue
        }
    }

    /// A localized name and description.
    public struct Localization: Hashable, Sendable, ConfigurationNode {
        /// `en_US`, `en_GB`, `es_ES` or a bare language such as `ar`.
        public var locale: String?
        public var displayName: String?
        public var description: String?
        public var additionalFields: [String: JSONValue] = [:]

        public init(locale: String?, displayName: String?, description: String?) {
            self.locale = locale
            self.displayName = displayName
            self.description = description
        }

        init(reading reader: inout ObjectReader) {
            locale = reader.string("locale")
            displayName = reader.string("displayName")
            description = reader.string("description")
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("locale", locale)
            writer.set("displayName", displayName)
            writer.set("description", description)
            return writer.jsonValue
        }
    }

    /// A consumable, non-consumable or non-renewing subscription.
    public struct Product: Hashable, Sendable, ConfigurationNode {
        /// `Consumable`, `NonConsumable` or `NonRenewingSubscription`.
        public var type: String?
        public var productID: String?
        public var referenceName: String?
        /// The price as a decimal string with `.`, such as `"0.99"`.
        public var displayPrice: String?
        public var familyShareable: Bool?
        public var internalID: String?
        public var localizations: [Localization]?
        public var additionalFields: [String: JSONValue] = [:]

        public init() {}

        init(reading reader: inout ObjectReader) {
            type = reader.string("type")
            productID = reader.string("productID")
            referenceName = reader.string("referenceName")
            displayPrice = reader.priceText("displayPrice")
            familyShareable = reader.bool("familyShareable")
            internalID = reader.string("internalID")
            localizations = reader.objects("localizations", Localization.init(reading:))
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("type", type)
            writer.set("productID", productID)
            writer.set("referenceName", referenceName)
            writer.set("displayPrice", displayPrice)
            writer.set("familyShareable", familyShareable)
            writer.set("internalID", internalID)
            writer.set("localizations", localizations)
            return writer.jsonValue
        }
    }

    /// A subscription group and its auto-renewable subscriptions.
    public struct SubscriptionGroup: Hashable, Sendable, ConfigurationNode {
        /// The subscription group identifier apps see.
        public var id: String?
        /// The group's reference name.
        public var name: String?
        /// The group's localized display names.
        public var localizations: [Localization]?
        public var subscriptions: [Subscription]?
        public var additionalFields: [String: JSONValue] = [:]

        public init() {}

        init(reading reader: inout ObjectReader) {
            id = reader.string("id")
            name = reader.string("name")
            localizations = reader.objects("localizations", Localization.init(reading:))
            subscriptions = reader.objects("subscriptions", Subscription.init(reading:))
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("id", id)
            writer.set("name", name)
            writer.set("localizations", localizations)
            writer.set("subscriptions", subscriptions)
            return writer.jsonValue
        }
    }

    /// An auto-renewable subscription.
    public struct Subscription: Hashable, Sendable, ConfigurationNode {
        /// Always `RecurringSubscription`.
        public var type: String?
        public var productID: String?
        public var referenceName: String?
        public var displayPrice: String?
        public var familyShareable: Bool?
        public var internalID: String?
        public var localizations: [Localization]?
        /// Repeats the parent group's `id`.
        public var subscriptionGroupID: String?
        /// The level in the group; 1 is the highest level of service.
        public var groupNumber: Int?
        /// The renewal period as an ISO 8601 duration, such as `P1M`.
        public var recurringSubscriptionPeriod: String?
        /// The introductory offer; `null` and absent both mean none.
        public var introductoryOffer: Offer?
        /// Introductory offers per billing plan (format 5.0).
        public var introductoryOffers: [Offer]?
        /// Promotional offers (the editor calls them ad hoc offers).
        public var adHocOffers: [Offer]?
        /// Offer codes.
        public var codeOffers: [Offer]?
        /// Win-back offers.
        public var winbackOffers: [Offer]?
        /// Billing plans, such as monthly billing over a 12-month commitment (format 5.0).
        public var billingPlans: [BillingPlan]?
        public var additionalFields: [String: JSONValue] = [:]

        public init() {}

        init(reading reader: inout ObjectReader) {
            type = reader.string("type")
            productID = reader.string("productID")
            referenceName = reader.string("referenceName")
            displayPrice = reader.priceText("displayPrice")
            familyShareable = reader.bool("familyShareable")
            internalID = reader.string("internalID")
            localizations = reader.objects("localizations", Localization.init(reading:))
            subscriptionGroupID = reader.string("subscriptionGroupID")
            groupNumber = reader.integer("groupNumber")
            recurringSubscriptionPeriod = reader.string("recurringSubscriptionPeriod")
            introductoryOffer = reader.object("introductoryOffer", Offer.init(reading:))
            introductoryOffers = reader.objects("introductoryOffers", Offer.init(reading:))
            adHocOffers = reader.objects("adHocOffers", Offer.init(reading:))
            codeOffers = reader.objects("codeOffers", Offer.init(reading:))
            winbackOffers = reader.objects("winbackOffers", Offer.init(reading:))
            billingPlans = reader.objects("billingPlans", BillingPlan.init(reading:))
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("type", type)
            writer.set("productID", productID)
            writer.set("referenceName", referenceName)
            writer.set("displayPrice", displayPrice)
            writer.set("familyShareable", familyShareable)
            writer.set("internalID", internalID)
            writer.set("localizations", localizations)
            writer.set("subscriptionGroupID", subscriptionGroupID)
            writer.set("groupNumber", groupNumber)
            writer.set("recurringSubscriptionPeriod", recurringSubscriptionPeriod)
            writer.set("introductoryOffer", introductoryOffer)
            writer.set("introductoryOffers", introductoryOffers)
            writer.set("adHocOffers", adHocOffers)
            writer.set("codeOffers", codeOffers)
            writer.set("winbackOffers", winbackOffers)
            writer.set("billingPlans", billingPlans)
            return writer.jsonValue
        }
    }

    /// An introductory, promotional, offer-code or win-back offer.
    public struct Offer: Hashable, Sendable, ConfigurationNode {
        public var internalID: String?
        /// `free`, `payAsYouGo` or `payUpFront`.
        public var paymentMode: String?
        /// The offer period as an ISO 8601 duration.
        public var subscriptionPeriod: String?
        /// How many periods; absent means one.
        public var numberOfPeriods: Int?
        /// The discounted price of paid offers.
        public var displayPrice: String?
        /// The identifier apps use (promotional and win-back offers).
        public var offerID: String?
        /// The reference name; selects an offer code.
        public var referenceName: String?
        /// Who may redeem an offer code: `new`, `existing`, `expired`.
        public var eligibility: [String]?
        /// Whether an offer code stacks with the introductory offer.
        public var isStackable: Bool?
        /// Whether a win-back offer is currently offered.
        public var isEligible: Bool?
        /// `BILLED_UPFRONT` or `MONTHLY` (format 5.0).
        public var billingPlanType: String?
        public var additionalFields: [String: JSONValue] = [:]

        public init() {}

        init(reading reader: inout ObjectReader) {
            internalID = reader.string("internalID")
            paymentMode = reader.string("paymentMode")
            subscriptionPeriod = reader.string("subscriptionPeriod")
            numberOfPeriods = reader.integer("numberOfPeriods")
            displayPrice = reader.priceText("displayPrice")
            offerID = reader.string("offerID")
            referenceName = reader.string("referenceName")
            eligibility = reader.strings("eligibility")
            isStackable = reader.bool("isStackable")
            isEligible = reader.bool("isEligible")
            billingPlanType = reader.string("billingPlanType")
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("internalID", internalID)
            writer.set("paymentMode", paymentMode)
            writer.set("subscriptionPeriod", subscriptionPeriod)
            writer.set("numberOfPeriods", numberOfPeriods)
            writer.set("displayPrice", displayPrice)
            writer.set("offerID", offerID)
            writer.set("referenceName", referenceName)
            writer.set("eligibility", eligibility)
            writer.set("isStackable", isStackable)
            writer.set("isEligible", isEligible)
            writer.set("billingPlanType", billingPlanType)
            return writer.jsonValue
        }
    }

    /// A billing plan of a subscription (format 5.0).
    public struct BillingPlan: Hashable, Sendable, ConfigurationNode {
        /// `BILLED_UPFRONT` or `MONTHLY`.
        public var billingPlanType: String?
        /// The price per billing period.
        public var displayPrice: String?
        /// The total over the commitment.
        public var commitmentDisplayPrice: String?
        public var internalID: String?
        public var isEnabled: Bool?
        public var additionalFields: [String: JSONValue] = [:]

        public init() {}

        init(reading reader: inout ObjectReader) {
            billingPlanType = reader.string("billingPlanType")
            displayPrice = reader.priceText("displayPrice")
            commitmentDisplayPrice = reader.priceText("commitmentDisplayPrice")
            internalID = reader.string("internalID")
            isEnabled = reader.bool("isEnabled")
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("billingPlanType", billingPlanType)
            writer.set("displayPrice", displayPrice)
            writer.set("commitmentDisplayPrice", commitmentDisplayPrice)
            writer.set("internalID", internalID)
            writer.set("isEnabled", isEnabled)
            return writer.jsonValue
        }
    }

    /// The promotional-offer signing key Xcode generated ("Subscription Offers Key").
    public struct KeyPair: Hashable, Sendable, ConfigurationNode {
        /// The key identifier (8 hex digits).
        public var id: String?
        /// Base64 PKCS#8 P-256 private key, without PEM armour.
        public var privateKey: String?
        public var additionalFields: [String: JSONValue] = [:]

        public init(id: String?, privateKey: String?) {
            self.id = id
            self.privateKey = privateKey
        }

        init(reading reader: inout ObjectReader) {
            id = reader.string("id")
            privateKey = reader.string("privateKey")
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("id", id)
            writer.set("privateKey", privateKey)
            return writer.jsonValue
        }
    }

    /// EULA and privacy-policy texts (format 4.0 and later).
    public struct AppPolicies: Hashable, Sendable, ConfigurationNode {
        public var eula: String?
        public var policies: [Policy]?
        public var additionalFields: [String: JSONValue] = [:]

        public init() {}

        /// A privacy policy for one locale.
        public struct Policy: Hashable, Sendable, ConfigurationNode {
            public var locale: String?
            public var policyText: String?
            public var policyURL: String?
            public var additionalFields: [String: JSONValue] = [:]

            init(reading reader: inout ObjectReader) {
                locale = reader.string("locale")
                policyText = reader.string("policyText")
                policyURL = reader.string("policyURL")
                additionalFields = reader.remaining
            }

            var jsonValue: JSONValue {
                var writer = ObjectWriter(keeping: additionalFields)
                writer.set("locale", locale)
                writer.set("policyText", policyText)
                writer.set("policyURL", policyURL)
                return writer.jsonValue
            }
        }

        init(reading reader: inout ObjectReader) {
            eula = reader.string("eula")
            policies = reader.objects("policies", Policy.init(reading:))
            additionalFields = reader.remaining
        }

        var jsonValue: JSONValue {
            var writer = ObjectWriter(keeping: additionalFields)
            writer.set("eula", eula)
            writer.set("policies", policies)
            return writer.jsonValue
        }
    }
}

extension StoreKitConfiguration: ConfigurationNode {
    init(reading reader: inout ObjectReader) {
        version = reader.object("version", Version.init(reading:))
        identifier = reader.string("identifier")
        settings = reader.object("settings", Settings.init(reading:))
        products = reader.objects("products", Product.init(reading:))
        nonRenewingSubscriptions = reader.objects("nonRenewingSubscriptions", Product.init(reading:))
        subscriptionGroups = reader.objects("subscriptionGroups", SubscriptionGroup.init(reading:))
        subscriptionOffersKeyPair = reader.object("subscriptionOffersKeyPair", KeyPair.init(reading:))
        appPolicies = reader.object("appPolicies", AppPolicies.init(reading:))
        additionalFields = reader.remaining
    }

    var jsonValue: JSONValue {
        var writer = ObjectWriter(keeping: additionalFields)
        writer.set("version", version)
        writer.set("identifier", identifier)
        writer.set("settings", settings)
        writer.set("products", products)
        writer.set("nonRenewingSubscriptions", nonRenewingSubscriptions)
        writer.set("subscriptionGroups", subscriptionGroups)
        writer.set("subscriptionOffersKeyPair", subscriptionOffersKeyPair)
        writer.set("appPolicies", appPolicies)
        return writer.jsonValue
    }
}
