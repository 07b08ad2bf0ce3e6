/// Why signed App Store data was rejected.
///
/// ``code`` carries the status names of Apple's Python library (`INVALID_CHAIN_LENGTH`,
/// `VERIFICATION_FAILURE`, …), which classifies failures more precisely than the Swift library;
/// ``reason`` says what exactly was wrong.
public struct VerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure, with Apple's status name as its raw value.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Not a compact JWS, not base64url, `alg` other than ES256, no `x5c`, or a payload that is
        /// not the expected JSON.
        public static let invalidJWTFormat = Code(rawValue: "INVALID_JWT_FORMAT")
        /// `x5c` does not hold exactly three certificates.
        public static let invalidChainLength = Code(rawValue: "INVALID_CHAIN_LENGTH")
        /// A certificate in `x5c` is not base64 DER, or no trusted root is configured.
        public static let invalidCertificate = Code(rawValue: "INVALID_CERTIFICATE")
        /// The chain does not validate to a trusted root, a marker extension is missing, a certificate
        /// is revoked, or the signature does not verify.
        public static let verificationFailure = Code(rawValue: "VERIFICATION_FAILURE")
        /// The bundle identifier or (in Production) the app Apple ID differs from the configured one.
        public static let invalidAppIdentifier = Code(rawValue: "INVALID_APP_IDENTIFIER")
        /// The payload's environment differs from the configured one.
        public static let invalidEnvironment = Code(rawValue: "INVALID_ENVIRONMENT")
        /// An online revocation check could not be made; trying again later may succeed.
        public static let retryableVerificationFailure = Code(rawValue: "RETRYABLE_VERIFICATION_FAILURE")

        public var description: String { rawValue }
    }

    /// Which check failed. Apple's codes fold a broken chain, a revoked certificate and a bad
    /// signature into one `VERIFICATION_FAILURE`; StoreKit on the device tells them apart.
    public enum Check: String, Hashable, Sendable {
        /// The JWS or its payload is malformed.
        case format
        /// The certificate chain is malformed or does not validate to a trusted root.
        case certificateChain
        /// A certificate is revoked, or its revocation status could not be learned.
        case revocation
        /// The signature does not verify with the leaf certificate's key.
        case signature
        /// The payload belongs to another app or environment.
        case appIdentity
    }

    /// The kind of failure.
    public var code: Code
    /// What exactly was wrong.
    public var reason: String
    /// Which check failed.
    public var check: Check

    public init(_ code: Code, _ reason: String, check: Check? = nil) {
        self.code = code
        self.reason = reason
        switch code {
        case .invalidJWTFormat: self.check = check ?? .format
        case .invalidAppIdentifier, .invalidEnvironment: self.check = check ?? .appIdentity
        case .retryableVerificationFailure: self.check = check ?? .revocation
        default: self.check = check ?? .certificateChain
        }
    }

    public var description: String { "\(code.rawValue): \(reason)" }
}
