import Foundation

/// The JSON encoder and decoder for App Store payloads (request bodies, the `.storekit` writer and
/// the delivery journal use Foundation's `JSONEncoder` as it is).
///
/// App Store dates are Unix time in milliseconds as JSON numbers. Decoding accepts fractional
/// milliseconds (Xcode writes them); encoding writes whole milliseconds. Keys are sorted and slashes
/// are not escaped, so the same value always encodes to the same bytes and base64 certificates stay
/// readable.
public enum AppStoreJSON {
    /// Makes an encoder with the App Store conventions.
    public static func makeEncoder(prettyPrinted: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = prettyPrinted
            ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
            : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(milliseconds(from: date))
        }
        return encoder
    }

    /// Makes a decoder with the App Store conventions.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            return date(fromMilliseconds: try container.decode(Double.self))
        }
        return decoder
    }

    /// Encodes a value with the App Store conventions.
    ///
    /// Payload types that write their own JSON (``AppStoreJSONWritable``) take a fast path that gives
    /// the same bytes as the compact encoder.
    public static func encode<T: Encodable>(_ value: T, prettyPrinted: Bool = false) throws -> Data {
        if !prettyPrinted, let writable = value as? any AppStoreJSONWritable { return writable.appStoreJSONData() }
        return try makeEncoder(prettyPrinted: prettyPrinted).encode(value)
    }

    /// Decodes a value with the App Store conventions.
    ///
    /// Types with a one-pass reader (``FlatJSONReadable``: signed transactions, renewal infos,
    /// notification payloads and the store's ledger records) read the plain form of their JSON in
    /// one pass; anything else about the input goes to `JSONDecoder`.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let readable = type as? any FlatJSONReadable.Type, let object = FlatJSONObject(data),
           let value = readable.init(flat: object) as? T {
            return value
        }
        return try sharedDecoder.decode(type, from: data)
    }

    /// One decoder for every call: its options never change after this, and decoding with a shared
    /// `JSONDecoder` from several threads at once is safe.
    private static let sharedDecoder = makeDecoder()

    /// Whole milliseconds since 1970 for a date, truncating sub-millisecond parts.
    ///
    /// A date made from whole milliseconds can come back a hair below them through `Double`;
    /// such values round to the millisecond they came from instead of dropping one.
    /// Dates beyond what 64-bit milliseconds hold (from untrusted input) clamp to the nearest end instead of trapping.
    public static func milliseconds(from date: Date) -> Int64 {
        let exact = date.timeIntervalSince1970 * 1000
        guard !exact.isNaN else { return 0 }
        guard exact > -9.2e18 else { return Int64.min }
        guard exact < 9.2e18 else { return Int64.max }
        let nearest = exact.rounded()
        if abs(exact - nearest) < 0.001 { return Int64(nearest) }
        return Int64(exact.rounded(.down))
    }

    /// The date for a number of milliseconds since 1970.
    public static func date(fromMilliseconds milliseconds: Double) -> Date {
        Date(timeIntervalSince1970: milliseconds / 1000)
    }

    /// The date for a whole number of milliseconds since 1970.
    public static func date(fromMilliseconds milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

// UUIDs in App Store payloads are lower-case strings; Foundation writes them upper-case.
// These overloads are more specific than the generic ones, so the synthesized `Codable`
// conformances in this module pick them for every `UUID` field.
extension KeyedEncodingContainer {
    mutating func encodeIfPresent(_ value: UUID?, forKey key: Key) throws {
        guard let value else { return }
        try encode(value.uuidString.lowercased(), forKey: key)
    }

    mutating func encode(_ value: UUID, forKey key: Key) throws {
        try encode(value.uuidString.lowercased(), forKey: key)
    }
}
