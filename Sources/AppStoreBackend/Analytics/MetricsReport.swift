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
    public var introductoryConversions: Int64 = 0
    public var trialCancellations: Int64 = 0
    public var trialBillingFailures: Int64 = 0
    public var refundEnds: Int64 = 0
    /// Paying subscriptions that changed to this product, and away from it (for a group or the app,
    /// each change counts in both).
    public var movedIn: Int64 = 0
    public var movedOut: Int64 = 0
    public var refunds: Int64 = 0
    /// Refunded amounts by currency, in milliunits.
    public var refundedMilliunits: [String: Int64] = [:]
    /// Monthly recurring revenue by currency, in millionths.
    public var mrrMicros: [String: Int64] = [:]
    /// The prices of the day's paid purchases and renewals by currency, in milliunits.
    public var salesMilliunits: [String: Int64] = [:]
    /// The parts of ``salesMilliunits`` and ``refundedMilliunits`` Apple takes a reduced commission on
    /// (subscriptions after a year of paid service).
    public var salesReducedCommissionMilliunits: [String: Int64] = [:]
    public var refundedReducedCommissionMilliunits: [String: Int64] = [:]
    /// The day's changes of MRR by what changed it, by currency, in millionths (decreases negative).
    public var mrrMovementMicros: [MRRMovement: [String: Int64]] = [:]
    /// Refunds reversed, and the amounts they gave back (milliunits; the reduced commission's part apart).
    public var refundsReversed: Int64 = 0
    public var reversedMilliunits: [String: Int64] = [:]
    public var reversedReducedCommissionMilliunits: [String: Int64] = [:]
    /// The unused part of plans left by an upgrade mid-period, refunded pro rata, in millionths.
    public var proratedRefundedMicros: [String: Int64] = [:]
    public var proratedRefundedReducedCommissionMicros: [String: Int64] = [:]
    /// Paid transactions of any product bought that day, and how many of them stand refunded.
    public var paidTransactions: Int64 = 0
    public var paidTransactionsRefunded: Int64 = 0
    /// Free trials started that day whose outcome is known: ended, and converted among them.
    public var trialOutcomesEnded: Int64 = 0
    public var trialOutcomesConverted: Int64 = 0

    public init(day: CalendarDay) { self.day = day }

    /// Revenue by currency, exactly, in units: sales less refunds, plus refunds reversed, less the
    /// prorated refunds of upgrades, before Apple's commission.
    public var revenue: [String: Decimal] {
        var revenue: [String: Decimal] = [:]
        for currency in moneyFlowCurrencies {
            revenue[currency] = Money.exact(milliunits: (salesMilliunits[currency] ?? 0) - (refundedMilliunits[currency] ?? 0) + (reversedMilliunits[currency] ?? 0))
                - Money.exact(micros: proratedRefundedMicros[currency] ?? 0)
        }
        return revenue.filter { $0.value != 0 }
    }

    /// Proceeds by currency, exactly, in units: revenue less Apple's commission under `program` (30%,
    /// or 15% on subscriptions after a year of paid service; 15% on everything in the Small Business
    /// Program), before taxes. Rounded only when shown.
    public func proceeds(_ program: CommissionProgram = .standard) -> [String: Decimal] {
        var proceeds: [String: Decimal] = [:]
        for currency in moneyFlowCurrencies {
            let reduced = Money.exact(milliunits: (salesReducedCommissionMilliunits[currency] ?? 0) - (refundedReducedCommissionMilliunits[currency] ?? 0)
                                      + (reversedReducedCommissionMilliunits[currency] ?? 0))
                - Money.exact(micros: proratedRefundedReducedCommissionMicros[currency] ?? 0)
            let full = (revenue[currency] ?? 0) - reduced
            proceeds[currency] = full * Decimal(program.keptPercent) / 100 + reduced * Decimal(CommissionProgram.keptPercentReduced) / 100
        }
        return proceeds.filter { $0.value != 0 }
    }

    /// The currencies of the day's sales, refunds, reversals and prorations.
    var moneyFlowCurrencies: Set<String> {
        Set(salesMilliunits.keys).union(refundedMilliunits.keys).union(reversedMilliunits.keys).union(proratedRefundedMicros.keys)
    }

    /// Every currency the day holds an amount in (MRR, sales, refunds, movements).
    public var currencies: Set<String> {
        var all = Set(mrrMicros.keys).union(moneyFlowCurrencies)
        for byCurrency in mrrMovementMicros.values { all.formUnion(byCurrency.keys) }
        return all
    }

    /// Every count, as the API, the command line and the CSV exports name it, in their order.
    public static let countFigures: [(name: String, value: any KeyPath<DailyMetrics, Int64> & Sendable)] = [
        ("active_subscriptions", \.activeSubscriptions), ("trials", \.freeTrials), ("in_introductory_price", \.introductoryPrice),
        ("in_grace_period", \.gracePeriod), ("new_subscriptions", \.newSubscriptions), ("trials_started", \.trialsStarted),
        ("trial_conversions", \.trialConversions), ("intro_conversions", \.introductoryConversions), ("trial_cancellations", \.trialCancellations),
        ("trial_billing_failures", \.trialBillingFailures), ("renewals", \.renewals), ("churned_voluntary", \.churnedVoluntary),
        ("churned_involuntary", \.churnedInvoluntary), ("refund_ends", \.refundEnds), ("reactivations", \.reactivations), ("moved_in", \.movedIn),
        ("moved_out", \.movedOut), ("refunds", \.refunds), ("refunds_reversed", \.refundsReversed), ("paid_transactions", \.paidTransactions),
        ("paid_transactions_refunded", \.paidTransactionsRefunded), ("trial_outcomes_ended", \.trialOutcomesEnded),
        ("trial_outcomes_converted", \.trialOutcomesConverted),
    ]

    /// Every amount of money, as the API, the command line and the CSV exports name it, in their order.
    public static let moneyFigures = ["mrr", "sales", "refunded", "reversed", "prorated_refunded", "revenue", "proceeds"]

    /// The day's money, exactly, in units of each currency, by ``moneyFigures``' names.
    public func exactMoney(_ program: CommissionProgram = .standard) -> [String: [String: Decimal]] {
        [
            "mrr": mrrMicros.mapValues(Money.exact(micros:)), "sales": salesMilliunits.mapValues(Money.exact(milliunits:)),
            "refunded": refundedMilliunits.mapValues(Money.exact(milliunits:)), "reversed": reversedMilliunits.mapValues(Money.exact(milliunits:)),
            "prorated_refunded": proratedRefundedMicros.mapValues(Money.exact(micros:)), "revenue": revenue, "proceeds": proceeds(program),
        ].mapValues { $0.filter { $0.value != 0 } }
    }

    /// The day's MRR movements summed: its change of MRR, by currency.
    public var netMRRMovementMicros: [String: Int64] {
        mrrMovementMicros.values.reduce(into: [String: Int64]()) { sum, byCurrency in
            for (currency, micros) in byCurrency { sum[currency, default: 0] += micros }
        }.filter { $0.value != 0 }
    }

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
        case .introductoryConversions: introductoryConversions += value
        case .trialCancellations: trialCancellations += value
        case .trialBillingFailures: trialBillingFailures += value
        case .refundEnds: refundEnds += value
        case .movedIn: movedIn += value
        case .movedOut: movedOut += value
        case .refunds: refunds += value
        case .refunded: refundedMilliunits[currency, default: 0] += value
        case .sales: salesMilliunits[currency, default: 0] += value
        case .salesReducedCommission: salesReducedCommissionMilliunits[currency, default: 0] += value
        case .refundedReducedCommission: refundedReducedCommissionMilliunits[currency, default: 0] += value
        case .mrrNew: mrrMovementMicros[.new, default: [:]][currency, default: 0] += value
        case .mrrExpansion: mrrMovementMicros[.expansion, default: [:]][currency, default: 0] += value
        case .mrrContraction: mrrMovementMicros[.contraction, default: [:]][currency, default: 0] += value
        case .mrrChurned: mrrMovementMicros[.churned, default: [:]][currency, default: 0] += value
        case .mrrReactivated: mrrMovementMicros[.reactivation, default: [:]][currency, default: 0] += value
        case .refundsReversed: refundsReversed += value
        case .reversed: reversedMilliunits[currency, default: 0] += value
        case .reversedReducedCommission: reversedReducedCommissionMilliunits[currency, default: 0] += value
        case .proratedRefunded: proratedRefundedMicros[currency, default: 0] += value
        case .proratedRefundedReducedCommission: proratedRefundedReducedCommissionMicros[currency, default: 0] += value
        case .paidTransactions: paidTransactions += value
        case .paidTransactionsRefunded: paidTransactionsRefunded += value
        case .trialOutcomesEnded: trialOutcomesEnded += value
        case .trialOutcomesConverted: trialOutcomesConverted += value
        }
    }

    /// Money figures with no amount left out, so two equal days compare equal however they were summed.
    public mutating func dropZeroAmounts() {
        mrrMicros = mrrMicros.filter { $0.value != 0 }
        refundedMilliunits = refundedMilliunits.filter { $0.value != 0 }
        salesMilliunits = salesMilliunits.filter { $0.value != 0 }
        salesReducedCommissionMilliunits = salesReducedCommissionMilliunits.filter { $0.value != 0 }
        refundedReducedCommissionMilliunits = refundedReducedCommissionMilliunits.filter { $0.value != 0 }
        reversedMilliunits = reversedMilliunits.filter { $0.value != 0 }
        reversedReducedCommissionMilliunits = reversedReducedCommissionMilliunits.filter { $0.value != 0 }
        proratedRefundedMicros = proratedRefundedMicros.filter { $0.value != 0 }
        proratedRefundedReducedCommissionMicros = proratedRefundedReducedCommissionMicros.filter { $0.value != 0 }
        mrrMovementMicros = mrrMovementMicros.mapValues { $0.filter { $0.value != 0 } }.filter { !$0.value.isEmpty }
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

/// Whose terms Apple's commission follows: the share of revenue the developer keeps.
public enum CommissionProgram: String, CaseIterable, Hashable, Sendable {
    /// 30%, and 15% on subscriptions after a year of paid service.
    case standard
    /// The App Store Small Business Program: 15% on everything.
    case smallBusiness = "small-business"

    /// The percentage of revenue kept on what the reduced commission does not cover.
    var keptPercent: Int64 { self == .standard ? 70 : 85 }
    /// The percentage kept on subscriptions after a year of paid service.
    static let keptPercentReduced: Int64 = 85
}

/// The figures of a range of days, and the instant the current day's stock figures are taken at.
public struct MetricsReport: Hashable, Sendable {
    /// The backend's latest signed date (its newest notification), if it has any.
    public var asOf: Date?
    public var days: [DailyMetrics]
    /// The time zone whose days these are (`UTC` unless the backend keeps another).
    public var timeZone: String
    /// MRR at the end of the day before the first, by currency, in millionths: where the first day's
    /// movements start from (so the movements shown add up to the change of the MRR shown).
    public var mrrBeforeMicros: [String: Int64]

    public init(asOf: Date?, days: [DailyMetrics], timeZone: String = "UTC", mrrBeforeMicros: [String: Int64] = [:]) {
        self.asOf = asOf
        self.days = days
        self.timeZone = timeZone
        self.mrrBeforeMicros = mrrBeforeMicros
    }

    /// Adds up the rollup rows: `before` (every stock change before the first day), `rows` (each day's
    /// changes and events in the range) and `running` (periods still running at `asOf` that end later
    /// on its day, which the end-of-day figure leaves out). Days after the day of `asOf` are not
    /// reported: nothing is known about them yet.
    static func assemble(query: MetricsQuery, asOf: Int64?, before: [(SubscriptionMetric, String, Int64)],
                         rows: [(day: Int64, metric: SubscriptionMetric, currency: String, value: Int64)],
                         running: [EntitledPeriod], calendar: ReportingCalendar = .utc) -> MetricsReport {
        guard let asOf else { return MetricsReport(asOf: nil, days: [], timeZone: calendar.identifier) }
        let today = calendar.day(asOf)
        let last = min(query.to, today)
        guard query.from <= last else { return MetricsReport(asOf: AppStoreJSON.date(fromMilliseconds: asOf), days: [], timeZone: calendar.identifier) }
        var byDay: [Int64: [(SubscriptionMetric, String, Int64)]] = [:]
        for row in rows { byDay[row.day, default: []].append((row.metric, row.currency, row.value)) }
        var current = DailyMetrics(day: query.from.adding(days: -1))
        for (metric, currency, value) in before { current.add(metric, value, currency: currency) }
        let mrrBefore = current.mrrMicros.filter { $0.value != 0 }
        var days: [DailyMetrics] = []
        var day = query.from
        while day <= last {
            current = current.carriedOver(to: day)
            for (metric, currency, value) in byDay[day.number] ?? [] { current.add(metric, value, currency: currency) }
            var reported = current
            if day == today {
                // Still running at `asOf`: counted, and its churn (dated at its end) not yet happened.
                for period in running {
                    for (metric, amount) in period.stock { reported.add(metric, amount, currency: period.currency) }
                    reported.add(.mrrChurned, period.monthlyMicros, currency: period.currency)
                    if let end = period.endFigure { reported.add(end, -1, currency: "") }
                }
            }
            reported.dropZeroAmounts()
            days.append(reported)
            day = day.adding(days: 1)
        }
        return MetricsReport(asOf: AppStoreJSON.date(fromMilliseconds: asOf), days: days, timeZone: calendar.identifier, mrrBeforeMicros: mrrBefore)
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
    /// The time zone whose months these are.
    public var timeZone: String = "UTC"

    static func assemble(from: CalendarDay, to: CalendarDay, asOf: Int64?, cells: [CohortKey: Int64], calendar: ReportingCalendar = .utc) -> CohortReport {
        guard let asOf else { return CohortReport(asOf: nil, cohorts: [], timeZone: calendar.identifier) }
        var cohorts: [Cohort] = []
        var month = from.firstOfMonth
        while month <= to, calendar.start(of: month) <= asOf {
            var retained: [Int64] = []
            var months: Int64 = 1
            while calendar.start(of: month.firstOfMonth(adding: months + 1)) - 1 <= asOf {
                retained.append(cells[CohortKey(cohort: month.number, months: months)] ?? 0)
                months += 1
            }
            // Months nobody started in are left out.
            if let started = cells[CohortKey(cohort: month.number, months: 0)], started > 0 {
                cohorts.append(Cohort(month: month, subscriptions: started, retained: retained))
            }
            month = month.firstOfMonth(adding: 1)
        }
        return CohortReport(asOf: AppStoreJSON.date(fromMilliseconds: asOf), cohorts: cohorts, timeZone: calendar.identifier)
    }
}
