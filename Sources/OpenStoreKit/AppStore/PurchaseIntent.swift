import Foundation

/// A purchase the customer started on the App Store (a promoted in-app purchase), as StoreKit's
/// `PurchaseIntent`: the app decides whether and when to complete it with `product.purchase()`.
public struct PurchaseIntent: Identifiable, Hashable, Sendable {
    public typealias ID = Product.ID

    /// The product the customer chose.
    public let product: Product
    /// The promotional or win-back offer the customer chose with it, if any.
    public let offer: Product.SubscriptionOffer?
    /// The product's identifier.
    public var id: Product.ID { product.id }

    /// The purchase intents sent to this app, as they arrive (from `TestSession.sendPurchaseIntent`,
    /// `storekit purchase-intent` or the transaction manager). A listener started before the app sets
    /// ``StoreClient/default`` waits for it. Intents for products that cannot be loaded are skipped.
    public static var intents: PurchaseIntents { feed(client: StoreClient.current) }

    /// The endless sequence of purchase intents for a device.
    public typealias PurchaseIntents = ClientFeed<PurchaseIntent>

    static func feed(client: StoreClient?) -> PurchaseIntents {
        ClientFeed(client: client, channel: .purchaseIntents) { client, updates in
            var intents: [PurchaseIntent] = []
            for update in updates {
                guard let productID = update.productID else { continue }
                do {
                    guard let product = try await client.products(for: [productID]).first else {
                        StoreDiagnostics.report("a purchase intent for \(productID) was skipped: the product is not for sale")
                        continue
                    }
                    let offers = (product.subscription?.promotionalOffers ?? []) + (product.subscription?.winBackOffers ?? [])
                    intents.append(PurchaseIntent(product: product, offer: update.offerID.flatMap { id in offers.first { $0.id == id } }))
                } catch {
                    StoreDiagnostics.report("a purchase intent for \(productID) was skipped: \(error)")
                }
            }
            return intents
        }
    }
}

extension StoreClient {
    /// `PurchaseIntent.intents` for this device.
    public var purchaseIntents: PurchaseIntent.PurchaseIntents { PurchaseIntent.feed(client: self) }
}
