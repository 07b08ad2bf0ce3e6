import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

@Suite("The SKTestSession surface", .timeLimit(.minutes(10)))
struct TestSessionTests {
    @Test("properties start from the file, take effect at the next store call, and reset")
    func properties() async throws {
        let session = try Shop.session()
        #expect(session.storefront == "USA")
        #expect(!session.askToBuyEnabled)
        session.askToBuyEnabled = true
        #expect(session.askToBuyEnabled)
        let phone = try await session.client(device: "phone")
        guard case .pending = try await phone.purchase(productID: Shop.pro) else { Issue.record("expected pending"); return }
        try await session.resetToDefaultState()
        #expect(!session.askToBuyEnabled)
        _ = try await phone.purchase(productID: Shop.wizard).verifiedTransaction()
    }

    @Test("controls on unknown transactions fail with SKTestError codes")
    func controlErrors() async throws {
        let session = try Shop.session()
        await #expect(throws: SKTestError.self) { try await session.refundTransaction(identifier: 99) }
        do {
            try await session.expireSubscription(productIdentifier: Shop.premiumMonthly)
            Issue.record("expected noSubscriptionFound")
        } catch let error as SKTestError {
            #expect(error.code == .noSubscriptionFound)
        }
        do {
            try await session.setSimulatedError(.purchase(.invalidQuantity), forAPI: .loadProducts)
            Issue.record("expected invalidAction")
        } catch let error as SKTestError {
            #expect(error.code == .invalidAction)
        }
    }

    @Test("buyProduct buys outside the app: back-dated subscriptions renew up to now and arrive through updates")
    func buyOutsideTheApp() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let start = session.now.addingTimeInterval(-3 * 31 * 86_400)
        let bought = try await session.buyProduct(identifier: Shop.premiumMonthly, options: [.purchaseDate(start)])
        #expect(bought.productID == Shop.premiumMonthly)
        let all = try await collect(phone.allTransactions).map { try $0.verifiedValue() }
        #expect(all.count >= 3)
        #expect(Set(all.map(\.originalID)) == [bought.id])
        let first = try await firstElement(of: phone.transactionUpdates).verifiedValue()
        #expect(first.originalID == bought.id)
    }

    @Test("a .storekit file with problems fails to load with located errors")
    func badFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).storekit")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("{ \"products\": [ { \"productID\": 3 } ] ".utf8).write(to: url)
        #expect {
            _ = try TestSession(contentsOf: url)
        } throws: { error in
            "\(error)".contains(url.lastPathComponent)
        }
    }

    @Test("withDefaultClient binds the process default for StoreKit's statics and restores it")
    func defaultClient() async throws {
        let session = try Shop.session()
        let ids = try await session.withDefaultClient(device: "phone") { _ in
            try await Task.detached { try await Product.products(for: [Shop.pro]).map(\.id) }.value
        }
        #expect(ids == [Shop.pro])
    }
}
