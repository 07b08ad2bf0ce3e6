import Foundation
import Synchronization

/// The signing leaves a store signs with, issued as its clock moves, as Apple rotates its own.
///
/// ``signer(at:)`` returns a signer whose leaf is valid at the given time and of realistic length
/// (``CertificateAuthority/signingCertificateLifetime``). The first leaf is the authority's own when it
/// qualifies; otherwise, and whenever the clock leaves every leaf issued so far, a new one is issued
/// from the intermediate, valid from a day before that time. Leaves are kept in memory only: one issued
/// by another process or before a restart is simply issued again (a leaf is cheap, and anything it
/// signed carries it in `x5c`).
public final class SigningCertificates: Sendable {
    /// A leaf: its authority, its signer, and the dates it may sign for (read from the certificate
    /// once, not on every signature).
    private struct Leaf {
        let authority: CertificateAuthority
        let signer: JWSSigner
        /// `nil` for a leaf that may not sign (the all-time leaf of a bare authority).
        let usable: ClosedRange<Date>?

        init(_ authority: CertificateAuthority) throws(SigningError) {
            self.authority = authority
            signer = try authority.makeSigner()
            let certificate = authority.signingCertificate
            if let notBefore = certificate.notBefore, let notAfter = certificate.notAfter, notBefore <= notAfter,
               authority.hasRealisticSigningCertificate(covering: notBefore) {
                usable = notBefore...notAfter
            } else {
                usable = nil
            }
        }
    }

    private let issued: Mutex<[Leaf]>

    /// Starts from the authority's own leaf, which signs only where ``CertificateAuthority/hasRealisticSigningCertificate(covering:)`` holds.
    public init(authority: CertificateAuthority) throws(SigningError) {
        issued = Mutex([try Leaf(authority)])
    }

    /// A signer for data dated `date`, issuing a new leaf when none issued so far covers it.
    public func signer(at date: Date) throws(SigningError) -> JWSSigner {
        try issued.withLock { (leaves) throws(SigningError) -> JWSSigner in
            if let leaf = leaves.last(where: { $0.usable?.contains(date) == true }) { return leaf.signer }
            let next = try Leaf(leaves[0].authority.issueSigningCertificate(validFrom: date.addingTimeInterval(-CertificateAuthority.signingCertificateBackdating)))
            // The few last leaves are enough: a clock moves forward, and one older leaf covers a step back.
            if leaves.count > 8 { leaves.remove(at: 1) }
            leaves.append(next)
            return next.signer
        }
    }

    /// The leaves issued so far (the authority's own first), newest last.
    public var certificates: [Certificate] { issued.withLock { $0.map(\.authority.signingCertificate) } }
}
