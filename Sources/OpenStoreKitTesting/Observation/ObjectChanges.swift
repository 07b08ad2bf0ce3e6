#if canImport(Combine)
import Combine
import Foundation
import Synchronization

/// Records an `ObservableObject`'s `objectWillChange` events, for tests that assert a store manager
/// announces its changes (which is what makes SwiftUI redraw), and reads the object after each.
///
/// ```swift
/// let changes = ObjectChanges(store)
/// _ = try await store.buy(product)
/// try await changes.wait(forAtLeast: 1)
/// #expect(store.purchasedIDs == [product.id])
/// ```
public final class ObjectChanges<Object: ObservableObject>: Sendable where Object.ObjectWillChangePublisher.Output == Void {
    private let recorded = Mutex(0)
    private let subscription: Mutex<AnyCancellableBox?>

    /// Starts recording `object`'s changes; recording stops when this is released.
    public init(_ object: Object) {
        subscription = Mutex(nil)
        let cancellable = object.objectWillChange.sink { [weak self] _ in self?.recorded.withLock { $0 += 1 } }
        subscription.withLock { $0 = AnyCancellableBox(cancellable) }
    }

    /// How many times the object said it was about to change.
    public var count: Int { recorded.withLock { $0 } }

    /// Waits until at least `count` changes were recorded, failing after `limit`.
    public func wait(forAtLeast count: Int, within limit: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + limit
        while self.count < count {
            guard ContinuousClock.now < deadline else {
                throw ObjectChangesTimeout(description: "\(Object.self) announced \(self.count) changes within \(limit), not \(count)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}

/// ``ObjectChanges/wait(forAtLeast:within:)`` ran out of time.
public struct ObjectChangesTimeout: Error, CustomStringConvertible {
    public let description: String
}

/// Keeps a cancellable (Combine's are not `Sendable`) for the life of the recorder.
private struct AnyCancellableBox: @unchecked Sendable {
    let cancellable: AnyCancellable
    init(_ cancellable: AnyCancellable) { self.cancellable = cancellable }
}
#endif
