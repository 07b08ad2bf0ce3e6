import Foundation

/// base64url without padding (RFC 4648 §5), as JWS uses it.
///
/// Decoding works on bytes and accepts input with or without `=` padding; it rejects characters
/// outside the URL-safe alphabet and impossible lengths, so a malformed segment is an error, not
/// garbage.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes as base64url without padding.
    public static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return encoded }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    private static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let count = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: count) { output in
            var index = 0
            var written = 0
            while index + 3 <= input.count {
                let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                output[written] = alphabet[Int(chunk >> 18 & 63)]
                output[written + 1] = alphabet[Int(chunk >> 12 & 63)]
                output[written + 2] = alphabet[Int(chunk >> 6 & 63)]
                output[written + 3] = alphabet[Int(chunk & 63)]
                index += 3
                written += 4
            }
            let remaining = input.count - index
            if remaining > 0 {
                var chunk = UInt32(input[index]) << 16
                if remaining == 2 { chunk |= UInt32(input[index + 1]) << 8 }
                output[written] = alphabet[Int(chunk >> 18 & 63)]
                output[written + 1] = alphabet[Int(chunk >> 12 & 63)]
                written += 2
                if remaining == 2 {
                    output[written] = alphabet[Int(chunk >> 6 & 63)]
                    written += 1
                }
            }
            return written
        }
    }

    /// Decodes base64url text, with or without padding; `nil` when it is not base64url.
    public static func decode<Text: StringProtocol>(_ text: Text) -> Data? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode(bytes: $0) }) { return decoded }
        return Array(text.utf8).withUnsafeBufferPointer { decode(bytes: $0) }
    }

    /// Decodes base64url bytes, with or without padding; `nil` when they are not base64url.
    public static func decode(bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        var count = bytes.count
        while count > 0, bytes[count - 1] == UInt8(ascii: "=") { count -= 1 }
        if count % 4 == 1 { return nil }
        let outputCount = count * 3 / 4
        var output = [UInt8](repeating: 0, count: outputCount)
        let valid = output.withUnsafeMutableBufferPointer { out -> Bool in
            var accumulator: UInt32 = 0
            var bits: UInt32 = 0
            var written = 0
            for index in 0..<count {
                let value = reverse[Int(bytes[index])]
                if value == 0xFF { return false }
                accumulator = accumulator << 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    out[written] = UInt8(truncatingIfNeeded: accumulator >> bits)
                    written += 1
                }
            }
            // Leftover bits must be zero padding, as in a canonical encoding.
            return bits == 0 || accumulator & ((1 << bits) - 1) == 0
        }
        return valid ? Data(output) : nil
    }
}
