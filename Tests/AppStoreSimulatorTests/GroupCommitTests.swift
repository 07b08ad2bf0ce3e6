import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// Purchases in flight at once share one durable commit, and still behave exactly as if each had been
/// committed alone: every caller gets its own verified transaction, only after the commit, and one
/// customer's purchases never see a stale ledger.
@Suite(.timeLimit(.minutes(10)))
struct GroupCommitTests {
    /// A storage that counts the commits that changed something.
    final class CommitCounter: LedgerStorage, @unchecked Sendable {
        let base: any LedgerStorage
        private let lock = NSLock()
        private var count = 0

        init(_ base: any LedgerStorage) { self.base = base }

        var commits: Int { lock.withLock { count } }

        func read<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> Result) throws(AppStoreError) -> Result { try base.read(body) }

        func write<Result>(_ body: (any LedgerReader) throws(AppStoreError) -> (LedgerChanges, Result)) throws(AppStoreError) -> Result {
            try base.write { (reader) throws(AppStoreError) -> (LedgerChanges, Result) in
                let (changes, result) = try body(reader)
                if !changes.isEmpty { lock.withLock { count += 1 } }
                return (changes, result)
            }
        }

        func acquireLifecycleLease(wait: Bool) throws(AppStoreError) -> (any LifecycleLease)? { try base.acquireLifecycleLease(wait: wait) }
        func notifications(after sequence: Int64, limit: Int) throws(AppStoreError) -> [NotificationRecord] {
            try base.notifications(after: sequence, limit: limit)
        }
        func integrityProblems() throws(AppStoreError) -> [String] { try base.integrityProblems() }
    }

    /// A SQLite-backed store whose commits are counted, in a scratch folder.
    struct CountedStore {
        let scratch = Scratch()
        let path: String
        let counter: CommitCounter
        let store: SimulatedAppStore

        init() throws {
            path = scratch.url.appendingPathComponent("ledger.sqlite").path
            counter = CommitCounter(try SQLLedgerStorage(path: path, create: true))
            store = try SimulatedAppStore.create(configuration: TestStore.shopConfiguration, identity: StoreIdentity(bundleId: "com.example.shop"),
                                                 authority: TestStore.authority, storage: counter, clock: ManualStoreClock(startingAt: TestStore.start))
        }

        /// The same ledger opened afresh from its file.
        func reopened() throws -> SimulatedAppStore {
            try SimulatedAppStore.open(storage: try SQLLedgerStorage(path: path, create: false), authority: TestStore.authority,
                                       clock: ManualStoreClock(startingAt: TestStore.start))
        }
    }

    /// Runs `count` purchases at once and returns their outcomes in request order.
    static func purchaseAtOnce(_ store: SimulatedAppStore, _ requests: [PurchaseRequest]) async -> [Result<PurchaseOutcome, AppStoreError>] {
        await withTaskGroup(of: (Int, Result<PurchaseOutcome, AppStoreError>).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask {
                    do throws(AppStoreError) { return (index, .success(try await store.purchase(request))) } catch { return (index, .failure(error)) }
                }
            }
            var outcomes: [Int: Result<PurchaseOutcome, AppStoreError>] = [:]
            for await (index, outcome) in group { outcomes[index] = outcome }
            return requests.indices.map { outcomes[$0]! }
        }
    }

    static func transaction(_ outcome: Result<PurchaseOutcome, AppStoreError>) throws -> SignedTransaction {
        guard case .success(.success(let signed)) = outcome else { throw TestFailure("expected a completed purchase, got \(outcome)") }
        return signed
    }

    @Test("eight customers buying at once: fewer commits than purchases, each purchase verified, unique and durable")
    func customersShareCommits() async throws {
        let counted = try CountedStore()
        let verifier = try SignedDataVerifier(rootCertificates: [TestStore.authority.rootCertificate], bundleId: "com.example.shop",
                                              environment: .xcode, options: { var options = SignedDataVerifier.Options(); options.verifiesLocalEnvironments = true; return options }())
        let customers = 8
        let rounds = 6
        let before = counted.counter.commits
        var ids: [UInt64] = []
        for round in 0..<rounds {
            let requests = (0..<customers).map { PurchaseRequest(productID: ExampleShop.gems, account: "customer-\($0)", device: "phone-\($0)") }
            let outcomes = await Self.purchaseAtOnce(counted.store, requests)
            for (index, outcome) in outcomes.enumerated() {
                let signed = try Self.transaction(outcome)
                let payload = try await verifier.verifyAndDecodeTransaction(signed.jws)
                #expect(payload.transactionId == String(signed.transaction.id), "round \(round) customer \(index)")
                #expect(signed.transaction.account == "customer-\(index)")
                ids.append(signed.transaction.id)
            }
        }
        #expect(Set(ids).count == customers * rounds)
        #expect(Set(ids) == Set(0..<UInt64(customers * rounds)))
        let commits = counted.counter.commits - before
        #expect(commits < customers * rounds, "\(commits) commits for \(customers * rounds) purchases: none was shared")
        // Acknowledged means committed: a store opened afresh from the file has every purchase.
        let reopened = try counted.reopened()
        #expect(try await reopened.ledgerTransactions().map(\.id).sorted() == ids.sorted())
        #expect(try await reopened.notifications().count == customers * rounds)
    }

    @Test("one account buying a non-consumable on six devices at once gets one transaction, handed to every device")
    func oneCustomerNeverSharesACommit() async throws {
        let counted = try CountedStore()
        let requests = (0..<6).map { PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "device-\($0)") }
        let outcomes = await Self.purchaseAtOnce(counted.store, requests)
        let ids = try outcomes.map { try Self.transaction($0).transaction.id }
        #expect(Set(ids).count == 1)
        #expect(try await counted.store.ledgerTransactions(account: "alice").count == 1)
    }

    @Test("a family buying a shared non-consumable at once pays once: the other member gets the family copy")
    func oneFamilyNeverSharesACommit() async throws {
        let counted = try CountedStore()
        try await counted.store.setFamilyGroup("smiths", for: "alice")
        try await counted.store.setFamilyGroup("smiths", for: "bob")
        let requests = [PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "alice-phone"),
                        PurchaseRequest(productID: ExampleShop.pro, account: "bob", device: "bob-phone")]
        let outcomes = await Self.purchaseAtOnce(counted.store, requests)
        let ownerships = try outcomes.map { try Self.transaction($0).transaction.ownership }
        #expect(ownerships.filter { $0 == .purchased }.count == 1)
        #expect(ownerships.filter { $0 == .familyShared }.count == 1)
        let all = try await counted.store.ledgerTransactions()
        #expect(all.count == 2, "\(all.map { "\($0.account) \($0.ownership)" })")
    }

    @Test("a purchase that fails inside a shared commit fails alone; the others are committed")
    func failureStaysWithItsPurchase() async throws {
        let counted = try CountedStore()
        var requests = (0..<5).map { PurchaseRequest(productID: ExampleShop.gems, account: "customer-\($0)", device: "phone-\($0)") }
        requests.insert(PurchaseRequest(productID: "com.example.shop.missing", account: "customer-9", device: "phone-9"), at: 2)
        requests.append(PurchaseRequest(productID: ExampleShop.gems, account: "customer-8", device: "phone-8", quantity: 99))
        let outcomes = await Self.purchaseAtOnce(counted.store, requests)
        guard case .failure(.purchase(.productUnavailable, _)) = outcomes[2] else { throw TestFailure("expected productUnavailable, got \(outcomes[2])") }
        guard case .failure(.purchase(.invalidQuantity, _)) = outcomes[6] else { throw TestFailure("expected invalidQuantity, got \(outcomes[6])") }
        for index in [0, 1, 3, 4, 5] { _ = try Self.transaction(outcomes[index]) }
        let reopened = try counted.reopened()
        #expect(try await reopened.ledgerTransactions().count == 5)
        // The failed purchases registered nothing: their accounts do not exist.
        #expect(try await reopened.ledgerTransactions(account: "customer-9").isEmpty)
        #expect(try await reopened.account(named: "customer-9") == nil)
        #expect(try await reopened.account(named: "customer-8") == nil)
    }
}
