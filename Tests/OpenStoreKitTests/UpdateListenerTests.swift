import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

/// Every `Transaction.updates` listener of an app hears every update, as in StoreKit: the app's own
/// loop, an entitlement manager and the original API's queue do not split the feed between them.
@Suite(.timeLimit(.minutes(10)))
struct UpdateListenerTests {
    /// Collects the IDs a listener hears until it has `count` of them.
    static func listen(_ client: StoreClient, count: Int) -> Task<[UInt64], Never> {
        Task {
            var heard: [UInt64] = []
            for await result in client.transactionUpdates {
                if case .verified(let transaction) = result { heard.append(transaction.id) }
                if heard.count == count { break }
            }
            return heard
        }
    }

    @Test("three listeners on one device each hear both purchases made on another device")
    func everyListenerHearsEverything() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone", account: "alice")
        let tablet = try await session.client(device: "tablet", account: "alice")
        let listeners = (0..<3).map { _ in Self.listen(phone, count: 2) }
        // The listeners listen before anything happens.
        try await eventually("three listeners listening") { phone.transactionUpdateListenerCount == 3 }
        let pro = try await tablet.purchase(productID: Shop.pro, options: []).verifiedTransaction()
        let wizard = try await tablet.purchase(productID: Shop.wizard, options: []).verifiedTransaction()
        for listener in listeners {
            #expect(await listener.value == [pro.id, wizard.id])
        }
    }

    @Test("updates that arrive while nobody listens wait for the next listener")
    func updatesWaitForAListener() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone", account: "alice")
        let tablet = try await session.client(device: "tablet", account: "alice")
        let first = Self.listen(phone, count: 1)
        try await eventually("the first listener listening") { phone.transactionUpdateListenerCount == 1 }
        let pro = try await tablet.purchase(productID: Shop.pro, options: []).verifiedTransaction()
        #expect(await first.value == [pro.id])
        // The first listener has stopped; the next purchase waits in the store until someone listens.
        try await eventually("the first listener gone") { phone.transactionUpdateListenerCount == 0 }
        let wizard = try await tablet.purchase(productID: Shop.wizard, options: []).verifiedTransaction()
        let second = Self.listen(phone, count: 1)
        #expect(await second.value == [wizard.id])
    }
}
