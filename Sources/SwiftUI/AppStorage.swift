import Foundation

/// A value kept in `UserDefaults` under a key, as SwiftUI's: reading gives what the defaults hold
/// now (or the default given here), writing stores it. With `store: UserDefaults(suiteName:)` the
/// value lives in a suite another process can read (an app group's shared flag).
///
/// Outside a view nothing is redrawn: in an `ObservableObject`, writing an `@AppStorage` property
/// does not send `objectWillChange`, as on Apple platforms.
@propertyWrapper
public struct AppStorage<Value> {
    private let key: String
    private let defaultValue: Value
    private let store: UserDefaults
    private let read: (UserDefaults, String) -> Value?
    private let write: (UserDefaults, String, Value) -> Void

    private init(key: String, defaultValue: Value, store: UserDefaults?, read: @escaping (UserDefaults, String) -> Value?,
                 write: @escaping (UserDefaults, String, Value) -> Void) {
        self.key = key
        self.defaultValue = defaultValue
        self.store = store ?? .standard
        self.read = read
        self.write = write
    }

    public var wrappedValue: Value {
        get { read(store, key) ?? defaultValue }
        nonmutating set { write(store, key, newValue) }
    }

    /// A binding to the stored value.
    public var projectedValue: Binding<Value> {
        let key = key, store = store, read = read, write = write, defaultValue = defaultValue
        return Binding(get: { read(store, key) ?? defaultValue }, set: { write(store, key, $0) })
    }
}

extension AppStorage {
    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Bool {
        self.init(key: key, defaultValue: wrappedValue, store: store,
                  read: { $0.object(forKey: $1) == nil ? nil : $0.bool(forKey: $1) }, write: { $0.set($2, forKey: $1) })
    }

    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Int {
        self.init(key: key, defaultValue: wrappedValue, store: store,
                  read: { $0.object(forKey: $1) == nil ? nil : $0.integer(forKey: $1) }, write: { $0.set($2, forKey: $1) })
    }

    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Double {
        self.init(key: key, defaultValue: wrappedValue, store: store,
                  read: { $0.object(forKey: $1) == nil ? nil : $0.double(forKey: $1) }, write: { $0.set($2, forKey: $1) })
    }

    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == String {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0.string(forKey: $1) }, write: { $0.set($2, forKey: $1) })
    }

    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == URL {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0.url(forKey: $1) }, write: { $0.set($2, forKey: $1) })
    }

    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value == Data {
        self.init(key: key, defaultValue: wrappedValue, store: store, read: { $0.data(forKey: $1) }, write: { $0.set($2, forKey: $1) })
    }

    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value: RawRepresentable, Value.RawValue == Int {
        self.init(key: key, defaultValue: wrappedValue, store: store,
                  read: { ($0.object(forKey: $1) as? Int).flatMap(Value.init(rawValue:)) }, write: { $0.set($2.rawValue, forKey: $1) })
    }

    public init(wrappedValue: Value, _ key: String, store: UserDefaults? = nil) where Value: RawRepresentable, Value.RawValue == String {
        self.init(key: key, defaultValue: wrappedValue, store: store,
                  read: { $0.string(forKey: $1).flatMap(Value.init(rawValue:)) }, write: { $0.set($2.rawValue, forKey: $1) })
    }
}

extension AppStorage where Value: ExpressibleByNilLiteral {
    public init(_ key: String, store: UserDefaults? = nil) where Value == Bool? {
        self.init(key: key, defaultValue: nil, store: store, read: { $0.object(forKey: $1) as? Bool },
                  write: { store, key, value in value.map { store.set($0, forKey: key) } ?? store.removeObject(forKey: key) })
    }

    public init(_ key: String, store: UserDefaults? = nil) where Value == Int? {
        self.init(key: key, defaultValue: nil, store: store, read: { $0.object(forKey: $1) as? Int },
                  write: { store, key, value in value.map { store.set($0, forKey: key) } ?? store.removeObject(forKey: key) })
    }

    public init(_ key: String, store: UserDefaults? = nil) where Value == String? {
        self.init(key: key, defaultValue: nil, store: store, read: { $0.string(forKey: $1) },
                  write: { store, key, value in value.map { store.set($0, forKey: key) } ?? store.removeObject(forKey: key) })
    }
}
