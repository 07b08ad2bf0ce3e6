import Foundation

/// How the metrics are answered over HTTP and printed with `--json`: snake_case figures, money in
/// each currency's units rounded to the cent.
extension MetricsReport {
    struct Body: Encodable {
        var as_of: Date?
        /// Whose days these are.
        var time_zone: String
        /// The reporting currency and the rates used, when one was asked for.
        var reporting: Reporting?
        var days: [Day]
    }

    struct Reporting: Encodable {
        var currency: String
        var rates: [String: Decimal]
    }

    /// A day's money, every currency converted to the reporting one and added up.
    struct Converted: Encodable {
        var currency: String
        var mrr: Decimal
        var sales: Decimal
        var refunded: Decimal
        var revenue: Decimal
        var proceeds: Decimal
        var mrr_movement: [String: Decimal]
    }

    struct Day: Encodable {
        var date: String
        var active_subscriptions: Int64
        var trials: Int64
        var in_introductory_price: Int64
        var in_grace_period: Int64
        var new_subscriptions: Int64
        var trials_started: Int64
        var trial_conversions: Int64
        var renewals: Int64
        var churned_voluntary: Int64
        var churned_involuntary: Int64
        var reactivations: Int64
        var intro_conversions: Int64
        var trial_cancellations: Int64
        var trial_billing_failures: Int64
        var refund_ends: Int64
        var moved_in: Int64
        var moved_out: Int64
        var refunds: Int64
        var refunded: [String: Decimal]
        var mrr: [String: Decimal]
        var sales: [String: Decimal]
        var revenue: [String: Decimal]
        var proceeds: [String: Decimal]
        var mrr_movement: [String: [String: Decimal]]
        var in_reporting_currency: Converted?
    }

    /// Every currency the report holds an amount in.
    var currencies: Set<String> {
        days.reduce(into: Set<String>()) { $0.formUnion($1.currencies) }
    }

    func body(_ program: CommissionProgram, reporting: ReportingCurrency?) -> Body {
        Body(as_of: asOf, time_zone: timeZone, reporting: reporting.map { Reporting(currency: $0.currency, rates: $0.rates) }, days: days.map { day in
            Day(date: day.day.description, active_subscriptions: day.activeSubscriptions, trials: day.freeTrials,
                in_introductory_price: day.introductoryPrice, in_grace_period: day.gracePeriod, new_subscriptions: day.newSubscriptions,
                trials_started: day.trialsStarted, trial_conversions: day.trialConversions, renewals: day.renewals,
                churned_voluntary: day.churnedVoluntary, churned_involuntary: day.churnedInvoluntary, reactivations: day.reactivations,
                intro_conversions: day.introductoryConversions, trial_cancellations: day.trialCancellations,
                trial_billing_failures: day.trialBillingFailures, refund_ends: day.refundEnds, moved_in: day.movedIn, moved_out: day.movedOut,
                refunds: day.refunds, refunded: day.refundedMilliunits.mapValues { Money.units(milliunits: $0) },
                mrr: day.mrrMicros.mapValues { Money.units(micros: $0) }, sales: day.salesMilliunits.mapValues { Money.units(milliunits: $0) },
                revenue: day.revenueMilliunits.mapValues { Money.units(milliunits: $0) },
                proceeds: day.proceedsMilliunits(program).mapValues { Money.units(milliunits: $0) },
                mrr_movement: Dictionary(uniqueKeysWithValues: MRRMovement.allCases.map { movement in
                    (movement.rawValue, (day.mrrMovementMicros[movement] ?? [:]).mapValues { Money.units(micros: $0) })
                }),
                in_reporting_currency: reporting.map { reporting in
                    Converted(currency: reporting.currency, mrr: reporting.total(day.mrrMicros, perUnit: 1_000_000),
                              sales: reporting.total(day.salesMilliunits, perUnit: 1_000),
                              refunded: reporting.total(day.refundedMilliunits, perUnit: 1_000),
                              revenue: reporting.total(day.revenueMilliunits, perUnit: 1_000),
                              proceeds: reporting.total(day.proceedsMilliunits(program), perUnit: 1_000),
                              mrr_movement: Dictionary(uniqueKeysWithValues: MRRMovement.allCases.map { movement in
                                  (movement.rawValue, reporting.total(day.mrrMovementMicros[movement] ?? [:], perUnit: 1_000_000))
                              }))
                })
        })
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

/// Money as shown: a currency's units, rounded half up to the cent.
public enum Money {
    public static func units(micros: Int64) -> Decimal { Decimal(roundedCents(micros, per: 10_000)) / 100 }
    public static func units(milliunits: Int64) -> Decimal { Decimal(roundedCents(milliunits, per: 10)) / 100 }

    /// `percent`% of `amount`, rounded half away from zero.
    static func share(_ amount: Int64, percent: Int64) -> Int64 {
        amount >= 0 ? (amount * percent + 50) / 100 : -((-amount * percent + 50) / 100)
    }

    /// `amount` in cents, where `per` of its units make a cent.
    static func roundedCents(_ amount: Int64, per: Int64) -> Int64 {
        amount >= 0 ? (amount + per / 2) / per : -((-amount + per / 2) / per)
    }

    /// `12.30` for 12,300,000 micros: the amount in cents written with two decimals.
    public static func text(micros: Int64) -> String { text(cents: roundedCents(micros, per: 10_000)) }
    public static func text(milliunits: Int64) -> String { text(cents: roundedCents(milliunits, per: 10)) }

    /// An amount already rounded to the cent, written with two decimals.
    public static func text(units: Decimal) -> String {
        text(cents: NSDecimalNumber(decimal: units * 100).int64Value)
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
