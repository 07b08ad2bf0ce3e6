import Foundation
import StoreKitCatalog

extension Product {
    /// What an auto-renewable subscription offers: its group, level, period and offers.
    public struct SubscriptionInfo: Hashable, Sendable {
        public let subscriptionGroupID: String
        public let subscriptionPeriod: SubscriptionPeriod
        /// The introductory offer, whether or not the customer is eligible (see ``isEligibleForIntroOffer``).
        public let introductoryOffer: SubscriptionOffer?
        public let promotionalOffers: [SubscriptionOffer]
        public let winBackOffers: [SubscriptionOffer]
        /// The level in the group; 1 is the highest service.
        public let groupLevel: Int
        public let groupDisplayName: String
        /// How the customer may pay for the subscription: up front for each period, or monthly over a
        /// commitment (a yearly plan billed monthly), as the `.storekit` file's billing plans say.
        /// Empty for a subscription with no billing plans.
        public let pricingTerms: [PricingTerms]

        let client: StoreClient?

        init(_ info: CatalogProduct.SubscriptionInfo, currencyCode: String, priceLocale: Locale, client: StoreClient) {
            self.subscriptionGroupID = info.groupID
            self.subscriptionPeriod = SubscriptionPeriod(info.period)
            self.introductoryOffer = info.introductoryOffer.map(SubscriptionOffer.init)
            self.promotionalOffers = info.promotionalOffers.map(SubscriptionOffer.init)
            self.winBackOffers = info.winBackOffers.map(SubscriptionOffer.init)
            self.groupLevel = info.groupLevel
            self.groupDisplayName = info.groupDisplayName ?? ""
            let offers = [introductoryOffer].compactMap { $0 } + promotionalOffers + winBackOffers
            let style = Decimal.FormatStyle.Currency(code: currencyCode, locale: priceLocale)
            self.pricingTerms = info.billingPlans.filter(\.isEnabled).map { plan in
                PricingTerms(plan, period: SubscriptionPeriod(info.period), offers: offers, currency: style)
            }
            self.client = client
        }

        public static func == (lhs: SubscriptionInfo, rhs: SubscriptionInfo) -> Bool {
            lhs.subscriptionGroupID == rhs.subscriptionGroupID && lhs.subscriptionPeriod == rhs.subscriptionPeriod
                && lhs.introductoryOffer == rhs.introductoryOffer && lhs.promotionalOffers == rhs.promotionalOffers
                && lhs.winBackOffers == rhs.winBackOffers && lhs.groupLevel == rhs.groupLevel && lhs.groupDisplayName == rhs.groupDisplayName
                && lhs.pricingTerms == rhs.pricingTerms
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(subscriptionGroupID)
            hasher.combine(groupLevel)
        }

        /// Whether the customer may have the group's introductory offer (one per group per customer).
        public var isEligibleForIntroOffer: Bool {
            get async { await (client ?? StoreClient.active).isEligibleForIntroOffer(groupID: subscriptionGroupID) }
        }

        /// Whether the customer may have a group's introductory offer.
        public static func isEligibleForIntroOffer(for groupID: String) async -> Bool {
            await StoreClient.active.isEligibleForIntroOffer(groupID: groupID)
        }

        /// The customer's statuses in this subscription's group (their own and family-shared ones).
        public var status: [Status] {
            get async throws { try await (client ?? StoreClient.active).subscriptionStatuses(groupID: subscriptionGroupID) }
        }

        /// The customer's statuses in a subscription group.
        public static func status(for groupID: String) async throws -> [Status] {
            try await StoreClient.active.subscriptionStatuses(groupID: groupID)
        }

        /// The status of the subscription a transaction belongs to (any transaction of it: the
        /// original, a renewal, an upgrade); `nil` when the transaction is not the customer's or not
        /// of a subscription.
        public static func status(transactionID: UInt64) async throws -> SubscriptionStatus? {
            try await StoreClient.active.subscriptionStatus(transactionID: transactionID)
        }
    }

    /// A length of time a subscription or offer runs.
    public struct SubscriptionPeriod: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        /// A unit of time.
        public enum Unit: Int, Hashable, Sendable, CaseIterable, CustomDebugStringConvertible {
            case day, week, month, year

            public var debugDescription: String {
                switch self {
                case .day: return "day"
                case .week: return "week"
                case .month: return "month"
                case .year: return "year"
                }
            }
        }

        public let value: Int
        public let unit: Unit

        public init(value: Int, unit: Unit) {
            self.value = value
            self.unit = unit
        }

