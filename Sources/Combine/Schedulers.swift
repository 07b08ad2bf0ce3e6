import Foundation

/// Where `receive(on:)` delivers values: a dispatch queue, a run loop, or right away.
///
/// Only what delivery needs (``schedule(options:_:)``); timed scheduling is left out.
public protocol Scheduler {
    associatedtype SchedulerOptions
    /// Runs `action` on the scheduler, soon.
    func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void)
}

extension Scheduler {
    public func schedule(_ action: @escaping () -> Void) { schedule(options: nil, action) }
}

extension DispatchQueue: Scheduler {
    public struct SchedulerOptions: Sendable {
        public var qos: DispatchQoS
        public init(qos: DispatchQoS = .unspecified) { self.qos = qos }
    }

    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) {
        let box = UncheckedBox(action)
        async(qos: options?.qos ?? .unspecified) { box.value() }
    }
}

extension RunLoop: Scheduler {
    public struct SchedulerOptions: Sendable {}

    /// On the main run loop, the work goes to the main queue: on Linux the main thread serves the
    /// main queue (and Swift's main actor) whether or not anything runs the main run loop.
    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) {
        let box = UncheckedBox(action)
        if self === RunLoop.main {
            DispatchQueue.main.async { box.value() }
        } else {
            perform { box.value() }
        }
    }
}

/// A scheduler that runs its work at once, on the calling thread.
public struct ImmediateScheduler: Scheduler, Sendable {
    public typealias SchedulerOptions = Never
    public static let shared = ImmediateScheduler()
    public func schedule(options: Never?, _ action: @escaping () -> Void) { action() }
}

extension Publishers {
    /// `receive(on:)`: values and the completion delivered on a scheduler, in order.
    public struct ReceiveOn<Upstream: Publisher, Context: Scheduler>: Publisher {
        public typealias Output = Upstream.Output
        public typealias Failure = Upstream.Failure
        public let upstream: Upstream
        public let scheduler: Context
        public let options: Context.SchedulerOptions?

        public init(upstream: Upstream, scheduler: Context, options: Context.SchedulerOptions?) {
            self.upstream = upstream
            self.scheduler = scheduler
            self.options = options
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            upstream.subscribe(Hop(subscriber, scheduler: scheduler, options: options))
        }
    }

    /// Delivers on the scheduler; the downstream's further demand goes upstream from there.
    final class Hop<Downstream: Subscriber, Context: Scheduler>: Subscriber, @unchecked Sendable {
        // Unchecked: `subscription` is set once, under `lock`; the rest is immutable.
        typealias Input = Downstream.Input
        typealias Failure = Downstream.Failure
        private let downstream: Downstream
        private let scheduler: Context
        private let options: Context.SchedulerOptions?
        private let lock = NSLock()
        private var subscription: (any Subscription)?

        init(_ downstream: Downstream, scheduler: Context, options: Context.SchedulerOptions?) {
            self.downstream = downstream
            self.scheduler = scheduler
            self.options = options
        }

        func receive(subscription: any Subscription) {
            lock.withLock { self.subscription = subscription }
            downstream.receive(subscription: subscription)
        }

        func receive(_ input: Input) -> Subscribers.Demand {
            scheduler.schedule(options: options) { [self] in
                let more = downstream.receive(input)
                if more > .none { lock.withLock { subscription }?.request(more) }
            }
            return .none
        }

        func receive(completion: Subscribers.Completion<Failure>) {
            scheduler.schedule(options: options) { [self] in downstream.receive(completion: completion) }
        }
    }
}

extension Publisher {
    /// Delivers values and the completion on `scheduler` (`DispatchQueue.main` or `RunLoop.main` for
    /// the main thread, where views and `@MainActor` state live).
    public func receive<S: Scheduler>(on scheduler: S, options: S.SchedulerOptions? = nil) -> Publishers.ReceiveOn<Self, S> {
        Publishers.ReceiveOn(upstream: self, scheduler: scheduler, options: options)
    }
}
