import Foundation

/// Foundation's `DateComponentsFormatter`, which swift-corelibs-foundation declares unavailable: store
/// code formats subscription periods and time left with it ("1 month", "3 days left"). Files that import
/// StoreKit see this one; it formats in English whatever the locale (there are no translations here).
///
/// What it does: every `unitsStyle` (`positional` `1:02:03`, `abbreviated` `1h 2m`, `short` `1 hr, 2 min`,
/// `full` `1 hour, 2 minutes`, `spellOut` `one hour, two minutes`, `brief` `1hr 2min`), `allowedUnits`,
/// `maximumUnitCount`, `zeroFormattingBehavior` (`.dropAll` and `.pad`, the rest as `.default`),
/// `includesApproximationPhrase` ("About"), `includesTimeRemainingPhrase` ("remaining").
open class DateComponentsFormatter: Formatter, @unchecked Sendable {
    /// How units are written, with Foundation's raw values.
    public enum UnitsStyle: Int, Sendable {
        case positional = 0
        case abbreviated = 1
        case short = 2
        case full = 3
        case spellOut = 4
        case brief = 5
    }

    /// Which zero-valued units are written, with Foundation's raw values.
    public struct ZeroFormattingBehavior: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let `default` = ZeroFormattingBehavior(rawValue: 1 << 0)
        public static let dropLeading = ZeroFormattingBehavior(rawValue: 1 << 1)
        public static let dropMiddle = ZeroFormattingBehavior(rawValue: 1 << 2)
        public static let dropTrailing = ZeroFormattingBehavior(rawValue: 1 << 3)
        public static let dropAll: ZeroFormattingBehavior = [.dropLeading, .dropMiddle, .dropTrailing]
        public static let pad = ZeroFormattingBehavior(rawValue: 1 << 16)
    }

    open var unitsStyle: UnitsStyle = .positional
    open var allowedUnits: NSCalendar.Unit = [.year, .month, .weekOfMonth, .day, .hour, .minute, .second]
    open var zeroFormattingBehavior: ZeroFormattingBehavior = .default
    open var calendar: Calendar? = Calendar(identifier: .gregorian)
    open var referenceDate: Date?
    open var allowsFractionalUnits = false
    /// At most this many units are written, largest first; 0 writes every one.
    open var maximumUnitCount = 0
    open var collapsesLargestUnit = false
    open var includesApproximationPhrase = false
    open var includesTimeRemainingPhrase = false
    open var formattingContext: Formatter.Context = .unknown

    public override init() { super.init() }
    public required init?(coder: NSCoder) { nil }

    /// The units in order, largest first, with their English names.
    private static let units: [(unit: NSCalendar.Unit, component: Calendar.Component, full: String, short: String, brief: String, abbreviated: String)] = [
        (.year, .year, "year", "yr", "yr", "y"),
        (.month, .month, "month", "mth", "mth", "mo"),
        (.weekOfMonth, .weekOfMonth, "week", "wk", "wk", "w"),
        (.day, .day, "day", "day", "day", "d"),
        (.hour, .hour, "hour", "hr", "hr", "h"),
        (.minute, .minute, "minute", "min", "min", "m"),
        (.second, .second, "second", "sec", "sec", "s"),
    ]

    open func string(from components: DateComponents) -> String? {
        var values: [(index: Int, value: Int)] = []
        for (index, entry) in Self.units.enumerated() where allowedUnits.contains(entry.unit) {
            let value = entry.component == .weekOfMonth ? (components.weekOfMonth ?? components.weekOfYear ?? 0) : (components.value(for: entry.component) ?? 0)
            values.append((index, value == NSDateComponentUndefined ? 0 : value))
        }
        return format(values)
    }

    open func string(from timeInterval: TimeInterval) -> String? {
        guard timeInterval.isFinite else { return nil }
        // Without a reference date, fixed lengths: a day is 24 hours, a week 7 days, a month 30 days, a year 365 days.
        let seconds: [Double] = [31_536_000, 2_592_000, 604_800, 86_400, 3_600, 60, 1]
        var remaining = abs(timeInterval).rounded()
        var values: [(index: Int, value: Int)] = []
        for (index, entry) in Self.units.enumerated() where allowedUnits.contains(entry.unit) {
            let length = seconds[index]
            let value = Int(remaining / length)
            remaining -= Double(value) * length
            values.append((index, value))
        }
        guard let text = format(values) else { return nil }
        return timeInterval < 0 ? "-" + text : text
    }

    open func string(from startDate: Date, to endDate: Date) -> String? {
        let calendar = self.calendar ?? Calendar(identifier: .gregorian)
        let components = Self.units.filter { allowedUnits.contains($0.unit) }.map(\.component)
        return string(from: calendar.dateComponents(Set(components), from: startDate, to: endDate))
    }

    open override func string(for obj: Any?) -> String? {
        switch obj {
        case let components as DateComponents: return string(from: components)
        case let interval as TimeInterval: return string(from: interval)
        default: return nil
        }
    }

    open class func localizedString(from components: DateComponents, unitsStyle: UnitsStyle) -> String? {
        let formatter = DateComponentsFormatter()
        formatter.unitsStyle = unitsStyle
        return formatter.string(from: components)
    }

    private func format(_ all: [(index: Int, value: Int)]) -> String? {
        guard !all.isEmpty else { return nil }
        var shown = all
        if unitsStyle != .positional || !zeroFormattingBehavior.contains(.pad) {
            if zeroFormattingBehavior.contains(.dropAll) || zeroFormattingBehavior.contains(.default) || unitsStyle != .positional {
                shown = all.filter { $0.value != 0 }
            }
        }
        if shown.isEmpty { shown = [all.last!] }
        if maximumUnitCount > 0 { shown = Array(shown.prefix(maximumUnitCount)) }
        var text: String
        switch unitsStyle {
        case .positional:
            text = shown.enumerated().map { offset, entry in
                offset == 0 ? String(entry.value) : String(format: "%02d", entry.value)
            }.joined(separator: ":")
        case .abbreviated:
            text = shown.map { "\($0.value)\(Self.units[$0.index].abbreviated)" }.joined(separator: " ")
        case .brief:
            text = shown.map { "\($0.value)\(Self.units[$0.index].brief)\($0.value == 1 || Self.units[$0.index].brief == "day" ? "" : "s")" }
                .joined(separator: " ")
        case .short:
            text = shown.map { entry in
                let name = Self.units[entry.index].short
                return "\(entry.value) \(name)\(entry.value == 1 || name == "day" ? "" : "s")"
            }.joined(separator: ", ")
        case .full:
            text = shown.map { "\($0.value) \(Self.units[$0.index].full)\($0.value == 1 ? "" : "s")" }.joined(separator: ", ")
        case .spellOut:
            let speller = NumberFormatter()
            speller.numberStyle = .spellOut
            speller.locale = Locale(identifier: "en_US")
            text = shown.map { entry in
                let number = speller.string(from: NSNumber(value: entry.value)) ?? String(entry.value)
                return "\(number) \(Self.units[entry.index].full)\(entry.value == 1 ? "" : "s")"
            }.joined(separator: ", ")
        }
        if includesApproximationPhrase { text = "About " + text }
        if includesTimeRemainingPhrase { text += " remaining" }
        return text
    }
}
