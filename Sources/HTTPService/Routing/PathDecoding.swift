import Foundation

/// The one way a request's path becomes segments: split the path as it came on the wire at `/`,
/// then percent-decode each segment once.
///
/// So `%2F` inside a segment stays in that segment (a base64 OCSP request), `%2541` is the three
/// characters `%41` and never `A`, and a segment that decodes to a NUL or another control character,
/// or to bytes that are not UTF-8, is refused (`400`) instead of ending or bending the path. Each
/// segment is put in Unicode's composed form (NFC), so a name typed either way is one name.
public enum PathDecoding {
    /// The decoded segments of `rawPath` (empty segments dropped), or a `400`.
    public static func segments(of rawPath: String) throws(RoutingError) -> [String] {
        try rawPath.split(separator: "/", omittingEmptySubsequences: true).map { (segment) throws(RoutingError) in
            try decode(segment, what: "the path segment \"\(segment)\"")
        }
    }

    /// One percent-encoded component (a path segment, a query name or value) decoded once, or a `400`
    /// naming `what`.
    public static func decode(_ encoded: Substring, what: @autoclosure () -> String) throws(RoutingError) -> String {
        // Most components are plain ASCII with nothing escaped: already decoded, and already NFC.
        if encoded.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "%") }) { return String(encoded) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.utf8.count)
        var iterator = encoded.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw RoutingError(status: 400, code: "badRequest", message: "\(what()) has a % that is not followed by two hex digits")
            }
            bytes.append(high << 4 | low)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RoutingError(status: 400, code: "badRequest", message: "\(what()) is not UTF-8")
        }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw RoutingError(status: 400, code: "badRequest", message: "\(what()) holds a control character (such as %00)")
        }
        // ASCII is its own composed form; only other text goes through Unicode normalisation.
        return text.utf8.allSatisfy({ $0 < 0x80 }) ? text : text.precomposedStringWithCanonicalMapping
    }

    /// A query's names and values, each decoded once, refusing the first that cannot be decoded.
    public static func strictly(_ rawQuery: [(name: String, value: String)]) throws(RoutingError) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for (rawName, rawValue) in rawQuery {
            let name = try decode(Substring(rawName), what: "the query parameter \"\(rawName)\"")
            result[name, default: []].append(try decode(Substring(rawValue), what: "the value of query parameter \"\(name)\""))
        }
        return result
    }

    /// A query's names and values, each decoded once, or kept as sent when it cannot be (on the wire
    /// a component holds no control characters, so what is kept is printable).
    public static func leniently(_ rawQuery: [(name: String, value: String)]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for (rawName, rawValue) in rawQuery {
            let name = (try? decode(Substring(rawName), what: "")) ?? rawName
            result[name, default: []].append((try? decode(Substring(rawValue), what: "")) ?? rawValue)
        }
        return result
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
