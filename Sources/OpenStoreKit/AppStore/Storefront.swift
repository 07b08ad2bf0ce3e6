import Foundation
import Synchronization
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

    /// The account's storefront each time it changes (the customer moves to another country or
    /// region). A listener started before the app sets ``StoreClient/default`` waits for it.
    public static var updates: Storefronts { feed(client: StoreClient.current) }

    /// The endless sequence of storefront changes of a device's account.
    public typealias Storefronts = ClientFeed<Storefront>

    static func feed(client: StoreClient?) -> Storefronts {
        ClientFeed(client: client, channel: .storefronts) { client, updates in
            updates.compactMap { update in
                guard let code = update.storefrontCountryCode, let known = StoreKitCatalog.Storefront(code: code) else { return nil }
                let storefront = Storefront(known)
                client.observedStorefront.withLock { $0 = storefront }
                return storefront
            }
        }
    }

    init(_ storefront: StoreKitCatalog.Storefront) {
        self.init(countryCode: storefront.countryCode, id: storefront.id, currencyCode: storefront.currency)
    }
}

extension StoreClient {
    /// `Storefront.updates` for this device's account.
    public var storefrontUpdates: Storefront.Storefronts { Storefront.feed(client: self) }

    /// `Storefront.current` for this device's account.
    public func storefront() async -> Storefront? {
        do {
            let storefront = Storefront(try await transport.storefront(device: device))
            observedStorefront.withLock { $0 = storefront }
            return storefront
        } catch {
            StoreDiagnostics.report("the storefront is unknown: \(error)")
            return nil
        }
    }
}
