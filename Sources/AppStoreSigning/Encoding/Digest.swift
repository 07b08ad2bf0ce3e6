import Foundation

/// SHA-2 digests.
public enum Digest {
    /// SHA-256 of `data` (32 bytes).
    public static func sha256(_ data: Data) -> Data { OpenSSLDigest.sha256(data) }
    /// SHA-384 of `data` (48 bytes).
    public static func sha384(_ data: Data) -> Data { OpenSSLDigest.sha384(data) }
}
