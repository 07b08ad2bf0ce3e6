/// A value of one of Apple's extensible enumerations, kept by its raw wire value.
///
/// Apple adds cases to its payload enumerations over time. Each is modelled as a struct around its raw
/// value with a static constant per known case, so an unknown value decodes, compares and encodes
/// unchanged instead of failing the whole payload.
public protocol AppStoreEnumeration: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where RawValue: Hashable & Sendable & Codable & CustomStringConvertible {
    /// Every value Apple documents, in Apple's order.
    static var knownValues: [Self] { get }
}

extension AppStoreEnumeration {
    /// Whether Apple documents this value (and this package knows what it means).
    public var isKnown: Bool { Self.knownValues.contains(self) }

    public var description: String { rawValue.description }
}
