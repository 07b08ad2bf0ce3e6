import Foundation
import OpenStoreKit

/// A seed-style shop: it sells through the store views (a product view per gem pack, the plans of
/// the Shop Plus group) and counts what it sells in its `Transaction.updates` listener, started
/// when the app starts, before it is connected — as the StoreKit views tutorials do. The views'
/// buttons return nothing; every transaction arrives through the listener, which counts the gems
/// once per transaction and finishes it.
@MainActor
final class GemStore {
    static let gemPacks = ["com.example.shop.gems.small": 10, "com.example.shop.gems.chest": 60]
    static let plansGroup = "21000001"
    static let plans = ["com.example.shop.plus.premium.yearly", "com.example.shop.plus.premium.monthly",
                        "com.example.shop.plus.standard.monthly", "com.example.shop.plus.basic.weekly"]

    private(set) var gems = 0
    private(set) var counted: Set<UInt64> = []
    /// What `.onInAppPurchaseCompletion` reported, in order.
    private(set) var completions: [String] = []
    private var listener: Task<Void, Never>?

    init() {
        listener = Task { [weak self] in
            for await update in Transaction.updates {
                await self?.handle(update)
            }
        }
    }

    /// The environment the views run in: completion reports kept for the narration.
    var environment: StoreViewEnvironment {
        StoreViewEnvironment(onPurchaseCompletion: { product, result in
            let words: String
            switch result {
            case .success(.success): words = "purchased"
            case .success(.pending): words = "pending"
            case .success(.userCancelled): words = "cancelled"
            case .success: words = "other"
            case .failure(let error): words = "failed: \(error)"
            }
            Task { @MainActor [weak self] in self?.completions.append("\(product.id) \(words)") }
        })
    }

    /// What the gem packs' product views show.
    func gemShelf() async -> StoreViewModel {
        await StoreViewModel.load(ids: Array(Self.gemPacks.keys).sorted(), environment: environment)
    }

    /// What the subscription store view shows.
    func planShelf() async -> SubscriptionStoreViewModel {
        await SubscriptionStoreViewModel.load(groupID: Self.plansGroup, productIDs: Self.plans, environment: environment)
    }

    /// Counts a verified gem pack once, then finishes whatever arrived.
    private func handle(_ update: VerificationResult<Transaction>) async {
        guard case .verified(let transaction) = update else { return }
        if let gemsPerPack = Self.gemPacks[transaction.productID], !counted.contains(transaction.id), transaction.revocationDate == nil {
            gems += gemsPerPack * transaction.purchasedQuantity
            counted.insert(transaction.id)
        }
        await transaction.finish()
    }

    func stop() { listener?.cancel() }
}
