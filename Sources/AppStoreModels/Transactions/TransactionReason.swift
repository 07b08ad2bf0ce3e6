/// Whether a transaction is a customer's purchase or an automatic renewal.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/transactionreason)
public struct TransactionReason: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The customer initiated the purchase.
    public static let purchase = TransactionReason(rawValue: "PURCHASE")
    /// The App Store renewed an auto-renewable subscription.
    public static let renewal = TransactionReason(rawValue: "RENEWAL")

    public static let knownValues: [TransactionReason] = [.purchase, .renewal]
}
