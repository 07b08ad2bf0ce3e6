import COpenSSL
import Foundation

/// An owned, parsed `X509` certificate. Read-only after creation, so safe to share.
package final class X509Handle: @unchecked Sendable {
    package let pointer: OpaquePointer

    package init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// Parses DER bytes; `nil` when they are not exactly one certificate.
    package static func parse(der: Data) -> X509Handle? {
        var consumed = 0
        let certificate = OpenSSLBytes.decode(der) { cursor, length -> OpaquePointer? in
            let start = cursor.pointee
            let result = d2i_X509(nil, cursor, length)
            if let start, let end = cursor.pointee { consumed = start.distance(to: end) }
            return result
        }
        guard let certificate else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        guard consumed == der.count else {
            X509_free(certificate)
            return nil
        }
        return X509Handle(taking: certificate)
    }

    /// The certificate as DER.
    package var der: Data {
        OpenSSLBytes.encode { i2d_X509(pointer, $0) } ?? Data()
    }

    package var subject: String { Self.describe(X509_get_subject_name(pointer)) }
    package var issuer: String { Self.describe(X509_get_issuer_name(pointer)) }

    /// The subject's common name (CN), or `nil`.
    package var commonName: String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = X509_NAME_get_text_by_NID(X509_get_subject_name(pointer), NID_commonName, &buffer, Int32(buffer.count))
        guard length > 0 else { return nil }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The short name of the algorithm the issuer signed with, such as `ecdsa-with-SHA384`.
    package var signatureAlgorithmName: String {
        guard let name = OBJ_nid2ln(X509_get_signature_nid(pointer)) else { return "unknown" }
        return String(cString: name)
    }

    /// The subject key's type and size, such as `EC 384`.
    package var publicKeyDescription: String {
        guard let key = X509_get0_pubkey(pointer) else { return "none" }
        return EVP_PKEY_get_base_id(key) == EVP_PKEY_EC ? "EC \(EVP_PKEY_get_bits(key))" : "type \(EVP_PKEY_get_base_id(key))"
    }

    package var notBefore: Date? { Self.date(X509_get0_notBefore(pointer)) }
    package var notAfter: Date? { Self.date(X509_get0_notAfter(pointer)) }

    /// The serial number as upper-case hexadecimal.
    package var serialNumberHex: String {
        guard let number = ASN1_INTEGER_to_BN(X509_get0_serialNumber(pointer), nil) else { return "" }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "" }
        defer { shim_OPENSSL_free(hex) }
        return String(cString: hex)
    }

    /// The public key of the certificate.
    package func publicKey() -> EVPKey? {
        guard let key = X509_get_pubkey(pointer) else { return nil }
        return EVPKey(taking: key)
    }

    /// Whether the certificate carries an extension with this dotted OID.
    package func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(pointer, object, -1) >= 0
    }

    /// The OCSP responder URLs from the Authority Information Access extension.
    package var ocspResponderURLs: [String] {
        guard let stack = X509_get1_ocsp(pointer) else { return [] }
        defer { X509_email_free(stack) }
        return (0..<shim_sk_OPENSSL_STRING_num(stack)).compactMap { index in
            shim_sk_OPENSSL_STRING_value(stack, index).map { String(cString: $0) }
        }
    }

    private static func describe(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, name, 0, shim_XN_FLAG_RFC2253())
        return String(decoding: OpenSSLBytes.contents(of: bio), as: UTF8.self)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
