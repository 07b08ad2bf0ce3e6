/// Whether the customer bought the product or has it through Family Sharing.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/inappownershiptype)
public struct InAppOwnershipType: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The transaction belongs to a family member who benefits from the service.
    public static let familyShared = InAppOwnershipType(rawValue: "FAMILY_SHARED")
    /// The transaction belongs to the purchaser.
    public static let purchased = InAppOwnershipType(rawValue: "PURCHASED")

    public static let knownValues: [InAppOwnershipType] = [.familyShared, .purchased]
}
