import Foundation

/// A JSON object whose members are strings, numbers, booleans, null or (a few levels deep) such
/// objects, read in one pass.
///
/// App Store transactions are such objects, and reading one with `JSONDecoder` costs a sixth of a
/// verification; a stored notification (its payload with its `data`, transaction and renewal info)
/// is such an object nested. This reader only accepts the plain case: a string with an escape or a
/// control character, an array, objects nested deeper than ``maximumDepth``, a duplicate key,
/// invalid UTF-8 or anything after the object makes it give up (`nil`), and the caller then decodes
/// with `JSONDecoder`, which gives the answer and the error for every such input. So the fast path
/// never decides a case it might decide differently.
package struct FlatJSONObject: Equatable {
    /// A member's value.
    package enum Scalar: Equatable {
        case string(String)
        /// A number exactly as written (already checked against JSON's number grammar).
        case number(String)
        case bool(Bool)
        case null
        /// A nested object.
        case object(FlatJSONObject)
    }

    /// How many objects deep the reader goes: the outermost object is level 1.
    package static let maximumDepth = 4

    package private(set) var members: [String: Scalar] = [:]

    /// Reads `data`, or returns nil when it is not such an object of plain strings.
    package init?(_ data: Data) {
        let parsed: [String: Scalar]?? = data.withUnsafeBytes { raw in
            raw.withMemoryRebound(to: UInt8.self) { bytes in
                var reader = Reader(bytes: bytes)
                guard let members = reader.object(depth: 1) else { return nil }
                reader.skipWhitespace()
                return reader.position == bytes.count ? members : nil
            }
        }
        guard let parsed, let parsed else { return nil }
        members = parsed
    }

    private init(members: [String: Scalar]) { self.members = members }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        /// The members of the object at the current position (after any whitespace), `depth` levels deep.
        mutating func object(depth: Int) -> [String: Scalar]? {
            var members: [String: Scalar] = [:]
            skipWhitespace()
            guard take(UInt8(ascii: "{")) else { return nil }
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return members }
            while true {
                skipWhitespace()
                guard let key = string() else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                guard let value = value(depth: depth), members.updateValue(value, forKey: key) == nil else { return nil }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                return members
            }
        }

        /// A member's value in an object `depth` levels deep.
        mutating func value(depth: Int) -> Scalar? {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "{") else { return scalar() }
            guard depth < FlatJSONObject.maximumDepth, let members = object(depth: depth + 1) else { return nil }
            return .object(FlatJSONObject(members: members))
        }

        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                    position += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                position += 1
            }
            return nil
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
            position += count
            return true
        }

        mutating func scalar() -> Scalar? {
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "\""): return string().map(Scalar.string)
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number().map(Scalar.number)
            default: return nil
            }
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
        mutating func number() -> String? {
            let start = position
            func digits(_ reader: inout Reader) -> Int {
                let first = reader.position
                while reader.position < reader.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.position]) {
                    reader.position += 1
                }
                return reader.position - first
            }
            _ = take(UInt8(ascii: "-"))
            let integerStart = position
            let integerDigits = digits(&self)
            guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
            if take(UInt8(ascii: ".")) { guard digits(&self) > 0 else { return nil } }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard digits(&self) > 0 else { return nil }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        }
    }
}

/// Reads typed fields out of a ``FlatJSONObject`` the way `JSONDecoder` would for optional
/// properties, and remembers whether any field was of a kind it leaves to `JSONDecoder`.
package struct FlatJSONFields {
    private let source: FlatJSONObject
    /// Whether a field could not be read here; the whole object must then go to `JSONDecoder`.
    package private(set) var needsFullDecoder = false

    package init(_ object: FlatJSONObject) { source = object }

    package mutating func string(_ key: String) -> String? {
        switch source.members[key] {
        case nil, .null: return nil
        case .string(let text): return text
        default: needsFullDecoder = true; return nil
        }
    }

    package mutating func bool(_ key: String) -> Bool? {
        switch source.members[key] {
        case nil, .null: return nil
        case .bool(let value): return value
        default: needsFullDecoder = true; return nil
        }
    }

    /// A whole number written without fraction or exponent that fits `Value`.
    package mutating func integer<Value: FixedWidthInteger>(_ key: String, as type: Value.Type = Value.self) -> Value? {
        switch source.members[key] {
        case nil, .null: return nil
        case .number(let text):
            if let value = Value(text, radix: 10) { return value }
            needsFullDecoder = true
            return nil
        default: needsFullDecoder = true; return nil
        }
    }

    /// An App Store date: milliseconds since 1970 as any finite JSON number.
    package mutating func date(_ key: String) -> Date? {
        switch source.members[key] {
        case nil, .null: return nil
        case .number(let text):
            if let milliseconds = Double(text), milliseconds.isFinite { return AppStoreJSON.date(fromMilliseconds: milliseconds) }
            needsFullDecoder = true
            return nil
        default: needsFullDecoder = true; return nil
        }
    }

    /// A string read by `parse`: one it does not take sends the whole object to `JSONDecoder`.
    package mutating func string<Value>(_ key: String, parsedBy parse: (String) -> Value?) -> Value? {
        guard let text = string(key) else { return nil }
        if let value = parse(text) { return value }
        needsFullDecoder = true
        return nil
    }

    /// A Swift enumeration with string raw values: a value outside its cases sends the whole object
    /// to `JSONDecoder`, which reports it.
    package mutating func rawValue<Value: RawRepresentable>(_ key: String, as type: Value.Type = Value.self) -> Value? where Value.RawValue == String {
        string(key, parsedBy: Value.init(rawValue:))
    }

    package mutating func uuid(_ key: String) -> UUID? {
        guard let text = string(key) else { return nil }
        if let uuid = UUID(uuidString: text) { return uuid }
        needsFullDecoder = true
        return nil
    }

    /// An extensible enumeration with a string raw value.
    package mutating func enumeration<Value: AppStoreEnumeration>(_ key: String, as type: Value.Type = Value.self) -> Value? where Value.RawValue == String {
        string(key).flatMap(Value.init(rawValue:))
    }

    /// An extensible enumeration with an integer raw value.
    package mutating func enumeration<Value: AppStoreEnumeration>(_ key: String, as type: Value.Type = Value.self) -> Value? where Value.RawValue: FixedWidthInteger {
        integer(key, as: Value.RawValue.self).flatMap(Value.init(rawValue:))
    }

    /// A nested object read by its own type's flat reader. A value of another kind, or one that type's
    /// reader leaves to `JSONDecoder`, sends the whole object there.
    package mutating func object<Value: FlatJSONReadable>(_ key: String, as type: Value.Type = Value.self) -> Value? {
        switch source.members[key] {
        case nil, .null: return nil
        case .object(let nested):
            if let value = Value(flat: nested) { return value }
            needsFullDecoder = true
            return nil
        default: needsFullDecoder = true; return nil
        }
    }

    /// A field whose value this reader does not model (a nested object of a kind it leaves to
    /// `JSONDecoder`): present and not null sends the whole object to `JSONDecoder`.
    package mutating func requireAbsent(_ key: String) {
        switch source.members[key] {
        case nil, .null: return
        default: needsFullDecoder = true
        }
    }
}

/// A payload type with a fast reader for the common flat form of its JSON.
package protocol FlatJSONReadable {
    /// The value read from a flat object, or nil when some field needs `JSONDecoder`.
    init?(flat object: FlatJSONObject)
}
