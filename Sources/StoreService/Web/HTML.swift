import Foundation

/// Builds HTML text with everything interpolated escaped.
struct HTML {
    private(set) var text = ""

    /// Escapes `&`, `<`, `>`, `"` and `'` for text and attribute values.
    static func escape(_ value: String) -> String {
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
    mutating func raw(_ markup: String) { text += markup }

    /// Appends escaped text.
    mutating func add(_ value: String) { text += Self.escape(value) }

    /// A page with the shared stylesheet.
    static func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <link rel="stylesheet" href="/assets/style.css">
        </head>
        <body>
        \(body)
        </body>
        </html>
        """
    }
}
