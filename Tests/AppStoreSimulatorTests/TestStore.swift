import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import TestSupport

/// A store for one test: the example shop, in-memory storage, a manual clock at 2026-01-01T00:00Z,
/// sequential identifiers, and a verifier that checks everything the store signs.
struct TestStore {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)
    static let shopConfiguration: StoreKitConfiguration = {
        try! StoreKitConfiguration.load(contentsOf: ExampleShop.file).configuration
    }()
    static let authority = try! CertificateAuthority.make()

    let store: SimulatedAppStore
    let storage: InMemoryLedgerStorage
    let clock: ManualStoreClock
    /// Real time as the store reads it (senders' claims), apart from the store's clock.
    let realTime: ManualStoreClock
    let verifier: SignedDataVerifier

    init(environment: AppStoreModels.Environment = .xcode, appAppleId: Int64? = nil, configuration: StoreKitConfiguration = TestStore.shopConfiguration,
         edit: (inout StoreKitConfiguration) -> Void = { _ in }) throws {
        var configuration = configuration
        edit(&configuration)
        storage = InMemoryLedgerStorage()
        clock = ManualStoreClock(startingAt: Self.start)
        realTime = ManualStoreClock(startingAt: Self.start)
        store = try SimulatedAppStore.create(configuration: configuration,
                                             identity: StoreIdentity(bundleId: "com.example.shop", environment: environment, appAppleId: appAppleId),
                                             authority: Self.authority, storage: storage, clock: clock, identifiers: .sequential(), realTime: realTime)
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = true
        verifier = try SignedDataVerifier(rootCertificates: [Self.authority.rootCertificate], bundleId: "com.example.shop",
                                          appAppleId: appAppleId, environment: environment, options: options)
    }

    /// Buys and expects success.
    @discardableResult
    func buy(_ productID: String, account: String = "alice", device: String? = "phone", quantity: Int = 1,
             offer: PurchaseOffer? = nil, token: UUID? = nil) async throws -> SignedTransaction {
        let outcome = try await store.purchase(PurchaseRequest(productID: productID, account: account, device: device, quantity: quantity,
                                                               appAccountToken: token, offer: offer))
        guard case .success(let signed) = outcome else { throw TestFailure("expected success, got \(outcome)") }
        return signed
    }

    /// Puts alice and bob in the "smiths" Family Sharing group; with `bobsPhone`, bob gets a device
    /// ("bob-phone") to receive family copies through its updates.
    func makeSmithsFamily(bobsPhone: Bool = false) async throws {
        try await store.setFamilyGroup("smiths", for: "alice")
        try await store.setFamilyGroup("smiths", for: "bob")
        if bobsPhone { try await store.addDevice("bob-phone", account: "bob") }
    }

    /// Verifies a signed transaction and returns its payload.
    func verified(_ signed: SignedTransaction) throws -> JWSTransactionDecodedPayload {
        try verifier.verifyAndDecodeTransaction(signed.jws)
    }

    /// The outbox as (type, subtype) pairs.
    func notificationKinds(after sequence: Int64 = 0) async throws -> [String] {
        try await store.notifications(after: sequence).map { [$0.type.rawValue, $0.subtype?.rawValue].compactMap { $0 }.joined(separator: "/") }
    }

    /// Product identifiers of signed transactions.
    static func ids(_ transactions: [SignedTransaction]) -> [UInt64] { transactions.map(\.transaction.id) }
}
