import Foundation

extension Subscribers {
    /// A subscriber that asks for every value and calls closures with them; cancelling releases the
    /// closures.
    public final class Sink<Input, Failure: Error>: Subscriber, Cancellable, @unchecked Sendable {
        // Unchecked: the mutable properties are only touched under `lock`.
        private let lock = NSLock()
        private var receiveValue: ((Input) -> Void)?
        private var receiveCompletion: ((Subscribers.Completion<Failure>) -> Void)?
        private var subscription: (any Subscription)?
        private var isCancelled = false

        public init(receiveCompletion: @escaping (Subscribers.Completion<Failure>) -> Void, receiveValue: @escaping (Input) -> Void) {
            self.receiveValue = receiveValue
            self.receiveCompletion = receiveCompletion
        }

        public func receive(subscription: any Subscription) {
            let accepted = lock.withLock { () -> Bool in
                guard !isCancelled, self.subscription == nil else { return false }
                self.subscription = subscription
                return true
            }
            if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
        }

        public func receive(_ input: Input) -> Subscribers.Demand {
            lock.withLock { receiveValue }?(input)
            return .none
        }

        public func receive(completion: Subscribers.Completion<Failure>) {
            let handler = lock.withLock { () -> ((Subscribers.Completion<Failure>) -> Void)? in
                defer { receiveValue = nil; receiveCompletion = nil; subscription = nil }
                return receiveCompletion
            }
            handler?(completion)
        }

        public func cancel() {
            let subscription = lock.withLock { () -> (any Subscription)? in
                isCancelled = true
                defer { receiveValue = nil; receiveCompletion = nil; self.subscription = nil }
                return self.subscription
            }
            subscription?.cancel()
        }
    }

    /// A subscriber that assigns every value to a property of an object, which it keeps until the
    /// subscription ends.
    public final class Assign<Root, Input>: Subscriber, Cancellable, @unchecked Sendable {
        public typealias Failure = Never
        // Unchecked: the mutable properties are only touched under `lock`.
        private let lock = NSLock()
        public private(set) var object: Root?
        public let keyPath: ReferenceWritableKeyPath<Root, Input>
        private var subscription: (any Subscription)?

        public init(object: Root, keyPath: ReferenceWritableKeyPath<Root, Input>) {
            self.object = object
            self.keyPath = keyPath
        }

        public func receive(subscription: any Subscription) {
            let accepted = lock.withLock { () -> Bool in
                guard object != nil, self.subscription == nil else { return false }
                self.subscription = subscription
                return true
            }
            if accepted { subscription.request(.unlimited) } else { subscription.cancel() }
        }

        public func receive(_ input: Input) -> Subscribers.Demand {
            lock.withLock { object }?[keyPath: keyPath] = input
            return .none
        }

        public func receive(completion: Subscribers.Completion<Never>) {
            lock.withLock {
                object = nil
                subscription = nil
            }
        }

        public func cancel() {
            let subscription = lock.withLock { () -> (any Subscription)? in
                defer { object = nil; self.subscription = nil }
                return self.subscription
            }
            subscription?.cancel()
        }
    }
}

extension Publisher {
    /// Calls `receiveValue` with every value and `receiveCompletion` at the end, for as long as the
    /// returned cancellable lives.
    public func sink(receiveCompletion: @escaping (Subscribers.Completion<Failure>) -> Void,
                     receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
        let sink = Subscribers.Sink<Output, Failure>(receiveCompletion: receiveCompletion, receiveValue: receiveValue)
        subscribe(sink)
        return AnyCancellable(sink)
    }

    /// Assigns every value to `object[keyPath:]`; the subscription keeps `object` alive.
    public func assign<Root>(to keyPath: ReferenceWritableKeyPath<Root, Output>, on object: Root) -> AnyCancellable where Failure == Never {
        let assign = Subscribers.Assign(object: object, keyPath: keyPath)
        subscribe(assign)
        return AnyCancellable(assign)
    }
}

extension Publisher where Failure == Never {
    /// Calls `receiveValue` with every value, for as long as the returned cancellable lives.
    public func sink(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
        sink(receiveCompletion: { _ in }, receiveValue: receiveValue)
    }
}
