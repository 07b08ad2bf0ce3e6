/// A value read and written somewhere else: `$flag` of an `@AppStorage` property.
@propertyWrapper
@dynamicMemberLookup
public struct Binding<Value> {
    private let read: () -> Value
    private let write: (Value) -> Void

    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        read = get
        write = set
    }

    /// A binding that always reads `value` and ignores writes.
    public static func constant(_ value: Value) -> Binding<Value> {
        Binding(get: { value }, set: { _ in })
    }

    public var wrappedValue: Value {
        get { read() }
        nonmutating set { write(newValue) }
    }

    public var projectedValue: Binding<Value> { self }

    /// A binding to a property of the value.
    public subscript<Subject>(dynamicMember keyPath: WritableKeyPath<Value, Subject>) -> Binding<Subject> {
        Binding<Subject>(get: { read()[keyPath: keyPath] }, set: { newValue in
            var value = read()
            value[keyPath: keyPath] = newValue
            write(value)
        })
    }
}
