import AppStoreModels
import Foundation

/// Which days and which part of the business a metrics query asks about.
public struct MetricsQuery: Hashable, Sendable {
    public var from: CalendarDay
    public var to: CalendarDay
    /// Only this product, when set.
    public var productID: String?
    /// Only this subscription group, when set.
    public var groupID: String?

    public init(from: CalendarDay, to: CalendarDay, productID: String? = nil, groupID: String? = nil) {
        self.from = from
        self.to = to
        self.productID = productID
        self.groupID = groupID
    }

    /// The longest range one query may ask for: ten years of days.
    public static let longestRange: Int64 = 3_660
}

/// One day's subscription figures (see docs/analytics.md for each definition). Money is kept in
/// millionths (MRR) and milliunits (refunds) of each currency, so sums are exact.
public struct DailyMetrics: Hashable, Sendable {
    public var day: CalendarDay
    public var activeSubscriptions: Int64 = 0
    public var freeTrials: Int64 = 0
    public var introductoryPrice: Int64 = 0
    public var gracePeriod: Int64 = 0
    public var newSubscriptions: Int64 = 0
    public var trialsStarted: Int64 = 0
    public var trialConversions: Int64 = 0
    public var renewals: Int64 = 0
    public var churnedVoluntary: Int64 = 0
    public var churnedInvoluntary: Int64 = 0
    public var reactivations: Int64 = 0
    public var refunds: Int64 = 0
    /// Refunded amounts by currency, in milliunits.
    public var refundedMilliunits: [String: Int64] = [:]
    /// Monthly recurring revenue by currency, in millionths.
    public var mrrMicros: [String: Int64] = [:]

    public init(day: CalendarDay) { self.day = day }

    mutating func add(_ metric: SubscriptionMetric, _ value: Int64, currency: String) {
        switch metric {
        case .active: activeSubscriptions += value
        case .freeTrials: freeTrials += value
        case .introductoryPrice: introductoryPrice += value
        case .gracePeriod: gracePeriod += value
        case .mrr: mrrMicros[currency, default: 0] += value
        case .newSubscriptions: newSubscriptions += value
        case .trialsStarted: trialsStarted += value
        case .trialConversions: trialConversions += value
        case .renewals: renewals += value
        case .churnedVoluntary: churnedVoluntary += value
        case .churnedInvoluntary: churnedInvoluntary += value
        case .reactivations: reactivations += value
        case .refunds: refunds += value
        case .refunded: refundedMilliunits[currency, default: 0] += value
        }
    }

    /// The day's stock figures carried to the next day, its flow figures cleared.
    func carriedOver(to day: CalendarDay) -> DailyMetrics {
        var next = DailyMetrics(day: day)
        next.activeSubscriptions = activeSubscriptions
        next.freeTrials = freeTrials
        next.introductoryPrice = introductoryPrice
        next.gracePeriod = gracePeriod
        next.mrrMicros = mrrMicros.filter { $0.value != 0 }
        return next
    }
}

/// The figures of a range of days, and the instant the current day's stock figures are taken at.
public struct MetricsReport: Hashable, Sendable {
    /// The backend's latest signed date (its newest notification), if it has any.
    public var asOf: Date?
    public var days: [DailyMetrics]

    public init(asOf: Date?, days: [DailyMetrics]) {
        self.asOf = asOf
        self.days = days
    }

    /// Adds up the rollup rows: `before` (every stock change before the first day), `rows` (each day's
    /// changes and events in the range) and `running` (periods still running at `asOf` that end later
    /// on its day, which the end-of-day figure leaves out). Days after the day of `asOf` are not
    /// reported: nothing is known about them yet.
    static func assemble(query: MetricsQuery, asOf: Int64?, before: [(SubscriptionMetric, String, Int64)],
                         rows: [(day: Int64, metric: SubscriptionMetric, currency: String, value: Int64)],
                         running: [EntitledPeriod]) -> MetricsReport {
        guard let asOf else { return MetricsReport(asOf: nil, days: []) }
        let today = CalendarDay(milliseconds: asOf)
        let last = min(query.to, today)
        guard query.from <= last else { return MetricsReport(asOf: AppStoreJSON.date(fromMilliseconds: asOf), days: []) }
        var byDay: [Int64: [(SubscriptionMetric, String, Int64)]] = [:]
        for row in rows { byDay[row.day, default: []].append((row.metric, row.currency, row.value)) }
        var current = DailyMetrics(day: query.from.adding(days: -1))
        for (metric, currency, value) in before { current.add(metric, value, currency: currency) }
        var days: [DailyMetrics] = []
        var day = query.from
        while day <= last {
            current = current.carriedOver(to: day)
            for (metric, currency, value) in byDay[day.number] ?? [] { current.add(metric, value, currency: currency) }
            var reported = current
            if day == today {
                for period in running {
                    for (metric, amount) in period.stock { reported.add(metric, amount, currency: period.currency) }
                }
            }
            reported.mrrMicros = reported.mrrMicros.filter { $0.value != 0 }
            days.append(reported)
            day = day.adding(days: 1)
        }
        return MetricsReport(asOf: AppStoreJSON.date(fromMilliseconds: asOf), days: days)
    }
}

/// The cohort table: for each month's new subscriptions, how many were still active at the end of
/// each later month.
public struct CohortReport: Hashable, Sendable {
    public struct Cohort: Hashable, Sendable {
        /// The month, as its first day.
        public var month: CalendarDay
        /// Subscriptions whose first purchase was in the month.
        public var subscriptions: Int64
        /// `retained[k-1]`: how many were active at the end of the k-th month after; only months
        /// that ended by the backend's latest signed date.
        public var retained: [Int64]

        public init(month: CalendarDay, subscriptions: Int64, retained: [Int64]) {
            self.month = month
            self.subscriptions = subscriptions
            self.retained = retained
        }

        /// The share retained at the end of each month after, exactly (`retained ÷ subscriptions`).
        public var retention: [Double] {
            retained.map { subscriptions == 0 ? 0 : Double($0) / Double(subscriptions) }
        }

        /// The same in whole percent, rounded half up: what every table shows (2 of 3 is 67%).
        public var retentionPercent: [Int64] {
            retained.map { subscriptions == 0 ? 0 : ($0 * 200 + subscriptions) / (2 * subscriptions) }
        }
    }

    public var asOf: Date?
    public var cohorts: [Cohort]

    static func assemble(from: CalendarDay, to: CalendarDay, asOf: Int64?, cells: [CohortKey: Int64]) -> CohortReport {
        guard let asOf else { return CohortReport(asOf: nil, cohorts: []) }
        var cohorts: [Cohort] = []
        var month = from.firstOfMonth
        while month <= to, month.startMilliseconds <= asOf {
            var retained: [Int64] = []
            var months: Int64 = 1
            while month.firstOfMonth(adding: months + 1).startMilliseconds - 1 <= asOf {
                retained.append(cells[CohortKey(cohort: month.number, months: months)] ?? 0)
                months += 1
            }
            // Months nobody started in are left out.
            if let started = cells[CohortKey(cohort: month.number, months: 0)], started > 0 {
                cohorts.append(Cohort(month: month, subscriptions: started, retained: retained))
            }
            month = month.firstOfMonth(adding: 1)
        }
        return CohortReport(asOf: AppStoreJSON.date(fromMilliseconds: asOf), cohorts: cohorts)
    }
}
