import Foundation
import Synchronization

/// Makes the UUIDs the store needs: nonces, notification UUIDs, device verification identifiers.
///
/// Transaction identifiers are not made here: they count up from 0 in the ledger, as in Xcode.
public struct IdentifierGenerator: Sendable {
    private let make: @Sendable () -> UUID

    public init(_ make: @escaping @Sendable () -> UUID) {
        self.make = make
    }

    /// A new identifier.
    public func callAsFunction() -> UUID { make() }

    /// Random version 4 UUIDs from the system's secure random source.
    ///
    /// Drawn from `SystemRandomNumberGenerator` (the `getrandom` system call) rather than `UUID()`,
    /// which opens `/dev/urandom` for every identifier: a purchase makes several.
    public static let random = IdentifierGenerator {
        var generator = SystemRandomNumberGenerator()
        return UUID(randomBitsHigh: generator.next(), low: generator.next())
    }

    /// `00000000-0000-0000-0000-000000000000`, then `…0001`, `…0002`, …; for tests that compare output.
    public static func sequential(startingAt start: UInt64 = 0) -> IdentifierGenerator {
        let counter = Mutex(start)
        return IdentifierGenerator {
            let value = counter.withLock { value -> UInt64 in
                defer { value += 1 }
                return value
            }
            return UUID(counting: value)
        }
    }
}

extension UUID {
    /// The version 4 (random) UUID made of 128 random bits, with its version and variant bits set.
    init(randomBitsHigh high: UInt64, low: UInt64) {
        let high = (high & ~0xF000) | 0x4000 // version 4 in bits 48–51
        let low = (low & ~(0xC000_0000_0000_0000 as UInt64)) | 0x8000_0000_0000_0000 // RFC 4122 variant
        func byte(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * index)) }
        self.init(uuid: (byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5), byte(high, 6), byte(high, 7),
                         byte(low, 0), byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4), byte(low, 5), byte(low, 6), byte(low, 7)))
    }

    /// The UUID whose last 64 bits are `value` and whose first 64 bits are zero.
    public init(counting value: UInt64) {
        let hex = String(value, radix: 16)
        let padded = String(repeating: "0", count: 16 - hex.count) + hex
        let text = "00000000-0000-0000-\(padded.prefix(4))-\(padded.suffix(12))"
        self.init(uuidString: text)!
    }
}
