import Foundation

/// PEM armour: base64 between `-----BEGIN label-----` and `-----END label-----` lines.
public enum PEM {
    /// Wraps DER bytes in PEM armour with 64-character lines.
    public static func encode(_ der: Data, label: String) -> String {
        let base64 = der.base64EncodedString()
        var lines = ["-----BEGIN \(label)-----"]
        var start = base64.startIndex
        while start < base64.endIndex {
            let end = base64.index(start, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[start..<end]))
            start = end
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The DER bytes of every block with one of `labels`, in order.
    public static func decodeAll(_ text: String, labels: Set<String>) -> [Data] {
        var blocks: [Data] = []
        var body: String?
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                let label = String(line.dropFirst(11).dropLast(5))
                body = labels.contains(label) ? "" : nil
            } else if line.hasPrefix("-----END ") {
                if let content = body, let der = Data(base64Encoded: content) { blocks.append(der) }
                body = nil
            } else if body != nil {
                body! += line
            }
        }
        return blocks
    }

    /// The DER bytes of the first block with one of `labels`.
    public static func decode(_ text: String, labels: Set<String>) -> Data? {
        decodeAll(text, labels: labels).first
    }
}
