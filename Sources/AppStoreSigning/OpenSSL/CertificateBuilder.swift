import COpenSSL
import Foundation

/// What goes into a certificate this package issues.
package struct CertificateTemplate: Sendable {
    package enum Role: Sendable {
        /// A self-signed root: critical `CA:TRUE`, `keyCertSign, cRLSign`.
        case root
        /// An intermediate authority: critical `CA:TRUE, pathlen:0`, `keyCertSign, cRLSign`.
        case intermediate
        /// An end-entity signing certificate: critical `CA:FALSE`, `digitalSignature`.
        case leaf
    }

    package var role: Role
    package var serialNumber: UInt64
    /// Relative distinguished names in order, such as `[("CN", "Root"), ("O", "OpenStoreKit")]`.
    package var subject: [(String, String)]
    package var notBefore: Date
    package var notAfter: Date
    /// Dotted OIDs added as non-critical marker extensions whose value is DER NULL, as Apple's are.
    package var markerExtensionOIDs: [String]
    /// Where the issuer's OCSP responder answers for this certificate (`authorityInfoAccess`), if anywhere.
    package var ocspURL: String?

    package init(role: Role, serialNumber: UInt64, subject: [(String, String)], notBefore: Date, notAfter: Date,
                 markerExtensionOIDs: [String], ocspURL: String? = nil) {
        self.role = role
        self.serialNumber = serialNumber
        self.subject = subject
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.markerExtensionOIDs = markerExtensionOIDs
        self.ocspURL = ocspURL
    }
}

/// Issues X.509 v3 certificates with OpenSSL.
package enum CertificateBuilder {
    /// Issues a certificate for `subjectKey`, signed by `issuerKey` (ECDSA with SHA-384 for a P-384
    /// issuer, SHA-256 for a P-256 one).
    ///
    /// `issuer` is `nil` for a self-signed root. The result carries subject and authority key
    /// identifiers, so it also passes OpenSSL's strict checks (Apple's Python library uses them).
    package static func issue(_ template: CertificateTemplate, subjectKey: EVPKey, issuer: X509Handle?,
                              issuerKey: EVPKey) throws(OpenSSLFailure) -> X509Handle {
        guard let certificate = X509_new() else { throw OpenSSLFailure("creating a certificate") }
        let handle = X509Handle(taking: certificate)
        guard X509_set_version(certificate, 2) == 1,
              ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate), template.serialNumber) == 1,
              ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(template.notBefore.timeIntervalSince1970)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(template.notAfter.timeIntervalSince1970)) != nil
        else { throw OpenSSLFailure("setting the certificate's version, serial number and validity") }

        let name = X509_get_subject_name(certificate)
        for (field, value) in template.subject {
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0) == 1 else {
                throw OpenSSLFailure("adding \(field) to the subject")
            }
        }
        let issuerName = issuer.map { X509_get_subject_name($0.pointer) } ?? name
        guard X509_set_issuer_name(certificate, issuerName) == 1,
              X509_set_pubkey(certificate, subjectKey.pointer) == 1
        else { throw OpenSSLFailure("setting the issuer and public key") }

        var context = X509V3_CTX()
        shim_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, issuer?.pointer ?? certificate, certificate, nil, nil, 0)
        let standard: [(Int32, String)]
        switch template.role {
        case .root:
            standard = [(NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign")]
        case .intermediate:
            standard = [(NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
                        (NID_key_usage, "critical,keyCertSign,cRLSign")]
        case .leaf:
            standard = [(NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature")]
        }
        var identifiers = [(NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always")]
        if let url = template.ocspURL, template.role != .root { identifiers.append((NID_info_access, "OCSP;URI:\(url)")) }
        for (nid, value) in standard + identifiers {
            guard let extensionValue = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw OpenSSLFailure("making extension \(nid)")
            }
            defer { X509_EXTENSION_free(extensionValue) }
            guard X509_add_ext(certificate, extensionValue, -1) == 1 else { throw OpenSSLFailure("adding extension \(nid)") }
        }
        for oid in template.markerExtensionOIDs {
            try addMarkerExtension(oid: oid, to: certificate)
        }
        // ecdsa-with-SHA384 from a P-384 issuer, as Apple's root and intermediate sign; SHA-256 from P-256.
        guard X509_sign(certificate, issuerKey.pointer, issuerKey.bits > 256 ? EVP_sha384() : EVP_sha256()) > 0 else {
            throw OpenSSLFailure("signing the certificate")
        }
        return handle
    }

    private static func addMarkerExtension(oid: String, to certificate: OpaquePointer) throws(OpenSSLFailure) {
        guard let object = OBJ_txt2obj(oid, 1) else { throw OpenSSLFailure("reading OID \(oid)") }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { throw OpenSSLFailure("allocating an extension value") }
        defer { ASN1_OCTET_STRING_free(value) }
        let derNull: [UInt8] = [0x05, 0x00]
        guard ASN1_OCTET_STRING_set(value, derNull, Int32(derNull.count)) == 1,
              let extensionValue = X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
        else { throw OpenSSLFailure("making extension \(oid)") }
        defer { X509_EXTENSION_free(extensionValue) }
        guard X509_add_ext(certificate, extensionValue, -1) == 1 else { throw OpenSSLFailure("adding extension \(oid)") }
    }
}
