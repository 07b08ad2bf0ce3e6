// Corpus (Swift 5): a helper library's store class, as the popular StoreKit 2 helpers shape it: one
// `ObservableObject` with `@Published` products and purchased identifiers, `@MainActor` on its methods
// rather than on the class, a listener task started in `start()` and cancelled in `deinit`, and
// subscription changes logged as they arrive. The file imports StoreKit and nothing else: on Apple
// platforms that brings `ObservableObject` and `@Published` with it.
import StoreKit

public class PurchaseHelper: ObservableObject {
    @Published public private(set) var products: [Product]?
    @Published public private(set) var purchasedProducts = [String]()
    @Published public private(set) var log = [String]()

    private let productIDs: [String]
    private var transactionListener: Task<Void, Error>? = nil
    private var statusListener: Task<Void, Error>? = nil

    public init(productIDs: [String]) {
        self.productIDs = productIDs
    }

    deinit {
        transactionListener?.cancel()
        statusListener?.cancel()
    }

    @MainActor public func start() async {
        transactionListener = handleTransactionUpdates()
        statusListener = handleSubscriptionChanges()
        products = try? await Product.products(for: productIDs).sorted { $0.price < $1.price }
        await refreshPurchasedProducts()
    }

    @MainActor public func purchase(_ product: Product) async throws -> Transaction? {
        switch try await product.purchase() {
        case .success(let verification):
            guard case .verified(let transaction) = verification else { return nil }
            await transaction.finish()
            await refreshPurchasedProducts()
            return transaction
        case .userCancelled, .pending:
            return nil
        @unknown default:
            return nil
        }
    }

    @MainActor public func isPurchased(productId: String) -> Bool {
        purchasedProducts.contains(productId)
    }

    @MainActor public func restore() async {
        try? await AppStore.sync()
        await refreshPurchasedProducts()
    }

    @MainActor public func refreshPurchasedProducts() async {
        var purchased = [String]()
        for await result in Transaction.currentEntitlements {
            if case .verified(let transaction) = result, AccessCheck.isActive(transaction) {
                purchased.append(transaction.productID)
            }
        }
        purchasedProducts = purchased.sorted()
    }

    @MainActor private func record(_ line: String) {
        log.append(line)
    }

    private func handleTransactionUpdates() -> Task<Void, Error> {
        Task.detached { [weak self] in
            for await update in Transaction.updates {
                guard case .verified(let transaction) = update else { continue }
                await self?.record(StatusLog.line(for: transaction))
                await self?.refreshPurchasedProducts()
                await transaction.finish()
            }
        }
    }

    private func handleSubscriptionChanges() -> Task<Void, Error> {
        Task.detached { [weak self] in
            for await status in Product.SubscriptionInfo.Status.updates {
                await self?.record(StatusLog.line(for: status))
            }
        }
    }
}
