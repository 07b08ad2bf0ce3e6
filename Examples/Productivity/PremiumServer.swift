import AppStoreModels
import AppStoreSigning
import Foundation
import OpenStoreKit
import Synchronization

/// The productivity app's own server: it checks the `jwsRepresentation` the app sends after a purchase,
/// as Apple's libraries do (chain to the App Store's root, signature, bundle ID, environment), and
/// records the premium unlock in its ledger before the app finishes the transaction.
///
/// Here the server trusts the root of the store the app is connected to (what `storekit ca export`
/// prints); against the real App Store it would trust Apple's root.
final class PremiumServer: Sendable {
    /// The product the server grants premium for.
    static let premiumID = "com.example.productivity.premium.lifetime"

    private let verifier: SignedDataVerifier
    private let granted = Mutex<[UInt64: Date]>([:])

    init(trusting context: VerificationContext) throws {
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = true
        verifier = try SignedDataVerifier(rootCertificates: try context.rootCertificates.map { try Certificate(derRepresentation: $0) },
                                          bundleId: context.bundleId, environment: AppStoreModels.Environment(rawValue: context.environment),
                                          options: options)
    }

    /// Verifies a purchase the app reports and records it; `false` (nothing recorded) for anything
    /// that does not verify or is not the premium unlock.
    func recordPurchase(jwsRepresentation jws: String) -> Bool {
        guard let transaction = try? verifier.verifyAndDecodeTransaction(jws), transaction.productId == Self.premiumID,
              transaction.revocationDate == nil, let id = transaction.originalTransactionId.flatMap(UInt64.init) else { return false }
        granted.withLock { $0[id] = transaction.purchaseDate ?? Date(timeIntervalSince1970: 0) }
        return true
    }

    /// How many premium purchases the server has recorded.
    var recordedCount: Int { granted.withLock { $0.count } }
}
