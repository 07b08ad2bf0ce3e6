import Foundation

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

    /// Whether the customer may make payments on this device.
    public static var canMakePayments: Bool { !StoreClient.active.isDisconnected }

    /// Shows the manage-subscriptions sheet. There is no interface here; the call fails as a test
    /// session says (`manageSubscriptions` simulated errors) and otherwise returns.
    public static func showManageSubscriptions() async throws {
        let client = StoreClient.active
        try await storeKitCall { try await client.transport.checkAvailability(of: "manageSubscriptions", device: client.device) }
    }

    /// Shows the offer-code redemption sheet. There is no interface here; redeem codes with
    /// `Product.PurchaseOption.codeOffer(referenceName:)` in tests. Fails as a test session says.
    public static func presentOfferCodeRedeemSheet() async throws {
        let client = StoreClient.active
        try await storeKitCall { try await client.transport.checkAvailability(of: "offerCodeRedeem", device: client.device) }
    }
}

extension StoreClient {
    /// `AppStore.sync()` from this device.
    public func sync() async throws {
        try await storeKitCall { try await transport.sync(device: device) }
    }
}
