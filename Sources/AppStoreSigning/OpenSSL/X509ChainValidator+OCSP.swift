import COpenSSL
import Foundation

extension X509ChainValidator {
    /// What an OCSP responder said about a certificate.
    package enum RevocationStatus: Equatable {
        /// The responder vouched for the certificate.
        case good
        /// The responder answered, but not with a trustworthy "good".
        case rejected(String)
        /// No answer could be had (network, HTTP status); asking again later may work.
        case unavailable(String)
    }

    /// Asks the certificate's OCSP responder (or `responderOverride`) whether it is revoked.
    ///
    /// The request uses a SHA-256 certificate ID, is posted as `application/ocsp-request`, and the
    /// response must be signed by the issuer or by a delegated responder that chains to this
    /// validator's roots, and must say "good" within its validity window.
    package func revocationStatus(of certificate: X509Handle, issuedBy issuer: X509Handle,
                                  responderOverride: String?, timeoutSeconds: Int32) -> RevocationStatus {
        defer { OpenSSLErrorQueue.clear() }
        guard let url = responderOverride ?? certificate.ocspResponderURLs.first else {
            return .rejected("the certificate names no OCSP responder")
        }
        guard let components = URLComponents(string: url), components.scheme == "http", let host = components.host else {
            return .rejected("unsupported OCSP responder URL \(url)")
        }
        guard let identifier = OCSP_cert_to_id(EVP_sha256(), certificate.pointer, issuer.pointer),
              let lookup = OCSP_CERTID_dup(identifier),
              let request = OCSP_REQUEST_new()
        else { return .unavailable(OpenSSLErrorQueue.drain(fallback: "could not build the OCSP request")) }
        defer {
            OCSP_CERTID_free(lookup)
            OCSP_REQUEST_free(request)
        }
        guard OCSP_request_add0_id(request, identifier) != nil, let requestBody = BIO_new(BIO_s_mem()) else {
            OCSP_CERTID_free(identifier)
            return .unavailable("could not build the OCSP request")
        }
        defer { BIO_free(requestBody) }
        guard shim_OCSP_REQUEST_i2d_bio(requestBody, request) == 1 else { return .unavailable("could not encode the OCSP request") }

        let port = String(components.port ?? 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        guard let responseBody = OSSL_HTTP_transfer(
            nil, host, port, path, 0, nil, nil, nil, nil, nil, nil, 0, nil,
            "application/ocsp-request", requestBody, "application/ocsp-response", 1, 1 << 20, timeoutSeconds, 0)
        else {
            return .unavailable("OCSP request to \(url) failed: \(OpenSSLErrorQueue.drain(fallback: "no response"))")
        }
        defer { BIO_free(responseBody) }
        guard let response = shim_OCSP_RESPONSE_d2i_bio(responseBody) else {
            return .rejected("the OCSP response from \(url) is not DER")
        }
        defer { OCSP_RESPONSE_free(response) }
        guard OCSP_response_status(response) == OCSP_RESPONSE_STATUS_SUCCESSFUL,
              let basic = OCSP_response_get1_basic(response)
        else { return .rejected("the OCSP responder at \(url) did not answer successfully") }
        defer { OCSP_BASICRESP_free(basic) }
        return evaluate(basic, lookup: lookup, issuer: issuer)
    }

    private func evaluate(_ basic: OpaquePointer, lookup: OpaquePointer, issuer: X509Handle) -> RevocationStatus {
        guard let signers = shim_sk_X509_new_null() else { return .unavailable("out of memory") }
        defer { shim_sk_X509_free(signers) }
        _ = shim_sk_X509_push(signers, issuer.pointer)
        guard verifyOCSPSignature(basic, signers: signers) else {
            return .rejected("the OCSP response is not signed by the issuer or a delegated responder")
        }
        var status: Int32 = -1
        var reason: Int32 = -1
        var revoked: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        guard OCSP_resp_find_status(basic, lookup, &status, &reason, &revoked, &thisUpdate, &nextUpdate) == 1 else {
            return .rejected("the OCSP response does not cover the certificate")
        }
        guard OCSP_check_validity(thisUpdate, nextUpdate, 300, -1) == 1 else {
            return .rejected("the OCSP response is outside its validity window")
        }
        switch status {
        case V_OCSP_CERTSTATUS_GOOD: return .good
        case V_OCSP_CERTSTATUS_REVOKED: return .rejected("the certificate is revoked")
        default: return .rejected("the OCSP responder does not know the certificate")
        }
    }
}
