import Foundation
import OpenStoreKit
import OpenStoreKitTesting
@testable import PotionShop
import Testing

@Suite("Example: the potion shop", .timeLimit(.minutes(10)))
@MainActor
struct PotionShopTests {
    @Test("the scripted session counts consumables once, unlocks the wizard and leaves nothing unfinished")
    func scriptedSession() async throws {
        var lines: [String] = []
        let summary = try await PotionShopSession.run { lines.append($0) }
        #expect(summary == PotionShopSession.Summary(potions: 4, gems: 1, hasWizard: true, unfinished: 0, freshInstallHasWizard: true))
        #expect(lines.contains { $0.contains("arrived through Transaction.updates") })
    }

    @Test("a refunded wizard is locked again; an unverified purchase delivers nothing")
    func refundAndUnverified() async throws {
        let session = try TestSession(contentsOf: PotionShopSession.shopFile, bundleID: "com.example.shop")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("inventory-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try await session.withDefaultClient(device: "phone") { _ in
            let shop = PotionShop(inventoryFile: file)
            try await shop.start()
            #expect(try await shop.buy(.wizard))
            let wizardID = try #require(shop.inventory.deliveredTransactionIDs.first)
            try await session.refundTransaction(identifier: wizardID)
            try await PotionShopSession.waitUntil { shop.inventory.unlockedCharacters.isEmpty }

            try await session.setSimulatedError(.verification(.invalidSignature), forAPI: .verification)
            #expect(try await !shop.buy(.potion))
            #expect(shop.count(of: .potion) == 0)
            shop.stop()
        }
    }
}
