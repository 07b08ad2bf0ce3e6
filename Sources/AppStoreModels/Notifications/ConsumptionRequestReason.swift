/// Why the customer asked for a refund.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/consumptionrequestreason)
public struct ConsumptionRequestReason: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer did not mean to buy.
    public static let unintendedPurchase = ConsumptionRequestReason(rawValue: "UNINTENDED_PURCHASE")
    /// The customer did not receive what they bought.
    public static let fulfillmentIssue = ConsumptionRequestReason(rawValue: "FULFILLMENT_ISSUE")
    /// The customer was not satisfied.
    public static let unsatisfiedWithPurchase = ConsumptionRequestReason(rawValue: "UNSATISFIED_WITH_PURCHASE")
    /// A legal reason.
    public static let legal = ConsumptionRequestReason(rawValue: "LEGAL")
    /// Another reason.
    public static let other = ConsumptionRequestReason(rawValue: "OTHER")

    public static let knownValues: [ConsumptionRequestReason] = [.unintendedPurchase, .fulfillmentIssue, .unsatisfiedWithPurchase, .legal, .other]
}
