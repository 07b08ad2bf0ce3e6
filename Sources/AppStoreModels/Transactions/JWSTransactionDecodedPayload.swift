import Foundation

/// A transaction as the App Store signs it: the payload of a `signedTransactionInfo` JWS.
///
/// Every field is optional because Apple omits what does not apply (for example `expiresDate` on a
/// consumable). Unknown enumeration values are kept. `deviceVerification` and
/// `deviceVerificationNonce` appear in transactions signed for a device (Xcode and this package's local
/// App Store); Apple's server payloads leave them out.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/jwstransactiondecodedpayload)
public struct JWSTransactionDecodedPayload: SignedPayload {
    /// The original transaction identifier of a purchase; renewals and restores share it.
    public var originalTransactionId: String?
    /// The unique identifier of this transaction.
    public var transactionId: String?
    /// The identifier of a subscription purchase event across devices, including renewals.
    public var webOrderLineItemId: String?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The product identifier of the in-app purchase.
    public var productId: String?
    /// The identifier of the subscription group the subscription belongs to.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer (the renewal date for renewals).
    public var purchaseDate: Date?
    /// The purchase date of the original transaction.
    public var originalPurchaseDate: Date?
    /// When the subscription expires or renews.
    public var expiresDate: Date?
    /// The number of consumable products bought.
    public var quantity: Int32?
    /// The type of the product.
    public var type: ProductType?
    /// The UUID the app attached to the purchase.
    public var appAccountToken: UUID?
    /// Whether the customer bought the product or has it through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// Why the App Store refunded or revoked the transaction.
    public var revocationReason: RevocationReason?
    /// When the App Store refunded or revoked the transaction.
    public var revocationDate: Date?
    /// Whether the customer upgraded to another subscription.
    public var isUpgraded: Bool?
    /// The kind of subscription offer applied.
    public var offerType: OfferType?
    /// The identifier of the offer applied (the reference name for offer codes).
    public var offerIdentifier: String?
    /// The server environment.
    public var environment: Environment?
    /// The three-letter code of the App Store storefront.
    public var storefront: String?
    /// The numeric identifier of the App Store storefront.
    public var storefrontId: String?
    /// Whether this is a purchase or a renewal.
    public var transactionReason: TransactionReason?
    /// The ISO 4217 currency code of the price.
    public var currency: String?
    /// The price in milliunits of the currency (1990 is 1.99).
    public var price: Int64?
    /// The payment mode of the offer applied.
    public var offerDiscountType: OfferDiscountType?
    /// The identifier of the customer's app download transaction.
    public var appTransactionId: String?
    /// The duration of the offer applied, as an ISO 8601 duration.
    public var offerPeriod: String?
    /// The kind of refund or revocation.
    public var revocationType: RevocationType?
    /// The refunded share of the price in milliunits of a percent.
    public var revocationPercentage: Int32?
    /// Advanced Commerce API data, passed through unchanged.
    public var advancedCommerceInfo: JSONValue?
    /// How a subscription with a commitment is billed.
    public var billingPlanType: BillingPlanType?
    /// The commitment of a subscription billed monthly over twelve months.
    public var commitmentInfo: TransactionCommitmentInfo?
    /// Base64 SHA-384 of the nonce and the device verification identifier.
    public var deviceVerification: String?
    /// The nonce used for `deviceVerification`.
    public var deviceVerificationNonce: UUID?

    /// Makes a payload with every field absent.
    public init() {}

    public var validationDate: Date? { signedDate }
}

/// The commitment of a transaction billed monthly over a twelve-month commitment.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/commitmentinfo)
public struct TransactionCommitmentInfo: Codable, Hashable, Sendable {
    /// The billing period this transaction pays for, counting from 1.
    public var billingPeriodNumber: Int32?
    /// When the commitment ends.
    public var commitmentExpiresDate: Date?
    /// The total price of the commitment in milliunits.
    public var commitmentPrice: Int64?
    /// The number of billing periods in the commitment.
    public var totalBillingPeriods: Int32?

    /// Makes commitment info with every field absent.
    public init() {}
}
