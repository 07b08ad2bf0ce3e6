/// Why the App Store refunded or revoked a transaction.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/revocationreason)
public struct RevocationReason: AppStoreEnumeration {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Refunded for another reason, such as an accidental purchase.
    public static let refundedForOtherReason = RevocationReason(rawValue: 0)
    /// Refunded because of an actual or perceived issue in the app.
    public static let refundedDueToIssue = RevocationReason(rawValue: 1)

    public static let knownValues: [RevocationReason] = [.refundedForOtherReason, .refundedDueToIssue]
}
