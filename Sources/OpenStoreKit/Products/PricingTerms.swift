import AppStoreModels
import Foundation
import StoreKitCatalog

/// StoreKit's top-level names for nested types, as Apple declares them.
public typealias SubscriptionInfo = Product.SubscriptionInfo
public typealias SubscriptionStatus = Product.SubscriptionInfo.Status
public typealias SubscriptionRenewalInfo = Product.SubscriptionInfo.RenewalInfo
public typealias SubscriptionRenewalState = Product.SubscriptionInfo.RenewalState
public typealias SubscriptionPeriod = Product.SubscriptionPeriod

extension Product.SubscriptionInfo {
    /// The length of time one payment of a billing plan covers.
    public typealias BillingPeriod = SubscriptionPeriod

    /// How a billing plan charges: the whole period up front, or monthly over a commitment.
    public struct BillingPlanType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Billed monthly over a commitment (a yearly plan paid in twelve months).
        public static let monthly = BillingPlanType(rawValue: "MONTHLY")
        /// Billed for the whole period at its start.
        public static let upFront = BillingPlanType(rawValue: "BILLED_UPFRONT")

        init(_ type: AppStoreModels.BillingPlanType) { self.init(rawValue: type.rawValue) }
    }

    /// What a customer commits to under a billing plan: the whole price, over the subscription's period.
    public struct CommitmentInfo: Hashable, Sendable {
        public let price: Decimal
        public let displayPrice: String
        public let period: SubscriptionPeriod
    }

    /// One way to pay for a subscription: its plan, what each payment costs and covers, the
    /// commitment, and the offers that apply to it.
    public struct PricingTerms: Hashable, Sendable {
        public let billingPrice: Decimal
        public let billingDisplayPrice: String
        public let billingPeriod: Product.SubscriptionInfo.BillingPeriod
        public let billingPlanType: Product.SubscriptionInfo.BillingPlanType
        public let commitmentInfo: Product.SubscriptionInfo.CommitmentInfo
        /// The offers that apply under this plan: the subscription's offers for the up-front plan,
        /// none for monthly billing of a commitment.
        public let subscriptionOffers: [Product.SubscriptionOffer]

        /// The offers of one type that apply under this plan.
        public subscript(offers type: Product.SubscriptionOffer.OfferType) -> [Product.SubscriptionOffer] {
            subscriptionOffers.filter { $0.type == type }
        }

        init(_ plan: CatalogProduct.BillingPlan, period: SubscriptionPeriod, offers: [Product.SubscriptionOffer],
             currency: Decimal.FormatStyle.Currency) {
            let type = BillingPlanType(plan.type)
            self.billingPlanType = type
            self.billingPrice = plan.price
            self.billingDisplayPrice = plan.displayPrice
            self.billingPeriod = type == .monthly ? SubscriptionPeriod(value: 1, unit: .month) : period
            let commitment = plan.commitmentPrice ?? (type == .monthly ? plan.price * Decimal(Self.months(in: period)) : plan.price)
            self.commitmentInfo = CommitmentInfo(price: commitment, displayPrice: commitment.formatted(currency), period: period)
            self.subscriptionOffers = type == .monthly ? [] : offers
        }

        /// How many monthly payments a commitment of `period` takes.
        static func months(in period: SubscriptionPeriod) -> Int {
            switch period.unit {
            case .year: return 12 * period.value
            case .month: return period.value
            default: return 1
            }
        }
    }
}

extension Product.PurchaseOption {
    /// Pays under a billing plan of the subscription (`.monthly`: monthly over a commitment), as
    /// ``Product/SubscriptionInfo/pricingTerms`` lists them.
    public static func billingPlanType(_ type: Product.SubscriptionInfo.BillingPlanType) -> Product.PurchaseOption {
        Product.PurchaseOption(value: .billingPlan(type.rawValue))
    }
}
