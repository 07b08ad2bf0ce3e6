import Foundation
import OpenStoreKit

/// The products of the potion shop, by identifier.
enum ShopItem: String, CaseIterable {
    case gems = "com.example.shop.gems.small"
    case gemChest = "com.example.shop.gems.chest"
    case potion = "com.example.shop.potion"
    case wizard = "com.example.shop.character.wizard"

    var isConsumable: Bool { self != .wizard }
}

/// What the player owns on this device: consumables counted here, characters unlocked.
struct Inventory: Codable, Equatable {
    var counts: [String: Int] = [:]
    var unlockedCharacters: Set<String> = []
    /// Transactions already delivered, so a purchase seen twice (purchase call, then updates) counts once.
    var deliveredTransactionIDs: Set<UInt64> = []
}

/// The potion shop's store logic, written as StoreKit code: products fetched by an enum of ids,
/// purchases processed in one place (the purchase call and the `Transaction.updates` listener),
/// consumables counted on the device, characters unlocked, every transaction finished after delivery.
@MainActor
final class PotionShop {
    private(set) var products: [ShopItem: Product] = [:]
    private(set) var inventory: Inventory
    private let inventoryFile: URL
    private var listener: Task<Void, Never>?

    init(inventoryFile: URL) {
        self.inventoryFile = inventoryFile
        self.inventory = (try? JSONDecoder().decode(Inventory.self, from: Data(contentsOf: inventoryFile))) ?? Inventory()
    }

    /// Starts listening for transactions (unfinished ones arrive first), loads the products, and
    /// unlocks the characters the player is entitled to (`Transaction.currentEntitlements`), so a
    /// fresh install or a second device gets them back; consumables are counted on the device.
    func start() async throws {
        listener = Task { [weak self] in
            for await result in Transaction.updates {
                await self?.process(result)
            }
        }
        let loaded = try await Product.products(for: ShopItem.allCases.map(\.rawValue))
        for product in loaded {
            if let item = ShopItem(rawValue: product.id) { products[item] = product }
        }
        await refreshEntitlements()
    }

    /// Unlocks exactly the characters with a verified current entitlement.
    func refreshEntitlements() async {
        var entitled: Set<String> = []
        for await result in Transaction.currentEntitlements {
            if case .verified(let transaction) = result, transaction.productType == .nonConsumable { entitled.insert(transaction.productID) }
        }
        inventory.unlockedCharacters = entitled
        try? save()
    }

    func stop() {
        listener?.cancel()
    }

    /// Buys an item; the result is processed like any other transaction.
    @discardableResult
    func buy(_ item: ShopItem, quantity: Int = 1) async throws -> Bool {
        guard let product = products[item] else { return false }
        let options: Set<Product.PurchaseOption> = item.isConsumable ? [.quantity(quantity)] : []
        switch try await product.purchase(options: options) {
        case .success(let result):
            return await process(result)
        case .pending, .userCancelled:
            return false
        @unknown default:
            return false
        }
    }

    /// Delivers a verified transaction once, saves the inventory, then finishes the transaction.
    @discardableResult
    func process(_ result: VerificationResult<Transaction>) async -> Bool {
        guard case .verified(let transaction) = result else { return false }
        if transaction.revocationDate != nil {
            // Refunded: a character goes away; spent consumables cannot be taken back.
            inventory.unlockedCharacters.remove(transaction.productID)
        } else if !inventory.deliveredTransactionIDs.contains(transaction.id) {
            if transaction.productType == .consumable {
                inventory.counts[transaction.productID, default: 0] += transaction.purchasedQuantity
            } else {
                inventory.unlockedCharacters.insert(transaction.productID)
            }
            inventory.deliveredTransactionIDs.insert(transaction.id)
        }
        do {
            try save()
        } catch {
            return false  // not delivered durably: leave it unfinished, it comes back
        }
        await transaction.finish()
        return true
    }

    /// Uses one of a consumable.
    func use(_ item: ShopItem) -> Bool {
        guard inventory.counts[item.rawValue, default: 0] > 0 else { return false }
        inventory.counts[item.rawValue, default: 0] -= 1
        try? save()
        return true
    }

    func count(of item: ShopItem) -> Int { inventory.counts[item.rawValue, default: 0] }

    private func save() throws {
        try JSONEncoder().encode(inventory).write(to: inventoryFile, options: .atomic)
    }
}
