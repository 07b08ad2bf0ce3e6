/// A failure to read, make or use keys, certificates and signatures.
///
/// Verification of signed App Store data reports ``VerificationError`` instead; this error is for
/// everything around it: loading a key file, issuing a certificate, signing.
public struct SigningError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in words a person can act on.
    public var message: String

    public init(_ message: String) { self.message = message }

    init(_ failure: OpenSSLFailure) { self.message = failure.description }

    public var description: String { message }
}
