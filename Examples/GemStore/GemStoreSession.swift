import Foundation
import OpenStoreKit
import LocalAppStore

/// A scripted visit to the gem store, against the local App Store.
enum GemStoreSession {
    static let shopFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Shop.storekit")

    struct Summary: Equatable {
        var gems: Int
        var currentPlan: String?
        var completions: Int
    }

    /// Runs the visit; `say` receives the narration.
    @MainActor
    static func run(store server: URL? = nil, say: (String) -> Void) async throws -> Summary {
        let session = try await LocalStore.open(contentsOf: shopFile, bundleID: "com.example.shop", server: server)
        return try await session.withDefaultClient(device: "phone", launchingFirst: { GemStore() }) { _, store in
            let shelf = await store.gemShelf()
            say("Gem shelf: " + shelf.products.map { "\($0.displayName) [\($0.buttonLabel)]" }.joined(separator: ", "))
            for product in shelf.products {
                await product.buy(environment: store.environment)
            }
            await shelf.products[1].buy(environment: store.environment)
            try await waitUntil { store.gems == 80 }
            say("Bought through the product views; counted in the updates listener → gems: \(store.gems)")

            var plans = await store.planShelf()
            say("Plans: " + plans.plans.map { "\($0.displayName) \($0.priceText)\($0.offerText.map { " (\($0))" } ?? "")" }.joined(separator: ", "))
            guard let standard = plans.plans.first(where: { $0.id == "com.example.shop.plus.standard.monthly" }) else {
                throw SKTestError(code: .invalidProductIdentifier, message: "the standard plan is missing")
            }
            await plans.buy(standard)
            try await waitUntil { store.completions.count == 4 }
            plans = await store.planShelf()
            say("Subscribed through the subscription store view → " + plans.plans.map { "\($0.displayName): \($0.buttonLabel)" }.joined(separator: ", "))
            say(plans.currentPlan.map { "Current plan: \($0.productID), \($0.summary)" } ?? "No current plan")
            store.stop()
            return Summary(gems: store.gems, currentPlan: plans.currentPlan?.productID, completions: store.completions.count)
        }
    }

    @MainActor
    static func waitUntil(_ condition: () -> Bool) async throws {
        // The listener's task runs when the machine lets it: a loaded machine may take a while.
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        guard condition() else { throw SKTestError(code: .serviceUnavailable, message: "the store did not answer in time") }
    }
}
