import Foundation

/// What StoreKit's `StoreView(ids:)` shows: a product view for each identifier, in the order given
/// (an identifier that does not load shows as unavailable in its place), and the store buttons.
public struct StoreViewModel: Sendable {
    public let products: [ProductViewModel]
    public let buttons: StoreButtons
    /// Why the products could not be loaded (a network error, a simulated `loadProducts` failure),
    /// so a view can say so instead of showing an empty store; `nil` when they loaded.
    public let loadError: String?

    /// Loads the view for `ids` on the environment's client.
    public static func load(ids: [String], environment: StoreViewEnvironment = StoreViewEnvironment()) async -> StoreViewModel {
        let snapshot = await StoreViewSnapshot.load(ids: ids, environment: environment)
        return make(ids: ids, snapshot: snapshot, buttons: await StoreButtons.load(environment: environment))
    }

    /// What a whole storefront shows, read from the store once: a store view of the one-time products
    /// and a subscription store view of each group, sharing the products, entitlements, statuses and
    /// policies they all read.
    public static func loadStorefront(oneTimeIDs: [String], groupIDs: [String], productIDs: [String],
                                      environment: StoreViewEnvironment = StoreViewEnvironment())
        async -> (products: StoreViewModel, groups: [SubscriptionStoreViewModel]) {
        let snapshot = await StoreViewSnapshot.load(ids: productIDs, environment: environment)
        let buttons = await StoreButtons.load(environment: environment)
        return (make(ids: oneTimeIDs, snapshot: snapshot, buttons: buttons),
                groupIDs.map { SubscriptionStoreViewModel.make(groupID: $0, snapshot: snapshot, buttons: buttons, environment: environment) })
    }

    static func make(ids: [String], snapshot: StoreViewSnapshot, buttons: StoreButtons) -> StoreViewModel {
        var seen: Set<String> = []
        return StoreViewModel(products: ids.filter { seen.insert($0).inserted }.map(snapshot.productModel(id:)), buttons: buttons,
                              loadError: snapshot.loadError)
    }
}

/// The buttons StoreKit's views show beside the products (`.storeButton(.visible, for: …)`):
/// restore purchases, redeem a code, and the policies.
public struct StoreButtons: Sendable {
    public let policies: StorePolicies
    let environment: StoreViewEnvironment

    static func load(environment: StoreViewEnvironment) async -> StoreButtons {
        let policies: StorePolicies
        if let own = environment.policies { policies = own } else { policies = await environment.resolvedClient.storePolicies() }
        return StoreButtons(policies: policies, environment: environment)
    }

    /// `.restorePurchases`: `AppStore.sync()`.
    public func restorePurchases() async throws {
        try await environment.resolvedClient.sync()
    }

    /// `.redeemCode`: the offer-code sheet; a code redeemed there arrives through `Transaction.updates`.
    public func redeemCode() async throws {
        try await environment.resolvedClient.presentSheet("offerCodeRedeem")
    }
}