        init(_ period: StoreKitCatalog.SubscriptionPeriod) {
            let unit: Unit
            switch period.unit {
            case .day: unit = .day
            case .week: unit = .week
            case .month: unit = .month
            case .year: unit = .year
            }
            self.init(value: period.value, unit: unit)
        }

        public static let everyThreeDays = SubscriptionPeriod(value: 3, unit: .day)
        public static let weekly = SubscriptionPeriod(value: 1, unit: .week)
        public static let everyTwoWeeks = SubscriptionPeriod(value: 2, unit: .week)
        public static let monthly = SubscriptionPeriod(value: 1, unit: .month)
        public static let everyTwoMonths = SubscriptionPeriod(value: 2, unit: .month)
        public static let everyThreeMonths = SubscriptionPeriod(value: 3, unit: .month)
        public static let everySixMonths = SubscriptionPeriod(value: 6, unit: .month)
        public static let yearly = SubscriptionPeriod(value: 1, unit: .year)

        public var debugDescription: String { "SubscriptionPeriod(value: \(value), unit: \(unit.debugDescription))" }

        /// The ISO 8601 form, such as `P1M`.
        public var description: String {
            let designator: String
            switch unit {
            case .day: designator = "D"
            case .week: designator = "W"
            case .month: designator = "M"
            case .year: designator = "Y"
            }
            return "P\(value)\(designator)"
        }
    }

    /// An introductory, promotional or win-back offer of a subscription.
    public struct SubscriptionOffer: Hashable, Sendable {
        /// The kind of an offer.
        public struct OfferType: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let introductory = OfferType(rawValue: "introductory")
            public static let promotional = OfferType(rawValue: "promotional")
            public static let winBack = OfferType(rawValue: "winBack")
            public static let code = OfferType(rawValue: "code")
        }

        /// How the customer pays during an offer.
        public struct PaymentMode: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let freeTrial = PaymentMode(rawValue: "freeTrial")
            public static let payAsYouGo = PaymentMode(rawValue: "payAsYouGo")
            public static let payUpFront = PaymentMode(rawValue: "payUpFront")
        }

        /// A promotional offer's signature in StoreKit's original form (the developer's server signs
        /// the joined fields with the in-app purchase key); see
        /// `Product.PurchaseOption.promotionalOffer(offerID:signature:)`.
        public struct Signature: Hashable, Sendable {
            public var keyID: String
            public var nonce: UUID
            /// Milliseconds since 1970, as signed.
            public var timestamp: Int
            /// The DER signature.
            public var signature: Data

            public init(keyID: String, nonce: UUID, timestamp: Int, signature: Data) {
                self.keyID = keyID
                self.nonce = nonce
                self.timestamp = timestamp
                self.signature = signature
            }
        }

        /// The offer identifier; `nil` for introductory offers.
        public let id: String?
        public let type: OfferType
        /// The price per period (pay as you go) or for the whole offer (pay up front); 0 for free trials.
        public let price: Decimal
        public let displayPrice: String
        public let period: SubscriptionPeriod
        /// How many periods the offer runs.
        public let periodCount: Int
        public let paymentMode: PaymentMode

        init(_ offer: CatalogOffer) {
            self.id = offer.kind == .introductory ? nil : (offer.id ?? offer.referenceName)
            switch offer.kind {
            case .introductory: self.type = .introductory
            case .promotional: self.type = .promotional
            case .winBack: self.type = .winBack
            case .code: self.type = .code
            }
            self.price = offer.price
            self.displayPrice = offer.displayPrice
            self.period = SubscriptionPeriod(offer.period)
            self.periodCount = offer.periodCount
            self.paymentMode = PaymentMode(rawValue: offer.paymentMode.rawValue)
        }
    }
}

extension StoreClient {
    /// `Product.SubscriptionInfo.status(transactionID:)` for this device's account.
    public func subscriptionStatus(transactionID: UInt64) async throws -> Product.SubscriptionInfo.Status? {
        let items = try await storeKitCall { try await transport.transactions(.transaction(id: transactionID), device: device) }
        guard let transaction = items.first.flatMap({ verifyTransaction($0) })?.unsafePayloadValue,
              let group = transaction.subscriptionGroupID else { return nil }
        return try await subscriptionStatuses(groupID: group).first {
            $0.transaction.unsafePayloadValue.originalID == transaction.originalID
        }
    }

    /// `Product.SubscriptionInfo.isEligibleForIntroOffer(for:)` for this device's account; `false` when the store cannot answer.
    public func isEligibleForIntroOffer(groupID: String) async -> Bool {
        do {
            return try await transport.isEligibleForIntroOffer(groupID: groupID, device: device)
        } catch {
            StoreDiagnostics.report("intro offer eligibility for group \(groupID) is unknown: \(error)")
            return false
        }
    }
}
