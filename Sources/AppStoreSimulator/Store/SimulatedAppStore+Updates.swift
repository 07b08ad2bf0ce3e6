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
    ///
    /// A commit in this process wakes the device's waiters at once. A commit by another process is
    /// seen by the store's change watcher, which reads the ledger's version four times a second while
    /// anyone waits (one read for all waiters, however many), and wakes every waiter when it moved.
    public func waitForUpdates(device name: String, channel: LedgerUpdate.Channel = .transactions) async {
        // A storage failure returns at once too: the next take reports it.
        guard let waiting = try? reading({ ledger.waitingUpdates(device: name, channel: channel, limit: 1) }), waiting.isEmpty else { return }
        let id = nextWaiterID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled {
                    continuation.resume()
                } else {
                    updateWaiters[name, default: [:]][id] = continuation
                    watchForChanges()
                }
            }
        } onCancel: {
            Task { await self.cancelUpdateWaiter(device: name, id: id) }
        }
    }

    /// Suspends until the ledger's version is other than `version` (returns at once if it is), or the
    /// task is cancelled, and returns the version then. Any commit, in any process, moves the version.
    public func waitForChange(from version: Int64) async throws(AppStoreError) -> Int64 {
        let current = try ledgerVersion()
        guard current == version else { return current }
        let id = nextWaiterID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled {
                    continuation.resume()
                } else {
                    changeWaiters[id] = continuation
                    watchForChanges()
                }
            }
        } onCancel: {
            Task { await self.cancelChangeWaiter(id: id) }
        }
        return try ledgerVersion()
    }

    /// How many tasks wait in ``waitForChange(from:)`` now (for tests that must know a long poll waits).
    package var changeWaiterCount: Int { changeWaiters.count }

    /// How many tasks wait in ``waitForUpdates(device:channel:)`` for a device now.
    package func updateWaiterCount(device name: String) -> Int { updateWaiters[name]?.count ?? 0 }

    private func nextWaiterID() -> UInt64 {
        defer { waiterCount += 1 }
        return waiterCount
    }

    private func cancelUpdateWaiter(device name: String, id: UInt64) {
        if let waiter = updateWaiters[name]?.removeValue(forKey: id) { waiter.resume() }
        if updateWaiters[name]?.isEmpty == true { updateWaiters[name] = nil }
    }

    private func cancelChangeWaiter(id: UInt64) {
        changeWaiters.removeValue(forKey: id)?.resume()
    }

    /// Wakes every task waiting on a device's feed.
    func wakeWaiters(device name: String) {
        for waiter in (updateWaiters.removeValue(forKey: name) ?? [:]).values { waiter.resume() }
    }

    /// Wakes every waiter: another process changed the ledger, and anything may have changed.
    func wakeEveryWaiter() {
        let updates = updateWaiters
        let changes = changeWaiters
        updateWaiters = [:]
        changeWaiters = [:]
        for waiters in updates.values { for waiter in waiters.values { waiter.resume() } }
        for waiter in changes.values { waiter.resume() }
    }

    /// Starts the change watcher unless it runs: while anyone waits, it reads the ledger's version
    /// four times a second; a unit of work that finds another process's commit wakes every waiter
    /// (see ``refresh(from:)``).
    private func watchForChanges() {
        guard !isWatchingForChanges else { return }
        isWatchingForChanges = true
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: .milliseconds(250))
                guard let self, await self.checkForChanges() else { return }
            }
        }
    }

    /// One look of the change watcher; `false` when nobody waits any more and the watcher ends.
    private func checkForChanges() -> Bool {
        guard !updateWaiters.isEmpty || !changeWaiters.isEmpty else {
            isWatchingForChanges = false
            return false
        }
        _ = try? reading { ledger.version }
        return true
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
