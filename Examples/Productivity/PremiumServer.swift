import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import Foundation
import HTTPService
import OpenStoreKit

/// The productivity app's own server, built on the entitlement backend (`AppStoreBackend`): the app
/// sends it each purchase's `jwsRepresentation` before finishing it; the backend checks it as Apple's
/// libraries do (chain to the App Store's root, signature, bundle ID, environment), records it in its
/// ledger (SQLite here) under the app's user id, and answers the user's entitlements.
///
/// Here the server trusts the root of the store the app is connected to (what `storekit ca export`
/// prints); against the real App Store it would trust Apple's root.
final class PremiumServer: Sendable {
    /// The product the server grants premium for.
    static let premiumID = "com.example.productivity.premium.lifetime"
    /// The app's own id for its user, sent with each purchase.
    static let userID = "productivity-user-1"
    private static let serviceKey = "osk_productivity-example"

    private let backend: BackendService
    private let directory: URL

    init(trusting context: VerificationContext) async throws {
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = true
        let verifier = try SignedDataVerifier(rootCertificates: try context.rootCertificates.map { try Certificate(derRepresentation: $0) },
                                              bundleId: context.bundleId, environment: AppStoreModels.Environment(rawValue: context.environment),
                                              options: options)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("productivity-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let storage = try await SQLBackendStorage.sqlite(path: directory.appendingPathComponent("backend.sqlite").path)
        try await storage.addKey(hash: ServiceKeys.digest(Self.serviceKey), label: "the productivity app", created: Date(timeIntervalSince1970: 0))
        backend = BackendService(storage: storage, intake: SignedDataIntake(verifier: verifier))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Sends a purchase the app reports to the backend (`POST /v1/transactions`); `true` when the backend
    /// verified and recorded it and now entitles the user to premium.
    func recordPurchase(jwsRepresentation jws: String) async -> Bool {
        guard let body = try? JSONSerialization.data(withJSONObject: ["signedTransaction": jws, "userID": Self.userID]) else { return false }
        let answer = await backend.handle(HTTPRequest(method: "POST", path: "/v1/transactions",
                                                      headers: ["Authorization": "Bearer \(Self.serviceKey)"], body: body))
        guard answer.status == 200, let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
              let entitlements = object["entitlements"] as? [[String: Any]] else { return false }
        return entitlements.contains { $0["productId"] as? String == Self.premiumID }
    }

    /// How many premium purchases the backend has recorded for the user.
    var recordedCount: Int {
        get async { ((try? await backend.ledger.history(customer: Self.userID)) ?? []).filter { $0.productId == Self.premiumID }.count }
    }
}
