import Foundation

/// What StoreKit's `ProductView(id:)` shows for one product, and its buy button.
///
/// Load one with ``load(id:environment:)``; it is a snapshot: after a purchase (or any update) load it
/// again. A product that does not load is `unavailable`, as the view's unavailable state.
public struct ProductViewModel: Identifiable, Sendable {
    /// Where the product stands for the customer.
    public enum State: String, Hashable, Sendable {
        /// For sale, and the customer does not have it (consumables are always available).
        case available
        /// A non-consumable or non-renewing subscription the customer is entitled to.
        case owned
        /// An auto-renewable subscription the customer is entitled to now.
        case subscribed
        /// Not for sale in this storefront, or unknown.
        case unavailable
    }

    public let id: String
    /// `nil` when unavailable.
    public let product: Product?
    public let displayName: String
    public let description: String
    /// The price as the button shows it, with the period for subscriptions ("$9.99/month").
    public let priceText: String
    /// The introductory or win-back offer the customer is eligible for, if any.
    public let offer: Product.SubscriptionOffer?
    /// The offer in words ("1 week free").
    public let offerText: String?
    public let state: State

    /// The buy button's label: the price, or what the customer already has.
    public var buttonLabel: String {
        switch state {
        case .available: return offer.map { $0.paymentMode == .freeTrial ? "Try It Free" : $0.displayPrice } ?? priceText
        case .owned: return "Purchased"
        case .subscribed: return "Subscribed"
        case .unavailable: return "Unavailable"
        }
    }

    /// Whether the buy button does anything.
    public var canBuy: Bool { state == .available }

    /// Loads what the view shows for `id` on the environment's client.
    public static func load(id: String, environment: StoreViewEnvironment = StoreViewEnvironment()) async -> ProductViewModel {
        await StoreViewSnapshot.load(ids: [id], environment: environment).productModel(id: id)
    }

    /// Buys the product as the view's button does (see ``StoreViewEnvironment/buy(_:options:)``).
    public func buy(environment: StoreViewEnvironment = StoreViewEnvironment()) async {
        guard let product, canBuy else { return }
        await environment.buy(product)
    }

    static func unavailable(_ id: String) -> ProductViewModel {
        ProductViewModel(id: id, product: nil, displayName: id, description: "", priceText: "", offer: nil, offerText: nil, state: .unavailable)
    }
}

/// What the views read from the store at once: products, entitlements, eligibility and statuses.
struct StoreViewSnapshot: Sendable {
    var products: [String: Product] = [:]
    /// Product identifiers the customer is entitled to now (verified entitlements only).
    var entitled: Set<String> = []
    /// Intro-offer eligibility by subscription group.
    var introEligible: [String: Bool] = [:]
    /// The customer's own status in each group, and the win-back offers its renewal info names.
    var statuses: [String: Product.SubscriptionInfo.Status] = [:]
    var winBackOfferIDs: [String: [String]] = [:]
    /// Why the products did not load.
    var loadError: String?

    static func load(ids: [String], environment: StoreViewEnvironment) async -> StoreViewSnapshot {
        let client = environment.resolvedClient
        var snapshot = StoreViewSnapshot()
        let products: [Product]
        do {
            products = try await client.products(for: ids)
        } catch {
            products = []
            snapshot.loadError = (error as? any LocalizedError)?.errorDescription ?? String(describing: error)
        }
        for product in products { snapshot.products[product.id] = product }
        for await result in client.currentEntitlements {
            if case .verified(let transaction) = result { snapshot.entitled.insert(transaction.productID) }
        }
        for group in Set(products.compactMap { $0.subscription?.subscriptionGroupID }) {
            snapshot.introEligible[group] = await client.isEligibleForIntroOffer(groupID: group)
            let statuses = (try? await client.subscriptionStatuses(groupID: group)) ?? []
            // The customer's own subscription: the one not shared by a family member, else any.
            let own = statuses.first { $0.transaction.unsafePayloadValue.ownershipType != .familyShared } ?? statuses.first
            if let own {
                snapshot.statuses[group] = own
                if case .verified(let renewal) = own.renewalInfo { snapshot.winBackOfferIDs[group] = renewal.eligibleWinBackOfferIDs }
            }
        }
        return snapshot
    }

    /// The offer StoreKit's views show for a product: the introductory offer while the customer is
    /// eligible for it, else a win-back offer the renewal info names after the subscription expired.
    func eligibleOffer(for product: Product) -> Product.SubscriptionOffer? {
        guard let subscription = product.subscription else { return nil }
        let group = subscription.subscriptionGroupID
        if introEligible[group] == true, let intro = subscription.introductoryOffer { return intro }
        let winBack = winBackOfferIDs[group] ?? []
        return subscription.winBackOffers.first { offer in offer.id.map(winBack.contains) ?? false }
    }

    func productModel(id: String) -> ProductViewModel {
        guard let product = products[id] else { return .unavailable(id) }
        let offer = eligibleOffer(for: product)
        let state: ProductViewModel.State
        switch product.type {
        case .consumable: state = .available
        case .autoRenewable: state = entitled.contains(id) ? .subscribed : .available
        default: state = entitled.contains(id) ? .owned : .available
        }
        return ProductViewModel(id: id, product: product, displayName: product.displayName, description: product.description,
                                priceText: StoreViewText.price(product), offer: offer, offerText: offer.map(StoreViewText.offer),
                                state: state)
    }
}
