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
    private let issued: Mutex<[(authority: CertificateAuthority, signer: JWSSigner)]>

    /// Starts from the authority's own leaf, which signs only where ``CertificateAuthority/hasRealisticSigningCertificate(covering:)`` holds.
    public init(authority: CertificateAuthority) throws(SigningError) {
        issued = Mutex([(authority, try authority.makeSigner())])
    }

    /// A signer for data dated `date`, issuing a new leaf when none issued so far covers it.
    public func signer(at date: Date) throws(SigningError) -> JWSSigner {
        try issued.withLock { (leaves) throws(SigningError) -> JWSSigner in
            if let leaf = leaves.last(where: { $0.authority.hasRealisticSigningCertificate(covering: date) }) { return leaf.signer }
            let next = try leaves[0].authority.issueSigningCertificate(validFrom: date.addingTimeInterval(-CertificateAuthority.signingCertificateBackdating))
            let signer = try next.makeSigner()
            // The few last leaves are enough: a clock moves forward, and one older leaf covers a step back.
            if leaves.count > 8 { leaves.remove(at: 1) }
            leaves.append((next, signer))
            return signer
        }
    }

    /// The leaves issued so far (the authority's own first), newest last.
    public var certificates: [Certificate] { issued.withLock { $0.map(\.authority.signingCertificate) } }
}
