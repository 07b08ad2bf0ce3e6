import Foundation

extension Publishers {
    /// `map`: each value transformed.
    public struct Map<Upstream: Publisher, Output>: Publisher {
        public typealias Failure = Upstream.Failure
        public let upstream: Upstream
        public let transform: (Upstream.Output) -> Output

        public init(upstream: Upstream, transform: @escaping (Upstream.Output) -> Output) {
            self.upstream = upstream
            self.transform = transform
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let transform = self.transform
            upstream.subscribe(Relay<Upstream.Output, Failure, S>(subscriber) { value in transform(value) })
        }
    }

    /// `removeDuplicates()`: a value equal to the one before it is left out.
    public struct RemoveDuplicates<Upstream: Publisher>: Publisher where Upstream.Output: Equatable {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        public let upstream: Upstream

        public init(upstream: Upstream) { self.upstream = upstream }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let last = ValueCell<Output?>(nil)
            upstream.subscribe(Relay<Output, Failure, S>(subscriber) { value in
                defer { last.value = value }
                return last.value == value ? nil : value
            })
        }
    }
}

/// A subscriber between an operator's upstream and its subscriber: it passes the subscription on,
/// and each value through `transform` (`nil` leaves the value out and asks upstream for another).
final class Relay<Input, Failure, Downstream: Subscriber>: Subscriber, @unchecked Sendable where Downstream.Failure == Failure {
    // Unchecked: immutable after init; the downstream subscriber is used as Combine uses it.
    private let downstream: Downstream
    private let transform: (Input) -> Downstream.Input?

    init(_ downstream: Downstream, transform: @escaping (Input) -> Downstream.Input?) {
        self.downstream = downstream
        self.transform = transform
    }

    func receive(subscription: any Subscription) { downstream.receive(subscription: subscription) }

    func receive(_ input: Input) -> Subscribers.Demand {
        guard let output = transform(input) else { return .max(1) }
        return downstream.receive(output)
    }

    func receive(completion: Subscribers.Completion<Failure>) { downstream.receive(completion: completion) }
}

extension Publisher {
    /// Each value transformed by `transform`.
    public func map<T>(_ transform: @escaping (Output) -> T) -> Publishers.Map<Self, T> {
        Publishers.Map(upstream: self, transform: transform)
    }

    /// This publisher, its type erased.
    public func eraseToAnyPublisher() -> AnyPublisher<Output, Failure> { AnyPublisher(self) }
}

extension Publisher where Output: Equatable {
    /// Leaves out a value equal to the one before it.
    public func removeDuplicates() -> Publishers.RemoveDuplicates<Self> { Publishers.RemoveDuplicates(upstream: self) }
}

/// A type-erased publisher.
public struct AnyPublisher<Output, Failure: Error>: Publisher {
    private let attach: (AnySubscriber<Output, Failure>) -> Void

    public init<P: Publisher>(_ publisher: P) where P.Output == Output, P.Failure == Failure {
        attach = { publisher.subscribe($0) }
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        attach(AnySubscriber(subscriber))
    }
}
