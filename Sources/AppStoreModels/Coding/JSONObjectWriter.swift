import Foundation

/// A payload that writes its own App Store JSON, fast, byte for byte what ``AppStoreJSON/encode(_:prettyPrinted:)``
/// would write with `JSONEncoder` (sorted keys, unescaped slashes, whole milliseconds, lower-case UUIDs).
///
/// Signing is the hot path of the local App Store (every purchase and renewal signs several payloads),
/// and Foundation's encoder costs as much as the signature; the signed payload types conform to this.
public protocol AppStoreJSONWritable {
    /// Writes the value as one JSON object.
    func writeJSON(to writer: inout JSONObjectWriter)
}

extension AppStoreJSONWritable {
    /// The value's compact JSON.
    public func appStoreJSONData() -> Data {
        var writer = JSONObjectWriter()
        writeJSON(to: &writer)
        return writer.finish()
    }
}

/// Writes one JSON object member by member. Members must be written in sorted key order; absent
/// (`nil`) values are skipped, as synthesized `Codable` does.
public struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]
    private var empty = true

    public init() {
        bytes.reserveCapacity(1_024)
    }

    /// The finished object.
    public mutating func finish() -> Data {
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    private mutating func key(_ key: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    public mutating func write(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        appendString(value)
    }

    public mutating func write(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func write(_ name: StaticString, _ value: Int32?) {
        write(name, value.map(Int64.init))
    }

    public mutating func write(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func write(_ name: StaticString, _ value: Date?) {
        write(name, value.map(AppStoreJSON.milliseconds(from:)))
    }

    public mutating func write(_ name: StaticString, _ value: UUID?) {
        write(name, value.map { $0.uuidString.lowercased() })
    }

    public mutating func write<Value: AppStoreEnumeration>(_ name: StaticString, _ value: Value?) where Value.RawValue == String {
        write(name, value?.rawValue)
    }

    public mutating func write<Value: AppStoreEnumeration>(_ name: StaticString, _ value: Value?) where Value.RawValue == Int32 {
        write(name, value?.rawValue)
    }

    public mutating func write(_ name: StaticString, _ values: [String]?) {
        guard let values else { return }
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    public mutating func write(_ name: StaticString, _ values: [Date]?) {
        guard let values else { return }
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: String(AppStoreJSON.milliseconds(from: value)).utf8)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    public mutating func write<Value: RawRepresentable>(_ name: StaticString, _ value: Value?) where Value.RawValue == String {
        write(name, value?.rawValue)
    }

    public mutating func write(_ name: StaticString, _ value: UInt64?) {
        guard let value else { return }
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func write(_ name: StaticString, _ value: Int?) {
        write(name, value.map(Int64.init))
    }

    public mutating func write<Value: AppStoreJSONWritable>(_ name: StaticString, _ value: Value?) {
        guard let value else { return }
        key(name)
        var nested = JSONObjectWriter()
        value.writeJSON(to: &nested)
        nested.bytes.append(UInt8(ascii: "}"))
        bytes.append(contentsOf: nested.bytes)
    }

    /// A pass-through value, encoded by Foundation (rare: Advanced Commerce data).
    public mutating func write(_ name: StaticString, _ value: JSONValue?) {
        guard let value, let data = try? AppStoreJSON.makeEncoder().encode(value) else { return }
        key(name)
        bytes.append(contentsOf: data)
    }

    private mutating func appendString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most values (identifiers, JWS, dates) need no escaping: scan their bytes in place and copy them whole.
        var value = value
        let copied = value.withUTF8 { buffer -> Bool in
            for byte in buffer where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            bytes.append(contentsOf: buffer)
            return true
        }
        if copied {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
