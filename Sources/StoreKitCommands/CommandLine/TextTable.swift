import Foundation

/// Rows of text in aligned columns, as the commands print them: text columns left-aligned, number
/// columns right-aligned, two spaces between.
struct TextTable {
    var header: [String]
    /// Which columns hold numbers (aligned on the right).
    var numeric: Set<Int> = []
    var rows: [[String]] = []

    var text: String {
        let widths = header.indices.map { column in ([header] + rows).map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: max(0, widths[column] - cell.count))
                return numeric.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }
}
