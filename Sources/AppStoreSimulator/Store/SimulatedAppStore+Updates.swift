import Foundation

extension SimulatedAppStore {
    /// The app launched on a device: unfinished transactions are queued again in its update feed,
    /// once per launch, unless they are already waiting there.
    ///
    /// - Returns: How many transactions were queued.
    @discardableResult
    public func launch(device name: String, account: String? = nil) throws(AppStoreError) -> Int {
        var change = beginChange()
        let device: StoreDevice
        if let existing = devices[name] {
            device = existing
        } else if let account {
            device = try register(account: account, device: name, in: &change).1!
        } else {
            throw .control(.invalidAction, "no device \(name); name its account to register it")
        }
        var launched = device
        launched.launchCount += 1
        change.ledger.devices[name] = launched
        let waiting = Set((pendingUpdates[name] ?? []).filter { $0.channel == .transactions }.map(\.transactionID))
        let now = clock.now()
        var queued = 0
        for transaction in completedTransactions(of: device.account) where !transaction.isFinished && !waiting.contains(transaction.id) {
            try enqueueUpdate(transaction, for: launched, kind: .unfinished, at: now, change: &change)
            queued += 1
        }
        try commit(change)
        return queued
    }

    /// Takes the waiting entries of one channel of a device's feed, marking them delivered in the same commit.
    public func takeUpdates(device name: String, channel: LedgerUpdate.Channel = .transactions, limit: Int = .max) throws(AppStoreError) -> [LedgerUpdate] {
        let waiting = Array((pendingUpdates[name] ?? []).filter { $0.channel == channel }.prefix(limit))
        guard !waiting.isEmpty else { return [] }
        var change = beginChange()
        change.ledger.deliveredUpdates = waiting.map(\.sequence)
        try commit(change)
        return waiting
    }

    /// The entries waiting in a device's feed, without taking them.
    public func waitingUpdates(device name: String, channel: LedgerUpdate.Channel = .transactions) -> [LedgerUpdate] {
        (pendingUpdates[name] ?? []).filter { $0.channel == channel }
    }

    /// Suspends until a channel of a device's feed has an entry (returns at once if it has one) or
    /// the task is cancelled.
    public func waitForUpdates(device name: String, channel: LedgerUpdate.Channel = .transactions) async {
        guard !(pendingUpdates[name] ?? []).contains(where: { $0.channel == channel }) else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled {
                    continuation.resume()
                } else {
                    updateWaiters[name, default: []].append(continuation)
                }
            }
        } onCancel: {
            Task { await self.wakeWaiters(device: name) }
        }
    }

    /// Wakes every task waiting on a device's feed.
    func wakeWaiters(device name: String) {
        for waiter in updateWaiters.removeValue(forKey: name) ?? [] { waiter.resume() }
    }

    /// An endless sequence of a device's updates, delivered once each, as `Transaction.updates` is.
    public nonisolated func updates(device name: String, channel: LedgerUpdate.Channel = .transactions) -> AsyncThrowingStream<LedgerUpdate, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    while !Task.isCancelled {
                        let batch = try await self.takeUpdates(device: name, channel: channel)
                        for update in batch { continuation.yield(update) }
                        if batch.isEmpty { await self.waitForUpdates(device: name, channel: channel) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
