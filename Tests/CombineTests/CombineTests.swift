import Combine
import Foundation
import Testing
import TestSupport

/// Combine's documented behaviour, for the parts this package provides where Apple's is missing.
@Suite(.timeLimit(.minutes(10)))
struct CombineTests {
    /// An object as store code declares one, with a subclass adding a field.
    class Model: ObservableObject {
        @Published var count = 0
        @Published var name = "a"
    }

    final class Detailed: Model {
        @Published var detail = ""
    }

    final class Plain: ObservableObject {
        var untracked = 0
    }

    @Test("@Published: the projected publisher sends the current value, then each new one before the property takes it")
    func publishedOrder() {
        let model = Model()
        var seen: [(sent: Int, stored: Int)] = []
        let subscription = model.$count.sink { [unowned model] value in seen.append((value, model.count)) }
        model.count = 1
        model.count = 2
        #expect(seen.map(\.sent) == [0, 1, 2])
        #expect(seen.map(\.stored) == [0, 0, 1], "willSet: the property still holds the old value")
        subscription.cancel()
        model.count = 3
        #expect(seen.count == 3, "nothing after cancel")
    }

    @Test("objectWillChange: one publisher per object, sent before any @Published property changes, a subclass's fields included")
    func objectWillChange() {
        let model = Detailed()
        #expect(model.objectWillChange === model.objectWillChange)
        var before: [String] = []
        let subscription = model.objectWillChange.sink { [unowned model] in before.append("\(model.count) \(model.name) \(model.detail)") }
        model.count = 1
        model.name = "b"
        model.detail = "x"
        #expect(before == ["0 a ", "1 a ", "1 b "])
        withExtendedLifetime(subscription) {}
        // A class without @Published properties gets a publisher that nothing sends.
        let plain = Plain()
        var sent = 0
        let quiet = plain.objectWillChange.sink { sent += 1 }
        plain.untracked = 1
        #expect(sent == 0)
        withExtendedLifetime(quiet) {}
    }

    @Test("PassthroughSubject: only values sent after subscribing; completion ends it, and reaches later subscribers at once")
    func passthrough() {
        let subject = PassthroughSubject<Int, TestFailure>()
        subject.send(0)
        var values: [Int] = []
        var completions: [String] = []
        let first = subject.sink(receiveCompletion: { completions.append("first \($0)") }, receiveValue: { values.append($0) })
        subject.send(1)
        subject.send(2)
        subject.send(completion: .finished)
        subject.send(3)
        #expect(values == [1, 2])
        let late = subject.sink(receiveCompletion: { completions.append("late \($0)") }, receiveValue: { values.append($0) })
        #expect(completions == ["first finished", "late finished"])
        withExtendedLifetime((first, late)) {}
    }

    @Test("CurrentValueSubject: the current value first; setting value sends it; nothing after completion")
    func currentValue() {
        let subject = CurrentValueSubject<String, Never>("initial")
        var values: [String] = []
        let subscription = subject.sink { values.append($0) }
        subject.value = "second"
        subject.send("third")
        #expect(subject.value == "third")
        subject.send(completion: .finished)
        subject.send("after")
        #expect(values == ["initial", "second", "third"])
        #expect(subject.value == "third")
        withExtendedLifetime(subscription) {}
    }

    @Test("Just sends one value and finishes; map and removeDuplicates transform and filter")
    func justAndOperators() {
        var events: [String] = []
        let just = Just(21).map { $0 * 2 }.sink(receiveCompletion: { events.append("\($0)") }, receiveValue: { events.append("\($0)") })
        #expect(events == ["42", "finished"])
        let subject = PassthroughSubject<Int, Never>()
        var distinct: [Int] = []
        let deduplicated = subject.removeDuplicates().eraseToAnyPublisher().sink { distinct.append($0) }
        for value in [1, 1, 2, 2, 2, 1] { subject.send(value) }
        #expect(distinct == [1, 2, 1])
        withExtendedLifetime((just, deduplicated)) {}
    }

    @Test("AnyCancellable cancels when released; store(in:) keeps it")
    func cancellables() {
        let subject = PassthroughSubject<Int, Never>()
        var values: [Int] = []
        do {
            _ = subject.sink { values.append($0) }
        }
        subject.send(1)
        #expect(values.isEmpty, "released at once, so nothing arrives")
        var kept = Set<AnyCancellable>()
        subject.sink { values.append($0) }.store(in: &kept)
        subject.send(2)
        kept.removeAll()
        subject.send(3)
        #expect(values == [2])
    }

    @Test("assign(to:on:) writes each value and keeps the object until cancelled")
    func assign() {
        final class Label { var text = "" }
        let subject = PassthroughSubject<String, Never>()
        weak var released: Label?
        var subscription: AnyCancellable?
        do {
            let label = Label()
            released = label
            subscription = subject.assign(to: \.text, on: label)
        }
        subject.send("hello")
        #expect(released?.text == "hello", "the subscription keeps the label")
        subscription?.cancel()
        #expect(released == nil)
    }

    @Test("a subscriber gets no more values than it asked for")
    func demand() {
        final class OneAtATime: Subscriber {
            var values: [Int] = []
            var subscription: (any Subscription)?
            func receive(subscription: any Subscription) {
                self.subscription = subscription
                subscription.request(.max(1))
            }
            func receive(_ input: Int) -> Subscribers.Demand {
                values.append(input)
                return .none
            }
            func receive(completion: Subscribers.Completion<Never>) {}
        }
        let subject = PassthroughSubject<Int, Never>()
        let subscriber = OneAtATime()
        subject.subscribe(subscriber)
        subject.send(1)
        subject.send(2)
        #expect(subscriber.values == [1], "one asked for, one delivered, the second dropped")
        subscriber.subscription?.request(.max(1))
        subject.send(3)
        #expect(subscriber.values == [1, 3])
        #expect(Subscribers.Demand.max(2) + .unlimited == .unlimited)
        #expect(Subscribers.Demand.max(1) - .max(3) == .none)
    }

    @Test("receive(on: DispatchQueue.main) delivers later, in order, on the main queue (where the main actor runs)")
    func receiveOnMain() async throws {
        // On Linux the main queue is served by whichever thread dispatch gives it once the main
        // thread has handed over (dispatch_main), so the check is the queue, not Thread.isMainThread.
        DispatchQueue.main.setSpecific(key: Deliveries.mainQueueKey, value: true)
        // Sent from another thread, as a background task would: subjects are not Sendable, as Combine's are not.
        nonisolated(unsafe) let subject = PassthroughSubject<Int, Never>()
        let delivered = Deliveries()
        let subscription = subject.receive(on: DispatchQueue.main).sink { delivered.add($0, onMain: DispatchQueue.getSpecific(key: Deliveries.mainQueueKey) == true) }
        await Task.detached {
            for value in 1...50 { subject.send(value) }
        }.value
        try await eventually("fifty values delivered") { delivered.values.count == 50 }
        #expect(delivered.values == Array(1...50))
        #expect(delivered.allOnMain)
        withExtendedLifetime(subscription) {}
    }
}

/// What a subscriber received, from any thread.
final class Deliveries: @unchecked Sendable {
    static let mainQueueKey = DispatchSpecificKey<Bool>()
    private let lock = NSLock()
    private var received: [Int] = []
    private var offMain = false
    func add(_ value: Int, onMain: Bool) { lock.withLock { received.append(value); offMain = offMain || !onMain } }
    var values: [Int] { lock.withLock { received } }
    var allOnMain: Bool { lock.withLock { !offMain } }
}
