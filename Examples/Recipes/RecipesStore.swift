import Foundation
import OpenStoreKit

/// The recipes app's store logic.
///
/// - A "pro" unlock and a membership subscription group.
/// - Purchases carry the app's account token for the signed-in user.
/// - Ask to Buy: a pending purchase is approved later and arrives through `Transaction.updates`.
/// - Entitlements are rebuilt from `Transaction.currentEntitlements`, skipping revoked ones.
/// - `hasActivePlan` comes from subscription statuses: subscribed or in grace, with both the
///   transaction and the renewal info verified.
/// - Customers who bought the app before in-app purchases existed keep "pro" (grandfathering by
///   the app transaction's original purchase date).
/// - Every delivery goes through an ``EntitlementCenter``: recorded in the journal before the
///   transaction is finished.
@MainActor
final class RecipesStore {
    static let proID = "com.example.recipes.pro"
    static let membershipGroupID = "6E0B0002"
    static let membershipIDs = ["com.example.recipes.membership.monthly", "com.example.recipes.membership.yearly"]

    /// Customers who got the app before this date keep "pro" without buying it.
    let grandfatheringCutoff: Date
    /// The signed-in user, as the app identifies them.
    let userToken: UUID
    let center: EntitlementCenter

    private(set) var products: [Product] = []
    private(set) var entitledProductIDs: Set<String> = []
    private(set) var isGrandfathered = false
    private(set) var hasActivePlan = false

    init(journal: DeliveryJournal, userToken: UUID, grandfatheringCutoff: Date) {
        self.center = EntitlementCenter(journal: journal)
        self.userToken = userToken
        self.grandfatheringCutoff = grandfatheringCutoff
    }

    var hasPro: Bool { isGrandfathered || entitledProductIDs.contains(Self.proID) }

    /// Launch: products, delivery of anything waiting, the updates listener, then the entitlement state.
    func start() async throws {
        products = try await Product.products(for: [Self.proID] + Self.membershipIDs).sorted { $0.price < $1.price }
        await center.start()
        try await refresh()
    }

    func stop() async {
        await center.stop()
    }

    /// Buys with the user's account token. `.pending` means a parent has to approve it.
    func buy(_ productID: String) async throws -> Product.PurchaseResult {
        guard let product = products.first(where: { $0.id == productID }) else { throw StoreKitError.unknown }
        let result = try await center.purchase(product, options: [.appAccountToken(userToken)])
        try await refresh()
        return result
    }

    /// Rebuilds what the user has from the App Store's signed state.
    func refresh() async throws {
        var entitled: Set<String> = []
        for await result in Transaction.currentEntitlements {
            guard case .verified(let transaction) = result, transaction.revocationDate == nil else { continue }
            entitled.insert(transaction.productID)
        }
        entitledProductIDs = entitled

        if case .verified(let appTransaction) = try await AppTransaction.shared {
            isGrandfathered = appTransaction.originalPurchaseDate < grandfatheringCutoff
        } else {
            isGrandfathered = false
        }

        hasActivePlan = try await Product.SubscriptionInfo.status(for: Self.membershipGroupID).contains { status in
            guard case .verified = status.transaction, case .verified = status.renewalInfo else { return false }
            return status.state == .subscribed || status.state == .inGracePeriod
        }
    }
}
