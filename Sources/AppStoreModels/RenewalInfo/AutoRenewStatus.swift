/// Whether an auto-renewable subscription renews at the end of its period.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/autorenewstatus)
public struct AutoRenewStatus: AppStoreEnumeration {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Automatic renewal is off.
    public static let off = AutoRenewStatus(rawValue: 0)
    /// Automatic renewal is on.
    public static let on = AutoRenewStatus(rawValue: 1)

    public static let knownValues: [AutoRenewStatus] = [.off, .on]
}
