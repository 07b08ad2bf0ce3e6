import Foundation

/// Builds HTML text with everything interpolated escaped: the pages of the store and of the backend.
package struct HTML: Sendable {
    package private(set) var text = ""

    package init() {}

    /// Escapes `&`, `<`, `>`, `"` and `'` for text and attribute values.
    package static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Appends markup as written (only for literals of this code).
    package mutating func raw(_ markup: String) { text += markup }

    /// Appends escaped text.
    package mutating func add(_ value: String) { text += Self.escape(value) }

    /// Appends an element with escaped text: `element("p", "hello", attributes: ["class": "muted"])`.
    package mutating func element(_ name: String, _ content: String, attributes: KeyValuePairs<String, String> = [:]) {
        raw("<\(name)")
        for (key, value) in attributes {
            raw(" \(key)=\"")
            add(value)
            raw("\"")
        }
        raw(">")
        add(content)
        raw("</\(name)>")
    }
}

/// A page's markup read from a file, in which `{{name}}` marks a slot. A page fills the slots in one
/// pass, so markup put into one slot is never read for another.
package struct PageTemplate: Sendable {
    private enum Part: Sendable { case markup(String), slot(String) }
    private let parts: [Part]

    package init(_ template: String) {
        var parts: [Part] = []
        var rest = Substring(template)
        while let open = rest.range(of: "{{"), let close = rest.range(of: "}}", range: open.upperBound..<rest.endIndex) {
            parts.append(.markup(String(rest[..<open.lowerBound])))
            parts.append(.slot(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        parts.append(.markup(String(rest)))
        self.parts = parts
    }

    package init(_ bytes: [UInt8]) { self.init(String(decoding: bytes, as: UTF8.self)) }

    /// The template with each slot replaced by its markup (an unnamed slot is left empty).
    package func fill(_ slots: [String: String]) -> String {
        var text = ""
        for part in parts {
            switch part {
            case .markup(let markup): text += markup
            case .slot(let name): text += slots[name] ?? ""
            }
        }
        return text
    }
}

/// An `application/x-www-form-urlencoded` body, as HTML forms post it.
package struct FormBody: Sendable {
    package private(set) var fields: [String: String] = [:]

    package init(_ data: Data) {
        for pair in String(decoding: data, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { part in
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            guard let name = parts.first, !name.isEmpty else { continue }
            fields[name] = parts.count > 1 ? parts[1] : ""
        }
    }

    package subscript(_ name: String) -> String? { fields[name].flatMap { $0.isEmpty ? nil : $0 } }
}
