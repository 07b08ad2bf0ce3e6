import Foundation

/// The customer's purchase of the app itself: the payload of a signed app transaction.
///
/// [Apple documentation](https://developer.apple.com/documentation/appstoreserverapi/apptransaction)
public struct AppTransaction: SignedPayload {
    /// The environment the receipt belongs to.
    public var receiptType: Environment?
    /// The App Store identifier of the app (absent in Sandbox and Xcode).
    public var appAppleId: Int64?
    /// The bundle identifier of the app.
    public var bundleId: String?
    /// The app version the transaction applies to.
    public var applicationVersion: String?
    /// The App Store identifier of the app version.
    public var versionExternalIdentifier: Int64?
    /// When the App Store created this app transaction.
    public var receiptCreationDate: Date?
    /// When the customer first bought or downloaded the app.
    public var originalPurchaseDate: Date?
    /// The app version the customer first bought.
    public var originalApplicationVersion: String?
    /// Base64 SHA-384 of the nonce and the device verification identifier.
    public var deviceVerification: String?
    /// The nonce used for `deviceVerification`.
    public var deviceVerificationNonce: UUID?
    /// When the customer pre-ordered the app.
    public var preorderDate: Date?
    /// The unique identifier of the customer's download of the app.
    public var appTransactionId: String?
    /// The platform on which the customer first bought the app.
    public var originalPlatform: PurchasePlatform?
    /// When the app asked for this app transaction (Xcode writes it).
    public var requestDate: Date?

    /// Makes a payload with every field absent.
    public init() {}

    /// App transactions are validated at their creation date.
    public var validationDate: Date? { receiptCreationDate }
}
