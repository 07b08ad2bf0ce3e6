// A store manager as most iOS apps write it: an `ObservableObject` with `@Published` state, an
// updates listener started in `init`, products, purchases, entitlements and restore. Written for
// Apple's frameworks (`import StoreKit`, `import Combine`); nothing here knows it runs on OpenStoreKit.
import Combine
import Foundation
import StoreKit

@MainActor
final class StoreManager: ObservableObject {
    @Published private(set) var products: [Product] = []
    @Published private(set) var purchasedProductIDs: Set<String> = []
    @Published private(set) var isRestoring = false

    private let productIDs: [String]
    private var updates: Task<Void, Never>? = nil

    init(productIDs: [String]) {
        self.productIDs = productIDs
        updates = observeTransactionUpdates()
    }

    deinit {
        updates?.cancel()
    }

    private func observeTransactionUpdates() -> Task<Void, Never> {
        Task(priority: .background) { [weak self] in
            for await verificationResult in Transaction.updates {
                guard case .verified(let transaction) = verificationResult else { continue }
                await self?.updatePurchasedProducts()
                await transaction.finish()
            }
        }
    }

    func loadProducts() async throws {
        products = try await Product.products(for: productIDs).sorted { $0.price < $1.price }
    }

    func purchase(_ product: Product) async throws -> Bool {
        let result = try await product.purchase()
        switch result {
        case let .success(.verified(transaction)):
            await transaction.finish()
            await updatePurchasedProducts()
            return true
        case .success(.unverified):
            return false
        case .pending, .userCancelled:
            return false
        @unknown default:
            return false
        }
    }

    func updatePurchasedProducts() async {
        var purchased = Set<String>()
        for await result in Transaction.currentEntitlements {
            guard case .verified(let transaction) = result else { continue }
            if transaction.revocationDate == nil {
                purchased.insert(transaction.productID)
            }
        }
        // Only announce a change when something changed.
        if purchased != purchasedProductIDs {
            purchasedProductIDs = purchased
        }
    }

    func restore() async throws {
        isRestoring = true
        defer { isRestoring = false }
        try await AppStore.sync()
        await updatePurchasedProducts()
    }
}
