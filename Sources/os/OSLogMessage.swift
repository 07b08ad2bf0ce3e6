import Foundation

/// A log message written as a string literal with interpolations, as the unified log's
/// `OSLogMessage`: each interpolated value carries its privacy and format, and is turned into text
/// only when the message is written.
///
/// ```swift
/// logger.info("bought \(product.id, privacy: .public) for \(account, privacy: .private(mask: .hash))")
/// ```
public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
    public let interpolation: OSLogInterpolation

    public init(stringInterpolation: OSLogInterpolation) {
        self.interpolation = stringInterpolation
    }

    public init(stringLiteral value: String) {
        var interpolation = OSLogInterpolation(literalCapacity: value.utf8.count, interpolationCount: 0)
        interpolation.appendLiteral(value)
        self.interpolation = interpolation
    }

    /// The message as it is written: private values redacted unless the output reveals them.
    func rendered(revealingPrivateValues reveal: Bool = UnifiedLogOutput.revealsPrivateValues) -> String {
        interpolation.segments.reduce(into: "") { text, segment in
            switch segment {
            case .literal(let literal): text += literal
            case .value(let value, let privacy, let isPublicByDefault): text += privacy.apply(to: value(), isPublicByDefault: isPublicByDefault, reveal: reveal)
            }
        }
    }
}

/// The parts of an ``OSLogMessage``: literal text and interpolated values, each with its privacy and
/// format, as the unified log's `OSLogInterpolation`.
public struct OSLogInterpolation: StringInterpolationProtocol {
    enum Segment {
        case literal(String)
        /// A value's text (made when the message is written), its privacy, and whether `.auto` shows it.
        case value(() -> String, OSLogPrivacy, Bool)
    }

    var segments: [Segment] = []

    public init(literalCapacity: Int, interpolationCount: Int) {
        segments.reserveCapacity(interpolationCount * 2 + 1)
    }

    public mutating func appendLiteral(_ literal: String) {
        segments.append(.literal(literal))
    }

    /// A string: private unless marked otherwise.
    public mutating func appendInterpolation(_ argumentString: @autoclosure @escaping () -> String, align: OSLogStringAlignment = .none,
                                             privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ align.apply(to: argumentString()) }, privacy, false))
    }

    /// A value described by its `description`: private unless marked otherwise. (Disfavoured, so a
    /// number, a `Bool` or an error, which are descriptions too, take their own forms.)
    @_disfavoredOverload
    public mutating func appendInterpolation<T: CustomStringConvertible>(_ value: @autoclosure @escaping () -> T, align: OSLogStringAlignment = .none,
                                                                         privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ align.apply(to: value().description) }, privacy, false))
    }

    /// An object: private unless marked otherwise.
    public mutating func appendInterpolation(_ argumentObject: @autoclosure @escaping () -> NSObject, privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ argumentObject().description }, privacy, false))
    }

    /// An error, described as `String(describing:)` does: private unless marked otherwise.
    public mutating func appendInterpolation(_ error: @autoclosure @escaping () -> any Error, privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ String(describing: error()) }, privacy, false))
    }

    /// A type's name: public.
    public mutating func appendInterpolation(_ value: @autoclosure @escaping () -> Any.Type, align: OSLogStringAlignment = .none,
                                             privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ align.apply(to: String(describing: value())) }, privacy, true))
    }

    /// An optional value: `nil` or the value's description; private unless marked otherwise.
    @_disfavoredOverload
    public mutating func appendInterpolation<T>(_ value: @autoclosure @escaping () -> T?, align: OSLogStringAlignment = .none,
                                                privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ align.apply(to: value().map { String(describing: $0) } ?? "nil") }, privacy, false))
    }

    /// An integer: public unless marked otherwise.
    public mutating func appendInterpolation<T: FixedWidthInteger>(_ number: @autoclosure @escaping () -> T,
                                                                   format: OSLogIntegerFormatting = .decimal,
                                                                   align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ align.apply(to: format.format(number())) }, privacy, true))
    }

    /// A `Double`: public unless marked otherwise.
    public mutating func appendInterpolation(_ number: @autoclosure @escaping () -> Double, format: OSLogFloatFormatting = .fixed,
                                             align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ align.apply(to: format.format(number())) }, privacy, true))
    }

    /// A `Float`: public unless marked otherwise.
    public mutating func appendInterpolation(_ number: @autoclosure @escaping () -> Float, format: OSLogFloatFormatting = .fixed,
                                             align: OSLogStringAlignment = .none, privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ align.apply(to: format.format(Double(number()))) }, privacy, true))
    }

    /// A `CGFloat`-free `Decimal` or other value is described through its `description` above; a
    /// `Bool` is written as `true`/`false` (or `YES`/`NO`): public unless marked otherwise.
    public mutating func appendInterpolation(_ boolean: @autoclosure @escaping () -> Bool, format: OSLogBoolFormat = .truth,
                                             privacy: OSLogPrivacy = .auto) {
        segments.append(.value({ format.format(boolean()) }, privacy, true))
    }
}

