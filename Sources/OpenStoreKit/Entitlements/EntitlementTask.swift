import Foundation

/// The state of a task that loads an entitlement, as SwiftUI's `EntitlementTaskState` reports it to
/// a `.currentEntitlementTask(for:)` action.
public enum EntitlementTaskState<Value: Sendable>: Sendable {
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
