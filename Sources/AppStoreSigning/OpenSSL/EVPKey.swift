import COpenSSL
import Foundation
import Synchronization

/// An owned `EVP_PKEY`.
///
/// OpenSSL allows concurrent signing and verification with one key object as long as nobody
/// changes it, and nothing here does after creation; that is why it is `@unchecked Sendable`.
package final class EVPKey: @unchecked Sendable {
    package let pointer: OpaquePointer
    /// Signing and verification contexts already initialised for this key, reused across calls:
    /// setting one up (`EVP_PKEY_sign_init`, `EVP_PKEY_verify_init`, which look up the algorithm's
    /// implementation) costs about a tenth of a P-256 verification. A context serves one thread at a
    /// time; the pool hands each caller its own. Held as addresses: a pointer is not `Sendable`, and
    /// the contexts never leave this key.
    private let preparedContexts = Mutex<[Operation: [UInt]]>([:])

    package init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        preparedContexts.withLock { pools in
            for address in pools.values.joined() { EVP_PKEY_CTX_free(OpaquePointer(bitPattern: address)) }
        }
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
    ///
    /// The digest is computed here and signed with a context prepared once per key (as verification
    /// does): `EVP_DigestSignInit` looked up the digest and signature implementations on every call,
    /// about half again the cost of the signature itself.
    package func signSHA256(_ message: Data) throws(OpenSSLFailure) -> Data {
        var digest = [UInt8](repeating: 0, count: 32)
        message.withUnsafeBytes { input in
            _ = SHA256(input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count, &digest)
        }
        guard let context = takeContext(for: .sign) else { throw OpenSSLFailure("starting the signature") }
        var length = 0
        guard EVP_PKEY_sign(context, nil, &length, digest, digest.count) == 1 else {
            dropContext(context)
            throw OpenSSLFailure("signing")
        }
        var signature = Data(count: length)
        let status = signature.withUnsafeMutableBytes { out in
            EVP_PKEY_sign(context, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &length, digest, digest.count)
        }
        guard status == 1 else {
            dropContext(context)
            throw OpenSSLFailure("signing")
        }
        returnContext(context, for: .sign)
        return signature.prefix(length)
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
        guard digest.count == 32, let context = takeContext(for: .verify) else { return false }
        let status = derSignature.withUnsafeBytes { signature in
            EVP_PKEY_verify(context, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count, digest, digest.count)
        }
        if status == 1 {
            returnContext(context, for: .verify)
            return true
        }
        // A failed verification may leave errors (and, on a malformed signature, state) behind: the
        // context is dropped rather than reused.
        dropContext(context)
        return false
    }

    /// What a prepared context was initialised for.
    private enum Operation { case sign, verify }

    private func takeContext(for operation: Operation) -> OpaquePointer? {
        if let address = preparedContexts.withLock({ $0[operation]?.popLast() }) { return OpaquePointer(bitPattern: address) }
        guard let context = EVP_PKEY_CTX_new(pointer, nil) else { return nil }
        let initialised = operation == .sign ? EVP_PKEY_sign_init(context) : EVP_PKEY_verify_init(context)
        guard initialised == 1 else {
            dropContext(context)
            return nil
        }
        return context
    }

    private func returnContext(_ context: OpaquePointer, for operation: Operation) {
        let kept = preparedContexts.withLock { pools in
            // A few per key cover every thread that signs or verifies at once; more are freed.
            guard pools[operation, default: []].count < 16 else { return false }
            pools[operation, default: []].append(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context))))
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context) }
    }

    private func dropContext(_ context: OpaquePointer) {
        OpenSSLErrorQueue.clear()
        EVP_PKEY_CTX_free(context)
    }
}
