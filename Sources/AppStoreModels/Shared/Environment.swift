/// The server environment that produced a signed payload.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/environment)
public struct Environment: AppStoreEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The production App Store.
    public static let production = Environment(rawValue: "Production")
    /// The sandbox App Store.
    public static let sandbox = Environment(rawValue: "Sandbox")
    /// StoreKit Testing in Xcode.
    public static let xcode = Environment(rawValue: "Xcode")
    /// Local unit testing.
    public static let localTesting = Environment(rawValue: "LocalTesting")

    public static let knownValues: [Environment] = [.sandbox, .production, .xcode, .localTesting]
}
