import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

@Suite("Code shaped like Apple's StoreKit 2 sample runs unchanged on the local App Store", .timeLimit(.minutes(10)))
@MainActor
struct SampleShapedStoreTests {
    static let file = SharedTestData.packageRoot.appendingPathComponent("Tests/SKDemoShapedTests/Garden.storekit")

    @Test("the sample's store loads, buys, sees outside purchases through updates, and reads the group status")
    func sampleStoreFlow() async throws {
        let session = try TestSession(contentsOf: Self.file, bundleID: "com.example.garden")
        try await session.withDefaultClient(device: "phone") { _ in
            let store = Store()
            try await eventually("loading products") { store.tools.count == 2 && store.subscriptions.count == 3 }
            #expect(store.water.map(\.id) == ["consumable.water.small", "consumable.water.large"])
            #expect(store.subscriptions.map(\.id) == ["subscription.gardener.basic", "subscription.gardener.plus", "subscription.gardener.master"])

            let shovel = try #require(store.tools.first { $0.id == "nonconsumable.tool.shovel" })
            let bought = try await store.purchase(shovel)
            #expect(bought?.productID == shovel.id)
            #expect(try await store.isPurchased(shovel))

            // Bought outside the app: arrives through Transaction.updates in the sample's listener.
            try await session.buyProduct(identifier: "subscription.gardener.plus")
            // The sample publishes the purchased list, then (after another await) the group status.
            try await eventually("the outside purchase arriving") {
                store.purchasedSubscriptions.map(\.id) == ["subscription.gardener.plus"] && store.subscriptionGroupStatus != nil
            }
            #expect(store.subscriptionGroupStatus == .subscribed)
            #expect(store.tier(for: store.purchasedSubscriptions[0].id) == .plus)

            // A refund takes the tool away once the listener sees it.
            try await session.refundTransaction(identifier: try #require(bought).id)
            try await eventually("the refund arriving") { await !((try? store.isPurchased(shovel)) ?? true) }
            store.updateListenerTask?.cancel()
        }
    }

    @Test("an unverified purchase throws the sample's failedVerification and grants nothing")
    func unverifiedPurchase() async throws {
        let session = try TestSession(contentsOf: Self.file, bundleID: "com.example.garden")
        try await session.withDefaultClient(device: "phone") { _ in
            let store = Store()
            try await eventually("loading products") { store.tools.count == 2 }
            try await session.setSimulatedError(.verification(.invalidSignature), forAPI: .verification)
            let rake = try #require(store.tools.first { $0.id == "nonconsumable.tool.rake" })
            await #expect(throws: StoreError.failedVerification) { _ = try await store.purchase(rake) }
            #expect(try await !store.isPurchased(rake))
            store.updateListenerTask?.cancel()
        }
    }
}