/// Whether an interpolated value is written as it is, as the unified log's `OSLogPrivacy`.
public struct OSLogPrivacy: Equatable, Sendable {
    enum Kind: Equatable, Sendable { case auto, `public`, `private`, sensitive }

    /// How a redacted value may still be told apart from others.
    public struct Mask: Equatable, Sendable {
        let hashes: Bool
        /// Written as a hash of the value, so equal values can be matched without showing them.
        public static let hash = Mask(hashes: true)
        /// Not written at all.
        public static let none = Mask(hashes: false)
    }

    let kind: Kind
    let mask: Mask

    /// Strings and objects private, numbers and booleans public.
    public static let auto = OSLogPrivacy(kind: .auto, mask: .none)
    public static let `public` = OSLogPrivacy(kind: .public, mask: .none)
    public static let `private` = OSLogPrivacy(kind: .private, mask: .none)
    /// Private even where private data is shown.
    public static let sensitive = OSLogPrivacy(kind: .sensitive, mask: .none)

    public static func auto(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(kind: .auto, mask: mask) }
    public static func `private`(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(kind: .private, mask: mask) }
    public static func sensitive(mask: Mask) -> OSLogPrivacy { OSLogPrivacy(kind: .sensitive, mask: mask) }

    func apply(to text: String, isPublicByDefault: Bool, reveal: Bool) -> String {
        let hidden: Bool
        switch kind {
        case .public: return text
        case .auto: hidden = !isPublicByDefault
        case .private: hidden = true
        case .sensitive: return mask.hashes ? Self.masked(text) : "<private>"
        }
        guard hidden else { return text }
        if mask.hashes { return Self.masked(text) }
        return reveal ? text : "<private>"
    }

    /// `<mask.hash: '…'>`: a stable hash of the value (FNV-1a, 64 bits), base64.
    static func masked(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let bytes = withUnsafeBytes(of: hash.bigEndian) { Data($0) }
        return "<mask.hash: '\(bytes.base64EncodedString())'>"
    }
}

/// How a value is padded to a width, as the unified log's `OSLogStringAlignment`.
public struct OSLogStringAlignment: Sendable {
    let columns: Int
    let left: Bool

    public static let none = OSLogStringAlignment(columns: 0, left: false)
    public static func left(columns: @autoclosure @escaping () -> Int) -> OSLogStringAlignment { OSLogStringAlignment(columns: columns(), left: true) }
    public static func right(columns: @autoclosure @escaping () -> Int) -> OSLogStringAlignment { OSLogStringAlignment(columns: columns(), left: false) }

    func apply(to text: String) -> String {
        guard text.count < columns else { return text }
        let padding = String(repeating: " ", count: columns - text.count)
        return left ? text + padding : padding + text
    }
}

/// How an integer is written, as the unified log's `OSLogIntegerFormatting`.
public struct OSLogIntegerFormatting: Sendable {
    let radix: Int
    let explicitPositiveSign: Bool
    let includePrefix: Bool
    let uppercase: Bool
    let minDigits: Int

    public static let decimal = OSLogIntegerFormatting(radix: 10, explicitPositiveSign: false, includePrefix: false, uppercase: false, minDigits: 0)
    public static let hex = OSLogIntegerFormatting(radix: 16, explicitPositiveSign: false, includePrefix: false, uppercase: false, minDigits: 0)
    public static let octal = OSLogIntegerFormatting(radix: 8, explicitPositiveSign: false, includePrefix: false, uppercase: false, minDigits: 0)

