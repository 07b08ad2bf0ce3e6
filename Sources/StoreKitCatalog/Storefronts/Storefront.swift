/// An App Store storefront: the country or region whose store a customer buys in.
public struct Storefront: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The ISO 3166-1 alpha-3 code, such as `USA`; what `Storefront.countryCode` and the
    /// transaction's `storefront` field carry.
    public let countryCode: String
    /// Apple's numeric storefront identifier, such as `143441`; the transaction's `storefrontId`.
    public let id: String
    /// The ISO 4217 code of the currency prices are charged in.
    public let currency: String
    /// The ISO 3166-1 alpha-2 code, such as `US`.
    public let regionCode: String
    /// The English name of the country or region.
    public let name: String

    public init(countryCode: String, id: String, currency: String, regionCode: String, name: String) {
        self.countryCode = countryCode
        self.id = id
        self.currency = currency
        self.regionCode = regionCode
        self.name = name
    }

    /// The storefront with this alpha-3 (or alpha-2) code, in any letter case; `nil` if unknown.
    public init?(code: String) {
        let upper = code.uppercased()
        guard let storefront = Self.byCountryCode[upper] ?? Self.byRegionCode[upper] else { return nil }
        self = storefront
    }

    /// The storefront with this numeric identifier.
    public init?(id: String) {
        guard let storefront = Self.byIdentifier[id] else { return nil }
        self = storefront
    }

    /// The United States storefront, StoreKit Testing's default.
    public static let unitedStates = Storefront(code: "USA")!

    public var description: String { "\(countryCode) (\(id), \(currency))" }

    private static let byCountryCode = Dictionary(uniqueKeysWithValues: all.map { ($0.countryCode, $0) })
    private static let byRegionCode = Dictionary(uniqueKeysWithValues: all.map { ($0.regionCode, $0) })
    private static let byIdentifier = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0) })
}
