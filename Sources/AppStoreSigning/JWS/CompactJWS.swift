import AppStoreModels
import Foundation

/// A JWS in compact serialization, `header.payload.signature`, split and decoded but not verified.
public struct CompactJWS: Sendable, Hashable {
    /// The JWS exactly as given (without surrounding whitespace).
    public let compactRepresentation: String
    /// The header segment as transmitted, still base64url.
    public let encodedHeader: Substring
    /// The decoded payload JSON.
    public let payloadData: Data
    /// The decoded signature bytes.
    public let signature: Data
    private let decodedHeader: Data?
    private let signingInputEnd: String.Index

    /// Why text is not a compact JWS.
    public struct FormatError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Splits and base64url-decodes a compact JWS; surrounding whitespace is ignored.
    public init(_ text: String) throws(FormatError) {
        try self.init(text, decodingHeader: true)
    }

    /// Splits a compact JWS; with `decodingHeader` false the header segment is only decoded when
    /// asked for, which lets a verifier that has seen this exact header before skip it.
    init(_ text: String, decodingHeader: Bool) throws(FormatError) {
        let trimmed = Self.trimmingASCIIWhitespace(text)
        let utf8 = trimmed.utf8
        guard let (firstDot, lastDot) = Self.dots(in: utf8) else {
            let count = utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).count
            throw FormatError(description: "a compact JWS has 3 dot-separated segments, this has \(count)")
        }
        let header = utf8[..<firstDot]
        let payload = utf8[utf8.index(after: firstDot)..<lastDot]
        let signature = utf8[utf8.index(after: lastDot)...]
        guard !header.isEmpty else { throw FormatError(description: "the header segment is empty") }
        guard !payload.isEmpty else { throw FormatError(description: "the payload segment is empty") }
        func decode(_ segment: Substring.UTF8View, _ name: String) throws(FormatError) -> Data {
            let bytes = segment.withContiguousStorageIfAvailable { Base64URL.decode(bytes: $0) } ?? Base64URL.decode(Substring(segment))
            guard let bytes else { throw FormatError(description: "the \(name) segment is not base64url") }
            return bytes
        }
        self.decodedHeader = decodingHeader ? try decode(header, "header") : nil
        self.payloadData = try decode(payload, "payload")
        self.signature = try decode(signature, "signature")
        self.compactRepresentation = trimmed
        self.encodedHeader = Substring(header)
        self.signingInputEnd = lastDot
    }

    /// The positions of the only two dots of a compact JWS, or nil when it has another number of dots.
    ///
    /// Searched with `memchr` (and a short backward scan) over the string's contiguous UTF-8 where there is one (a
    /// native string): a JWS is kilobytes long and this runs for every verification.
    private static func dots(in utf8: String.UTF8View) -> (String.Index, String.Index)? {
        let dot = UInt8(ascii: ".")
        let offsets: (Int, Int)?? = utf8.withContiguousStorageIfAvailable { buffer -> (Int, Int)? in
            guard let base = buffer.baseAddress, buffer.count > 0, let first = memchr(base, Int32(dot), buffer.count) else { return nil }
            let firstOffset = UnsafeRawPointer(first) - UnsafeRawPointer(base)
            // The last dot sits before the signature segment, some 86 bytes from the end.
            var lastOffset = buffer.count - 1
            while lastOffset > firstOffset, buffer[lastOffset] != dot { lastOffset -= 1 }
            guard firstOffset != lastOffset else { return nil }
            let between = lastOffset - firstOffset - 1
            if between > 0, memchr(base + firstOffset + 1, Int32(dot), between) != nil { return nil }
            return (firstOffset, lastOffset)
        }
        if let offsets {
            guard let (first, last) = offsets else { return nil }
            return (utf8.index(utf8.startIndex, offsetBy: first), utf8.index(utf8.startIndex, offsetBy: last))
        }
        guard let first = utf8.firstIndex(of: dot), let last = utf8.lastIndex(of: dot), first != last,
              utf8[utf8.index(after: first)..<last].firstIndex(of: dot) == nil else { return nil }
        return (first, last)
    }

    /// The decoded header JSON (empty if the header segment is not base64url).
    public var headerData: Data {
        decodedHeader ?? Base64URL.decode(encodedHeader) ?? Data()
    }

    /// `text` without leading and trailing ASCII whitespace, without copying when there is none.
    private static func trimmingASCIIWhitespace(_ text: String) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last, isSpace(first) || isSpace(last) else { return text }
        let start = utf8.firstIndex { !isSpace($0) } ?? utf8.endIndex
        let end = utf8.lastIndex { !isSpace($0) }.map(utf8.index(after:)) ?? start
        return String(text[start..<max(start, end)])
    }

    /// The bytes the signature covers: the ASCII of `header.payload` as transmitted.
    public var signingInput: Data {
        Data(compactRepresentation.utf8[..<signingInputEnd])
    }

    /// The header, decoded.
    public func header() throws(FormatError) -> JWSHeader {
        guard let data = decodedHeader ?? Base64URL.decode(encodedHeader) else {
            throw FormatError(description: "the header segment is not base64url")
        }
        do {
            return try JSONDecoder().decode(JWSHeader.self, from: data)
        } catch {
            throw FormatError(description: "the header is not a JSON object with JWS header fields")
        }
    }

    /// The payload decoded into `type` with the App Store JSON conventions.
    public func payload<T: Decodable>(as type: T.Type) throws(FormatError) -> T {
        do {
            return try AppStoreJSON.decode(type, from: payloadData)
        } catch {
            throw FormatError(description: "the payload is not a valid \(type): \(Self.describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
             DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }
}
