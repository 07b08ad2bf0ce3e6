import Foundation

/// A payload that the App Store delivers inside a JWS.
///
/// Verification validates the certificate chain at ``validationDate`` when online checks are off,
/// so data signed in the past keeps verifying after its leaf certificate expires.
public protocol SignedPayload: Codable, Hashable, Sendable {
    /// The date the chain is validated at offline: `signedDate`, or `receiptCreationDate` for app transactions.
    var validationDate: Date? { get }
}
