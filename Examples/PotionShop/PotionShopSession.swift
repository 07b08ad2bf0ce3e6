import Foundation
import OpenStoreKit
import LocalAppStore

/// A scripted afternoon in the potion shop, against the local App Store.
enum PotionShopSession {
    static let shopFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Shop.storekit")

    struct Summary: Equatable {
        var potions: Int
        var gems: Int
        var hasWizard: Bool
        var unfinished: Int
        /// The wizard on a fresh install on a second phone: restored from `currentEntitlements`.
        var freshInstallHasWizard: Bool
    }

    /// Runs the session; `say` receives the narration.
    @MainActor
    static func run(store server: URL? = nil, say: (String) -> Void) async throws -> Summary {
        let session = try await LocalStore.open(contentsOf: shopFile, bundleID: "com.example.shop", server: server)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("potion-shop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inventoryFile = directory.appendingPathComponent("inventory.json")

        return try await session.withDefaultClient(device: "phone") { _ in
            let shop = PotionShop(inventoryFile: inventoryFile)
            try await shop.start()
            say("Loaded \(shop.products.count) products: " + ShopItem.allCases.compactMap { shop.products[$0] }.map { "\($0.displayName) \($0.displayPrice)" }.joined(separator: ", "))

            try await shop.buy(.potion, quantity: 3)
            say("Bought 3 potions → potions: \(shop.count(of: .potion))")
            try await shop.buy(.gemChest)
            say("Bought a chest of gems → gems: \(shop.count(of: .gemChest))")
            try await shop.buy(.wizard)
            say("Bought the wizard → characters: \(shop.inventory.unlockedCharacters.sorted().joined(separator: ", "))")
            _ = shop.use(.potion)
            say("Drank a potion → potions: \(shop.count(of: .potion))")

            // A purchase made elsewhere (the transaction manager) reaches the running app through updates.
            let outside = try await session.buyProduct(identifier: ShopItem.potion.rawValue, options: [.quantity(2)])
            try await waitUntil { shop.inventory.deliveredTransactionIDs.contains(outside.id) }
            say("2 potions bought outside the app arrived through Transaction.updates → potions: \(shop.count(of: .potion))")

            // Relaunch with the same inventory file: nothing is delivered twice.
            shop.stop()
            let relaunched = PotionShop(inventoryFile: inventoryFile)
            try await relaunched.start()
            say("Relaunched → potions: \(relaunched.count(of: .potion)), wizard: \(relaunched.inventory.unlockedCharacters.contains(ShopItem.wizard.rawValue))")
            var unfinished = 0
            for await _ in Transaction.unfinished { unfinished += 1 }
            say("Unfinished transactions: \(unfinished)")
            relaunched.stop()
            return Summary(potions: relaunched.count(of: .potion), gems: relaunched.count(of: .gemChest),
                           hasWizard: relaunched.inventory.unlockedCharacters.contains(ShopItem.wizard.rawValue), unfinished: unfinished,
                           freshInstallHasWizard: false)
        }.withFreshInstall(try await session.withDefaultClient(device: "tablet") { _ in
            // A fresh install on a second phone: no inventory file; the wizard comes back from currentEntitlements.
            let fresh = PotionShop(inventoryFile: directory.appendingPathComponent("tablet-inventory.json"))
            try await fresh.start()
            say("Fresh install on a tablet → wizard: \(fresh.inventory.unlockedCharacters.contains(ShopItem.wizard.rawValue)), potions: \(fresh.count(of: .potion))")
            fresh.stop()
            return fresh.inventory.unlockedCharacters.contains(ShopItem.wizard.rawValue)
        })
    }

    @MainActor
    static func waitUntil(_ condition: () -> Bool) async throws {
        // The listener's task runs when the machine lets it: a loaded machine may take a while.
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        guard condition() else { throw CancellationError() }
    }
}

extension PotionShopSession.Summary {
    /// The summary with what a fresh install found.
    func withFreshInstall(_ hasWizard: Bool) -> Self {
        var summary = self
        summary.freshInstallHasWizard = hasWizard
        return summary
    }
}
