import Combine
import Foundation

// What view models and store managers use of SwiftUI without drawing anything: the object wrappers
// (`@ObservedObject`, `@StateObject`), `withAnimation`, `LocalizedStringKey` and `DynamicTypeSize`.
// Nothing here animates, lays out or redraws; each piece does what it does to the model's state.

/// An observable object a view (here, any holder) watches: `$model.property` is a ``Binding`` to one
/// of its properties.
@MainActor
@preconcurrency
@propertyWrapper
public struct ObservedObject<ObjectType: ObservableObject> {
    /// Reaches the properties of the watched object as bindings.
    @MainActor
    @preconcurrency
    @dynamicMemberLookup
    public struct Wrapper {
        let object: ObjectType

        /// A binding to a property of the object.
        public subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<ObjectType, Subject>) -> Binding<Subject> {
            let object = self.object
            return Binding(get: { object[keyPath: keyPath] }, set: { object[keyPath: keyPath] = $0 })
        }
    }

    public var wrappedValue: ObjectType

    public init(wrappedValue: ObjectType) {
        self.wrappedValue = wrappedValue
    }

    public init(initialValue: ObjectType) {
        self.init(wrappedValue: initialValue)
    }

    public var projectedValue: Wrapper { Wrapper(object: wrappedValue) }
}

/// An observable object a view (here, any holder) owns: made once, the first time it is read, and
/// kept for the holder's life.
@MainActor
@preconcurrency
@propertyWrapper
public struct StateObject<ObjectType: ObservableObject> {
    private let storage: LazyObject<ObjectType>

    public nonisolated init(wrappedValue thunk: @autoclosure @escaping () -> ObjectType) {
        storage = LazyObject(thunk)
    }

    public var wrappedValue: ObjectType { storage.value }

    public var projectedValue: ObservedObject<ObjectType>.Wrapper { ObservedObject.Wrapper(object: storage.value) }
}

/// The object of a ``StateObject``, made on first read.
private final class LazyObject<ObjectType>: @unchecked Sendable {
    // Unchecked: it is made anywhere (a `StateObject` is declared with a default value), but read only
    // through `StateObject.wrappedValue`, which is isolated to the main actor.
    private var made: ObjectType?
    private let make: () -> ObjectType

    init(_ make: @escaping () -> ObjectType) {
        self.make = make
    }

    var value: ObjectType {
        if let made { return made }
        let object = make()
        made = object
        return object
    }
}

/// How a change would animate on screen. There is no screen here: ``withAnimation(_:_:)`` applies the
/// change at once, and these values only say which curve code asked for.
public struct Animation: Hashable, Sendable, CustomStringConvertible {
    public let description: String

    private init(_ description: String) {
        self.description = description
    }

    public static let `default` = Animation("default")
    public static let linear = Animation("linear")
    public static let easeIn = Animation("easeIn")
    public static let easeOut = Animation("easeOut")
    public static let easeInOut = Animation("easeInOut")
    public static let spring = Animation("spring")
    public static let bouncy = Animation("bouncy")
    public static let smooth = Animation("smooth")
    public static let snappy = Animation("snappy")

    public static func linear(duration: TimeInterval) -> Animation { Animation("linear(\(duration))") }
    public static func easeIn(duration: TimeInterval) -> Animation { Animation("easeIn(\(duration))") }
    public static func easeOut(duration: TimeInterval) -> Animation { Animation("easeOut(\(duration))") }
    public static func easeInOut(duration: TimeInterval) -> Animation { Animation("easeInOut(\(duration))") }
    public static func spring(response: Double = 0.5, dampingFraction: Double = 0.825, blendDuration: TimeInterval = 0) -> Animation {
        Animation("spring(\(response), \(dampingFraction))")
    }

    /// The same animation after a delay.
    public func delay(_ delay: TimeInterval) -> Animation { Animation("\(description).delay(\(delay))") }
    /// The same animation at another speed.
    public func speed(_ speed: Double) -> Animation { Animation("\(description).speed(\(speed))") }
}

/// When an animation counts as finished, for ``withAnimation(_:completionCriteria:_:completion:)``.
public struct AnimationCompletionCriteria: Hashable, Sendable {
    private let name: String
    public static let logicallyComplete = AnimationCompletionCriteria(name: "logicallyComplete")
    public static let removed = AnimationCompletionCriteria(name: "removed")
}

/// Makes the changes in `body` and returns its result. SwiftUI would animate the views that show
/// them; here there are no views, so the changes simply happen.
@MainActor
@discardableResult
public func withAnimation<Result>(_ animation: Animation? = .default, _ body: () throws -> Result) rethrows -> Result {
    try body()
}

/// Makes the changes in `body`, then calls `completion` (at once: nothing animates here).
@MainActor
@discardableResult
public func withAnimation<Result>(_ animation: Animation? = .default, completionCriteria: AnimationCompletionCriteria = .logicallyComplete,
                                  _ body: () throws -> Result, completion: @escaping () -> Void) rethrows -> Result {
    let result = try body()
    completion()
    return result
}

/// A key for text a view would look up in the app's strings files: here the key is the text.
public struct LocalizedStringKey: Hashable, Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The key, with interpolated values written in.
    public let key: String

    public init(_ value: String) {
        key = value
    }

    public init(stringLiteral value: String) {
        key = value
    }

    public init(stringInterpolation: StringInterpolation) {
        key = stringInterpolation.text
    }

    public var description: String { key }

    /// Builds a key from a literal with values in it.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity)
        }

        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        public mutating func appendInterpolation<T>(_ value: T) {
            text += String(describing: value)
        }
    }
}

/// The text size the customer chose, smallest first; the `accessibility` sizes are the largest.
public enum DynamicTypeSize: Hashable, Comparable, CaseIterable, Sendable {
    case xSmall, small, medium, large, xLarge, xxLarge, xxxLarge
    case accessibility1, accessibility2, accessibility3, accessibility4, accessibility5

    /// Whether the size is one of the accessibility sizes.
    public var isAccessibilitySize: Bool { self >= .accessibility1 }
}
