import Foundation

/// The renewal state of an auto-renewable subscription: the payload of a `signedRenewalInfo` JWS.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/jwsrenewalinfodecodedpayload)
public struct JWSRenewalInfoDecodedPayload: SignedPayload {
    /// Why the subscription expired.
    public var expirationIntent: ExpirationIntent?
    /// The original transaction identifier of the subscription.
    public var originalTransactionId: String?
    /// The product that renews at the next renewal date.
    public var autoRenewProductId: String?
    /// The product of the current period.
    public var productId: String?
    /// Whether the subscription renews.
    public var autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is trying to renew an expired subscription after a billing issue.
    public var isInBillingRetryPeriod: Bool?
    /// Whether the customer has responded to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends.
    public var gracePeriodExpiresDate: Date?
    /// The kind of offer that applies to the next period.
    public var offerType: OfferType?
    /// The identifier of the offer that applies to the next period.
    public var offerIdentifier: String?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// The server environment.
    public var environment: Environment?
    /// The start of the most recent run of paid subscription periods, ignoring lapses shorter than 60 days.
    public var recentSubscriptionStartDate: Date?
    /// When the subscription renews next.
    public var renewalDate: Date?
    /// The ISO 4217 currency code of the renewal price.
    public var currency: String?
    /// The renewal price in milliunits of the currency.
    public var renewalPrice: Int64?
    /// The payment mode of the offer that applies to the next period.
    public var offerDiscountType: OfferDiscountType?
    /// The win-back offers the customer is eligible for.
    public var eligibleWinBackOfferIds: [String]?
    /// The UUID the app attached to the purchase.
    public var appAccountToken: UUID?
    /// The identifier of the customer's app download transaction.
    public var appTransactionId: String?
    /// The duration of the offer that applies to the next period.
    public var offerPeriod: String?
    /// Advanced Commerce API data, passed through unchanged.
    public var advancedCommerceInfo: JSONValue?
    /// The renewal state of a twelve-month commitment.
    public var commitmentInfo: RenewalCommitmentInfo?
    /// How the next period is billed.
    public var renewalBillingPlanType: BillingPlanType?
    /// Base64 SHA-384 of the nonce and the device verification identifier.
    public var deviceVerification: String?
    /// The nonce used for `deviceVerification`.
    public var deviceVerificationNonce: UUID?

    /// Makes a payload with every field absent.
    public init() {}

    public var validationDate: Date? { signedDate }
}

/// The renewal state of a twelve-month commitment.
public struct RenewalCommitmentInfo: Codable, Hashable, Sendable {
    /// The product that renews when the commitment ends.
    public var commitmentAutoRenewProductId: String?
    /// Whether the commitment renews.
    public var commitmentAutoRenewStatus: AutoRenewStatus?
    /// How the renewed commitment is billed.
    public var commitmentRenewalBillingPlanType: BillingPlanType?
    /// When the commitment renews.
    public var commitmentRenewalDate: Date?
    /// The price of the renewed commitment in milliunits.
    public var commitmentRenewalPrice: Int64?

    /// Makes commitment info with every field absent.
    public init() {}
}
