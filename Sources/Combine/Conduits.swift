import Foundation

/// The subscribers of a subject or of a `@Published` property, each with the demand it asked for.
///
/// Values go only to subscribers that asked for them (a value nobody asked for is dropped, as a
/// `PassthroughSubject` drops it); with a current value, each new subscriber gets it first, once it
/// asks. No lock is held while a subscriber runs, so a subscriber may send, subscribe or cancel from
/// inside its own callback.
final class Conduits<Output, Failure: Error>: @unchecked Sendable {
    // Unchecked: the stored properties are only touched under `lock`; the values and subscribers it
    // hands out are used outside the lock by the thread that sent them, as in Combine.
    private let lock = NSLock()
    private var conduits: [Conduit] = []
    private var completion: Subscribers.Completion<Failure>?

    /// Attaches a subscriber; `current` is the value it receives first (a current-value subject).
    func attach<S: Subscriber>(_ subscriber: S, current: Output?) where S.Input == Output, S.Failure == Failure {
        let conduit = Conduit(AnySubscriber(subscriber), current: current, owner: self)
        let ended = lock.withLock { () -> Subscribers.Completion<Failure>? in
            if let completion { return completion }
            conduits.append(conduit)
            return nil
        }
        if let ended {
            subscriber.receive(subscription: EmptySubscription())
            subscriber.receive(completion: ended)
            return
        }
        subscriber.receive(subscription: conduit)
    }

    /// Whether the subject has completed.
    var isCompleted: Bool { lock.withLock { completion != nil } }

    /// Offers `value` to every subscriber.
    func send(_ value: Output) {
        let targets = lock.withLock { completion == nil ? conduits : [] }
        for conduit in targets { conduit.offer(value) }
    }

    /// Ends every subscription; later subscribers get the completion at once.
    func send(completion: Subscribers.Completion<Failure>) {
        let targets = lock.withLock { () -> [Conduit] in
            guard self.completion == nil else { return [] }
            self.completion = completion
            defer { conduits = [] }
            return conduits
        }
        for conduit in targets { conduit.finish(completion) }
    }

    fileprivate func remove(_ conduit: Conduit) {
        lock.withLock { conduits.removeAll { $0 === conduit } }
    }

    /// One subscriber's subscription.
    final class Conduit: Subscription, @unchecked Sendable {
        // Unchecked: the mutable properties are only touched under `lock`.
        private let subscriber: AnySubscriber<Output, Failure>
        private weak var owner: Conduits?
        private let lock = NSLock()
        private var demand: Subscribers.Demand = .none
        /// The value to send first, once asked (a current value, kept up to date until then).
        private var current: Output?
        private var isCancelled = false

        init(_ subscriber: AnySubscriber<Output, Failure>, current: Output?, owner: Conduits) {
            self.subscriber = subscriber
            self.owner = owner
            self.current = current
        }

        func request(_ demand: Subscribers.Demand) {
            let first = lock.withLock { () -> Output? in
                guard !isCancelled else { return nil }
                self.demand += demand
                guard let current, self.demand > .none else { return nil }
                self.current = nil
                self.demand -= .max(1)
                return current
            }
            if let first { deliver(first) }
        }

        func offer(_ value: Output) {
            let take = lock.withLock { () -> Bool in
                guard !isCancelled else { return false }
                // A subscriber that has not asked yet sees the latest value first.
                if current != nil { current = value; return false }
                guard demand > .none else { return false }
                demand -= .max(1)
                return true
            }
            if take { deliver(value) }
        }

        private func deliver(_ value: Output) {
            let more = subscriber.receive(value)
            guard more > .none else { return }
            lock.withLock { demand += more }
        }

        func finish(_ completion: Subscribers.Completion<Failure>) {
            let live = lock.withLock { () -> Bool in
                defer { isCancelled = true }
                return !isCancelled
            }
            if live { subscriber.receive(completion: completion) }
        }

        func cancel() {
            lock.withLock {
                isCancelled = true
                current = nil
            }
            owner?.remove(self)
        }
    }
}

/// The subscription of a publisher that has nothing more to send.
struct EmptySubscription: Subscription {
    let combineIdentifier = CombineIdentifier()
    func request(_ demand: Subscribers.Demand) {}
    func cancel() {}
}
