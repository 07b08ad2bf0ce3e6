import Foundation

/// How the metrics are shown everywhere (the API, `--json`, the command line's tables, the CSV
/// exports): one set of names, money rounded once, at display, to the cent, half to even.
extension MetricsReport {
    /// One day as every answer shows it.
    public struct DisplayedDay: Sendable {
        public var date: String
        /// ``DailyMetrics/countFigures``, in their order.
        public var counts: [(name: String, value: Int64)]
        /// ``DailyMetrics/moneyFigures`` by name, then currency, rounded to the cent.
        public var money: [String: [String: Decimal]]
        /// The movements of MRR by currency, rounded so that they add up to the change of the MRR shown.
        public var movements: [MRRMovement: [String: Decimal]]
        /// Every currency added up in the reporting one, rounded the same way, when one was asked for.
        public var converted: (money: [String: Decimal], movements: [MRRMovement: Decimal])?
    }

    /// The days as shown, proceeds under `program`, and in `reporting`'s currency too when given.
    public func displayedDays(_ program: CommissionProgram = .standard, reporting: ReportingCurrency? = nil) -> [DisplayedDay] {
        var before = mrrBeforeMicros.mapValues(Money.exact(micros:))
        return days.map { day in
            let exact = day.exactMoney(program)
            let movements = day.mrrMovementMicros.mapValues { $0.mapValues(Money.exact(micros:)) }
            var shown = DisplayedDay(date: day.day.description, counts: DailyMetrics.countFigures.map { ($0.name, day[keyPath: $0.value]) },
                                     money: exact.mapValues { $0.mapValues(Money.rounded) }, movements: [:])
            for currency in Set(before.keys).union(movements.values.flatMap(\.keys)) {
                let allocated = Money.allocate(from: before[currency] ?? 0, MRRMovement.allCases.map { movements[$0]?[currency] ?? 0 })
                for (movement, amount) in zip(MRRMovement.allCases, allocated) where amount != 0 {
                    shown.movements[movement, default: [:]][currency] = amount
                }
            }
            if let reporting {
                var money: [String: Decimal] = [:]
                for name in DailyMetrics.moneyFigures { money[name] = Money.rounded(reporting.exactTotal(exact[name] ?? [:])) }
                let allocated = Money.allocate(from: reporting.exactTotal(before), MRRMovement.allCases.map { reporting.exactTotal(movements[$0] ?? [:]) })
                shown.converted = (money, Dictionary(uniqueKeysWithValues: zip(MRRMovement.allCases, allocated)))
            }
            before = exact["mrr"] ?? [:]
            return shown
        }
    }

