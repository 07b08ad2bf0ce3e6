import COpenSSL
import Foundation

/// RFC 5280 path validation against a fixed set of trusted roots, through an `X509_STORE`.
///
/// The store is built once and only read afterwards; OpenSSL locks its own lookups, so one
/// validator serves concurrent verifications.
package final class X509ChainValidator: @unchecked Sendable {
    let store: OpaquePointer
    package let roots: [X509Handle]

    package init(roots: [X509Handle]) throws(OpenSSLFailure) {
        guard let store = X509_STORE_new() else { throw OpenSSLFailure("creating a certificate store") }
        self.store = store
        self.roots = roots
        for root in roots where X509_STORE_add_cert(store, root.pointer) != 1 {
            // A root listed twice is not an error worth failing for.
            OpenSSLErrorQueue.clear()
        }
    }

    deinit { X509_STORE_free(store) }

    /// Whether an OCSP basic response is signed by one of `signers` or a responder that chains to the roots.
    func verifyOCSPSignature(_ basic: OpaquePointer, signers: OpaquePointer) -> Bool {
        OCSP_basic_verify(basic, signers, store, 0) == 1
    }

    package enum Outcome {
        /// The chain from the leaf to a trusted root, leaf first.
        case valid([X509Handle])
        /// OpenSSL's reason for rejecting the chain.
        case invalid(String)
    }

    /// The range of validation times (1950 to the end of 9999), which X.509 validity dates can express.
    static let earliestTime: Double = -631_152_000
    static let latestTime: Double = 253_402_300_799

    /// Validates `leaf` through `intermediates` to one of the roots at `time`.
    package func validate(leaf: X509Handle, intermediates: [X509Handle], at time: Date) -> Outcome {
        guard let untrusted = shim_sk_X509_new_null(), let context = X509_STORE_CTX_new() else {
            return .invalid(OpenSSLErrorQueue.drain(fallback: "out of memory"))
        }
        defer {
            shim_sk_X509_free(untrusted)
            X509_STORE_CTX_free(context)
        }
        for certificate in intermediates { _ = shim_sk_X509_push(untrusted, certificate.pointer) }
        guard X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else {
            return .invalid(OpenSSLErrorQueue.drain(fallback: "could not start path validation"))
        }
        // The time comes from untrusted data (a payload's signedDate): one no certificate can cover is
        // refused here rather than converted, since converting 1e30 to time_t would trap.
        let seconds = time.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, seconds >= Self.earliestTime, seconds <= Self.latestTime else {
            return .invalid("the validation time \(seconds) seconds since 1970 is outside 1950–9999")
        }
        X509_STORE_CTX_set_time(context, 0, time_t(seconds))
        guard X509_verify_cert(context) == 1 else {
            let reason = String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(context))))
            OpenSSLErrorQueue.clear()
            return .invalid(reason)
        }
        guard let chain = X509_STORE_CTX_get0_chain(context) else { return .invalid("no verified chain") }
        var verified: [X509Handle] = []
        for index in 0..<shim_sk_X509_num(chain) {
            guard let certificate = shim_sk_X509_value(chain, index) else { continue }
            X509_up_ref(certificate)
            verified.append(X509Handle(taking: certificate))
        }
        return .valid(verified)
    }
}
