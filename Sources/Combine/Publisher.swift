// The module Combine code imports where Apple's Combine does not exist (Linux, Windows, Android): the
// small part of Combine that store code uses (`ObservableObject`, `@Published`, subjects, `sink`,
// `assign`, `receive(on:)`), with Apple's documented semantics. It is not all of Combine: operators
// beyond `map` and `removeDuplicates` are left out on purpose. On Apple platforms this module is not
// built and Apple's is used.

/// A type that delivers a sequence of values over time to its subscribers, as Combine's does.
///
/// A subscriber first receives a subscription, asks it for values (``Subscribers/Demand``), receives
/// at most as many values as it asked for, and at most one completion, after which nothing more.
public protocol Publisher<Output, Failure> {
    associatedtype Output
    associatedtype Failure: Error

    /// Attaches `subscriber`; called by ``subscribe(_:)``.
    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure
}

extension Publisher {
    /// Attaches `subscriber` to this publisher.
    public func subscribe<S: Subscriber>(_ subscriber: S) where S.Input == Output, S.Failure == Failure {
        receive(subscriber: subscriber)
    }
}

/// A type that receives values from a publisher.
public protocol Subscriber<Input, Failure>: CustomCombineIdentifierConvertible {
    associatedtype Input
    associatedtype Failure: Error

    /// The publisher accepted the subscriber; request values through `subscription`.
    func receive(subscription: any Subscription)
    /// A value; returns how many more values the subscriber wants beyond those it asked for.
    func receive(_ input: Input) -> Subscribers.Demand
    /// The publisher finished, normally or with an error; nothing follows.
    func receive(completion: Subscribers.Completion<Failure>)
}

/// The link between a publisher and one subscriber.
public protocol Subscription: Cancellable, CustomCombineIdentifierConvertible {
    /// Asks for up to `demand` more values.
    func request(_ demand: Subscribers.Demand)
}

/// A unique identity for a subscriber or a subscription.
public struct CombineIdentifier: Hashable, CustomStringConvertible, Sendable {
    private let value: UInt64

    public init() { value = CombineIdentifier.next() }
    public init(_ object: AnyObject) { value = UInt64(UInt(bitPattern: ObjectIdentifier(object).hashValue)) }

    public var description: String { "0x\(String(value, radix: 16))" }

    private static let counter = IdentifierCounter()
    private static func next() -> UInt64 { counter.next() }
}

/// A type with a ``CombineIdentifier``; classes get one from their identity.
public protocol CustomCombineIdentifierConvertible {
    var combineIdentifier: CombineIdentifier { get }
}

extension CustomCombineIdentifierConvertible where Self: AnyObject {
    public var combineIdentifier: CombineIdentifier { CombineIdentifier(self) }
}

/// Namespaces as Combine's.
public enum Subscribers {}
public enum Publishers {}

extension Subscribers {
    /// How a publisher ended.
    public enum Completion<Failure: Error> {
        case finished
        case failure(Failure)
    }

    /// How many values a subscriber wants: a number, or ``unlimited``.
    public struct Demand: Equatable, Comparable, Hashable, Sendable, CustomStringConvertible {
        /// `nil` for unlimited.
        let count: Int?

        public static let unlimited = Demand(count: nil)
        public static let none = Demand(count: 0)
        /// `n` values; `n` must not be negative.
        public static func max(_ value: Int) -> Demand {
            precondition(value >= 0, "a demand cannot be negative")
            return Demand(count: value)
        }

        /// The number asked for, or `nil` when unlimited.
        public var max: Int? { count }

        public var description: String { count.map { "max(\($0))" } ?? "unlimited" }

        public static func + (lhs: Demand, rhs: Demand) -> Demand {
            guard let left = lhs.count, let right = rhs.count else { return .unlimited }
            let (sum, overflow) = left.addingReportingOverflow(right)
            return overflow ? .unlimited : Demand(count: sum)
        }

        public static func += (lhs: inout Demand, rhs: Demand) { lhs = lhs + rhs }

        /// Unlimited stays unlimited; a number never goes below zero.
        public static func - (lhs: Demand, rhs: Demand) -> Demand {
            guard let left = lhs.count else { return .unlimited }
            guard let right = rhs.count else { return .none }
            return Demand(count: Swift.max(0, left - right))
        }

        public static func -= (lhs: inout Demand, rhs: Demand) { lhs = lhs - rhs }

        public static func < (lhs: Demand, rhs: Demand) -> Bool {
            switch (lhs.count, rhs.count) {
            case (nil, _): return false
            case (_, nil): return true
            case (let left?, let right?): return left < right
            }
        }
    }
}

extension Subscribers.Completion: Equatable where Failure: Equatable {}
extension Subscribers.Completion: Sendable where Failure: Sendable {}

/// A type-erased subscriber.
public struct AnySubscriber<Input, Failure: Error>: Subscriber {
    public let combineIdentifier: CombineIdentifier
    private let subscription: (any Subscription) -> Void
    private let value: (Input) -> Subscribers.Demand
    private let completion: (Subscribers.Completion<Failure>) -> Void

    public init<S: Subscriber>(_ subscriber: S) where S.Input == Input, S.Failure == Failure {
        combineIdentifier = subscriber.combineIdentifier
        subscription = subscriber.receive(subscription:)
        value = subscriber.receive(_:)
        completion = subscriber.receive(completion:)
    }

    public init(receiveSubscription: ((any Subscription) -> Void)? = nil, receiveValue: ((Input) -> Subscribers.Demand)? = nil,
                receiveCompletion: ((Subscribers.Completion<Failure>) -> Void)? = nil) {
        combineIdentifier = CombineIdentifier()
        subscription = receiveSubscription ?? { _ in }
        value = receiveValue ?? { _ in .none }
        completion = receiveCompletion ?? { _ in }
    }

    public func receive(subscription: any Subscription) { self.subscription(subscription) }
    public func receive(_ input: Input) -> Subscribers.Demand { value(input) }
    public func receive(completion: Subscribers.Completion<Failure>) { self.completion(completion) }
}
