import Foundation
import StoreKitCatalog

/// The App Store country or region a customer buys in.
public struct Storefront: Identifiable, Hashable, Sendable, CustomStringConvertible {
    /// The ISO 3166-1 alpha-3 country code, such as `USA`.
    public let countryCode: String
    /// Apple's numeric storefront identifier, such as `143441`.
    public let id: String
    /// The storefront's currency.
    public let currency: Locale.Currency?

    init(countryCode: String, id: String, currencyCode: String?) {
        self.countryCode = countryCode
        self.id = id
        self.currency = currencyCode.map { Locale.Currency($0) }
    }

    public var description: String { "\(countryCode) (\(id))" }

    /// The storefront of the customer's account; `nil` when the store cannot be reached.
    public static var current: Storefront? {
        get async { await StoreClient.active.storefront() }
    }
}

extension StoreClient {
    /// `Storefront.current` for this device's account.
    public func storefront() async -> Storefront? {
        do {
            let storefront = try await transport.storefront(device: device)
            return Storefront(countryCode: storefront.countryCode, id: storefront.id, currencyCode: storefront.currency)
        } catch {
            StoreDiagnostics.report("the storefront is unknown: \(error)")
            return nil
        }
    }
}
