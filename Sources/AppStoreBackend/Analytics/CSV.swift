import Foundation

/// Cells of the CSV exports, as RFC 4180 and spreadsheet users expect them (OWASP's CSV injection
/// advice): a cell holding a comma, a quote or a line break is quoted, its quotes doubled; and a cell
/// a spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage
/// return) gets a leading `'`, which spreadsheets show as text, and is quoted. A number (`-0.99`) is
/// left as it is: it is never a formula, and spreadsheets must still add it up.
enum CSV {
    /// One line's cells, joined by commas (without the line's end).
    static func row(_ cells: [String]) -> String { cells.map(cell).joined(separator: ",") }

    static func cell(_ value: String) -> String {
        var text = value
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), !isNumber(text) { text = "'" + text }
        guard text != value || text.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `-12`, `0.99`, `-0.69`: an optional minus, digits, and at most one point followed by digits.
    static func isNumber(_ text: String) -> Bool {
        let unsigned = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = unsigned.split(separator: ".", omittingEmptySubsequences: false)
        return (1...2).contains(parts.count) && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (48...57).contains($0) } }
    }
}
