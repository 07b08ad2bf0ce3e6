import Foundation
import StoreKitCatalog

/// How long subscription periods, grace periods and billing retry last at a time rate.
///
/// In real time periods follow the calendar (a month is a calendar month), grace periods last 6 days
/// for weekly subscriptions and 16 days for others, and billing retry lasts 60 days, as on the App
/// Store. The accelerated rates follow Apple's StoreKit Testing tables: the "monthly renewal every …"
/// rates scale each period length separately (a week is not a quarter of a month there), the
/// "one renewal every …" rates make every period the same length, and the deprecated "one day is …"
/// rates scale days.
public struct RenewalSchedule: Hashable, Sendable {
    public let timeRate: TimeRate

    public init(timeRate: TimeRate) {
        self.timeRate = timeRate
    }

    /// The end of `count` periods of `period` starting at `start`.
    public func end(of period: SubscriptionPeriod, count: Int = 1, from start: Date) -> Date {
        guard timeRate != .realTime else { return period.date(byAdding: count, to: start) }
        return start.addingTimeInterval(duration(of: period) * Double(count))
    }

    /// How long one period lasts at this rate (in real time: its approximate length).
    public func duration(of period: SubscriptionPeriod) -> TimeInterval {
        if let scale = secondsPerDay { return Double(period.approximateDays) * scale }
        if let fixed = fixedInterval { return fixed }
        guard let table = monthlyTable else { return Double(period.approximateDays) * 86_400 }
        switch period.unit {
        case .day: return table.month / 30 * Double(period.value)
        case .week: return table.week * Double(period.value)
        case .month:
            switch period.value {
            case 2: return table.twoMonths
            case 3: return table.threeMonths
            case 6: return table.sixMonths
            default: return table.month * Double(period.value)
            }
        case .year: return table.year * Double(period.value)
        }
    }

    /// How long a billing grace period lasts after a failed renewal of `period`.
    public func gracePeriod(for period: SubscriptionPeriod) -> TimeInterval {
        let weekly = period.unit == .week || (period.unit == .day && period.value <= 7)
        if timeRate == .realTime { return (weekly ? 6 : 16) * 86_400 }
        if let scale = secondsPerDay { return (weekly ? 6 : 16) * scale }
        if let fixed = fixedInterval { return fixed }
        let table = monthlyTable!
        return weekly ? table.weeklyGrace : table.grace
    }

    /// How long the App Store retries billing after a failed renewal (grace included).
    public func billingRetryPeriod(for period: SubscriptionPeriod) -> TimeInterval {
        if timeRate == .realTime { return 60 * 86_400 }
        if let scale = secondsPerDay { return 60 * scale }
        if let fixed = fixedInterval { return 2 * fixed }
        return monthlyTable!.retry
    }

    /// The deprecated rates: seconds one day lasts.
    private var secondsPerDay: TimeInterval? {
        switch timeRate {
        case .oneHourIsOneDay: return 3_600
        case .thirtyMinutesIsOneDay: return 1_800
        case .fiveMinutesIsOneDay: return 300
        case .oneMinuteIsOneDay: return 60
        case .thirtySecondsIsOneDay: return 30
        case .oneSecondIsOneDay: return 1
        default: return nil
        }
    }

    /// The "one renewal every …" rates.
    private var fixedInterval: TimeInterval? {
        switch timeRate {
        case .oneRenewalEveryFifteenMinutes: return 900
        case .oneRenewalEveryFiveMinutes: return 300
        case .oneRenewalEveryMinute: return 60
        case .oneRenewalEveryThirtySeconds: return 30
        case .oneRenewalEveryTenSeconds: return 10
        case .oneRenewalEveryTwoSeconds: return 2
        default: return nil
        }
    }

    private struct MonthlyTable {
        var week, month, twoMonths, threeMonths, sixMonths, year, weeklyGrace, grace, retry: TimeInterval
    }

    /// Apple's tables for the "monthly renewal every …" rates.
    private var monthlyTable: MonthlyTable? {
        let minute: TimeInterval = 60
        let hour: TimeInterval = 3_600
        switch timeRate {
        case .monthlyRenewalEveryHour:
            return MonthlyTable(week: 15 * minute, month: hour, twoMonths: 2 * hour, threeMonths: 3 * hour, sixMonths: 6 * hour,
                                year: 12 * hour, weeklyGrace: 12 * minute + 51, grace: 30 * minute, retry: 2 * hour)
        case .monthlyRenewalEveryThirtyMinutes:
            return MonthlyTable(week: 10 * minute, month: 30 * minute, twoMonths: hour, threeMonths: 90 * minute, sixMonths: 3 * hour,
                                year: 6 * hour, weeklyGrace: 8 * minute + 34, grace: 15 * minute, retry: hour)
        case .monthlyRenewalEveryFifteenMinutes:
            return MonthlyTable(week: 5 * minute, month: 15 * minute, twoMonths: 30 * minute, threeMonths: 45 * minute, sixMonths: 90 * minute,
                                year: 3 * hour, weeklyGrace: 4 * minute + 17, grace: 7 * minute + 30, retry: 30 * minute)
        case .monthlyRenewalEveryFiveMinutes:
            return MonthlyTable(week: 3 * minute, month: 5 * minute, twoMonths: 10 * minute, threeMonths: 15 * minute, sixMonths: 30 * minute,
                                year: hour, weeklyGrace: 2 * minute + 34, grace: 2 * minute + 30, retry: 10 * minute)
        case .monthlyRenewalEveryThirtySeconds:
            return MonthlyTable(week: 10, month: 30, twoMonths: minute, threeMonths: 90, sixMonths: 3 * minute,
                                year: 6 * minute, weeklyGrace: 9, grace: 15, retry: minute)
        default:
            return nil
        }
    }
}
