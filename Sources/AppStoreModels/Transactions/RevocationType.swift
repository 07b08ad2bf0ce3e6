/// The kind of refund or revocation.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/revocationtype)
public struct RevocationType: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A full refund.
    public static let refundFull = RevocationType(rawValue: "REFUND_FULL")
    /// A prorated refund.
    public static let refundProrated = RevocationType(rawValue: "REFUND_PRORATED")
    /// Access removed from a family member.
    public static let familyRevoke = RevocationType(rawValue: "FAMILY_REVOKE")

    public static let knownValues: [RevocationType] = [.refundFull, .refundProrated, .familyRevoke]
}
