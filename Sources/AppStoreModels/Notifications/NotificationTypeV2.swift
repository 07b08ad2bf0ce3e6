/// The kind of event an App Store Server Notification reports.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/notificationtype)
public struct NotificationTypeV2: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer subscribed to an auto-renewable subscription.
    public static let subscribed = NotificationTypeV2(rawValue: "SUBSCRIBED")
    /// The customer changed the subscription's renewal product.
    public static let didChangeRenewalPref = NotificationTypeV2(rawValue: "DID_CHANGE_RENEWAL_PREF")
    /// The customer turned automatic renewal on or off.
    public static let didChangeRenewalStatus = NotificationTypeV2(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    /// The customer redeemed a promotional offer or offer code.
    public static let offerRedeemed = NotificationTypeV2(rawValue: "OFFER_REDEEMED")
    /// The subscription renewed.
    public static let didRenew = NotificationTypeV2(rawValue: "DID_RENEW")
    /// The subscription expired.
    public static let expired = NotificationTypeV2(rawValue: "EXPIRED")
    /// The subscription failed to renew because of a billing issue.
    public static let didFailToRenew = NotificationTypeV2(rawValue: "DID_FAIL_TO_RENEW")
    /// The billing grace period ended without renewing.
    public static let gracePeriodExpired = NotificationTypeV2(rawValue: "GRACE_PERIOD_EXPIRED")
    /// The system informed the customer of a price increase.
    public static let priceIncrease = NotificationTypeV2(rawValue: "PRICE_INCREASE")
    /// The App Store refunded a transaction.
    public static let refund = NotificationTypeV2(rawValue: "REFUND")
    /// The App Store declined a refund request.
    public static let refundDeclined = NotificationTypeV2(rawValue: "REFUND_DECLINED")
    /// The customer asked for a refund of a consumable or subscription; the App Store asks for consumption data.
    public static let consumptionRequest = NotificationTypeV2(rawValue: "CONSUMPTION_REQUEST")
    /// The App Store extended the subscription renewal date.
    public static let renewalExtended = NotificationTypeV2(rawValue: "RENEWAL_EXTENDED")
    /// A family member lost access through Family Sharing.
    public static let revoke = NotificationTypeV2(rawValue: "REVOKE")
    /// A test notification requested through the App Store Server API.
    public static let test = NotificationTypeV2(rawValue: "TEST")
    /// The App Store is extending renewal dates for all eligible subscribers.
    public static let renewalExtension = NotificationTypeV2(rawValue: "RENEWAL_EXTENSION")
    /// The App Store reversed a refund.
    public static let refundReversed = NotificationTypeV2(rawValue: "REFUND_REVERSED")
    /// An external purchase token was created but not reported.
    public static let externalPurchaseToken = NotificationTypeV2(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    /// The customer bought a consumable, non-consumable or non-renewing subscription.
    public static let oneTimeCharge = NotificationTypeV2(rawValue: "ONE_TIME_CHARGE")
    /// A parent or guardian withdrew consent for a child's app use.
    public static let rescindConsent = NotificationTypeV2(rawValue: "RESCIND_CONSENT")
    /// Advanced Commerce: subscription metadata changed.
    public static let metadataUpdate = NotificationTypeV2(rawValue: "METADATA_UPDATE")
    /// Advanced Commerce: a subscription migrated.
    public static let migration = NotificationTypeV2(rawValue: "MIGRATION")
    /// Advanced Commerce: a subscription price changed.
    public static let priceChange = NotificationTypeV2(rawValue: "PRICE_CHANGE")

    public static let knownValues: [NotificationTypeV2] = [.subscribed, .didChangeRenewalPref, .didChangeRenewalStatus, .offerRedeemed, .didRenew, .expired, .didFailToRenew, .gracePeriodExpired, .priceIncrease, .refund, .refundDeclined, .consumptionRequest, .renewalExtended, .revoke, .test, .renewalExtension, .refundReversed, .externalPurchaseToken, .oneTimeCharge, .rescindConsent, .metadataUpdate, .migration, .priceChange]
}
