/// How fast subscription time runs in StoreKit Testing: the raw values of `SKTestSession.TimeRate`
/// that `.storekit` files store in `_timeRate`.
public enum TimeRate: Int, Hashable, Sendable, CaseIterable, Codable {
    case realTime = 0
    case oneHourIsOneDay = 1
    case thirtyMinutesIsOneDay = 2
    case fiveMinutesIsOneDay = 3
    case oneMinuteIsOneDay = 4
    case thirtySecondsIsOneDay = 5
    case oneSecondIsOneDay = 6
    case monthlyRenewalEveryHour = 10
    case monthlyRenewalEveryThirtyMinutes = 11
    case monthlyRenewalEveryFifteenMinutes = 12
    case monthlyRenewalEveryFiveMinutes = 13
    case monthlyRenewalEveryThirtySeconds = 15
    case oneRenewalEveryFifteenMinutes = 1000
    case oneRenewalEveryFiveMinutes = 1001
    case oneRenewalEveryMinute = 1002
    case oneRenewalEveryThirtySeconds = 1003
    case oneRenewalEveryTenSeconds = 1004
    case oneRenewalEveryTwoSeconds = 1005

    /// Whether Apple has deprecated the rate (the "one day is …" family).
    public var isDeprecated: Bool { (1...6).contains(rawValue) }

    /// The rate in words, as Xcode's editor lists it: "Monthly renewal every hour".
    public var label: String {
        switch self {
        case .realTime: return "Real time"
        case .oneHourIsOneDay: return "1 hour is 1 day"
        case .thirtyMinutesIsOneDay: return "30 minutes is 1 day"
        case .fiveMinutesIsOneDay: return "5 minutes is 1 day"
        case .oneMinuteIsOneDay: return "1 minute is 1 day"
        case .thirtySecondsIsOneDay: return "30 seconds is 1 day"
        case .oneSecondIsOneDay: return "1 second is 1 day"
        case .monthlyRenewalEveryHour: return "Monthly renewal every hour"
        case .monthlyRenewalEveryThirtyMinutes: return "Monthly renewal every 30 minutes"
        case .monthlyRenewalEveryFifteenMinutes: return "Monthly renewal every 15 minutes"
        case .monthlyRenewalEveryFiveMinutes: return "Monthly renewal every 5 minutes"
        case .monthlyRenewalEveryThirtySeconds: return "Monthly renewal every 30 seconds"
        case .oneRenewalEveryFifteenMinutes: return "One renewal every 15 minutes"
        case .oneRenewalEveryFiveMinutes: return "One renewal every 5 minutes"
        case .oneRenewalEveryMinute: return "One renewal every minute"
        case .oneRenewalEveryThirtySeconds: return "One renewal every 30 seconds"
        case .oneRenewalEveryTenSeconds: return "One renewal every 10 seconds"
        case .oneRenewalEveryTwoSeconds: return "One renewal every 2 seconds"
        }
    }
}
