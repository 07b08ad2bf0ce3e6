/// The platform on which the customer first bought the app.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/purchaseplatform)
public struct PurchasePlatform: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// iOS, iPadOS or an iOS app on a Mac.
    public static let iOS = PurchasePlatform(rawValue: "iOS")
    /// macOS.
    public static let macOS = PurchasePlatform(rawValue: "macOS")
    /// tvOS.
    public static let tvOS = PurchasePlatform(rawValue: "tvOS")
    /// visionOS.
    public static let visionOS = PurchasePlatform(rawValue: "visionOS")

    public static let knownValues: [PurchasePlatform] = [.iOS, .macOS, .tvOS, .visionOS]
}
