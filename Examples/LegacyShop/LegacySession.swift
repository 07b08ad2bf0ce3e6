import Foundation
import OpenStoreKit
import LocalAppStore

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
        let session = try await LocalStore.open(contentsOf: shopFile, bundleID: "com.example.shop", server: server)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("legacy-shop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Each phone's app uses `SKPaymentQueue.default()`, the queue of the process's default client.
        let (oldPhone, saved, cancelled) = try await session.withDefaultClient(device: "old-phone") { _ in
            let store = LegacyStore(purchasesFile: directory.appendingPathComponent("old.json"))
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
            say("A cancelled purchase → cancellations: \(store.cancellations), failures: \(store.failures.count)")
            store.queue.stop()
            return (store.purchasedIDs.sorted(), saved, store.cancellations == 1 && store.failures.isEmpty)
        }

        let (before, after) = try await session.withDefaultClient(device: "new-phone") { _ in
            let fresh = LegacyStore(purchasesFile: directory.appendingPathComponent("new.json"))
            let before = fresh.purchasedIDs.sorted()
            say("New phone, fresh install → purchased: \(before)")
            fresh.restore()
            await fresh.queue.settle()
            say("Restore Purchases → purchased: \(fresh.purchasedIDs.sorted()), restore finished: \(fresh.restoreCompleted)")
            fresh.queue.stop()
            return (before, fresh.restoreCompleted ? fresh.purchasedIDs.sorted() : [])
        }
        return Summary(oldPhone: oldPhone, savedOnOldPhone: saved, cancelled: cancelled,
                       newPhoneBeforeRestore: before, newPhoneAfterRestore: after)
    }
}
