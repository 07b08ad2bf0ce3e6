import Foundation

// `localizedDescription` on StoreKit's enumerations, as Apple's StoreKit declares it (iOS 15.4 and
// later): a short phrase for logs and labels. Apple does not publish its wording, and this package
// carries no translations, so the phrases are English in every locale. A value this package does not
// know (Apple may add some) is described by its raw value.

extension Product.SubscriptionPeriod.Unit {
    /// The unit's name, such as "Month".
    public var localizedDescription: String {
        switch self {
        case .day: return "Day"
        case .week: return "Week"
        case .month: return "Month"
        case .year: return "Year"
        }
    }
}

extension Product.SubscriptionOffer.PaymentMode {
    /// How the customer pays, such as "Free Trial".
    public var localizedDescription: String {
        switch self {
        case .freeTrial: return "Free Trial"
        case .payAsYouGo: return "Pay As You Go"
        case .payUpFront: return "Pay Up Front"
        default: return rawValue
        }
    }
}

extension Product.SubscriptionOffer.OfferType {
    /// The kind of offer, such as "Introductory Offer".
    public var localizedDescription: String {
        switch self {
        case .introductory: return "Introductory Offer"
        case .promotional: return "Promotional Offer"
        case .winBack: return "Win-Back Offer"
        case .code: return "Offer Code"
        default: return rawValue
        }
    }
}

extension Product.SubscriptionInfo.RenewalState {
    /// The state, such as "Subscribed" or "In Grace Period".
    public var localizedDescription: String {
        switch self {
        case .subscribed: return "Subscribed"
        case .expired: return "Expired"
        case .inBillingRetryPeriod: return "In Billing Retry Period"
        case .inGracePeriod: return "In Grace Period"
        case .revoked: return "Revoked"
        default: return "Renewal State \(rawValue)"
        }
    }
}

extension Product.SubscriptionInfo.RenewalInfo.ExpirationReason {
    /// Why the subscription expired, such as "Auto-Renew Disabled".
    public var localizedDescription: String {
        switch self {
        case .autoRenewDisabled: return "Auto-Renew Disabled"
        case .billingError: return "Billing Error"
        case .didNotConsentToPriceIncrease: return "Did Not Consent to Price Increase"
        case .productUnavailable: return "Product Unavailable"
        case .unknown: return "Unknown"
        default: return "Expiration Reason \(rawValue)"
        }
    }
}

extension Product.SubscriptionInfo.RenewalInfo.PriceIncreaseStatus {
    /// Where a price increase stands, such as "Pending".
    public var localizedDescription: String {
        switch self {
        case .noIncreasePending: return "No Increase Pending"
        case .pending: return "Pending"
        case .agreed: return "Agreed"
        }
    }
}

extension Product.ProductType {
    /// The kind of product, such as "Auto-Renewable Subscription".
    public var localizedDescription: String {
        switch self {
        case .consumable: return "Consumable"
        case .nonConsumable: return "Non-Consumable"
        case .nonRenewable: return "Non-Renewing Subscription"
        case .autoRenewable: return "Auto-Renewable Subscription"
        default: return rawValue
        }
    }
}

extension Transaction.OfferType {
    /// The kind of offer a transaction used, such as "Introductory Offer".
    public var localizedDescription: String {
        switch self {
        case .introductory: return "Introductory Offer"
        case .promotional: return "Promotional Offer"
        case .code: return "Offer Code"
        case .winBack: return "Win-Back Offer"
        default: return "Offer Type \(rawValue)"
        }
    }
}

extension Transaction.RevocationReason {
    /// Why the App Store revoked a transaction, such as "Developer Issue".
    public var localizedDescription: String {
        switch self {
        case .developerIssue: return "Developer Issue"
        case .other: return "Other"
        default: return "Revocation Reason \(rawValue)"
        }
    }
}

extension Transaction.OwnershipType {
    /// Who owns the transaction, such as "Family Shared".
    public var localizedDescription: String {
        switch self {
        case .purchased: return "Purchased"
        case .familyShared: return "Family Shared"
        default: return rawValue
        }
    }
}

extension Message.Reason {
    /// Why the App Store shows a message, such as "Billing Issue".
    public var localizedDescription: String {
        switch self {
        case .billingIssue: return "Billing Issue"
        case .priceIncreaseConsent: return "Price Increase Consent"
        case .winBackOffer: return "Win-Back Offer"
        case .generic: return "Generic"
        default: return name
        }
    }
}
