// Store logic shaped like Apple's StoreKit 2 sample app (SKDemo), written against OpenStoreKit.
//
// The StoreKit-facing code is what a StoreKit app writes; only the import differs (`OpenStoreKit`
// for `StoreKit`). Two platform differences are not about StoreKit: Combine's `ObservableObject`
// and `@Published` do not exist on Linux (the properties are plain), and the product list is a
// dictionary here where the sample reads a property list from the app bundle.

import Foundation
import OpenStoreKit

typealias Transaction = OpenStoreKit.Transaction
typealias RenewalInfo = OpenStoreKit.Product.SubscriptionInfo.RenewalInfo
typealias RenewalState = OpenStoreKit.Product.SubscriptionInfo.RenewalState

public enum StoreError: Error {
    case failedVerification
}

/// Subscription levels, lowest first.
public enum GardenerTier: Int, Comparable {
    case none = 0
    case basic = 1
    case plus = 2
    case master = 3

    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

class Store {
    private(set) var tools: [Product]
    private(set) var water: [Product]
    private(set) var subscriptions: [Product]
    private(set) var nonRenewables: [Product]

    private(set) var purchasedTools: [Product] = []
    private(set) var purchasedNonRenewableSubscriptions: [Product] = []
    private(set) var purchasedSubscriptions: [Product] = []
    private(set) var subscriptionGroupStatus: RenewalState?

    var updateListenerTask: Task<Void, Error>? = nil

    private let productIdToEmoji: [String: String]

    init() {
        productIdToEmoji = Store.loadProductIdToEmojiData()

        tools = []
        water = []
        subscriptions = []
        nonRenewables = []

        // Listen for transactions from the start, so none is missed.
        updateListenerTask = listenForTransactions()

        Task {
            await requestProducts()
            await updateCustomerProductStatus()
        }
    }

    deinit {
        updateListenerTask?.cancel()
    }

    static func loadProductIdToEmojiData() -> [String: String] {
        [
            "consumable.water.small": "💧",
            "consumable.water.large": "🛢️",
            "nonconsumable.tool.shovel": "🪏",
            "nonconsumable.tool.rake": "🧹",
            "subscription.gardener.basic": "🌱",
            "subscription.gardener.plus": "🌿",
            "subscription.gardener.master": "🌳",
            "nonRenewing.season": "🎟️",
        ]
    }

    func listenForTransactions() -> Task<Void, Error> {
        return Task.detached {
            // Transactions that do not come from a purchase call on this device.
            for await result in Transaction.updates {
                do {
                    let transaction = try self.checkVerified(result)

                    await self.updateCustomerProductStatus()

                    await transaction.finish()
                } catch {
                    print("A transaction did not pass verification")
                }
            }
        }
    }

    @MainActor
    func requestProducts() async {
        do {
            let storeProducts = try await Product.products(for: productIdToEmoji.keys)

            var newTools: [Product] = []
            var newSubscriptions: [Product] = []
            var newNonRenewables: [Product] = []
            var newWater: [Product] = []

            for product in storeProducts {
                switch product.type {
                case .consumable:
                    newWater.append(product)
                case .nonConsumable:
                    newTools.append(product)
                case .autoRenewable:
                    newSubscriptions.append(product)
                case .nonRenewable:
                    newNonRenewables.append(product)
                default:
                    print("Unknown product type")
                }
            }

            tools = sortByPrice(newTools)
            subscriptions = sortByPrice(newSubscriptions)
            nonRenewables = sortByPrice(newNonRenewables)
            water = sortByPrice(newWater)
        } catch {
            print("Could not load products: \(error)")
        }
    }

    func purchase(_ product: Product) async throws -> Transaction? {
        let result = try await product.purchase()

        switch result {
        case .success(let verification):
            let transaction = try checkVerified(verification)

            await updateCustomerProductStatus()

            await transaction.finish()

            return transaction
        case .userCancelled, .pending:
            return nil
        default:
            return nil
        }
    }

    func isPurchased(_ product: Product) async throws -> Bool {
        switch product.type {
        case .nonRenewable:
            return purchasedNonRenewableSubscriptions.contains(product)
        case .nonConsumable:
            return purchasedTools.contains(product)
        case .autoRenewable:
            return purchasedSubscriptions.contains(product)
        default:
            return false
        }
    }

    func checkVerified<T>(_ result: VerificationResult<T>) throws -> T {
        switch result {
        case .unverified:
            throw StoreError.failedVerification
        case .verified(let safe):
            return safe
        }
    }

    @MainActor
    func updateCustomerProductStatus() async {
        var purchasedTools: [Product] = []
        var purchasedSubscriptions: [Product] = []
        var purchasedNonRenewableSubscriptions: [Product] = []

        for await result in Transaction.currentEntitlements {
            do {
                let transaction = try checkVerified(result)

                switch transaction.productType {
                case .nonConsumable:
                    if let tool = tools.first(where: { $0.id == transaction.productID }) {
                        purchasedTools.append(tool)
                    }
                case .nonRenewable:
                    if let nonRenewable = nonRenewables.first(where: { $0.id == transaction.productID }),
                       transaction.productID == "nonRenewing.season" {
                        // A season ticket lasts one year from purchase; the app decides.
                        let currentDate = Date()
                        let expirationDate = Calendar(identifier: .gregorian).date(byAdding: DateComponents(year: 1),
                                                                                   to: transaction.purchaseDate)!
                        if currentDate < expirationDate {
                            purchasedNonRenewableSubscriptions.append(nonRenewable)
                        }
                    }
                case .autoRenewable:
                    if let subscription = subscriptions.first(where: { $0.id == transaction.productID }) {
                        purchasedSubscriptions.append(subscription)
                    }
                default:
                    break
                }
            } catch {
                print()
            }
        }

        self.purchasedTools = purchasedTools
        self.purchasedNonRenewableSubscriptions = purchasedNonRenewableSubscriptions
        self.purchasedSubscriptions = purchasedSubscriptions

        // The group's status decides what the customer gets; the first status is enough here.
        subscriptionGroupStatus = try? await subscriptions.first?.subscription?.status.first?.state
    }

    func emoji(for productId: String) -> String {
        return productIdToEmoji[productId]!
    }

    func sortByPrice(_ products: [Product]) -> [Product] {
        products.sorted(by: { return $0.price < $1.price })
    }

    func tier(for productId: String) -> GardenerTier {
        switch productId {
        case "subscription.gardener.basic":
            return .basic
        case "subscription.gardener.plus":
            return .plus
        case "subscription.gardener.master":
            return .master
        default:
            return .none
        }
    }
}
