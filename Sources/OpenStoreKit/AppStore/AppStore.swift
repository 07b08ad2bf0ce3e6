import Foundation
import Synchronization

/// The App Store as the app sees it: syncing, device identity, payments and environments.
public enum AppStore {
    /// The server environment signed data comes from.
    public struct Environment: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let production = Environment(rawValue: "Production")
        public static let sandbox = Environment(rawValue: "Sandbox")
        public static let xcode = Environment(rawValue: "Xcode")
        public var description: String { rawValue }
    }

    /// A platform an app was first bought or downloaded on (`AppTransaction.originalPlatform`).
    public struct Platform: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let iOS = Platform(rawValue: "iOS")
        public static let macOS = Platform(rawValue: "macOS")
        public static let tvOS = Platform(rawValue: "tvOS")
        public static let visionOS = Platform(rawValue: "visionOS")
    }

    /// Fetches the account's transactions and statuses again. Call it only from an explicit
    /// "Restore Purchases" action: on a device it asks the customer to sign in.
    ///
    /// - Throws: `StoreKitError` (for example `userCancelled`, or what a test session simulates).
    public static func sync() async throws {
        try await StoreClient.active.sync()
    }

    /// The identifier of this device for this app's vendor, which device verification hashes with.
    public static var deviceVerificationID: UUID? {
        let client = StoreClient.active
        return client.isDisconnected ? nil : client.verificationContext.deviceVerificationID
    }

    /// Whether the customer may make payments on this device: false when the account's in-app
    /// purchases are restricted (Screen Time) or the test session simulates `purchaseNotAllowed`.
    ///
    /// Read synchronously, as StoreKit's is: the value the store gave when the app launched, after
    /// its last purchase attempt or its last `AppStore.sync()`; false without a connection.
    public static var canMakePayments: Bool {
        let client = StoreClient.active
        return !client.isDisconnected && client.paymentsAllowed.withLock { $0 }
    }

    /// Shows the manage-subscriptions sheet and returns when the customer closes it.
    ///
    /// What the customer does there (cancel a subscription, switch plans, or nothing) is what the
    /// test controls queued for the sheet (`TestSession.queueCustomerResponse(_:in:device:)`); the
    /// changes reach the app through `Transaction.updates` and `Status.updates`, as with StoreKit's
    /// sheet. Fails as a test session's `manageSubscriptions` simulated error says.
    public static func showManageSubscriptions() async throws {
        try await StoreClient.active.presentSheet("manageSubscriptions")
    }

    /// Shows the offer-code redemption sheet and returns when the customer closes it.
    ///
    /// A code the customer redeems there (as queued with `.redeemOfferCode(referenceName:)`) arrives
    /// as a transaction through `Transaction.updates`, not as a return value, as with StoreKit's
    /// sheet. Fails as a test session's `offerCodeRedeem` simulated error says.
    public static func presentOfferCodeRedeemSheet() async throws {
        try await StoreClient.active.presentSheet("offerCodeRedeem")
    }
}

extension StoreClient {
    /// `AppStore.sync()` from this device.
    public func sync() async throws {
        try await storeKitCall { try await transport.sync(device: device) }
        await refreshPaymentsAllowed()
    }

    /// Shows a sheet over the app on this device and returns when the customer closes it.
    func presentSheet(_ sheet: String, about transactionID: UInt64? = nil) async throws {
        try await storeKitCall { try await transport.presentSheet(sheet, device: device, about: transactionID) }
    }
}
