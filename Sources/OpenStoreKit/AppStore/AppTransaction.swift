import AppStoreModels
import Foundation

/// The signed record of the customer getting the app, as StoreKit's `AppTransaction`.
///
/// Use ``originalPurchaseDate`` and ``originalAppVersion`` to grandfather customers who bought
/// the app before it moved to in-app purchases.
public struct AppTransaction: Hashable, Sendable, JWSSignedValue, RequiredPropertiesChecking {
    public let appTransactionID: String
    /// The app's Apple ID; `nil` outside production.
    public let appID: UInt64?
    public let appVersionID: UInt64?
    public let appVersion: String
    public let bundleID: String
    public let environment: AppStore.Environment
    /// The app version the customer first got.
    public let originalAppVersion: String
    /// When the customer first got the app.
    public let originalPurchaseDate: Date
    public let preorderDate: Date?
    /// The platform the customer first got the app on.
    public let originalPlatform: AppStore.Platform
    public let signedDate: Date
    public let deviceVerification: Data
    public let deviceVerificationNonce: UUID
    public let jsonRepresentation: Data
    public let jwsRepresentation: String

    let payload: AppStoreModels.AppTransaction

    init(payload: AppStoreModels.AppTransaction, jws: String, payloadData: Data) {
        self.payload = payload
        self.appTransactionID = payload.appTransactionId ?? ""
        self.appID = payload.appAppleId.map { UInt64($0) }
        self.appVersionID = payload.versionExternalIdentifier.map { UInt64($0) }
        self.appVersion = payload.applicationVersion ?? ""
        self.bundleID = payload.bundleId ?? ""
        self.environment = AppStore.Environment(rawValue: payload.receiptType?.rawValue ?? "")
        self.originalAppVersion = payload.originalApplicationVersion ?? ""
        self.originalPurchaseDate = payload.originalPurchaseDate ?? Date(timeIntervalSince1970: 0)
        self.preorderDate = payload.preorderDate
        self.originalPlatform = AppStore.Platform(rawValue: payload.originalPlatform?.rawValue ?? AppStore.Platform.iOS.rawValue)
        self.signedDate = payload.receiptCreationDate ?? Date(timeIntervalSince1970: 0)
        self.deviceVerification = DeviceVerificationFields.digest(payload.deviceVerification)
        self.deviceVerificationNonce = payload.deviceVerificationNonce ?? DeviceVerificationFields.missingNonce
        self.jsonRepresentation = payloadData
        self.jwsRepresentation = jws
    }

    var hasRequiredProperties: Bool {
        payload.bundleId != nil && payload.originalPurchaseDate != nil && payload.receiptCreationDate != nil
            && payload.deviceVerificationNonce != nil
    }

    public static func == (lhs: AppTransaction, rhs: AppTransaction) -> Bool { lhs.jwsRepresentation == rhs.jwsRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(jwsRepresentation) }

    /// The app transaction for this device.
    ///
    /// - Throws: `StoreKitError` when the store cannot be reached or a test session makes it fail.
    public static var shared: VerificationResult<AppTransaction> {
        get async throws { try await StoreClient.active.appTransaction() }
    }

    /// Fetches the app transaction again (on a device, after asking the customer to sign in).
    public static func refresh() async throws -> VerificationResult<AppTransaction> {
        try await StoreClient.active.appTransaction()
    }
}

extension AppTransaction: CustomDebugStringConvertible {
    /// ``originalPlatform``'s raw string (`iOS`).
    public var originalPlatformStringRepresentation: String { originalPlatform.rawValue }

    public var debugDescription: String {
        "AppTransaction(appTransactionID: \(appTransactionID), bundleID: \(bundleID), environment: \(environment), "
            + "originalAppVersion: \(originalAppVersion), originalPurchaseDate: \(originalPurchaseDate.formatted(.iso8601)))"
    }
}

extension StoreClient {
    /// `AppTransaction.shared` for this device.
    public func appTransaction() async throws -> VerificationResult<AppTransaction> {
        let item = try await storeKitCall { try await transport.appTransaction(device: device) }
        guard let result = verifyAppTransaction(item) else {
            throw StoreKitError.systemError(StoreConnectionError(message: "the store's app transaction does not decode"))
        }
        return result
    }
}
