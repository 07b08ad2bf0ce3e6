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
///
/// Given the real time as well, every leaf it signs with is also valid now, in the real world: a
/// verifier with online checks (Apple's, as production backends run it) judges the chain at the real
/// time, not at the data's `signedDate`, so a store whose clock is years away from today still signs
/// data those verifiers accept. Such a leaf spans the store's time and the real time, from a day
/// before the earlier to ``CertificateAuthority/signingCertificateLifetime`` after the later.
public final class SigningCertificates: Sendable {
    /// A leaf: its authority, its signer, and the dates it may sign for (read from the certificate
    /// once, not on every signature).
    private struct Leaf {
        let authority: CertificateAuthority
        let signer: JWSSigner
        /// `nil` for a leaf that may not sign (the all-time leaf of a bare authority).
        let usable: ClosedRange<Date>?

        /// The authority's own leaf: usable only when it is of realistic length.
        init(_ authority: CertificateAuthority) throws(SigningError) {
            let certificate = authority.signingCertificate
            let realistic = certificate.notBefore.map { authority.hasRealisticSigningCertificate(covering: $0) } ?? false
            try self.init(authority, usable: realistic)
        }

        init(_ authority: CertificateAuthority, usable: Bool) throws(SigningError) {
            self.authority = authority
            signer = try authority.makeSigner()
            let certificate = authority.signingCertificate
            if usable, let notBefore = certificate.notBefore, let notAfter = certificate.notAfter, notBefore <= notAfter {
                self.usable = notBefore...notAfter
            } else {
                self.usable = nil
            }
        }
    }

    private let issued: Mutex<[Leaf]>
    private let realTime: (@Sendable () -> Date)?

    /// Starts from the authority's own leaf, which signs only where ``CertificateAuthority/hasRealisticSigningCertificate(covering:)`` holds.
    ///
    /// - Parameter realTime: The time in the real world, when every leaf must be valid then too (see
    ///   above); `nil` for leaves that follow the store's time only.
    public init(authority: CertificateAuthority, realTime: (@Sendable () -> Date)? = nil) throws(SigningError) {
        issued = Mutex([try Leaf(authority)])
        self.realTime = realTime
    }

    /// A signer for data dated `date`, issuing a new leaf when none issued so far covers it (and the
    /// real time, when this follows it).
    public func signer(at date: Date) throws(SigningError) -> JWSSigner {
        let now = realTime?() ?? date
        return try issued.withLock { (leaves) throws(SigningError) -> JWSSigner in
            if let leaf = leaves.last(where: { $0.usable.map { $0.contains(date) && $0.contains(now) } == true }) { return leaf.signer }
            let start = min(date, now).addingTimeInterval(-CertificateAuthority.signingCertificateBackdating)
            let end = max(date, now).addingTimeInterval(CertificateAuthority.signingCertificateLifetime - CertificateAuthority.signingCertificateBackdating)
            let next = try Leaf(leaves[0].authority.issueSigningCertificate(validity: DateInterval(start: start, end: max(start, end))), usable: true)
            // The few last leaves are enough: a clock moves forward, and one older leaf covers a step back.
            if leaves.count > 8 { leaves.remove(at: 1) }
            leaves.append(next)
            return next.signer
        }
    }

    /// The leaves issued so far (the authority's own first), newest last.
    public var certificates: [Certificate] { issued.withLock { $0.map(\.authority.signingCertificate) } }
}
