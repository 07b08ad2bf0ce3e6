/// A day of the proleptic Gregorian calendar in UTC, counted from 1970-01-01: the unit the
/// subscription metrics are kept in. Pure arithmetic (no `Calendar`, no time zone), so the backend,
/// a rebuild and any other instance put an instant on the same day.
public struct CalendarDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public let number: Int64

    public init(number: Int64) { self.number = number }

    /// The day an instant (milliseconds since 1970, UTC) falls on.
    public init(milliseconds: Int64) {
        number = milliseconds >= 0 ? milliseconds / 86_400_000 : -((-milliseconds + 86_399_999) / 86_400_000)
    }

    /// The day written `YYYY-MM-DD`, or nil when the text is not a real date.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
              (1...12).contains(month), day >= 1, day <= Self.length(ofMonth: month, in: year) else { return nil }
        number = Self.days(year: year, month: month, day: day)
    }

    public init(year: Int64, month: Int64, day: Int64) {
        number = Self.days(year: year, month: month, day: day)
    }

    /// Its midnight, in milliseconds since 1970.
    public var startMilliseconds: Int64 { number * 86_400_000 }
    /// Its last millisecond: where a stock figure of the day is taken.
    public var lastMilliseconds: Int64 { startMilliseconds + 86_399_999 }

    public var components: (year: Int64, month: Int64, day: Int64) {
        // Howard Hinnant's civil-from-days, in eras of 400 years.
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The first day of its month.
    public var firstOfMonth: CalendarDay {
        let (year, month, _) = components
        return CalendarDay(year: year, month: month, day: 1)
    }

    /// The first day of the month `months` after its own (before, when negative).
    public func firstOfMonth(adding months: Int64) -> CalendarDay {
        let (year, month, _) = components
        let index = year * 12 + (month - 1) + months
        let newYear = index >= 0 ? index / 12 : -((-index + 11) / 12)
        return CalendarDay(year: newYear, month: index - newYear * 12 + 1, day: 1)
    }

    /// Whole months from `self`'s month to `other`'s.
    public func months(to other: CalendarDay) -> Int64 {
        let (a, b) = (components, other.components)
        return (b.year * 12 + b.month) - (a.year * 12 + a.month)
    }

    public func adding(days: Int64) -> CalendarDay { CalendarDay(number: number + days) }

    /// `YYYY-MM-DD`.
    public var description: String {
        let (year, month, day) = components
        return "\(Self.padded(year, 4))-\(Self.padded(month, 2))-\(Self.padded(day, 2))"
    }

    /// `YYYY-MM`: how a cohort is named.
    public var monthDescription: String { String(description.prefix(7)) }

    public static func < (lhs: CalendarDay, rhs: CalendarDay) -> Bool { lhs.number < rhs.number }

    private static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Hinnant's days-from-civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func length(ofMonth month: Int64, in year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func padded(_ number: Int64, _ width: Int) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
}
