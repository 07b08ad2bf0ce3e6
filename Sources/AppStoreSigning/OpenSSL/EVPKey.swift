import COpenSSL
import Foundation
import Synchronization

/// An owned `EVP_PKEY`.
///
/// OpenSSL allows concurrent signing and verification with one key object as long as nobody
/// changes it, and nothing here does after creation; that is why it is `@unchecked Sendable`.
package final class EVPKey: @unchecked Sendable {
    package let pointer: OpaquePointer
    /// Verification contexts already initialised for this key, reused across calls: setting one up
    /// (`EVP_PKEY_verify_init`, which looks up the algorithm's implementation) costs about a tenth of a
    /// P-256 verification. A context serves one thread at a time; the pool hands each caller its own.
    /// Held as addresses: a pointer is not `Sendable`, and the contexts never leave this key.
    private let preparedVerifyContexts = Mutex<[UInt]>([])

    package init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        preparedVerifyContexts.withLock { contexts in for address in contexts { EVP_PKEY_CTX_free(OpaquePointer(bitPattern: address)) } }
        EVP_PKEY_free(pointer)
    }

    /// Generates a fresh P-256 key pair from OpenSSL's random source.
    package static func generateP256() throws(OpenSSLFailure) -> EVPKey {
        guard let key = shim_EVP_EC_gen_P256() else { throw OpenSSLFailure("P-256 key generation") }
        return EVPKey(taking: key)
    }

    /// Generates a fresh P-384 key pair (the curve of Apple's root and intermediate authorities).
    package static func generateP384() throws(OpenSSLFailure) -> EVPKey {
        guard let key = shim_EVP_EC_gen_P384() else { throw OpenSSLFailure("P-384 key generation") }
        return EVPKey(taking: key)
    }

    /// Reads a private key in PKCS#8 or SEC1 DER.
    package static func privateKey(der: Data) throws(OpenSSLFailure) -> EVPKey {
        let key = OpenSSLBytes.decode(der) { cursor, length in d2i_AutoPrivateKey(nil, cursor, length) }
        guard let key else { throw OpenSSLFailure("reading the private key") }
        return EVPKey(taking: key)
    }

    /// Reads a public key in SubjectPublicKeyInfo DER.
    package static func publicKey(subjectPublicKeyInfo der: Data) throws(OpenSSLFailure) -> EVPKey {
        let key = OpenSSLBytes.decode(der) { cursor, length in d2i_PUBKEY(nil, cursor, length) }
        guard let key else { throw OpenSSLFailure("reading the public key") }
        return EVPKey(taking: key)
    }

    /// The key's size in bits (256 for P-256, 384 for P-384).
    package var bits: Int32 { EVP_PKEY_get_bits(pointer) }

    /// Whether this is an elliptic-curve key on P-256.
    package var isP256: Bool {
        EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC && EVP_PKEY_get_bits(pointer) == 256
    }

    /// A short description of the key type, such as `EC 384`.
    package var algorithmDescription: String {
        let base = EVP_PKEY_get_base_id(pointer) == EVP_PKEY_EC ? "EC" : "type \(EVP_PKEY_get_base_id(pointer))"
        return "\(base) \(EVP_PKEY_get_bits(pointer))"
    }

    /// The private key as PKCS#8 DER.
    package func pkcs8DER() throws(OpenSSLFailure) -> Data {
        guard let info = EVP_PKEY2PKCS8(pointer) else { throw OpenSSLFailure("exporting the private key") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard let der = OpenSSLBytes.encode({ i2d_PKCS8_PRIV_KEY_INFO(info, $0) }) else {
            throw OpenSSLFailure("encoding the private key")
        }
        return der
    }

    /// The public key as SubjectPublicKeyInfo DER.
    package func subjectPublicKeyInfoDER() throws(OpenSSLFailure) -> Data {
        guard let der = OpenSSLBytes.encode({ i2d_PUBKEY(pointer, $0) }) else {
            throw OpenSSLFailure("encoding the public key")
        }
        return der
    }

    /// Signs `message` with ECDSA over SHA-256 and returns the DER `ECDSA-Sig-Value`.
    package func signSHA256(_ message: Data) throws(OpenSSLFailure) -> Data {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLFailure("creating a digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            throw OpenSSLFailure("starting the signature")
        }
        var length = 0
        let signature: Data? = message.withUnsafeBytes { raw in
            let input = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            guard EVP_DigestSign(context, nil, &length, input, raw.count) == 1 else { return nil }
            var buffer = Data(count: length)
            let status = buffer.withUnsafeMutableBytes { out in
                EVP_DigestSign(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, input, raw.count)
            }
            return status == 1 ? buffer.prefix(length) : nil
        }
        guard let signature else { throw OpenSSLFailure("signing") }
        return Data(signature)
    }

    /// Whether `derSignature` is a valid ECDSA signature over SHA-256 of `message` for this key.
    package func verifySHA256(derSignature: Data, message: Data) -> Bool {
        var digest = [UInt8](repeating: 0, count: 32)
        message.withUnsafeBytes { input in
            _ = SHA256(input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count, &digest)
        }
        return verifyDigest(derSignature: derSignature, sha256Digest: digest)
    }

    /// Whether `derSignature` is a valid ECDSA signature for a SHA-256 digest computed beforehand: the
    /// operation `openssl speed ecdsap256` measures, with a context prepared once per key.
    package func verifyDigest(derSignature: Data, sha256Digest digest: [UInt8]) -> Bool {
        guard digest.count == 32, let context = takeVerifyContext() else { return false }
        let status = derSignature.withUnsafeBytes { signature in
            EVP_PKEY_verify(context, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count, digest, digest.count)
        }
        if status == 1 {
            returnVerifyContext(context)
            return true
        }
        // A failed verification may leave errors (and, on a malformed signature, state) behind: the
        // context is dropped rather than reused.
        OpenSSLErrorQueue.clear()
        EVP_PKEY_CTX_free(context)
        return false
    }

    private func takeVerifyContext() -> OpaquePointer? {
        if let address = preparedVerifyContexts.withLock({ $0.popLast() }) { return OpaquePointer(bitPattern: address) }
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { return nil }
        guard EVP_PKEY_verify_init(context) == 1 else {
            OpenSSLErrorQueue.clear()
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }

    private func returnVerifyContext(_ context: OpaquePointer) {
        let kept = preparedVerifyContexts.withLock { contexts in
            // A few per key cover every thread that verifies at once; more are freed.
            guard contexts.count < 16 else { return false }
            contexts.append(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context))))
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context) }
    }
}
