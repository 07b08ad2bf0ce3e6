import AppStoreSigning
import Foundation

/// Bearer keys for the backend's `/v1` endpoints: handed out once, kept only as SHA-256 digests.
public enum ServiceKeys {
    /// A new key: 32 random bytes, base64url, prefixed so it is recognisable in logs and configs.
    public static func make<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        return "osk_" + Base64URL.encode(Data(bytes))
    }

    /// The digest a key is stored and looked up by.
    public static func digest(_ key: String) -> String {
        Digest.sha256(Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
