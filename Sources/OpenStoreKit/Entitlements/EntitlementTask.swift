import Foundation

/// The state of a task that loads an entitlement, as SwiftUI's `EntitlementTaskState` reports it to
/// a `.currentEntitlementTask(for:)` action.
public enum EntitlementTaskState<Value> {
    /// The entitlement is being read.
    case loading
    /// Reading it failed.
    case failure(any Error)
    /// The entitlement (for a product: its current entitlement transaction, or `nil` for none).
    case success(Value)

    /// The value once loaded; `nil` while loading or after a failure.
    public var value: Value? {
        if case .success(let value) = self { return value }
        return nil
    }

    /// The state with its value transformed; loading and failure stay as they are. An error the
    /// transform throws is rethrown.
    public func map<NewValue>(_ transform: (Value) throws -> NewValue) rethrows -> EntitlementTaskState<NewValue> {
        switch self {
        case .loading: return .loading
        case .failure(let error): return .failure(error)
        case .success(let value): return .success(try transform(value))
        }
    }

    /// The state with its value transformed by an asynchronous function (an actor that turns
    /// subscription statuses into the app's own pass status, say). It runs on the caller's actor, so
    /// a main-actor model can pass a closure that is not `Sendable`.
    nonisolated(nonsending) public func map<NewValue>(_ transform: nonisolated(nonsending) (Value) async throws -> NewValue) async rethrows -> EntitlementTaskState<NewValue> {
        switch self {
        case .loading: return .loading
        case .failure(let error): return .failure(error)
        case .success(let value): return .success(try await transform(value))
        }
    }

    /// The state the transform makes of the value; loading and failure stay as they are.
    public func flatMap<NewValue>(_ transform: (Value) throws -> EntitlementTaskState<NewValue>) rethrows -> EntitlementTaskState<NewValue> {
        switch self {
        case .loading: return .loading
        case .failure(let error): return .failure(error)
        case .success(let value): return try transform(value)
        }
    }

    /// The state an asynchronous transform makes of the value, on the caller's actor.
    nonisolated(nonsending) public func flatMap<NewValue>(_ transform: nonisolated(nonsending) (Value) async throws -> EntitlementTaskState<NewValue>) async rethrows -> EntitlementTaskState<NewValue> {
        switch self {
        case .loading: return .loading
        case .failure(let error): return .failure(error)
        case .success(let value): return try await transform(value)
        }
    }
}

extension EntitlementTaskState: Sendable where Value: Sendable {}

extension EntitlementTaskState where Value == VerificationResult<Transaction>? {
    /// The product's current entitlement once loaded: `nil` while loading, after a failure, or when
    /// the customer has none.
    public var transaction: VerificationResult<Transaction>? {
        if case .success(let value) = self { return value }
        return nil
    }
}

extension Transaction {
    /// The headless counterpart of SwiftUI's `.currentEntitlementTask(for:)`: `.loading`, then the
    /// product's current entitlement (`nil` when there is none), then the entitlement again each time
    /// a transaction of the product arrives through the device's updates (a purchase elsewhere, a
    /// renewal, a refund, an approval). Ends when the task iterating it is cancelled.
    ///
    /// ```swift
    /// for await state in Transaction.currentEntitlementTask(for: "com.example.pro") {
    ///     isPro = state.value??.unsafePayloadValue.revocationDate == nil
    /// }
    /// ```
    public static func currentEntitlementTask(for productID: String) -> AsyncStream<EntitlementTaskState<VerificationResult<Transaction>?>> {
        let bound = StoreClient.current
        return AsyncStream { continuation in
            let task = Task {
                var client = bound
                if client == nil { client = await StoreClient.awaitingActive() }
                guard let client else {
                    continuation.finish()
                    return
                }
                // Listen before the first read, so a change between the two is not missed.
                let updates = client.transactionFeed.listen()
                continuation.yield(.loading)
                continuation.yield(await client.currentEntitlementState(for: productID))
                while let batch = await updates.next() {
                    let concerned = batch.contains { client.verifyTransaction($0.transaction)?.unsafePayloadValue.productID == productID }
                    if concerned { continuation.yield(await client.currentEntitlementState(for: productID)) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension StoreClient {
    /// The product's current entitlement as an entitlement task reports it.
    func currentEntitlementState(for productID: String) async -> EntitlementTaskState<VerificationResult<Transaction>?> {
        do {
            let items = try await storeKitCall { try await transport.transactions(.currentEntitlements, device: device) }
            return .success(items.compactMap { verifyTransaction($0) }.first { $0.unsafePayloadValue.productID == productID })
        } catch {
            return .failure(error)
        }
    }
}
