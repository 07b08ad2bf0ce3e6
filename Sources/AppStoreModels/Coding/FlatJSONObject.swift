import Foundation

/// A JSON object whose members are all strings, numbers, booleans or null, read in one pass.
///
/// App Store transactions are such objects, and reading one with `JSONDecoder` costs a sixth of a
/// verification. This reader only accepts the plain case: a string with an escape or a control
/// character, a nested object or array, a duplicate key, invalid UTF-8 or anything after the object
/// makes it give up (`nil`), and the caller then decodes with `JSONDecoder`, which gives the answer
/// and the error for every such input. So the fast path never decides a case it might decide
/// differently.
package struct FlatJSONObject {
    /// A member's value.
    package enum Scalar: Equatable {
        case string(String)
        /// A number exactly as written (already checked against JSON's number grammar).
        case number(String)
        case bool(Bool)
        case null
    }

    package private(set) var members: [String: Scalar] = [:]

    /// Reads `data`, or returns nil when it is not a flat JSON object of plain strings.
    package init?(_ data: Data) {
        let parsed: [String: Scalar]?? = data.withUnsafeBytes { raw in
            raw.withMemoryRebound(to: UInt8.self) { bytes in
                var reader = Reader(bytes: bytes)
                return reader.object()
            }
        }
        guard let parsed, let parsed else { return nil }
        members = parsed
    }

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

        mutating func object() -> [String: Scalar]? {
            var members: [String: Scalar] = [:]
            skipWhitespace()
            guard take(UInt8(ascii: "{")) else { return nil }
            skipWhitespace()
            if take(UInt8(ascii: "}")) { return finished(members) }
            while true {
                skipWhitespace()
                guard let key = string() else { return nil }
                skipWhitespace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                guard let value = scalar(), members.updateValue(value, forKey: key) == nil else { return nil }
                skipWhitespace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                return finished(members)
            }
        }

        mutating func finished(_ members: [String: Scalar]) -> [String: Scalar]? {
            skipWhitespace()
            return position == bytes.count ? members : nil
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
    private let object: FlatJSONObject
    /// Whether a field could not be read here; the whole object must then go to `JSONDecoder`.
    package private(set) var needsFullDecoder = false

    package init(_ object: FlatJSONObject) { self.object = object }

    package mutating func string(_ key: String) -> String? {
        switch object.members[key] {
        case nil, .null: return nil
        case .string(let text): return text
        default: needsFullDecoder = true; return nil
        }
    }

    package mutating func bool(_ key: String) -> Bool? {
        switch object.members[key] {
        case nil, .null: return nil
        case .bool(let value): return value
        default: needsFullDecoder = true; return nil
        }
    }

    /// A whole number written without fraction or exponent that fits `Value`.
    package mutating func integer<Value: FixedWidthInteger>(_ key: String, as type: Value.Type = Value.self) -> Value? {
        switch object.members[key] {
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
        switch object.members[key] {
        case nil, .null: return nil
        case .number(let text):
            if let milliseconds = Double(text), milliseconds.isFinite { return AppStoreJSON.date(fromMilliseconds: milliseconds) }
            needsFullDecoder = true
            return nil
        default: needsFullDecoder = true; return nil
        }
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

    /// A field whose value this reader does not model (a nested object): present and not null sends
    /// the whole object to `JSONDecoder`.
    package mutating func requireAbsent(_ key: String) {
        switch object.members[key] {
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
