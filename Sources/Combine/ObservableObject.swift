import Foundation

/// An object that announces, before it changes, that it is about to change: SwiftUI redraws what
/// reads it; tests record it (`OpenStoreKitTesting`'s `ObjectChanges`).
///
/// A class that declares `@Published` properties and no `objectWillChange` of its own gets one that
/// fires before any of those properties changes, its superclasses' included, and is the same
/// publisher every time it is read.
public protocol ObservableObject: AnyObject {
    associatedtype ObjectWillChangePublisher: Publisher = ObservableObjectPublisher where ObjectWillChangePublisher.Failure == Never
    /// Sends before the object changes.
    var objectWillChange: ObjectWillChangePublisher { get }
}

extension ObservableObject where ObjectWillChangePublisher == ObservableObjectPublisher {
    /// The object's publisher, shared by all its `@Published` properties (found by reflection, as
    /// Combine finds them); a fresh publisher for a class without any.
    public var objectWillChange: ObservableObjectPublisher {
        var fields: [any PublishedField] = []
        var mirror: Mirror? = Mirror(reflecting: self)
        while let current = mirror {
            fields += current.children.compactMap { $0.value as? any PublishedField }
            mirror = current.superclassMirror
        }
        guard let first = fields.first else { return ObservableObjectPublisher() }
        // The first field decides (under its lock) which publisher the object has; the others join it.
        let publisher = first.linkObjectWillChange(ObservableObjectPublisher())
        for field in fields.dropFirst() { _ = field.linkObjectWillChange(publisher) }
        return publisher
    }
}

/// The publisher of an ``ObservableObject``: it sends `()` before the object changes.
public final class ObservableObjectPublisher: Publisher, @unchecked Sendable {
    // Unchecked: its state is a `PassthroughSubject`'s, behind that subject's lock.
    public typealias Output = Void
    public typealias Failure = Never
    private let subject = PassthroughSubject<Void, Never>()

    public init() {}

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Void, S.Failure == Never {
        subject.receive(subscriber: subscriber)
    }

    /// Announces a change.
    public func send() { subject.send(()) }
}

/// A property that publishes its changes: `$property` is a publisher of its value (the current
/// one first, then each new one, sent before the property takes it), and setting it makes its
/// object's `objectWillChange` send first.
@propertyWrapper
public struct Published<Value> {
    private let storage: PublishedStorage<Value>

    public init(wrappedValue: Value) { storage = PublishedStorage(wrappedValue) }
    public init(initialValue: Value) { self.init(wrappedValue: initialValue) }

    public var wrappedValue: Value {
        get { storage.value }
        nonmutating set { storage.set(newValue) }
    }

    /// The property's publisher.
    public var projectedValue: Publisher { Publisher(storage: storage) }

    /// A `@Published` property's publisher: the current value first, then each new one, before the
    /// property takes it. It never fails and never finishes.
    public struct Publisher: Combine.Publisher {
        public typealias Output = Value
        public typealias Failure = Never
        fileprivate let storage: PublishedStorage<Value>

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Value, S.Failure == Never {
            storage.attach(subscriber)
        }
    }
}

extension Published: PublishedField {
    func linkObjectWillChange(_ publisher: ObservableObjectPublisher) -> ObservableObjectPublisher {
        storage.link(publisher)
    }
}

/// A `@Published` field, as reflection finds it.
protocol PublishedField {
    /// Gives the field its object's publisher unless it has one, and returns the one it has.
    func linkObjectWillChange(_ publisher: ObservableObjectPublisher) -> ObservableObjectPublisher
}

/// A `@Published` property's value, its subscribers and its object's publisher.
final class PublishedStorage<Value>: @unchecked Sendable {
    // Unchecked: `stored` and `objectWillChange` are only touched under `lock`; values are handed to
    // subscribers on the thread that set them, as in Combine.
    private let lock = NSLock()
    private var stored: Value
    private var objectWillChange: ObservableObjectPublisher?
    private let conduits = Conduits<Value, Never>()

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }

    /// Object first, then the property's own subscribers, then the value itself: everything
    /// subscribed hears of the change before it happens.
    func set(_ newValue: Value) {
        lock.withLock { objectWillChange }?.send()
        conduits.send(newValue)
        lock.withLock { stored = newValue }
    }

    func attach<S: Subscriber>(_ subscriber: S) where S.Input == Value, S.Failure == Never {
        conduits.attach(subscriber, current: value)
    }

    func link(_ publisher: ObservableObjectPublisher) -> ObservableObjectPublisher {
        lock.withLock {
            if let objectWillChange { return objectWillChange }
            objectWillChange = publisher
            return publisher
        }
    }
}