    /// A name for each figure: `(name, value)` with keys in any order, encoded as an object.
    struct Figures: Encodable {
        var values: [(String, any Encodable & Sendable)]
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for (name, value) in values { try container.encode(value, forKey: Key(stringValue: name)) }
        }
    }

    struct Body: Encodable {
        var as_of: Date?
        /// Whose days these are.
        var time_zone: String
        /// The reporting currency and the rates used, when one was asked for.
        var reporting: Reporting?
        /// The range's rates, each with its definition.
        var rates: Figures
        var days: [Figures]
    }

    struct Reporting: Encodable {
        var currency: String
        var rates: [String: Decimal]
    }

    struct Rate: Encodable {
        /// The share, or `null` when there is nothing to divide by (or the range is too short).
        var value: Double?
        var definition: String
        var figures: [String: Int64]
    }

    /// Every currency the report holds an amount in.
    var currencies: Set<String> {
        days.reduce(into: Set<String>()) { $0.formUnion($1.currencies) }
    }

    func body(_ program: CommissionProgram, reporting: ReportingCurrency?) -> Body {
        let rates = self.rates
        let rateFigures = Figures(values: [
            ("churn_rate", Rate(value: rates.churn, definition: RateFigures.churnDefinition,
                                figures: ["periods": Int64(rates.churnPeriods.count)])),
            ("trial_conversion_rate", Rate(value: rates.trialConversion, definition: RateFigures.trialConversionDefinition,
                                           figures: ["trials_ended": rates.trialsEnded, "trials_converted": rates.trialsConverted,
                                                     "trials_pending": rates.trialsPending])),
            ("refund_rate", Rate(value: rates.refund, definition: RateFigures.refundDefinition,
                                 figures: ["paid_transactions": rates.paidTransactions, "paid_transactions_refunded": rates.paidTransactionsRefunded])),
        ])
        return Body(as_of: asOf, time_zone: timeZone, reporting: reporting.map { Reporting(currency: $0.currency, rates: $0.rates) }, rates: rateFigures,
                    days: displayedDays(program, reporting: reporting).map { day in
            var values: [(String, any Encodable & Sendable)] = [("date", day.date)]
            values += day.counts.map { ($0.name, $0.value) }
            values += DailyMetrics.moneyFigures.map { ($0, day.money[$0] ?? [:]) }
            values.append(("mrr_movement", Dictionary(uniqueKeysWithValues: MRRMovement.allCases.map { ($0.rawValue, day.movements[$0] ?? [:]) })))
            if let reporting, let converted = day.converted {
                values.append(("in_reporting_currency", Figures(values: [("currency", reporting.currency)]
                    + DailyMetrics.moneyFigures.map { ($0, converted.money[$0] ?? 0) }
                    + [("mrr_movement", Dictionary(uniqueKeysWithValues: MRRMovement.allCases.map { ($0.rawValue, converted.movements[$0] ?? 0) }))])))
            }
            return Figures(values: values)
        })
    }

    /// `daily.csv`: one row per day, every figure the API answers, named as it names them (`date`,
    /// each count, each amount as `name.CURRENCY`, each movement as `mrr_movement.NAME.CURRENCY`),
    /// money as shown.
    public func dailyCSV(_ program: CommissionProgram = .standard) -> String {
        let currencies = self.currencies.sorted()
        var lines = [(["date"] + DailyMetrics.countFigures.map(\.name)
                      + DailyMetrics.moneyFigures.flatMap { name in currencies.map { "\(name).\($0)" } }
                      + MRRMovement.allCases.flatMap { movement in currencies.map { "mrr_movement.\(movement.rawValue).\($0)" } })
            .map(CSV.cell).joined(separator: ",")]
        for day in displayedDays(program) {
            var fields = [day.date] + day.counts.map { String($0.value) }
            for name in DailyMetrics.moneyFigures { fields += currencies.map { Money.text(units: day.money[name]?[$0] ?? 0) } }
            for movement in MRRMovement.allCases { fields += currencies.map { Money.text(units: day.movements[movement]?[$0] ?? 0) } }
            lines.append(CSV.row(fields))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// The report as `/v1/metrics` answers it, proceeds under `program`'s commission, and with every
    /// amount also in `reporting`'s currency when given.
    ///
    /// - Throws: `BackendError.badRequest` naming a currency the rates leave out.
    public func json(commission program: CommissionProgram = .standard, reporting: ReportingCurrency? = nil) throws -> Data {
        try reporting?.check(currencies)
        return try Money.encoder.encode(body(program, reporting: reporting))
    }
}

/// A range's rates, as RevenueCat and App Store Connect define them (docs/analytics.md).
public struct RateFigures: Hashable, Sendable {
    /// Each whole 30-day period counted back from the range's last day: its first day, the active
    /// subscriptions at its start, those that ended in it and those reactivated in it.
    public struct ChurnPeriod: Hashable, Sendable {
        public var first: CalendarDay
        public var activeAtStart: Int64
        public var ended: Int64
        public var reactivated: Int64
    }

    public var churnPeriods: [ChurnPeriod]
    public var trialsEnded: Int64
    public var trialsConverted: Int64
    public var trialsPending: Int64
    public var paidTransactions: Int64
    public var paidTransactionsRefunded: Int64

    /// The average over the 30-day periods of (ended − reactivated) ÷ active at the period's start;
    /// `nil` for a range shorter than 30 days.
    public var churn: Double? {
        let counted = churnPeriods.filter { $0.activeAtStart > 0 }
        guard !counted.isEmpty else { return nil }
        return counted.reduce(0.0) { $0 + Double($1.ended - $1.reactivated) / Double($1.activeAtStart) } / Double(counted.count)
    }

    /// Of the trials started in the range that have ended, the share that converted.
    public var trialConversion: Double? { trialsEnded == 0 ? nil : Double(trialsConverted) / Double(trialsEnded) }

    /// Refunded ÷ paid transactions of every kind, each counted on the day of its purchase.
    public var refund: Double? { paidTransactions == 0 ? nil : Double(paidTransactionsRefunded) / Double(paidTransactions) }

    public static let churnDefinition = "per 30 days: in each whole 30-day period counted back from the last day, subscriptions whose paid access ended less those reactivated, over the active subscriptions at its start; averaged (RevenueCat's churn rate)"
    public static let trialConversionDefinition = "of the free trials started in these days that have ended, the share that converted to paying; trials still running are pending (RevenueCat's, by the cohort of trials started)"
    public static let refundDefinition = "paid transactions bought in these days (subscriptions, renewals and one-time purchases) that were refunded, over all of them (RevenueCat's refund rate)"

    /// A share in percent with one decimal, or "—".
    public static func percent(_ share: Double?) -> String {
        share.map { String(format: "%.1f%%", $0 * 100) } ?? "—"
    }
}

extension MetricsReport {
    /// The range's rates (``RateFigures``).
    public var rates: RateFigures {
        func sum(_ days: ArraySlice<DailyMetrics>, _ value: (DailyMetrics) -> Int64) -> Int64 { days.reduce(0) { $0 + value($1) } }
        var periods: [RateFigures.ChurnPeriod] = []
        var end = days.count
        while end - 30 >= 0 {
            let stretch = days[(end - 30)..<end]
            let first = stretch.first!
            // The active subscriptions at the end of the day before: the first day's less its own changes.
            let activeAtStart = end - 30 > 0 ? days[end - 31].activeSubscriptions
                : first.activeSubscriptions - (first.newSubscriptions + first.reactivations + first.trialConversions + first.movedIn - first.movedOut
                                               - first.churnedVoluntary - first.churnedInvoluntary - first.refundEnds)
            periods.append(.init(first: first.day, activeAtStart: activeAtStart,
                                 ended: sum(stretch) { $0.churnedVoluntary + $0.churnedInvoluntary + $0.refundEnds },
                                 reactivated: sum(stretch, \.reactivations)))
            end -= 30
        }
        let all = days[...]
        let ended = sum(all, \.trialOutcomesEnded)
        return RateFigures(churnPeriods: periods.reversed(), trialsEnded: ended, trialsConverted: sum(all, \.trialOutcomesConverted),
                           trialsPending: sum(all, \.trialsStarted) - ended, paidTransactions: sum(all, \.paidTransactions),
                           paidTransactionsRefunded: sum(all, \.paidTransactionsRefunded))
    }
}

extension CohortReport {
    struct Body: Encodable {
        var as_of: Date?
        var time_zone: String
        var cohorts: [Row]
    }

    struct Row: Encodable {
        var month: String
        var subscriptions: Int64
        /// How many were active at the end of each following month.
        var retained: [Int64]
        /// The same as exact shares of the cohort.
        var retention: [Double]
        /// The shares in whole percent, rounded half up, as the CLI and the dashboard show them.
        var retention_percent: [Int64]
    }

    var body: Body {
        Body(as_of: asOf, time_zone: timeZone, cohorts: cohorts.map { cohort in
            Row(month: cohort.month.monthDescription, subscriptions: cohort.subscriptions, retained: cohort.retained,
                retention: cohort.retention, retention_percent: cohort.retentionPercent)
        })
    }

    /// The table as `/v1/metrics/cohorts` answers it.
    public func json() throws -> Data { try Money.encoder.encode(body) }
}

/// Money as shown: a currency's units, rounded once, half to even, to the cent.
public enum Money {
    /// An amount kept in millionths or milliunits, exactly, in units.
    public static func exact(micros: Int64) -> Decimal { Decimal(micros) / 1_000_000 }
    public static func exact(milliunits: Int64) -> Decimal { Decimal(milliunits) / 1_000 }

    /// `amount` rounded to the cent, half to even (2.5245 is 2.52, 2.525 is 2.52, 2.535 is 2.54).
    public static func rounded(_ amount: Decimal) -> Decimal {
        var value = amount, result = Decimal()
        NSDecimalRound(&result, &value, 2, .bankers)
        return result
    }

    public static func units(micros: Int64) -> Decimal { rounded(exact(micros: micros)) }
    public static func units(milliunits: Int64) -> Decimal { rounded(exact(milliunits: milliunits)) }

    /// Movements starting from `start`, rounded so that they add up to the rounded end less the
    /// rounded start: each is the difference of the rounded running totals, within a cent of its
    /// exact amount, and a movement of nothing shows nothing.
    public static func allocate(from start: Decimal, _ movements: [Decimal]) -> [Decimal] {
        var running = start
        var shown = rounded(start)
        return movements.map { movement in
            guard movement != 0 else { return 0 }
            running += movement
            let next = rounded(running)
            defer { shown = next }
            return next - shown
        }
    }

    /// `12.30` for 12,300,000 micros: the amount in cents written with two decimals.
    public static func text(micros: Int64) -> String { text(units: units(micros: micros)) }
    public static func text(milliunits: Int64) -> String { text(units: units(milliunits: milliunits)) }

    /// An amount rounded to the cent here, written with two decimals.
    public static func text(units: Decimal) -> String {
        text(cents: NSDecimalNumber(decimal: rounded(units) * 100).int64Value)
    }

    static func text(cents: Int64) -> String {
        let sign = cents < 0 ? "-" : ""
        let magnitude = cents.magnitude
        let fraction = magnitude % 100
        return "\(sign)\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(.iso8601))
        }
        return encoder
    }()
}
