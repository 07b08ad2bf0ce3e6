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
    public static let random = IdentifierGenerator { UUID() }

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
    /// The UUID whose last 64 bits are `value` and whose first 64 bits are zero.
    public init(counting value: UInt64) {
        let hex = String(value, radix: 16)
        let padded = String(repeating: "0", count: 16 - hex.count) + hex
        let text = "00000000-0000-0000-\(padded.prefix(4))-\(padded.suffix(12))"
        self.init(uuidString: text)!
    }
}
