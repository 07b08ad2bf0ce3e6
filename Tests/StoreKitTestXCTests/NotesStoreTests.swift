// An XCTest suite written for Xcode's StoreKit testing, as Apple's documentation shows it: a session on
// the test target's configuration file made in `setUpWithError`, dialogs off, transactions cleared,
// StoreKit's own calls in the tests, and the session's controls for what happens outside the app.
// It runs unchanged on Linux against this package's `StoreKitTest`.
import StoreKitTest
import XCTest

final class NotesStoreTests: XCTestCase {
    var session: SKTestSession!

    let pro = "com.example.notes.pro"
    let ink = "com.example.notes.ink"
    let monthly = "com.example.notes.cloud.monthly"
    let yearly = "com.example.notes.cloud.yearly"

    override func setUpWithError() throws {
        session = try SKTestSession(configurationFileNamed: "Notes")
        session.resetToDefaultState()
        session.disableDialogs = true
        session.clearTransactions()
    }

    override func tearDown() {
        session.clearTransactions()
        session = nil
    }

    // MARK: Helpers, as test suites for StoreKit write them

    func product(_ id: String) async throws -> Product {
        let products = try await Product.products(for: [id])
        return try XCTUnwrap(products.first, "no product \(id)")
    }

    func status(of plan: Product) async throws -> Product.SubscriptionInfo.Status {
        let statuses = try await plan.subscription?.status ?? []
        return try XCTUnwrap(statuses.first, "no status for \(plan.id)")
    }

    func entitledProductIDs() async -> Set<String> {
        var ids = Set<String>()
        for await result in Transaction.currentEntitlements {
            if case .verified(let transaction) = result, transaction.revocationDate == nil { ids.insert(transaction.productID) }
        }
        return ids
    }

