import Foundation
import Synchronization

/// Something that can be cancelled: a subscription, or what `sink` and `assign` return.
public protocol Cancellable {
    func cancel()
}

/// A cancellable that cancels when it is deinitialised: keep it (``store(in:)``) for as long as the
/// subscription should live.
public final class AnyCancellable: Cancellable, Hashable, @unchecked Sendable {
    // Unchecked: `action` is only touched under `lock`, and taken once.
    private let lock = NSLock()
    private var action: (() -> Void)?

    public init(_ cancel: @escaping () -> Void) {
        action = cancel
    }

    public convenience init<C: Cancellable>(_ cancellable: C) {
        self.init { cancellable.cancel() }
    }

    deinit { cancel() }

    /// Cancels once; later calls do nothing.
    public func cancel() {
        let taken = lock.withLock { () -> (() -> Void)? in
            defer { action = nil }
            return action
        }
        taken?()
    }

    /// Keeps this cancellable in `set`.
    public func store(in set: inout Set<AnyCancellable>) {
        set.insert(self)
    }

    /// Keeps this cancellable in `collection`.
    public func store<C: RangeReplaceableCollection>(in collection: inout C) where C.Element == AnyCancellable {
        collection.append(self)
    }

    public static func == (lhs: AnyCancellable, rhs: AnyCancellable) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Hands a value that is not `Sendable` across a boundary the compiler cannot see through (a
/// dispatch queue). Combine's types are not `Sendable`, as Apple's are not; this is where the module
/// takes that on itself.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A process-wide counter for ``CombineIdentifier``.
final class IdentifierCounter: Sendable {
    private let value = Atomic<UInt64>(0)
    func next() -> UInt64 { value.add(1, ordering: .relaxed).newValue }
}
