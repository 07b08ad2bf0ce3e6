import Foundation
import OpenStoreKit
import OpenStoreKitTesting

/// A scripted session with the legacy shop: buy on the old phone, restore on a new one.
enum LegacySession {
    static let shopFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Shop.storekit")
    static let pro = "com.example.shop.pro"
    static let wizard = "com.example.shop.character.wizard"

    struct Summary: Equatable {
        var oldPhone: [String]
        var savedOnOldPhone: [String]
        var cancelled: Bool
        var newPhoneBeforeRestore: [String]
        var newPhoneAfterRestore: [String]
    }

    @MainActor
    static func run(store server: URL? = nil, say: (String) -> Void) async throws -> Summary {
        let session = try await TestSession.open(contentsOf: shopFile, bundleID: "com.example.shop", server: server)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("legacy-shop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let oldPhone = try await session.client(device: "old-phone")
        let store = LegacyStore(purchasesFile: directory.appendingPathComponent("old.json"), queue: SKPaymentQueue(client: oldPhone))
        await store.requestProducts([pro, wizard, "com.example.shop.retired"])
        say("Products: " + store.products.map { "\($0.localizedTitle) (\($0.price))" }.joined(separator: ", "))
        store.buy(pro)
        store.buy(wizard)
        await store.queue.settle()
        say("Bought on the old phone → purchased: \(store.purchasedIDs.sorted())")
        let saved = try JSONDecoder().decode([String].self, from: Data(contentsOf: directory.appendingPathComponent("old.json")))

        try await session.setSimulatedError(.generic(.userCancelled), forAPI: .purchase)
        store.buy(pro)
        await store.queue.settle()
        try await session.setSimulatedError(nil, forAPI: .purchase)
        say("A cancelled purchase → \(store.failures.last ?? "no failure")")
        store.queue.stop()

        let newPhone = try await session.client(device: "new-phone")
        let fresh = LegacyStore(purchasesFile: directory.appendingPathComponent("new.json"), queue: SKPaymentQueue(client: newPhone))
        let before = fresh.purchasedIDs.sorted()
        say("New phone, fresh install → purchased: \(before)")
        fresh.restore()
        await fresh.queue.settle()
        say("Restore Purchases → purchased: \(fresh.purchasedIDs.sorted()), restore finished: \(fresh.restoreCompleted)")
        fresh.queue.stop()
        return Summary(oldPhone: store.purchasedIDs.sorted(), savedOnOldPhone: saved, cancelled: store.failures.last?.contains("paymentCancelled") == true,
                       newPhoneBeforeRestore: before, newPhoneAfterRestore: fresh.purchasedIDs.sorted())
    }
}