    /// Starts listening to `Transaction.updates` and returns the first verified transaction that
    /// matches, once `action` has run; fails after `timeout` seconds.
    func update(timeout: TimeInterval = 30, where matches: @escaping @Sendable (Transaction) -> Bool,
                after action: () throws -> Void) async throws -> Transaction {
        let arrived = expectation(description: "a matching transaction update")
        let received = Received()
        let listener = Task {
            for await update in Transaction.updates {
                guard case .verified(let transaction) = update, matches(transaction) else { continue }
                await transaction.finish()
                received.set(transaction)
                arrived.fulfill()
                return
            }
        }
        defer { listener.cancel() }
        try action()
        await fulfillment(of: [arrived], timeout: timeout)
        return try XCTUnwrap(received.value)
    }

    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var transaction: Transaction?
        var value: Transaction? { lock.lock(); defer { lock.unlock() }; return transaction }
        func set(_ value: Transaction) { lock.lock(); transaction = value; lock.unlock() }
    }

    // MARK: Purchases

    func testPurchaseDeliversAVerifiedTransaction() async throws {
        let result = try await product(pro).purchase()
        guard case .success(.verified(let transaction)) = result else {
            return XCTFail("expected a verified purchase, got \(result)")
        }
        XCTAssertEqual(transaction.productID, pro)
        XCTAssertEqual(transaction.productType, .nonConsumable)
        await transaction.finish()

        let entitled = await entitledProductIDs()
        XCTAssertEqual(entitled, [pro])
        let all = session.allTransactions()
        XCTAssertEqual(all.count, 1)
        XCTAssertEqual(all.first?.productIdentifier, pro)
        XCTAssertEqual(all.first?.identifier, Int(transaction.id))
        XCTAssertEqual(all.first?.state, .purchased)
    }

    func testAskToBuyPurchaseWaitsForApproval() async throws {
        session.askToBuyEnabled = true
        let result = try await product(pro).purchase()
        guard case .pending = result else { return XCTFail("expected a pending purchase, got \(result)") }
        let entitledWhileWaiting = await entitledProductIDs()
        XCTAssertTrue(entitledWhileWaiting.isEmpty)

        let pending = try XCTUnwrap(session.allTransactions().first)
        XCTAssertTrue(pending.pendingAskToBuyConfirmation)
        XCTAssertEqual(pending.state, .deferred)
        let proID = pro
        let approved = try await update(where: { $0.productID == proID }) {
            try session.approveAskToBuyTransaction(identifier: pending.identifier)
        }
        XCTAssertEqual(approved.productID, pro)
        let entitled = await entitledProductIDs()
        XCTAssertEqual(entitled, [pro])
    }

    func testDeclinedAskToBuyGrantsNothing() async throws {
        session.askToBuyEnabled = true
        _ = try await product(ink).purchase()
        let pending = try XCTUnwrap(session.allTransactions().first { $0.pendingAskToBuyConfirmation })
        try session.declineAskToBuyTransaction(identifier: pending.identifier)
        XCTAssertFalse(session.allTransactions().contains { $0.state == .purchased })
    }

    func testInterruptedPurchaseCompletesOnceResolved() async throws {
        session.interruptedPurchasesEnabled = true
        let result = try await product(pro).purchase()
        guard case .pending = result else { return XCTFail("expected an interrupted purchase to be pending, got \(result)") }
        let interrupted = try XCTUnwrap(session.allTransactions().last { $0.productIdentifier == pro })
        XCTAssertTrue(interrupted.hasPurchaseIssue)
        XCTAssertFalse(interrupted.pendingAskToBuyConfirmation)

        session.interruptedPurchasesEnabled = false
        let proID = pro
        let completed = try await update(where: { $0.productID == proID }) {
            try session.resolveIssueForTransaction(identifier: interrupted.identifier)
        }
        XCTAssertEqual(completed.productID, pro)
    }

    func testPurchaseOutsideTheApp() throws {
        try session.buyProduct(productIdentifier: ink)
        try session.buyProduct(productIdentifier: ink)
        let bought = session.allTransactions().filter { $0.productIdentifier == ink }
        XCTAssertEqual(bought.count, 2)
    }

    func testPurchaseOutsideTheAppReturnsTheTransaction() async throws {
        let transaction = try await session.buyProduct(identifier: pro, options: [.appAccountToken(UUID(uuidString: "4E3C6A9B-70A4-4C52-8A16-2A1E0F6E1D11")!)])
        XCTAssertEqual(transaction.productID, pro)
        XCTAssertEqual(transaction.appAccountToken, UUID(uuidString: "4E3C6A9B-70A4-4C52-8A16-2A1E0F6E1D11"))
        let entitled = await entitledProductIDs()
        XCTAssertEqual(entitled, [pro])
    }

    // MARK: Subscriptions

    func testSubscriptionRenewsAtTheSessionsTimeRate() async throws {
        session.timeRate = .oneRenewalEveryTwoSeconds
        let plan = try await product(monthly)
        let result = try await plan.purchase()
        guard case .success(.verified(let first)) = result else { return XCTFail("expected a verified purchase, got \(result)") }
        await first.finish()
        XCTAssertEqual(try XCTUnwrap(first.expirationDate).timeIntervalSince(first.purchaseDate), 2, accuracy: 0.01)
        let firstID = first.id
        let monthlyID = monthly
        let renewal = try await update(where: { $0.productID == monthlyID && $0.id != firstID }) {}
        XCTAssertEqual(renewal.originalID, first.originalID)
        XCTAssertEqual(renewal.reason, .renewal)
        XCTAssertGreaterThan(try XCTUnwrap(renewal.expirationDate), try XCTUnwrap(first.expirationDate))
        let current = try await status(of: plan)
        XCTAssertEqual(current.state, .subscribed)
    }

    func testFailedRenewalEntersBillingRetryUntilResolved() async throws {
        session.timeRate = .oneRenewalEveryTwoSeconds
        session.shouldEnterBillingRetryOnRenewal = true
        let plan = try await product(monthly)
        guard case .success(.verified(let first)) = try await plan.purchase() else { return XCTFail("expected a verified purchase") }
        await first.finish()

        var state = try await status(of: plan).state
        for _ in 0..<300 where state != .inBillingRetryPeriod {
            try await Task.sleep(nanoseconds: 100_000_000)
            state = try await status(of: plan).state
        }
        XCTAssertEqual(state, .inBillingRetryPeriod)

        session.shouldEnterBillingRetryOnRenewal = false
        try session.resolveIssueForTransaction(identifier: UInt(first.id))
        let resolved = try await status(of: plan)
        XCTAssertEqual(resolved.state, .subscribed)
    }

    func testExpireSubscription() async throws {
        let plan = try await product(monthly)
        _ = try await plan.purchase()
        try session.expireSubscription(productIdentifier: monthly)
        let expired = try await status(of: plan)
        XCTAssertEqual(expired.state, .expired)
        guard case .verified(let info) = expired.renewalInfo else { return XCTFail("unverified renewal info") }
        XCTAssertFalse(info.willAutoRenew)
        let entitled = await entitledProductIDs()
        XCTAssertFalse(entitled.contains(monthly))
    }

    func testForcedRenewal() async throws {
        let plan = try await product(monthly)
        _ = try await plan.purchase()
        try session.forceRenewalOfSubscription(productIdentifier: monthly)
        let transactions = session.allTransactions().filter { $0.productIdentifier == monthly }
        XCTAssertEqual(transactions.count, 2)
        XCTAssertEqual(Set(transactions.map(\.originalTransactionIdentifier)).count, 1)
    }

    func testDisablingAutoRenewShowsInRenewalInfo() async throws {
        let plan = try await product(yearly)
        guard case .success(.verified(let transaction)) = try await plan.purchase() else { return XCTFail("expected a verified purchase") }
        XCTAssertEqual(transaction.offerType, .introductory)
        try session.disableAutoRenewForTransaction(identifier: UInt(transaction.id))
        let cancelled = try await status(of: plan)
        guard case .verified(let info) = cancelled.renewalInfo else { return XCTFail("unverified renewal info") }
        XCTAssertFalse(info.willAutoRenew)
        try session.enableAutoRenewForTransaction(identifier: UInt(transaction.id))
        let renewed = try await status(of: plan)
        guard case .verified(let renewing) = renewed.renewalInfo else { return XCTFail("unverified renewal info") }
        XCTAssertTrue(renewing.willAutoRenew)
    }

    // MARK: Refunds and clearing

    func testRefundReachesTheApp() async throws {
        guard case .success(.verified(let bought)) = try await product(pro).purchase() else { return XCTFail("expected a verified purchase") }
        await bought.finish()
        let boughtID = bought.id
        let refunded = try await update(where: { $0.id == boughtID && $0.revocationDate != nil }) {
            try session.refundTransaction(identifier: UInt(bought.id))
        }
        XCTAssertNotNil(refunded.revocationReason)
        XCTAssertNotNil(session.allTransactions().first?.cancelDate)
        let entitled = await entitledProductIDs()
        XCTAssertTrue(entitled.isEmpty)
    }

    func testClearTransactionsStartsOver() async throws {
        _ = try await product(pro).purchase()
        XCTAssertEqual(session.allTransactions().count, 1)
        session.clearTransactions()
        XCTAssertTrue(session.allTransactions().isEmpty)
        let entitled = await entitledProductIDs()
        XCTAssertTrue(entitled.isEmpty)
        guard case .success(.verified) = try await product(pro).purchase() else { return XCTFail("a cleared purchase can be bought again") }
    }

    // MARK: Errors

    func testControlsOnUnknownTransactionsThrowSKTestError() {
        XCTAssertThrowsError(try session.refundTransaction(identifier: 4242)) { error in
            XCTAssertEqual((error as? SKTestError)?.code, .noTransactionFound)
            XCTAssertEqual((error as NSError).domain, SKTestErrorDomain)
        }
        do {
            try session.approveAskToBuyTransaction(identifier: 4242)
            XCTFail("approving an unknown transaction succeeded")
        } catch SKTestError.noTransactionFound {
            // expected
        } catch {
            XCTFail("unexpected error \(error)")
        }
        XCTAssertThrowsError(try SKTestSession(configurationFileNamed: "NoSuchFile")) { error in
            XCTAssertEqual((error as? SKTestError)?.code, .fileNotFound)
        }
    }

    func testSimulatedLoadFailure() async throws {
        try await session.setSimulatedError(.generic(.networkError(URLError(.notConnectedToInternet))), forAPI: .loadProducts)
        let simulated = await session.simulatedError(forAPI: .loadProducts)
        XCTAssertNotNil(simulated)
        do {
            _ = try await Product.products(for: [pro])
            XCTFail("loading products succeeded while it was made to fail")
        } catch let error as StoreKitError {
            guard case .networkError = error else { return XCTFail("expected a network error, got \(error)") }
        }
        try await session.setSimulatedError(nil, forAPI: .loadProducts)
        let cleared = await session.simulatedError(forAPI: .loadProducts)
        XCTAssertNil(cleared)
        let products = try await Product.products(for: [pro])
        XCTAssertEqual(products.map(\.id), [pro])
    }

    func testSimulatedPurchaseFailure() async throws {
        try await session.setSimulatedError(.purchase(.productUnavailable), forAPI: .purchase)
        do {
            _ = try await product(pro).purchase()
            XCTFail("the purchase succeeded while it was made to fail")
        } catch Product.PurchaseError.productUnavailable {
            // expected
        }
        let simulated = await session.simulatedError(forAPI: .purchase)
        XCTAssertEqual(simulated, .purchase(.productUnavailable))
    }
}
