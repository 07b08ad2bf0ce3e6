import AppStoreSigning
import Foundation

/// Signed data from the App Store and whether it passed verification on this device.
///
/// As in StoreKit, a value is `.verified` only when its JWS chains to the store's root, its
/// signature holds, it was signed for this app and environment, and its device verification
/// matches this device. Anything else is `.unverified` with the reason: the value is still readable
/// through ``unsafePayloadValue`` for diagnostics, but must never grant anything.
@frozen
public enum VerificationResult<SignedType> {
    /// The value failed verification for the given reason.
    case unverified(SignedType, VerificationError)
    /// The value passed every check.
    case verified(SignedType)

    /// Why a value failed verification, in StoreKit's cases.
    public enum VerificationError: Error, Hashable, Sendable, CustomStringConvertible {
        /// A certificate in the chain was revoked.
        case revokedCertificate
        /// The chain does not lead to a trusted root, or a certificate in it is invalid or expired.
        case invalidCertificateChain
        /// The value was signed for another device.
        case invalidDeviceVerification
        /// The JWS is malformed.
        case invalidEncoding
        /// The signature does not hold, or the value was signed for another app or environment.
        case invalidSignature
        /// The payload lacks properties every value of its kind has.
        case missingRequiredProperties

        public var description: String {
            switch self {
            case .revokedCertificate: return "a certificate in the signing chain was revoked"
            case .invalidCertificateChain: return "the signing certificate chain is invalid"
            case .invalidDeviceVerification: return "the value was signed for another device"
            case .invalidEncoding: return "the signed value is malformed"
            case .invalidSignature: return "the signature is invalid, or the value belongs to another app or environment"
            case .missingRequiredProperties: return "the payload is missing required properties"
            }
        }

        /// The case named `name` (`invalidSignature`, …), as a store's test session names simulated failures.
        init?(caseName name: String) {
            let all: [VerificationError] = [.revokedCertificate, .invalidCertificateChain, .invalidDeviceVerification, .invalidEncoding,
                                            .invalidSignature, .missingRequiredProperties]
            guard let match = all.first(where: { $0.caseName == name }) else { return nil }
            self = match
        }

        var caseName: String {
            switch self {
            case .revokedCertificate: return "revokedCertificate"
            case .invalidCertificateChain: return "invalidCertificateChain"
            case .invalidDeviceVerification: return "invalidDeviceVerification"
            case .invalidEncoding: return "invalidEncoding"
            case .invalidSignature: return "invalidSignature"
            case .missingRequiredProperties: return "missingRequiredProperties"
            }
        }
    }

    /// The verified value.
    ///
    /// - Throws: The ``VerificationError`` when the value is unverified.
    public var payloadValue: SignedType {
        get throws {
            switch self {
            case .verified(let value): return value
            case .unverified(_, let error): throw error
            }
        }
    }

    /// The value whether or not it passed verification. Never grant anything from it.
    public var unsafePayloadValue: SignedType {
        switch self {
        case .verified(let value), .unverified(let value, _): return value
        }
    }

    /// Whether the value passed verification.
    public var isVerified: Bool {
        if case .verified = self { return true }
        return false
    }

    /// The verification failure, if any.
    public var verificationError: VerificationError? {
        if case .unverified(_, let error) = self { return error }
        return nil
    }
}

/// A value that came from a JWS signed by the App Store.
public protocol JWSSignedValue: Sendable {
    /// The compact JWS the value was decoded from.
    var jwsRepresentation: String { get }
    /// When the App Store signed the value.
    var signedDate: Date { get }
    /// The device verification digest (SHA-384 over the nonce and the device verification ID).
    var deviceVerification: Data { get }
    /// The nonce the device verification digest was made with.
    var deviceVerificationNonce: UUID { get }
}

extension VerificationResult where SignedType: JWSSignedValue {
    /// The compact JWS, for sending to a server that verifies it again.
    public var jwsRepresentation: String { unsafePayloadValue.jwsRepresentation }

    /// The decoded JWS header.
    public var headerData: Data { segment(0) }
    /// The decoded JWS payload.
    public var payloadData: Data { segment(1) }
    /// The raw signature bytes (r ‖ s).
    public var signatureData: Data { segment(2) }
    /// The bytes the signature covers: `header.payload`, as encoded.
    public var signedData: Data {
        let parts = jwsRepresentation.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return Data() }
        return Data("\(parts[0]).\(parts[1])".utf8)
    }
    /// When the App Store signed the value.
    public var signedDate: Date { unsafePayloadValue.signedDate }
    /// The device verification digest.
    public var deviceVerification: Data { unsafePayloadValue.deviceVerification }
    /// The nonce of the device verification digest.
    public var deviceVerificationNonce: UUID { unsafePayloadValue.deviceVerificationNonce }

    private func segment(_ index: Int) -> Data {
        let parts = jwsRepresentation.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return Data() }
        return Base64URL.decode(parts[index]) ?? Data()
    }
}

extension VerificationResult: Sendable where SignedType: Sendable {}
extension VerificationResult: Equatable where SignedType: Equatable {}
extension VerificationResult: Hashable where SignedType: Hashable {}

/// Reading the device verification fields every signed payload carries.
enum DeviceVerificationFields {
    /// The nonce of a payload that has none (it then fails verification).
    static let missingNonce = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// The digest bytes of a base64 `deviceVerification` field; empty when absent or malformed.
    static func digest(_ base64: String?) -> Data {
        base64.flatMap { Data(base64Encoded: $0) } ?? Data()
    }
}
