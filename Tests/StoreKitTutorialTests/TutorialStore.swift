// Store code as StoreKit 2 tutorials write it, with only `import StoreKit`: qualified names because
// SwiftUI also has a `Transaction`, a listener started in `init` (before anything is connected),
// `Task.detached`, state changed on the main actor (as Apple's sample does), `UserDefaults` from the
// Foundation that `import StoreKit` brings. Nothing here knows it runs on OpenStoreKit.
import StoreKit

typealias RenewalState = StoreKit.Product.SubscriptionInfo.RenewalState

enum StoreError: Error {
    case failedVerification
}

final class TutorialStore {
    static let productIDs = ["com.example.shop.pro", "com.example.shop.character.wizard", "com.example.shop.gems.small",
                             "com.example.shop.plus.standard.monthly", "com.example.shop.plus.premium.yearly"]

    private(set) var products: [Product] = []
    private(set) var purchasedIdentifiers: Set<String> = []
    private(set) var gems = 0
    private(set) var subscriptionState: RenewalState?
    private(set) var lastUpdate: StoreKit.Transaction?

    var updateListenerTask: Task<Void, Error>? = nil

    init() {
        // Start a transaction listener as close to app launch as possible so you don't miss any transactions.
        updateListenerTask = listenForTransactions()
        _ = UserDefaults.standard.bool(forKey: "hasSeenPaywall")
    }

    deinit {
        updateListenerTask?.cancel()
    }

    func listenForTransactions() -> Task<Void, Error> {
        return Task.detached {
            // Iterate through any transactions that don't come from a direct call to `purchase()`.
            for await result in StoreKit.Transaction.updates {
                do {
                    let transaction = try self.checkVerified(result)
                    // Deliver products to the user.
                    await self.deliver(transaction)
                    // Always finish a transaction.
                    await transaction.finish()
                } catch {
                    // StoreKit has a transaction that fails verification. Don't deliver content to the user.
                    print("Transaction failed verification")
                }
            }
        }
    }

    @MainActor
    func deliver(_ transaction: StoreKit.Transaction) async {
        if transaction.productType == .consumable { gems += transaction.purchasedQuantity * 10 }
        await updateCustomerProductStatus()
        lastUpdate = transaction
    }

    @MainActor
    func requestProducts() async {
        do {
            products = try await Product.products(for: TutorialStore.productIDs).sorted { $0.price < $1.price }
        } catch {
            print("Failed product request from the App Store server: \(error)")
        }
    }

    @MainActor
    func purchase(_ product: Product) async throws -> StoreKit.Transaction? {
        // Begin purchasing the `Product` the user selects.
        let result = try await product.purchase()

        switch result {
        case .success(let verification):
            // Check whether the transaction is verified. If it isn't, this function rethrows the verification error.
            let transaction = try checkVerified(verification)
            // The transaction is verified. Deliver content to the user.
            if transaction.productType == .consumable { gems += transaction.purchasedQuantity * 10 }
            await updateCustomerProductStatus()
            // Always finish a transaction.
            await transaction.finish()
            return transaction
        case .userCancelled, .pending:
            return nil
        default:
            return nil
        }
    }

    func isPurchased(_ product: Product) async throws -> Bool {
        purchasedIdentifiers.contains(product.id)
    }

    func checkVerified<T>(_ result: VerificationResult<T>) throws -> T {
        // Check whether the JWS passes StoreKit verification.
        switch result {
        case .unverified:
            // StoreKit parses the JWS, but it fails verification.
            throw StoreError.failedVerification
        case .verified(let safe):
            // The result is verified. Return the unwrapped value.
            return safe
        }
    }

    @MainActor
    func updateCustomerProductStatus() async {
        var purchased: Set<String> = []
        // Iterate through all of the user's purchased products.
        for await result in StoreKit.Transaction.currentEntitlements {
            do {
                // Check whether the transaction is verified. If it isn't, catch `failedVerification` error.
                let transaction = try checkVerified(result)
                if transaction.revocationDate == nil {
                    purchased.insert(transaction.productID)
                }
            } catch {
                print("Transaction failed verification")
            }
        }
        purchasedIdentifiers = purchased
        // Check the `subscriptionGroupStatus` to learn the auto-renewable subscription state.
        if let subscription = products.first(where: { $0.type == .autoRenewable })?.subscription {
            subscriptionState = try? await subscription.status.first?.state
        }
    }
}
