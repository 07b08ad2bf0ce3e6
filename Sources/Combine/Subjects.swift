import Foundation

/// A publisher you send values into.
public protocol Subject<Output, Failure>: AnyObject, Publisher {
    /// Sends a value to the subscribers.
    func send(_ value: Output)
    /// Ends the subject: its subscribers get `completion`, and nothing after.
    func send(completion: Subscribers.Completion<Failure>)
    /// Hands the subject an upstream subscription (a subject subscribed to a publisher asks for everything).
    func send(subscription: any Subscription)
}

extension Subject where Output == Void {
    /// Sends `()`.
    public func send() { send(()) }
}

/// A subject that passes each value to the subscribers that asked for one, keeping nothing: a
/// subscriber sees only what is sent after it subscribed.
public final class PassthroughSubject<Output, Failure: Error>: Subject {
    private let conduits = Conduits<Output, Failure>()

    public init() {}

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        conduits.attach(subscriber, current: nil)
    }

    public func send(_ value: Output) { conduits.send(value) }
    public func send(completion: Subscribers.Completion<Failure>) { conduits.send(completion: completion) }
    public func send(subscription: any Subscription) { subscription.request(.unlimited) }
}

/// A subject with a current value: each subscriber gets it first, then every value sent after;
/// setting ``value`` sends it.
public final class CurrentValueSubject<Output, Failure: Error>: Subject {
    private let conduits = Conduits<Output, Failure>()
    private let current: ValueCell<Output>

    public init(_ value: Output) {
        current = ValueCell(value)
    }

    /// The current value; setting it sends it to the subscribers.
    public var value: Output {
        get { current.value }
        set { send(newValue) }
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        conduits.attach(subscriber, current: current.value)
    }

    public func send(_ value: Output) {
        // After completion the value no longer changes, as Combine's.
        guard !conduits.isCompleted else { return }
        current.value = value
        conduits.send(value)
    }

    public func send(completion: Subscribers.Completion<Failure>) { conduits.send(completion: completion) }
    public func send(subscription: any Subscription) { subscription.request(.unlimited) }
}

/// A value behind a lock.
final class ValueCell<Value>: @unchecked Sendable {
    // Unchecked: `stored` is only touched under the lock.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// A publisher that sends one value and finishes.
public struct Just<Output>: Publisher {
    public typealias Failure = Never
    public let output: Output

    public init(_ output: Output) { self.output = output }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
        subscriber.receive(subscription: JustSubscription(output: output, subscriber: AnySubscriber(subscriber)))
    }

    private final class JustSubscription: Subscription, @unchecked Sendable {
        // Unchecked: `subscriber` is taken once, under the lock.
        private let output: Output
        private let lock = NSLock()
        private var subscriber: AnySubscriber<Output, Never>?

        init(output: Output, subscriber: AnySubscriber<Output, Never>) {
            self.output = output
            self.subscriber = subscriber
        }

        func request(_ demand: Subscribers.Demand) {
            guard demand > .none, let subscriber = lock.withLock({ () -> AnySubscriber<Output, Never>? in
                defer { self.subscriber = nil }
                return self.subscriber
            }) else { return }
            _ = subscriber.receive(output)
            subscriber.receive(completion: .finished)
        }

        func cancel() { lock.withLock { subscriber = nil } }
    }
}
