import Foundation
import HTTPService

/// Charts drawn on the server as SVG, with no script: a line chart of daily values and a bar chart of
/// weekly sums. Each is an image with a title and a description a screen reader reads (what is drawn,
/// from when to when, its first, last and highest values), and a legend in text.
struct DashboardChart {
    struct Series {
        var name: String
        var values: [Double]
    }

    enum Style { case lines, bars }

    var id: String
    var title: String
    var style: Style
    /// One label per value (a day, or the first day of a week).
    var labels: [CalendarDay]
    var series: [Series]
    /// How a value is written (`1,234`, `12.30`).
    var format: (Double) -> String
    /// What one value covers, in words: "Daily values", "Weekly sums", "Monthly sums", …
    var covers: String = ""

    // Drawn at about the width it is shown at on a phone (and a half column on a desktop), so its
    // labels stay readable.
    static let width = 420.0
    static let height = 240.0
    static let left = 54.0
    static let right = 12.0
    static let top = 12.0
    static let bottom = 28.0
    /// How many series colours dashboard.css has (`.series-1` …).
    static let colours = 5

    /// The figure: caption, SVG and legend.
    var markup: String {
        var html = HTML()
        html.raw(#"<figure class="chart" data-chart=""#)
        html.add(id)
        html.raw(#""><figcaption id=""#)
        html.add("\(id)-caption")
        html.raw(#"">"#)
        html.add(title)
        html.raw(#"</figcaption><svg viewBox="0 0 \#(Int(Self.width)) \#(Int(Self.height))" role="img" aria-labelledby=""#)
        html.add("\(id)-title \(id)-desc")
        html.raw(#""><title id=""#)
        html.add("\(id)-title")
        html.raw(#"">"#)
        html.add(title)
        html.raw(#"</title><desc id=""#)
        html.add("\(id)-desc")
        html.raw(#"">"#)
        html.add(description)
        html.raw("</desc>")
        html.raw(plot)
        html.raw(#"</svg><ul class="legend">"#)
        for (index, series) in series.enumerated() {
            html.raw(#"<li class="series-\#(index % Self.colours + 1)">"#)
            html.add(series.name)
            html.raw("</li>")
        }
        html.raw("</ul></figure>")
        return html.text
    }

    /// What the chart shows, in words.
    var description: String {
        guard let first = labels.first, let last = labels.last else { return "No days to show." }
        let parts = series.map { series -> String in
            let highest = series.values.max() ?? 0
            let lowest = series.values.min() ?? 0
            // A series below zero (a decrease) is told by its lowest value.
            let extreme = highest <= 0 && lowest < 0 ? "lowest \(format(lowest))" : "highest \(format(highest))"
            return "\(series.name): \(format(series.values.first ?? 0)) on \(first), \(format(series.values.last ?? 0)) on \(last), \(extreme)"
        }
        let covers = self.covers.isEmpty ? (style == .bars ? "Weekly sums" : "Daily values") : self.covers
        return "\(covers) from \(first) to \(last). " + parts.joined(separator: "; ") + "."
    }

    private var plot: String {
        let count = labels.count
        guard count > 0 else { return "" }
        // Values below zero (decreases) get grid steps of their own under the axis.
        let highest = max(0, series.flatMap(\.values).max() ?? 0)
        let lowest = min(0, series.flatMap(\.values).min() ?? 0)
        let (step, _) = Self.gridStep(highest - lowest)
        let stepsAbove = highest > 0 ? Int((highest / step).rounded(.up)) : (lowest < 0 ? 0 : 1)
        let stepsBelow = lowest < 0 ? Int((-lowest / step).rounded(.up)) : 0
        let maximum = step * Double(stepsAbove)
        let minimum = -step * Double(stepsBelow)
        let plotWidth = Self.width - Self.left - Self.right
        let plotHeight = Self.height - Self.top - Self.bottom
        func y(_ value: Double) -> Double { Self.top + plotHeight - (maximum == minimum ? 0 : (value - minimum) / (maximum - minimum) * plotHeight) }
        var svg = ""
        // Horizontal grid lines with their values; the axis at zero.
        for line in -stepsBelow...stepsAbove {
            let value = step * Double(line)
            let lineY = y(value)
            svg += #"<line class="\#(line == 0 ? "axis" : "grid")" x1="\#(Self.rounded(Self.left))" x2="\#(Self.rounded(Self.width - Self.right))" y1="\#(Self.rounded(lineY))" y2="\#(Self.rounded(lineY))"/>"#
            svg += #"<text class="tick" x="\#(Self.rounded(Self.left - 6))" y="\#(Self.rounded(lineY + 4))" text-anchor="end">\#(HTML.escape(format(value)))</text>"#
        }
        // A label at the first day of each month (at most seven), with its year where the year begins
        // and on the first label, so a range across years reads unambiguously.
        let monthStarts = labels.indices.filter { index in index == 0 || labels[index].firstOfMonth != labels[index - 1].firstOfMonth }
        let every = max(1, Int((Double(monthStarts.count) / 7).rounded(.up)))
        let slot = plotWidth / Double(count)
        func x(_ index: Int) -> Double { Self.left + slot * (Double(index) + 0.5) }
        var lastYear: Int64?
        var previousEnd = -Double.infinity
        for (position, index) in monthStarts.enumerated() where position % every == 0 {
            let (year, month, _) = labels[index].components
            let name = Self.monthNames[Int(month) - 1] + (year != lastYear ? " \(year)" : "")
            // A label near the right edge ends there instead of being cut off.
            let nearEnd = x(index) + Double(name.count) * 3.6 > Self.width - Self.right
            let labelX = nearEnd ? Self.width - Self.right : x(index)
            // A label that would run into the one before it (the last month, pushed left) is left out.
            let start = nearEnd ? labelX - Double(name.count) * 7.2 : labelX - Double(name.count) * 3.6
            guard start >= previousEnd + 4 else { continue }
            previousEnd = nearEnd ? labelX : labelX + Double(name.count) * 3.6
            lastYear = year
            svg += #"<text class="tick" x="\#(Self.rounded(labelX))" y="\#(Self.rounded(Self.height - 8))" text-anchor="\#(nearEnd ? "end" : "middle")">\#(name)</text>"#
        }
        switch style {
        case .lines:
            for (number, series) in series.enumerated() {
                let points = series.values.enumerated().map { "\(Self.rounded(x($0.offset))),\(Self.rounded(y($0.element)))" }.joined(separator: " ")
                svg += #"<polyline class="line series-\#(number % Self.colours + 1)" points="\#(points)"/>"#
            }
        case .bars:
            let group = slot * 0.8
            let width = group / Double(max(1, series.count))
            for (number, series) in series.enumerated() {
                for (index, value) in series.values.enumerated() where value != 0 {
                    let barX = Self.left + slot * Double(index) + slot * 0.1 + width * Double(number)
                    let (barTop, barBottom) = value > 0 ? (y(value), y(0)) : (y(0), y(value))
                    svg += #"<rect class="series-\#(number % Self.colours + 1)" x="\#(Self.rounded(barX))" y="\#(Self.rounded(barTop))" width="\#(Self.rounded(max(1, width - 1)))" height="\#(Self.rounded(barBottom - barTop))"/>"#
                }
            }
        }
        return svg
    }

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The grid's step (1, 2 or 5 × 10ⁿ, the smallest that needs at most five steps) and how many
    /// steps reach `maximum`: round values on every line, whole numbers for counts.
    static func gridStep(_ maximum: Double) -> (step: Double, steps: Int) {
        guard maximum > 0 else { return (1, 1) }
        var magnitude = pow(10, floor(log10(maximum / 5)))
        if maximum < 5 { magnitude = 1 }
        for factor in [1.0, 2, 5, 10] where factor * magnitude * 5 >= maximum {
            let step = factor * magnitude
            return (step, max(1, Int((maximum / step).rounded(.up))))
        }
        return (10 * magnitude, 5)
    }

    static func rounded(_ value: Double) -> String {
        let tenths = (value * 10).rounded() / 10
        return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
    }
}