    public static func decimal(explicitPositiveSign: Bool = false, minDigits: @autoclosure @escaping () -> Int = 0) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(radix: 10, explicitPositiveSign: explicitPositiveSign, includePrefix: false, uppercase: false, minDigits: minDigits())
    }

    public static func hex(explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false,
                           minDigits: @autoclosure @escaping () -> Int = 0) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(radix: 16, explicitPositiveSign: explicitPositiveSign, includePrefix: includePrefix, uppercase: uppercase, minDigits: minDigits())
    }

    public static func octal(explicitPositiveSign: Bool = false, includePrefix: Bool = false, uppercase: Bool = false,
                             minDigits: @autoclosure @escaping () -> Int = 0) -> OSLogIntegerFormatting {
        OSLogIntegerFormatting(radix: 8, explicitPositiveSign: explicitPositiveSign, includePrefix: includePrefix, uppercase: uppercase, minDigits: minDigits())
    }

    func format<T: FixedWidthInteger>(_ value: T) -> String {
        var digits = String(value.magnitude, radix: radix, uppercase: uppercase)
        if digits.count < minDigits { digits = String(repeating: "0", count: minDigits - digits.count) + digits }
        if includePrefix { digits = (radix == 16 ? "0x" : radix == 8 ? "0" : "") + digits }
        let sign = value < 0 ? "-" : explicitPositiveSign ? "+" : ""
        return sign + digits
    }
}

/// How a floating-point number is written, as the unified log's `OSLogFloatFormatting`.
public struct OSLogFloatFormatting: Sendable {
    enum Style: Sendable { case fixed, hex, exponential, hybrid }
    let style: Style
    let precision: Int?
    let explicitPositiveSign: Bool
    let uppercase: Bool

    /// `%f`: six places unless a precision is given.
    public static let fixed = OSLogFloatFormatting(style: .fixed, precision: nil, explicitPositiveSign: false, uppercase: false)
    public static let hex = OSLogFloatFormatting(style: .hex, precision: nil, explicitPositiveSign: false, uppercase: false)
    public static let exponential = OSLogFloatFormatting(style: .exponential, precision: nil, explicitPositiveSign: false, uppercase: false)
    public static let hybrid = OSLogFloatFormatting(style: .hybrid, precision: nil, explicitPositiveSign: false, uppercase: false)

    public static func fixed(precision: @autoclosure @escaping () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: .fixed, precision: precision(), explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    public static func fixed(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: .fixed, precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    public static func hex(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: .hex, precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    public static func exponential(precision: @autoclosure @escaping () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: .exponential, precision: precision(), explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    public static func exponential(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: .exponential, precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    public static func hybrid(precision: @autoclosure @escaping () -> Int, explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: .hybrid, precision: precision(), explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    public static func hybrid(explicitPositiveSign: Bool = false, uppercase: Bool = false) -> OSLogFloatFormatting {
        OSLogFloatFormatting(style: .hybrid, precision: nil, explicitPositiveSign: explicitPositiveSign, uppercase: uppercase)
    }

    func format(_ value: Double) -> String {
        var conversion: String
        switch style {
        case .fixed: conversion = "f"
        case .hex: conversion = "a"
        case .exponential: conversion = "e"
        case .hybrid: conversion = "g"
        }
        if uppercase { conversion = conversion.uppercased() }
        let precisionPart = precision.map { ".\(max(0, min($0, 64)))" } ?? ""
        return String(format: "%\(explicitPositiveSign ? "+" : "")\(precisionPart)\(conversion)", value)
    }
}

/// How a `Bool` is written, as the unified log's `OSLogBoolFormat`.
public enum OSLogBoolFormat: Sendable {
    /// `true` / `false`.
    case truth
    /// `YES` / `NO`.
    case answer

    func format(_ value: Bool) -> String {
        switch self {
        case .truth: return value ? "true" : "false"
        case .answer: return value ? "YES" : "NO"
        }
    }
}
