import COpenSSL
import Foundation

extension CertificateAuthority {
    /// The certificates of an authority that an OCSP responder answers for.
    public enum Member: String, CaseIterable, Sendable {
        case intermediate, leaf
    }

    /// Answers an OCSP request (DER) about the intermediate or a signing certificate, as the
    /// authority's own responder: good, or revoked for the members in `revoked`, at `now`, signed by
    /// the certificate's issuer. A request that cannot be read gets `malformedRequest`; one about a
    /// certificate neither the root nor the intermediate issued gets `unauthorized`.
    ///
    /// The intermediate answers for every serial number under it: a store issues signing leaves as its
    /// clock moves (``issueSigningCertificate(validFrom:)``), in whichever process signs, and keeps no
    /// list of them, so "a leaf" here means any certificate the intermediate issued.
    public func ocspResponse(to request: Data, revoked: Set<Member>, now: Date) -> Data {
        let pairs: [(Member, Certificate?, Certificate, AuthorityKey)] = [
            (.intermediate, intermediateCertificate, rootCertificate, rootKey),
            (.leaf, nil, intermediateCertificate, intermediateKey),
        ]
        let seconds = time_t(max(0, min(now.timeIntervalSince1970, X509ChainValidator.latestTime)))
        for (member, certificate, issuer, key) in pairs {
            var output: UnsafeMutablePointer<UInt8>?
            let length = request.withUnsafeBytes { bytes -> Int32 in
                guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return -1 }
                return shim_ocsp_respond(base, bytes.count, certificate?.handle.pointer, issuer.handle.pointer, key.key.pointer,
                                         revoked.contains(member) ? 1 : 0, seconds, &output)
            }
            if length > 0, let output {
                defer { shim_OPENSSL_free(output) }
                return Data(bytes: output, count: Int(length))
            }
            if length == -1 { return Self.refusal(OCSP_RESPONSE_STATUS_MALFORMEDREQUEST) }
        }
        return Self.refusal(OCSP_RESPONSE_STATUS_UNAUTHORIZED)
    }

    private static func refusal(_ status: Int32) -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        let length = shim_ocsp_refuse(status, &output)
        guard length > 0, let output else { return Data() }
        defer { shim_OPENSSL_free(output) }
        return Data(bytes: output, count: Int(length))
    }
}
