import Foundation

/// A lock with the state it protects, as the unified log's sibling `OSAllocatedUnfairLock`: the
/// state lives on the heap with the lock, so copies of the lock share both.
///
/// ```swift
/// let purchases = OSAllocatedUnfairLock(initialState: [String]())
/// purchases.withLock { $0.append(product.id) }
/// ```
public struct OSAllocatedUnfairLock<State>: @unchecked Sendable {
    /// Whether the calling thread holds the lock, for ``precondition(_:)``.
    public enum Ownership: Hashable, Sendable {
        case owner, notOwner
    }

    private final class Storage {
        let mutex = NSLock()
        var state: State
        /// The thread holding the lock, for ``precondition(_:)``.
        var owner: Thread?
        init(_ state: State) { self.state = state }
    }

    private let storage: Storage

    /// A lock around a state that need not be `Sendable`: the caller takes care of it.
    public init(uncheckedState initialState: State) {
        storage = Storage(initialState)
    }

    public init(initialState: State) where State: Sendable {
        storage = Storage(initialState)
    }

    private func acquire() {
        storage.mutex.lock()
        storage.owner = Thread.current
    }

    private func release() {
        storage.owner = nil
        storage.mutex.unlock()
    }

    /// Runs `body` with the state while holding the lock; neither need be `Sendable`.
    public func withLockUnchecked<R>(_ body: (inout State) throws -> R) rethrows -> R {
        acquire()
        defer { release() }
        return try body(&storage.state)
    }

    /// Runs `body` with the state while holding the lock.
    public func withLock<R: Sendable>(_ body: @Sendable (inout State) throws -> R) rethrows -> R {
        try withLockUnchecked(body)
    }

    /// Runs `body` if the lock is free now; `nil` if another thread holds it.
    public func withLockIfAvailableUnchecked<R>(_ body: (inout State) throws -> R) rethrows -> R? {
        guard storage.mutex.try() else { return nil }
        storage.owner = Thread.current
        defer { release() }
        return try body(&storage.state)
    }

    public func withLockIfAvailable<R: Sendable>(_ body: @Sendable (inout State) throws -> R) rethrows -> R? {
        try withLockIfAvailableUnchecked(body)
    }

    /// Stops the process unless the calling thread holds (`.owner`) or does not hold (`.notOwner`) the lock.
    public func precondition(_ condition: Ownership) {
        let owns = storage.owner === Thread.current
        Swift.precondition(owns == (condition == .owner), "OSAllocatedUnfairLock: the calling thread is \(owns ? "" : "not ")its owner")
    }
}

extension OSAllocatedUnfairLock where State == () {
    /// A lock that protects no state of its own.
    public init() {
        storage = Storage(())
    }

    public func lock() { acquire() }
    public func unlock() { release() }

    /// Takes the lock if it is free; `false` if another thread holds it.
    public func lockIfAvailable() -> Bool {
        guard storage.mutex.try() else { return false }
        storage.owner = Thread.current
        return true
    }

    public func withLockUnchecked<R>(_ body: () throws -> R) rethrows -> R {
        acquire()
        defer { release() }
        return try body()
    }

    public func withLock<R: Sendable>(_ body: @Sendable () throws -> R) rethrows -> R {
        try withLockUnchecked(body)
    }
}
