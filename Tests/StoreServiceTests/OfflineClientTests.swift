import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import OpenStoreKit
import StoreService
import Testing
import TestSupport

/// An app whose store cannot be reached behaves as StoreKit does: entitlements and subscription
/// statuses answer from the last verified signed answers it kept, purchases fail with a network
/// error, and what changed meanwhile (a refund) arrives through `Transaction.updates` once the
/// store is back.
@Suite(.timeLimit(.minutes(10)))
struct OfflineClientTests {
    static func verified<Value>(_ result: VerificationResult<Value>) throws -> Value {
        guard case .verified(let value) = result else { throw TestFailure("expected a verified value, got \(result)") }
        return value
    }

    @Test("offline: cached entitlements and statuses, purchases fail with networkError, a refund arrives when the store is back")
    func offlineAndBack() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        // The app's store address stays the app's while the server is gone: the port is held (refusing
        // connections), and the server comes back on it.
        let port = try ReservedPort()
        let server = try StoreServer(store: store, listeningSocket: try port.listeningSocket())
        let cache = scratch.url.appendingPathComponent("app-cache")
        let phone = try await StoreClient.connect(server: server.url, device: "phone", account: "alice", cacheDirectory: cache)
        let products = try await phone.products(for: [ExampleShop.pro, ExampleShop.premiumMonthly])
        var bought: [UInt64] = []
        for product in products.sorted(by: { $0.id < $1.id }) {
            guard case .success(let result) = try await product.purchase() else { throw TestFailure("expected a purchase") }
            bought.append(try Self.verified(result).id)
        }
        let online = try await collect(phone.currentEntitlements).map { try Self.verified($0).id }.sorted()
        #expect(online == bought.sorted())
        #expect(try await phone.subscriptionStatuses(groupID: ExampleShop.plus).count == 1)

        await server.stop()
        let offline = try await collect(phone.currentEntitlements)
        #expect(try offline.map { try Self.verified($0).id }.sorted() == online, "offline entitlements come from the cache, verified")
        let statuses = try await phone.subscriptionStatuses(groupID: ExampleShop.plus)
        #expect(statuses.map(\.state) == [.subscribed])
        await #expect {
            _ = try await products[0].purchase()
        } throws: { error in
            if case StoreKitError.networkError = error { return true }
            return false
        }

        // While the app is offline the Pro unlock is refunded (by the command line, another server…).
        let pro = try #require(try await store.ledgerTransactions(account: "alice").first { $0.productID == ExampleShop.pro })
        try await store.refundTransaction(pro.id)
        let restarted = try StoreServer(store: store, listeningSocket: try port.listeningSocket())
        do {
            let arrived = try Self.verified(try await firstElement(of: phone.transactionUpdates))
            #expect(arrived.id == pro.id)
            #expect(arrived.revocationDate != nil)
            let after = try await collect(phone.currentEntitlements).map { try Self.verified($0).productID }
            #expect(after == [ExampleShop.premiumMonthly])
            await restarted.stop()
        } catch {
            await restarted.stop()
            throw error
        }
    }

    @Test("a tampered cache is not trusted: its entitlements are unverified, never granted")
    func tamperedCache() async throws {
        let scratch = Scratch()
        let store = try await TestStores.directory(in: scratch).store
        let server = try StoreServer(store: store)
        let cache = scratch.url.appendingPathComponent("app-cache")
        let phone = try await StoreClient.connect(server: server.url, device: "phone", account: "alice", cacheDirectory: cache)
        let pro = try #require(try await phone.products(for: [ExampleShop.pro]).first)
        _ = try await pro.purchase()
        _ = try await collect(phone.currentEntitlements)
        await server.stop()
        // Someone edits the cached entitlements: a product the account never bought, under the old signature.
        let files = try FileManager.default.contentsOfDirectory(at: cache, includingPropertiesForKeys: nil)
        let file = try #require(files.first { $0.lastPathComponent.contains("currentEntitlements") })
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var items = try #require(object["items"] as? [[String: Any]])
        let jws = try #require(items.first?["jws"] as? String)
        let parts = jws.split(separator: ".").map(String.init)
        let payloadData = try #require(Base64URL.decode(parts[1]))
        var payload = try #require(try JSONSerialization.jsonObject(with: payloadData) as? [String: Any])
        payload["productId"] = ExampleShop.wizard
        let forged = try Base64URL.encode(JSONSerialization.data(withJSONObject: payload))
        items[0]["jws"] = [parts[0], forged, parts[2]].joined(separator: ".")
        object["items"] = items
        try JSONSerialization.data(withJSONObject: object).write(to: file)
        let results = try await collect(phone.currentEntitlements)
        #expect(results.count == 1)
        guard case .unverified(_, let error)? = results.first else { throw TestFailure("a forged entitlement verified") }
        #expect(error == .invalidSignature)
    }
}
