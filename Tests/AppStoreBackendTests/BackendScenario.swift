import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import StoreKitCatalog
import Testing
import TestSupport

/// A Sandbox store living a scripted year with several customers, and backends to compare with it.
struct BackendScenario {
    static let start = TestStores.start
    static let accounts = ["alice", "bob", "carol", "erin"]
    /// Each customer's app account token: the backend's customer id.
    static func token(_ account: String) -> UUID {
        // FNV-1a of the name: a distinct token for each name.
        let hash = account.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        return UUID(uuidString: "00000000-0000-4000-8000-" + String(format: "%012llx", hash & 0xFFFF_FFFF_FFFF))!
    }
    /// The family member's own user id, which its app sends with its transactions.
    static let familyMember = (account: "dave", userID: "dave-user")

    let store: SimulatedAppStore
    let clock: ManualStoreClock

    init() throws {
        clock = ManualStoreClock(startingAt: Self.start)
        store = try SimulatedAppStore.create(configuration: TestStores.shop,
                                             identity: StoreIdentity(bundleId: "com.example.shop", environment: .sandbox),
                                             authority: try CertificateAuthority.make(), storage: InMemoryLedgerStorage(), clock: clock,
                                             identifiers: .sequential())
    }

    func buy(_ product: String, _ account: String) async throws -> LedgerTransaction {
        let request = PurchaseRequest(productID: product, account: account, device: "\(account)-phone", appAccountToken: Self.token(account))
        guard case .success(let signed) = try await store.purchase(request) else { throw TestFailure("\(account) could not buy \(product)") }
        return signed.transaction
    }

