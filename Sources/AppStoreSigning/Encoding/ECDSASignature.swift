import Foundation

/// Conversion between the two encodings of an ECDSA signature.
///
/// JWS (ES256) carries the raw concatenation `R || S`, each 32 bytes. X.509, OpenSSL and the legacy
/// promotional-offer signature use the DER `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }`.
public enum ECDSASignature {
    /// Converts a DER signature to raw `R || S` with each half `componentLength` bytes; `nil` if malformed.
    public static func raw(fromDER der: Data, componentLength: Int = 32) -> Data? {
        let bytes = [UInt8](der)
        var index = 0
        guard bytes.count >= 8, bytes[index] == 0x30 else { return nil }
        index += 1
        guard let sequenceLength = readLength(bytes, &index), index + sequenceLength == bytes.count else { return nil }
        var output = Data()
        for _ in 0..<2 {
            guard index < bytes.count, bytes[index] == 0x02 else { return nil }
            index += 1
            guard let length = readLength(bytes, &index), length > 0, index + length <= bytes.count else { return nil }
            var integer = bytes[index..<index + length]
            index += length
            while integer.count > componentLength, integer.first == 0 { integer = integer.dropFirst() }
            guard integer.count <= componentLength else { return nil }
            output.append(contentsOf: [UInt8](repeating: 0, count: componentLength - integer.count))
            output.append(contentsOf: integer)
        }
        return index == bytes.count ? output : nil
    }

    /// Converts raw `R || S` (even length) to a DER signature; `nil` if the length is odd or zero.
    public static func der(fromRaw raw: Data) -> Data? {
        guard !raw.isEmpty, raw.count % 2 == 0 else { return nil }
        let half = raw.count / 2
        let bytes = [UInt8](raw)
        let r = derInteger(bytes[0..<half])
        let s = derInteger(bytes[half...])
        var output: [UInt8] = [0x30]
        output += encodeLength(r.count + s.count)
        output += r + s
        return Data(output)
    }

    private static func derInteger(_ magnitude: ArraySlice<UInt8>) -> [UInt8] {
        var value = magnitude.drop { $0 == 0 }
        if value.isEmpty { value = [0] }
        var content = [UInt8](value)
        if content[0] & 0x80 != 0 { content.insert(0, at: 0) }
        return [0x02] + encodeLength(content.count) + content
    }

    private static func encodeLength(_ length: Int) -> [UInt8] {
        if length < 0x80 { return [UInt8(length)] }
        var bytes: [UInt8] = []
        var remaining = length
        while remaining > 0 {
            bytes.insert(UInt8(remaining & 0xFF), at: 0)
            remaining >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    private static func readLength(_ bytes: [UInt8], _ index: inout Int) -> Int? {
        guard index < bytes.count else { return nil }
        let first = bytes[index]
        index += 1
        if first < 0x80 { return Int(first) }
        let count = Int(first & 0x7F)
        guard count >= 1, count <= 2, index + count <= bytes.count else { return nil }
        var length = 0
        for _ in 0..<count {
            length = length << 8 | Int(bytes[index])
            index += 1
        }
        return length < 0x80 ? nil : length
    }
}
