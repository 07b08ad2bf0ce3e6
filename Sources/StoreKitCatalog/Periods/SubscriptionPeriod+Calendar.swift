import Foundation

extension SubscriptionPeriod {
    /// The Gregorian calendar in UTC, which renewal arithmetic uses so results never depend on the
    /// machine's time zone.
    public static let renewalCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// The date `count` periods after `start`, computed from `start` in one step.
    ///
    /// Months and years keep the day of the start, clamped to the length of the target month:
    /// a subscription bought on January 31 renews on February 28 (or 29), then March 31, because each
    /// renewal date is computed from the original date rather than from the previous renewal.
    public func date(byAdding count: Int = 1, to start: Date) -> Date {
        let calendar = Self.renewalCalendar
        var components = DateComponents()
        switch unit {
        case .day: components.day = value * count
        case .week: components.day = 7 * value * count
        case .month: components.month = value * count
        case .year: components.year = value * count
        }
        return calendar.date(byAdding: components, to: start) ?? start.addingTimeInterval(Double(approximateDays * count) * 86_400)
    }

    /// How many whole periods fit between `start` and `end` (0 when `end` is before the first renewal).
    public func completePeriods(from start: Date, to end: Date) -> Int {
        guard end > start else { return 0 }
        var estimate = max(0, Int(end.timeIntervalSince(start) / (Double(approximateDays) * 86_400)) - 1)
        while date(byAdding: estimate + 1, to: start) <= end { estimate += 1 }
        while estimate > 0, date(byAdding: estimate, to: start) > end { estimate -= 1 }
        return estimate
    }
}