    /// The year: one-time purchases, a refund, an upgrade shared with the family, billing problems
    /// (one recovered in grace, others lapsing), a subscription left to expire, renewals every month.
    func play() async throws {
        _ = try await buy(ExampleShop.pro, "alice")
        _ = try await buy(ExampleShop.standardMonthly, "alice")
        try await store.setFamilyGroup("smiths", for: "alice")
        try await store.addDevice("dave-phone", account: "dave")
        try await store.setFamilyGroup("smiths", for: "dave")
        _ = try await buy(ExampleShop.standardMonthly, "bob")
        _ = try await buy(ExampleShop.gems, "carol")
        let carolsPro = try await buy(ExampleShop.pro, "carol")
        let erins = try await buy(ExampleShop.premiumYearly, "erin")
        try await store.advanceTime(by: 10 * 86_400)
        _ = try await buy(ExampleShop.premiumMonthly, "alice") // an upgrade, shared with dave
        try await store.refundTransaction(carolsPro.id)
        try await store.setAutoRenew(originalTransactionID: erins.originalID, enabled: false)
        // The first renewals of the monthly plans fail; bob fixes his payment in the grace period.
        try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true }
        try await store.advanceTime(by: 200 * 86_400)
        try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = false }
        if let bobs = try await store.subscriptionRecords(account: "bob").first, bobs.state == .inGracePeriod || bobs.state == .inBillingRetryPeriod {
            try await store.resolveBillingIssue(originalTransactionID: bobs.originalTransactionID)
        }
        for _ in 0..<6 { try await store.advanceTime(by: 30 * 86_400) }
    }

    /// Every notification of the outbox, signed, oldest first.
    func notificationBodies() async throws -> [Data] {
        try await store.notifications().map { Data(#"{"signedPayload":"\#($0.signedPayload)"}"#.utf8) }
    }

    /// The family member's app sends the backend the transactions it got from the family, once.
    func familyAppRequests() async throws -> [Data] {
        let shared = try await store.ledgerTransactions(account: Self.familyMember.account).filter { $0.ownership == .familyShared && $0.id == $0.originalID }
        var bodies: [Data] = []
        for transaction in shared {
            let jws = try await store.transaction(transaction.id, device: "dave-phone").jws
            bodies.append(Data(#"{"signedTransaction":"\#(jws)","userID":"\#(Self.familyMember.userID)"}"#.utf8))
        }
        return bodies
    }

    /// What the store says each customer is entitled to, by customer id.
    func storeEntitlements() async throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for account in Self.accounts {
            result[Self.token(account).uuidString.lowercased()] = try await store.entitledTransactions(of: account).map { String($0.id) }.sorted()
        }
        result[Self.familyMember.userID] = try await store.entitledTransactions(of: Self.familyMember.account).map { String($0.id) }.sorted()
        return result
    }

    /// Runs `body` with a backend trusting this store's root, on a database of its own: a SQLite file,
    /// or a throwaway PostgreSQL cluster, stopped when `body` returns or throws.
    func withBackend<Result>(engine: BackendEngine = .sqlite, _ body: (BackendService) async throws -> Result) async throws -> Result {
        switch engine {
        case .sqlite:
            let scratch = Scratch()
            defer { withExtendedLifetime(scratch) {} }
            return try await body(try await backend(on: try await SQLBackendStorage.sqlite(path: scratch.url.appendingPathComponent("backend.sqlite").path)))
        case .postgres:
            return try await PostgresCluster.with { cluster in
                try await body(try await backend(on: try await SQLBackendStorage.postgres(url: cluster.url)))
            }
        }
    }

    /// Runs `body` with fresh storage with the tests' service key: a SQLite file, or a throwaway
    /// PostgreSQL cluster, stopped when `body` returns or throws.
    static func withStorage<Result>(engine: BackendEngine, _ body: (SQLBackendStorage) async throws -> Result) async throws -> Result {
        func keyed(_ storage: SQLBackendStorage) async throws -> SQLBackendStorage {
            try await storage.addKey(hash: ServiceKeys.digest(serviceKey), label: "tests", created: start)
            return storage
        }
        switch engine {
        case .sqlite:
            let scratch = Scratch()
            defer { withExtendedLifetime(scratch) {} }
            return try await body(try await keyed(try await SQLBackendStorage.sqlite(path: scratch.url.appendingPathComponent("backend.sqlite").path)))
        case .postgres:
            return try await PostgresCluster.with { cluster in try await body(try await keyed(try await SQLBackendStorage.postgres(url: cluster.url))) }
        }
    }

    /// A backend with the tests' service key, on given storage.
    private func backend(on storage: any BackendStorage) async throws -> BackendService {
        try await storage.addKey(hash: ServiceKeys.digest(Self.serviceKey), label: "tests", created: Self.start)
        return try service(on: storage)
    }

    /// A backend service on given storage (a second instance on the same database, say).
    func service(on storage: any BackendStorage) throws -> BackendService {
        let verifier = try SignedDataVerifier(rootCertificates: [store.rootCertificate], bundleId: "com.example.shop", environment: .sandbox)
        let clock = self.clock
        return BackendService(storage: storage, intake: SignedDataIntake(verifier: verifier), now: { clock.now() })
    }

    static let serviceKey = "osk_test-key"

    /// What a backend says each customer is entitled to, by customer id.
    static func backendEntitlements(_ backend: BackendService) async throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for customer in accounts.map({ token($0).uuidString.lowercased() }) + [familyMember.userID] {
            result[customer] = try await backend.ledger.entitlements(customer: customer).map(\.transactionId).sorted()
        }
        return result
    }
}

extension BackendService {
    func post(_ path: String, _ body: Data, key: String? = BackendScenario.serviceKey) async -> HTTPResponse {
        await handle(HTTPRequest(method: "POST", path: path, headers: key.map { ["Authorization": "Bearer \($0)"] } ?? [:], body: body))
    }

    /// A GET of `path`, with its query (`?from=…&to=…`) taken apart as the server does.
    func get(_ path: String, key: String? = BackendScenario.serviceKey) async -> HTTPResponse {
        let parts = URLComponents(string: path)
        var query: [String: [String]] = [:]
        for item in parts?.queryItems ?? [] { query[item.name, default: []].append(item.value ?? "") }
        return await handle(HTTPRequest(method: "GET", path: parts?.path ?? path, query: query,
                                        headers: key.map { ["Authorization": "Bearer \($0)"] } ?? [:]))
    }
}

/// The database engines the conformance tests run on.
enum BackendEngine: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// Tests on PostgreSQL need Debian's server; they are skipped with this reason without it.
    static var available: [BackendEngine] { PostgresCluster.isAvailable ? allCases : [.sqlite] }
}
