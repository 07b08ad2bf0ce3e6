import AppStoreModels

/// Reads one JSON object of a `.storekit` file leniently, the way Xcode does.
///
/// Every key is optional and `null` counts as absent. A value of the wrong type is logged as an
/// error at its path and read as absent, so reading goes on and every problem is found in one pass.
/// Keys the reader never asked for are kept in ``remaining`` so the file can be written back
/// unchanged in meaning.
struct ObjectReader {
    let path: ConfigurationPath
    let log: ProblemLog
    private var members: [String: JSONValue]

    /// A reader for `value`, or `nil` (with an error logged) when it is not an object.
    init?(_ value: JSONValue, at path: ConfigurationPath, log: ProblemLog) {
        guard case .object(let members) = value else {
            log.error(path, "expected an object, found \(value.kindDescription)")
            return nil
        }
        self.path = path
        self.log = log
        self.members = members
    }

    /// The keys not read, with their values.
    var remaining: [String: JSONValue] { members }

    private mutating func take(_ key: String) -> JSONValue? {
        guard let value = members.removeValue(forKey: key) else { return nil }
        if case .null = value { return nil }
        return value
    }

    private func mismatch(_ key: String, expected: String, found value: JSONValue) {
        log.error(path.appending(key), "expected \(expected), found \(value.kindDescription)")
    }

    mutating func string(_ key: String) -> String? {
        guard let value = take(key) else { return nil }
        guard case .string(let text) = value else {
            mismatch(key, expected: "a string", found: value)
            return nil
        }
        return text
    }

    mutating func bool(_ key: String) -> Bool? {
        guard let value = take(key) else { return nil }
        guard case .bool(let flag) = value else {
            mismatch(key, expected: "true or false", found: value)
            return nil
        }
        return flag
    }

    mutating func integer(_ key: String) -> Int? {
        guard let value = take(key) else { return nil }
        switch value {
        case .integer(let number) where Int64(Int.min) <= number && number <= Int64(Int.max):
            return Int(number)
        case .number(let number) where number.rounded() == number && abs(number) < 1e15:
            return Int(number)
        default:
            mismatch(key, expected: "a whole number", found: value)
            return nil
        }
    }

    mutating func number(_ key: String) -> Double? {
        guard let value = take(key) else { return nil }
        switch value {
        case .integer(let number): return Double(number)
        case .number(let number): return number
        default:
            mismatch(key, expected: "a number", found: value)
            return nil
        }
    }

    /// A price written as a decimal string (as Xcode writes it) or, leniently, as a JSON number.
    mutating func priceText(_ key: String) -> String? {
        guard let value = take(key) else { return nil }
        switch value {
        case .string(let text): return text
        case .integer(let number):
            log.warning(path.appending(key), "prices are written as strings, such as \"\(number)\"")
            return String(number)
        case .number(let number):
            log.warning(path.appending(key), "prices are written as strings, such as \"\(number)\"")
            return String(number)
        default:
            mismatch(key, expected: "a decimal price string such as \"0.99\"", found: value)
            return nil
        }
    }

    /// Any value, kept as it is.
    mutating func raw(_ key: String) -> JSONValue? {
        take(key)
    }

    mutating func object<T>(_ key: String, _ read: (inout ObjectReader) -> T) -> T? {
        guard let value = take(key) else { return nil }
        guard var reader = ObjectReader(value, at: path.appending(key), log: log) else { return nil }
        return read(&reader)
    }

    /// An array whose elements are read by `read`; elements it cannot read are left out.
    mutating func array<T>(_ key: String, _ read: (JSONValue, ConfigurationPath) -> T?) -> [T]? {
        guard let value = take(key) else { return nil }
        guard case .array(let elements) = value else {
            mismatch(key, expected: "an array", found: value)
            return nil
        }
        let base = path.appending(key)
        return elements.enumerated().compactMap { index, element in read(element, base.appending(index)) }
    }

    /// An array of objects.
    mutating func objects<T>(_ key: String, _ read: (inout ObjectReader) -> T) -> [T]? {
        let log = self.log
        return array(key) { element, elementPath in
            guard var reader = ObjectReader(element, at: elementPath, log: log) else { return nil }
            return read(&reader)
        }
    }

    /// An array of strings.
    mutating func strings(_ key: String) -> [String]? {
        let log = self.log
        return array(key) { element, elementPath in
            guard case .string(let text) = element else {
                log.error(elementPath, "expected a string, found \(element.kindDescription)")
                return nil
            }
            return text
        }
    }
}

/// Builds one JSON object when a configuration is written back.
struct ObjectWriter {
    private(set) var members: [String: JSONValue]

    init(keeping remaining: [String: JSONValue]) {
        members = remaining
    }

    mutating func set(_ key: String, _ value: String?) { if let value { members[key] = .string(value) } }
    mutating func set(_ key: String, _ value: Bool?) { if let value { members[key] = .bool(value) } }
    mutating func set(_ key: String, _ value: Int?) { if let value { members[key] = .integer(Int64(value)) } }
    mutating func set(_ key: String, _ value: Double?) { if let value { members[key] = .number(value) } }
    mutating func set(_ key: String, _ value: JSONValue?) { if let value { members[key] = value } }
    mutating func set(_ key: String, _ value: [String]?) { if let value { members[key] = .array(value.map(JSONValue.string)) } }
    mutating func set<T: ConfigurationNode>(_ key: String, _ value: T?) { if let value { members[key] = value.jsonValue } }
    mutating func set<T: ConfigurationNode>(_ key: String, _ values: [T]?) {
        if let values { members[key] = .array(values.map(\.jsonValue)) }
    }

    var jsonValue: JSONValue { .object(members) }
}

/// A part of a `.storekit` file that can be read leniently and written back.
protocol ConfigurationNode {
    init(reading reader: inout ObjectReader)
    var jsonValue: JSONValue { get }
}

extension JSONValue {
    /// How a value is described in problems: "a string", "a number", "null", …
    var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "true or false"
        case .integer, .number: return "a number"
        case .string(let text): return "the string \"\(text.count > 40 ? String(text.prefix(40)) + "…" : text)\""
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
