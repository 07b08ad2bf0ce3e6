import Foundation
import Synchronization

/// A key of ``EnvironmentValues``, with the value it has when nobody set it.
public protocol EnvironmentKey {
    associatedtype Value
    static var defaultValue: Value { get }
}

/// The environment values store code reads with `@Environment`: `purchase`, `openURL`, and the store
/// views' settings, plus any key an app defines.
///
/// There are no views to carry an environment here: the values in effect are the task's (set with
/// ``withValues(_:operation:)``, as a test sets them around the code it drives), else the app's
/// (``app``, set once at launch), else each key's default.
public struct EnvironmentValues: @unchecked Sendable, CustomStringConvertible {
    // Unchecked: values are set by the code that owns the environment and read as SwiftUI reads
    // them; the store's own keys (`purchase`, `openURL`, the store views') hold `Sendable` values.
    private var values: [ObjectIdentifier: Any] = [:]

    public init() {}

    public subscript<Key: EnvironmentKey>(key: Key.Type) -> Key.Value {
        get { values[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    public var description: String { "EnvironmentValues(\(values.count) set)" }

    // MARK: The values in effect

    @TaskLocal private static var taskValues: EnvironmentValues?
    private static let appValues = Mutex(EnvironmentValues())

    /// The app's environment, for code that runs outside any ``withValues(_:operation:)``.
    public static var app: EnvironmentValues {
        get { appValues.withLock { $0 } }
        set { appValues.withLock { $0 = newValue } }
    }

    /// The environment in effect here: the task's, else the app's.
    public static var current: EnvironmentValues { taskValues ?? app }

    /// Runs `operation` with the current environment changed by `change` (and tasks it starts inherit it).
    public static func withValues<Result>(_ change: (inout EnvironmentValues) -> Void,
                                          operation: () async throws -> Result) async rethrows -> Result {
        var values = current
        change(&values)
        return try await $taskValues.withValue(values, operation: operation)
    }

    /// Runs synchronous `operation` with the current environment changed by `change`.
    public static func withValues<Result>(_ change: (inout EnvironmentValues) -> Void, operation: () throws -> Result) rethrows -> Result {
        var values = current
        change(&values)
        return try $taskValues.withValue(values, operation: operation)
    }
}

/// Reads a value of the environment in effect (see ``EnvironmentValues``) each time it is read.
@propertyWrapper
public struct Environment<Value> {
    private let keyPath: KeyPath<EnvironmentValues, Value>

    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {
        self.keyPath = keyPath
    }

    public var wrappedValue: Value { EnvironmentValues.current[keyPath: keyPath] }
}

// MARK: The keys store code reads

private struct PurchaseActionKey: EnvironmentKey {
    static var defaultValue: PurchaseAction { PurchaseAction() }
}

private struct OpenURLActionKey: EnvironmentKey {
    static var defaultValue: OpenURLAction { OpenURLAction { _ in .systemAction } }
}

private struct RequestReviewActionKey: EnvironmentKey {
    static var defaultValue: RequestReviewAction { RequestReviewAction() }
}

private struct StoreViewEnvironmentKey: EnvironmentKey {
    static var defaultValue: StoreViewEnvironment { StoreViewEnvironment() }
}

extension EnvironmentValues {
    /// `@Environment(\.purchase)`: buys a product through the active store client.
    public var purchase: PurchaseAction {
        get { self[PurchaseActionKey.self] }
        set { self[PurchaseActionKey.self] = newValue }
    }

    /// `@Environment(\.openURL)`: opens a link (a subscription's management page, a policy).
    public var openURL: OpenURLAction {
        get { self[OpenURLActionKey.self] }
        set { self[OpenURLActionKey.self] = newValue }
    }

    /// `@Environment(\.requestReview)`: asks the customer for a review through the active store client.
    public var requestReview: RequestReviewAction {
        get { self[RequestReviewActionKey.self] }
        set { self[RequestReviewActionKey.self] = newValue }
    }

    /// What StoreKit's views read from their environment: `.inAppPurchaseOptions`,
    /// `.onInAppPurchaseStart`, `.onInAppPurchaseCompletion`, the policy links and the client.
    public var storeViewEnvironment: StoreViewEnvironment {
        get { self[StoreViewEnvironmentKey.self] }
        set { self[StoreViewEnvironmentKey.self] = newValue }
    }
}

/// `@Environment(\.openURL)`'s type: opens a URL through its handler. With no handler set, a link is
/// left to the system, which here does nothing with it.
public struct OpenURLAction: Sendable {
    /// What the handler did with a URL.
    public enum Result: Sendable {
        case handled, discarded, systemAction
    }

    private let handler: @Sendable (URL) -> Result

    public init(handler: @escaping @Sendable (URL) -> Result) {
        self.handler = handler
    }

    public func callAsFunction(_ url: URL) {
        _ = handler(url)
    }

    /// Opens `url`; `completion` says whether it was handled.
    public func callAsFunction(_ url: URL, completion: (Bool) -> Void) {
        completion(handler(url) == .handled)
    }
}
