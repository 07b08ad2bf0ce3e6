import Foundation

extension SimulatedAppStore {
    /// The app launched on a device: unfinished transactions are queued again in its update feed,
    /// once per launch, unless they are already waiting there.
    ///
    /// - Returns: How many transactions were queued.
    @discardableResult
    public func launch(device name: String, account: String? = nil) throws(AppStoreError) -> Int {
        try writing { (change) throws(AppStoreError) in
            let device: StoreDevice
            if let existing = ledger.device(name) {
                device = existing
            } else if let account {
                device = try register(account: account, device: name, in: &change).1!
            } else {
                throw .control(.invalidAction, "no device \(name); name its account to register it")
            }
            var launched = device
            launched.launchCount += 1
            change.ledger.devices[name] = launched
            let waiting = Set(ledger.waitingUpdates(device: name, channel: .transactions, limit: .max).map(\.transactionID))
            let now = clock.now()
            var queued = 0
            for transaction in ledger.transactions(TransactionQuery(account: device.account, unfinishedOnly: true))
            where !waiting.contains(transaction.id) {
                try enqueueUpdate(transaction, for: launched, kind: .unfinished, at: now, change: &change)
                queued += 1
            }
            return queued
        }
    }

    /// Takes the waiting entries of one channel of a device's feed, marking them delivered in the same commit.
    ///
    /// An empty feed is found with a read, so the streams and long polls that ask several times a second
    /// do not take the ledger's write lock from the processes that purchase.
    public func takeUpdates(device name: String, channel: LedgerUpdate.Channel = .transactions, limit: Int = .max) throws(AppStoreError) -> [LedgerUpdate] {
        guard try reading({ !ledger.waitingUpdates(device: name, channel: channel, limit: 1).isEmpty }) else { return [] }
        return try writing { (change) throws(AppStoreError) in
            let waiting = ledger.waitingUpdates(device: name, channel: channel, limit: limit)
            change.ledger.deliveredUpdates = waiting.map(\.sequence)
            return waiting
        }
    }

    /// The entries waiting in a device's feed, without taking them.
    public func waitingUpdates(device name: String, channel: LedgerUpdate.Channel = .transactions) throws(AppStoreError) -> [LedgerUpdate] {
        try reading { ledger.waitingUpdates(device: name, channel: channel, limit: .max) }
    }

    /// Suspends until a channel of a device's feed has an entry (returns at once if it has one) or
    /// the task is cancelled.
    public func waitForUpdates(device name: String, channel: LedgerUpdate.Channel = .transactions) async {
        // A storage failure returns at once too: the next take reports it.
        guard let waiting = try? reading({ ledger.waitingUpdates(device: name, channel: channel, limit: 1) }), waiting.isEmpty else { return }
        // Another process may add to the feed; look again after a while even if nothing here commits.
        Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(250))
            await self?.wakeWaiters(device: name)
        }
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

extension SimulatedAppStore {
    /// Marks a channel's entries up to `sequence` delivered: a client acknowledging what it received,
    /// so an entry whose response was lost on the way is handed out again instead of vanishing.
    ///
    /// - Returns: How many entries were marked.
    @discardableResult
    public func acknowledgeUpdates(device name: String, channel: LedgerUpdate.Channel, through sequence: Int64) throws(AppStoreError) -> Int {
        try writing { (change) throws(AppStoreError) in
            let received = ledger.waitingUpdates(device: name, channel: channel, limit: .max).filter { $0.sequence <= sequence }
            change.ledger.deliveredUpdates = received.map(\.sequence)
            return received.count
        }
    }
}
