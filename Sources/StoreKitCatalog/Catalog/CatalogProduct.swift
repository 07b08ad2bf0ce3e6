import AppStoreModels
import Foundation

/// A product as StoreKit presents it: localized, priced for a storefront, with its subscription details.
public struct CatalogProduct: Hashable, Sendable, Identifiable {
    /// The four kinds of in-app purchase.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        case consumable
        case nonConsumable
        case autoRenewable
        case nonRenewable

        /// The `type` value of this kind in signed transactions.
        public var transactionType: ProductType {
            switch self {
            case .consumable: return .consumable
            case .nonConsumable: return .nonConsumable
            case .autoRenewable: return .autoRenewableSubscription
            case .nonRenewable: return .nonRenewingSubscription
            }
        }
    }

    /// The product identifier.
    public let id: String
    public let kind: Kind
    /// The name in the chosen locale.
    public let displayName: String
    /// The description in the chosen locale.
    public let description: String
    /// The price in the storefront's currency.
    public let price: Decimal
    /// The price formatted for the storefront's currency and the locale, such as `$0.99` or `0,99 €`.
    public let displayPrice: String
    /// The ISO 4217 currency of ``price``.
    public let currency: String
    /// The locale ``displayPrice`` is formatted in, with the storefront's currency (`es_ES@currency=EUR`).
    public let priceLocale: String
    /// Whether family members share the purchase.
    public let isFamilyShareable: Bool
    /// The internal reference name.
    public let referenceName: String?
    /// The product's identifier in App Store Connect (the file's `internalID`), if the file has one.
    public var internalID: String?
    /// Subscription details of an auto-renewable subscription.
    public let subscription: SubscriptionInfo?

    /// The price in milliunits of the currency, as signed transactions carry it (`price`).
    public var priceInMilliunits: Int64 {
        NSDecimalNumber(decimal: price * 1000).int64Value
    }

    /// Subscription details of an auto-renewable subscription.
    public struct SubscriptionInfo: Hashable, Sendable {
        /// The subscription group identifier.
        public let groupID: String
        /// The group's display name in the chosen locale, if the file has one.
        public let groupDisplayName: String?
        /// The level in the group; 1 is the highest level of service.
        public let groupLevel: Int
        /// The renewal period.
        public let period: SubscriptionPeriod
        /// The introductory offer.
        public let introductoryOffer: CatalogOffer?
        /// Promotional offers.
        public let promotionalOffers: [CatalogOffer]
        /// Win-back offers.
        public let winBackOffers: [CatalogOffer]
        /// Offer codes, selected by reference name.
        public let codeOffers: [CatalogOffer]
        /// Billing plans (monthly billing over a 12-month commitment).
        public let billingPlans: [BillingPlan]
    }

    /// A billing plan of a subscription.
    public struct BillingPlan: Hashable, Sendable {
        /// `BILLED_UPFRONT` or `MONTHLY`.
        public let type: BillingPlanType
        public let price: Decimal
        public let displayPrice: String
        public let commitmentPrice: Decimal?
        public let isEnabled: Bool
    }
}

/// An introductory, promotional, offer-code or win-back offer of a subscription.
public struct CatalogOffer: Hashable, Sendable {
    /// The kind of offer.
    public enum Kind: String, Hashable, Sendable, Codable {
        case introductory, promotional, code, winBack

        /// The `offerType` value in signed transactions.
        public var offerType: OfferType {
            switch self {
            case .introductory: return .introductoryOffer
            case .promotional: return .promotionalOffer
            case .code: return .subscriptionOfferCode
            case .winBack: return .winBackOffer
            }
        }
    }

    /// How the customer pays during the offer.
    public enum PaymentMode: String, Hashable, Sendable, Codable {
        case freeTrial, payAsYouGo, payUpFront

        init?(configurationValue: String?) {
            switch configurationValue {
            case "free": self = .freeTrial
            case "payAsYouGo": self = .payAsYouGo
            case "payUpFront": self = .payUpFront
            default: return nil
            }
        }

        /// The `offerDiscountType` value in signed transactions.
        public var discountType: OfferDiscountType {
            switch self {
            case .freeTrial: return .freeTrial
            case .payAsYouGo: return .payAsYouGo
            case .payUpFront: return .payUpFront
            }
        }
    }

    /// Who may redeem an offer code.
    public enum Eligibility: String, Hashable, Sendable, Codable {
        /// Customers who never subscribed in the group.
        case new
        /// Customers subscribed in the group now.
        case existing
        /// Customers whose subscription in the group expired.
        case expired
    }

    public let kind: Kind
    /// The offer identifier (promotional and win-back offers; the reference name for offer codes).
    public let id: String?
    public let referenceName: String?
    public let paymentMode: PaymentMode
    /// The length of one offer period.
    public let period: SubscriptionPeriod
    /// How many periods the offer lasts.
    public let periodCount: Int
    /// The price per period (zero for free trials).
    public let price: Decimal
    public let displayPrice: String
    /// Who may redeem an offer code; empty for other kinds.
    public let eligibility: Set<Eligibility>
    /// Whether an offer code stacks with the introductory offer.
    public let isStackable: Bool
    /// Whether a win-back offer is on offer (Xcode's switch); other kinds are always `true`.
    public let isEligible: Bool

    /// The whole offer duration: one period for free trials and pay-up-front offers, as Xcode writes
    /// them, and `periodCount` periods for pay-as-you-go.
    public var totalDuration: (period: SubscriptionPeriod, count: Int) {
        paymentMode == .payAsYouGo ? (period, periodCount) : (period, max(1, periodCount))
    }
}
