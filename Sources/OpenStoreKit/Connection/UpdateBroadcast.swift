import Foundation
import Synchronization

/// One device feed (`Transaction.updates` or `Status.updates`) shared by every listener of a client.
///
/// The store hands each feed entry out once per device; StoreKit gives it to every listener the app
/// has running (its own loop, an entitlement manager, the original API's payment queue). So a client
/// takes the feed once, while at least one listener is iterating, and copies each batch to all of
/// them. A listener that starts later hears what arrives from then on; when the store cannot be
/// reached every listener's sequence ends, as StoreKit's do.
final class UpdateBroadcast: Sendable {
    /// A listener, held weakly: the iterator that took it owns it, and releasing it stops it.
    private struct Registration {
        weak var listener: FeedListener?
    }

    private struct State {
        var listeners: [Int: Registration] = [:]
        var nextListener = 0
        var pump: Task<Void, Never>?
        /// Batches taken while the last listener was leaving: the next listener gets them first.
        var unheard: [[TransportUpdate]] = []
    }

    private let state = Mutex(State())
    private let fetch: @Sendable () async throws -> [TransportUpdate]
    private let name: String

    /// - Parameters:
    ///   - name: The sequence's name, for the line on standard error when it ends.
    ///   - fetch: Takes the next batch from the store, waiting for one.
    init(name: String, fetch: @escaping @Sendable () async throws -> [TransportUpdate]) {
        self.name = name
        self.fetch = fetch
    }

    /// A new listener: the batches taken from the feed from now on. It stops listening when released.
    func listen() -> FeedListener {
        state.withLock { state in
            let listener = FeedListener(number: state.nextListener, broadcast: self)
            state.nextListener += 1
            for batch in state.unheard { listener.deliver(batch) }
            state.unheard = []
            state.listeners[listener.number] = Registration(listener: listener)
            if state.pump == nil { state.pump = Task { [weak self] in await self?.run() } }
            return listener
        }
    }

    /// How many listeners listen now.
    var listenerCount: Int { state.withLock { $0.listeners.values.filter { $0.listener != nil }.count } }

    fileprivate func stopListening(_ number: Int) {
        let idle = state.withLock { state -> Task<Void, Never>? in
            state.listeners[number] = nil
            guard state.listeners.isEmpty else { return nil }
            defer { state.pump = nil }
            return state.pump
        }
        // Nobody listens: stop taking entries, so they wait in the store for the next listener.
        idle?.cancel()
    }

    private func run() async {
        while !Task.isCancelled {
            do {
                let batch = try await fetch()
                guard !batch.isEmpty else { continue }
                let listeners = state.withLock { state -> [FeedListener] in
                    let live = state.listeners.values.compactMap(\.listener)
                    if live.isEmpty { state.unheard.append(batch) }
                    return live
                }
                for listener in listeners { listener.deliver(batch) }
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                StoreDiagnostics.report("\(name) ended: \(error)")
                let listeners = state.withLock { state -> [FeedListener] in
                    defer {
                        state.listeners = [:]
                        state.pump = nil
                    }
                    return state.listeners.values.compactMap(\.listener)
                }
                for listener in listeners { listener.finish() }
                return
            }
        }
    }
}

/// One listener's copy of a shared feed: batches wait here until the listener takes them.
final class FeedListener: Sendable {
    private struct State {
        var batches: [[TransportUpdate]] = []
        var waiter: CheckedContinuation<[TransportUpdate]?, Never>?
        var finished = false
    }

    let number: Int
    private weak let broadcast: UpdateBroadcast?
    private let state = Mutex(State())

    fileprivate init(number: Int, broadcast: UpdateBroadcast) {
        self.number = number
        self.broadcast = broadcast
    }

    deinit {
        broadcast?.stopListening(number)
    }

    func deliver(_ batch: [TransportUpdate]) {
        let waiter = state.withLock { state -> CheckedContinuation<[TransportUpdate]?, Never>? in
            guard !state.finished else { return nil }
            guard let waiter = state.waiter else {
                state.batches.append(batch)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: batch)
    }

    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<[TransportUpdate]?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next batch, waiting for one; `nil` when the feed ended or the task was cancelled.
    func next() async -> [TransportUpdate]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[TransportUpdate]?, Never>) in
                let ready = state.withLock { state -> [TransportUpdate]?? in
                    if !state.batches.isEmpty { return .some(state.batches.removeFirst()) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }
}
