import Foundation

/// Ties signed data to one device, as StoreKit's `deviceVerification` field does.
///
/// The value is SHA-384 of the lower-cased nonce followed by the lower-cased device verification
/// identifier (both as UUID strings), base64 encoded in payloads.
public enum DeviceVerification {
    /// The 48-byte digest for `nonce` and the device's `deviceVerificationID`.
    public static func digest(nonce: UUID, deviceVerificationID: UUID) -> Data {
        Digest.sha384(Data((nonce.uuidString.lowercased() + deviceVerificationID.uuidString.lowercased()).utf8))
    }

    /// The base64 form carried in payloads.
    public static func value(nonce: UUID, deviceVerificationID: UUID) -> String {
        digest(nonce: nonce, deviceVerificationID: deviceVerificationID).base64EncodedString()
    }

    /// Whether a payload's `deviceVerification` matches this device.
    public static func matches(_ deviceVerification: String?, nonce: UUID?, deviceVerificationID: UUID) -> Bool {
        guard let deviceVerification, let nonce else { return false }
        return deviceVerification == value(nonce: nonce, deviceVerificationID: deviceVerificationID)
    }
}
