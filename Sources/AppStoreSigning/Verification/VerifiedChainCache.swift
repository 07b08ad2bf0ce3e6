import Foundation
import Synchronization

/// Chains that already passed validation, keyed by the JWS header that carries them.
///
/// Parsing and validating a chain costs far more than the JWS signature check (OpenSSL 3 parses a
/// certificate in about twice the time of one ECDSA verification), and a signer reuses one chain for
/// every payload. The key is the header segment as transmitted, which contains the `x5c`
/// certificates byte for byte, so a hit also skips decoding the header. An entry is only reused for a validation time inside the window where every
/// certificate of the chain is valid, and, for online checks, for at most ``onlineLifetime`` after
/// its revocation check. The cache holds at most ``capacity`` chains (none when it is zero) and forgets the least recently
/// used one first. It is safe to use from many threads.
final class VerifiedChainCache: Sendable {
    struct Entry: Sendable {
        let signingKey: P256PublicKey
        let validFrom: Date
        let validUntil: Date
        /// When the chain's OCSP status was last confirmed, for chains checked online.
        let revocationCheckedAt: Date?
    }

    /// How long an online revocation check is trusted, as Apple's libraries do.
    static let onlineLifetime: TimeInterval = 15 * 60

    let capacity: Int
    private let state: Mutex<State>

    private struct State {
        var entries: [HeaderKey: (entry: Entry, lastUse: UInt64)] = [:]
        var tick: UInt64 = 0
    }

    /// A header as a dictionary key that hashes cheaply: its length and first 512 bytes, which hold the
    /// leaf certificate's serial number and key. Equality still compares every byte, so two headers
    /// that share a prefix only share a bucket.
    struct HeaderKey: Hashable {
        let header: String

        func hash(into hasher: inout Hasher) {
            hasher.combine(header.utf8.count)
            let hashed: Void? = header.utf8.withContiguousStorageIfAvailable { bytes in
                hasher.combine(bytes: UnsafeRawBufferPointer(start: bytes.baseAddress, count: min(bytes.count, 512)))
            }
            if hashed == nil { hasher.combine(header) }
        }
    }

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        self.state = Mutex(State())
    }

    /// The key of a chain whose certificates are all valid at `validationTime`; with `onlineAt`,
    /// also checked for revocation no more than ``onlineLifetime`` before it.
    func signingKey(for chainKey: String, validAt validationTime: Date, onlineAt now: Date?) -> P256PublicKey? {
        let key = HeaderKey(header: chainKey)
        return state.withLock { state in
            guard let entry = state.entries[key]?.entry else { return nil }
            guard entry.validFrom <= validationTime, validationTime <= entry.validUntil else { return nil }
            if let now {
                guard let checked = entry.revocationCheckedAt, now.timeIntervalSince(checked) < Self.onlineLifetime else {
                    return nil
                }
            }
            state.tick += 1
            state.entries[key]?.lastUse = state.tick
            return entry.signingKey
        }
    }

    func insert(_ entry: Entry, for chainKey: String) {
        guard capacity > 0 else { return }
        let key = HeaderKey(header: chainKey)
        state.withLock { state in
            if state.entries[key] == nil, state.entries.count >= capacity,
               let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries[oldest] = nil
            }
            state.tick += 1
            state.entries[key] = (entry, state.tick)
        }
    }

    var count: Int { state.withLock { $0.entries.count } }
}
