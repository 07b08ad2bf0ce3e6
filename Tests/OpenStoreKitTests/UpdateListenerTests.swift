import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

/// Every `Transaction.updates` listener of an app hears every update, as in StoreKit: the app's own
/// loop, an entitlement manager and the original API's queue do not split the feed between them.
struct UpdateListenerTests {
    /// Collects the IDs a listener hears until it has `count` of them (at most 10 seconds).
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
        // Let the listeners start before anything happens.
        try await Task.sleep(for: .milliseconds(50))
        let pro = try await tablet.purchase(productID: Shop.pro, options: []).verifiedTransaction()
        let wizard = try await tablet.purchase(productID: Shop.wizard, options: []).verifiedTransaction()
        let deadline = Task {
            try await Task.sleep(for: .seconds(10))
            for listener in listeners { listener.cancel() }
        }
        defer { deadline.cancel() }
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
        try await Task.sleep(for: .milliseconds(50))
        let pro = try await tablet.purchase(productID: Shop.pro, options: []).verifiedTransaction()
        #expect(await first.value == [pro.id])
        // The first listener has stopped; the next purchase waits in the store until someone listens.
        let wizard = try await tablet.purchase(productID: Shop.wizard, options: []).verifiedTransaction()
        try await Task.sleep(for: .milliseconds(50))
        let second = Self.listen(phone, count: 1)
        let deadline = Task {
            try await Task.sleep(for: .seconds(10))
            second.cancel()
        }
        defer { deadline.cancel() }
        #expect(await second.value == [wizard.id])
    }
}
