import Foundation

/// What the store reads of an uploaded PNG to check Apple's image rules: its size and whether it can
/// be transparent. Only the chunk headers are read; the pixels are never decoded.
struct PNGImageInfo: Equatable {
    var width: Int
    var height: Int
    /// An alpha channel (colour types 4 and 6) or a `tRNS` chunk.
    var hasTransparency: Bool

    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads `data`'s header chunks; `nil` for anything that is not a well-formed PNG's start.
    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count >= 33, Array(bytes[0..<8]) == Self.signature else { return nil }
        func uint32(_ offset: Int) -> Int {
            (Int(bytes[offset]) << 24) | (Int(bytes[offset + 1]) << 16) | (Int(bytes[offset + 2]) << 8) | Int(bytes[offset + 3])
        }
        // The first chunk is IHDR: width, height, bit depth, colour type, …
        guard uint32(8) == 13, String(decoding: bytes[12..<16], as: UTF8.self) == "IHDR" else { return nil }
        width = uint32(16)
        height = uint32(20)
        let colourType = bytes[25]
        guard width > 0, height > 0, [0, 2, 3, 4, 6].contains(colourType) else { return nil }
        var transparent = colourType == 4 || colourType == 6
        // Walk the chunks up to the image data for a transparency chunk, and to IEND for the end.
        var offset = 33
        var sawImageData = false
        var sawEnd = false
        while offset + 12 <= bytes.count {
            let length = uint32(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            guard length <= bytes.count - offset - 12 else { return nil }
            if type == "tRNS" { transparent = true }
            if type == "IDAT" { sawImageData = true }
            offset += 12 + length
            if type == "IEND" {
                sawEnd = true
                break
            }
        }
        guard sawImageData, sawEnd else { return nil }
        hasTransparency = transparent
    }
}
