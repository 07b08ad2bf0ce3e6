import AppStoreBackend
import BlockingWork
import Foundation

/// `storekit backend metrics`: the subscription figures by day, or the cohort table, from the
/// backend's rollups (what `GET /v1/metrics` answers).
struct BackendMetricsCommand: Command {
    static let declaration = CommandDeclaration("backend metrics", group: .backend, abstract: "Print the subscription figures by day (active, trials, MRR, churn, refunds…) or the cohort table, from the backend's database.", arguments: BackendOptions.databaseArguments + [
        .option("--from", "YYYY-MM-DD", "the first day", required: true),
        .option("--to", "YYYY-MM-DD", "the last day", required: true),
        .option("--product", "ID", "one product's figures"),
        .option("--group", "ID", "one subscription group's figures"),
        .flag("--cohorts", "print the cohort table: for each month's new subscriptions, how many were active at the end of each later month"),
        .flag("--money", "print the money of each day and currency: sales, refunds, revenue, proceeds and the movements of MRR"),
        CommissionOption.argument,
    ] + ReportingCurrencyOption.arguments + [
        .flag("--json", "print JSON"),
    ], discussion: "Each figure is defined in docs/analytics.md.")

    var database: String
    var from: CalendarDay
    var to: CalendarDay
    var productID: String?
    var groupID: String?
    var cohorts: Bool
    var money: Bool
    var commission: CommissionProgram
    var reporting: ReportingCurrencyOption?
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        database = try BackendDatabase.url(parsing: &arguments)
        guard let from = try arguments.value("--from", expected: "a date YYYY-MM-DD", CalendarDay.init) else {
            throw ValidationError("give the first day with --from YYYY-MM-DD")
        }
        guard let to = try arguments.value("--to", expected: "a date YYYY-MM-DD", CalendarDay.init) else {
            throw ValidationError("give the last day with --to YYYY-MM-DD")
        }
        guard from <= to else { throw ValidationError("--from \(from) is after --to \(to)") }
        self.from = from
        self.to = to
        productID = try arguments.value("--product")
        groupID = try arguments.value("--group")
        cohorts = arguments.flag("--cohorts")
        money = arguments.flag("--money")
        commission = try CommissionOption.parse(&arguments)
        reporting = try ReportingCurrencyOption.parse(&arguments)
        if cohorts && money { throw ValidationError("--cohorts and --money are two different tables: give one") }
        json = arguments.flag("--json")
    }

    func run(console: Console) async throws {
        let reporting = try await self.reporting?.resolved()
        let storage = try await BackendDatabase.open(database, console: console)
        do {
            if cohorts {
                let report = try await storage.cohorts(from: from, to: to)
                console.print(json ? String(decoding: try report.json(), as: UTF8.self) : Self.table(report))
            } else {
                let report = try await storage.metrics(MetricsQuery(from: from, to: to, productID: productID, groupID: groupID))
                console.print(json ? String(decoding: try report.json(commission: commission, reporting: reporting), as: UTF8.self)
                                   : money ? try Self.moneyTable(report, commission: commission, reporting: reporting) : Self.table(report))
            }
        } catch let error as BackendError {
            throw CommandFailure(error.description)
        }
    }

    /// A row per day: every count, then MRR and refunds per currency, named as the API names them;
    /// the range's rates at the foot, each with its definition.
    static func table(_ report: MetricsReport) -> String {
        guard let asOf = report.asOf else { return "no notifications recorded yet: nothing to count" }
        let currencies = Set(report.days.flatMap { Array($0.mrrMicros.keys) + Array($0.refundedMilliunits.keys) }).sorted()
        var table = TextTable(header: ["date"] + DailyMetrics.countFigures.map(\.name) + currencies.map { "mrr.\($0)" } + currencies.map { "refunded.\($0)" })
        table.numeric = Set(1..<table.header.count)
        for day in report.displayedDays() {
            table.rows.append([day.date] + day.counts.map { String($0.value) }
                              + currencies.map { Money.text(units: day.money["mrr"]?[$0] ?? 0) }
                              + currencies.map { Money.text(units: day.money["refunded"]?[$0] ?? 0) })
        }
        return table.text + "\n\nstock figures at the end of each day (\(report.timeZone)); the last day's at the newest notification, \(asOf.formatted(.iso8601))"
            + "\n" + rateLines(report.rates)
    }

    /// The rates at the foot of the table, each with its definition (docs/analytics.md).
    static func rateLines(_ rates: RateFigures) -> String {
        [
            "churn_rate \(RateFigures.percent(rates.churn)): \(RateFigures.churnDefinition)",
            "trial_conversion_rate \(RateFigures.percent(rates.trialConversion)) (\(rates.trialsConverted) of \(rates.trialsEnded) ended, \(rates.trialsPending) pending): \(RateFigures.trialConversionDefinition)",
            "refund_rate \(RateFigures.percent(rates.refund)) (\(rates.paidTransactionsRefunded) of \(rates.paidTransactions)): \(RateFigures.refundDefinition)",
        ].joined(separator: "\n")
    }

    /// A row per day and currency: what was sold, refunded, given back, kept after refunds and after
    /// Apple's commission, and what moved MRR (decreases negative; as shown, they add up to the change
    /// of the MRR shown).
    static func moneyTable(_ report: MetricsReport, commission: CommissionProgram, reporting: ReportingCurrency? = nil) throws(BackendError) -> String {
        guard let asOf = report.asOf else { return "no notifications recorded yet: nothing to count" }
        if let reporting { try reporting.check(report.days.reduce(into: Set<String>()) { $0.formUnion($1.currencies) }) }
        let money = ["sales", "refunded", "reversed", "prorated_refunded", "revenue", "proceeds", "mrr"]
        var table = TextTable(header: ["date", "currency"] + money + MRRMovement.allCases.map { "mrr_movement.\($0.rawValue)" })
        table.numeric = Set(2..<table.header.count)
        for (day, shown) in zip(report.days, report.displayedDays(commission, reporting: reporting)) {
            for currency in day.currencies.sorted() {
                table.rows.append([shown.date, currency] + money.map { Money.text(units: shown.money[$0]?[currency] ?? 0) }
                                  + MRRMovement.allCases.map { Money.text(units: shown.movements[$0]?[currency] ?? 0) })
            }
            if let reporting, let converted = shown.converted, !day.currencies.isEmpty {
                table.rows.append([shown.date, "all:\(reporting.currency)"] + money.map { Money.text(units: converted.money[$0] ?? 0) }
                                  + MRRMovement.allCases.map { Money.text(units: converted.movements[$0] ?? 0) })
            }
        }
        let rates = reporting.map { reporting in
            "; all:\(reporting.currency) adds every currency at " + reporting.rates.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        } ?? ""
        return table.text + "\n\nsales on the day of each purchase; proceeds after Apple's commission (\(commission.rawValue)), before taxes\(rates); "
            + "amounts rounded once, to the cent, half to even; "
            + "MRR at the end of each day (\(report.timeZone)), the last day's at the newest notification, \(asOf.formatted(.iso8601))"
    }

    static func table(_ report: CohortReport) -> String {
        guard report.asOf != nil else { return "no notifications recorded yet: nothing to count" }
        let longest = report.cohorts.map(\.retained.count).max() ?? 0
        var table = TextTable(header: ["COHORT", "STARTED"] + (0..<longest).map { "M+\($0 + 1)" })
        table.numeric = Set(1..<table.header.count)
        for cohort in report.cohorts {
            table.rows.append([cohort.month.monthDescription, String(cohort.subscriptions)] + cohort.retentionPercent.map { percent in
                cohort.subscriptions == 0 ? "-" : "\(percent)%"
            })
        }
        return table.text + "\n\nthe share of each month's new subscriptions active at the end of each later month"
    }
}

/// `storekit backend metrics rebuild`: recomputes the rollups from the recorded transactions and notifications.
struct BackendMetricsRebuildCommand: BackendDatabaseCommand {
    static let declaration = CommandDeclaration("backend metrics rebuild", group: .backend, abstract: "Recompute the backend's subscription rollups from its recorded transactions and notifications, in one transaction.", arguments: BackendOptions.databaseArguments + [
        .option("--time-zone", "ZONE", "keep the figures in this time zone's days from now on (UTC, America/Los_Angeles); every backend sharing the database counts in them"),
    ])

    var database: String
    var timeZone: String?

    init(database: String) { self.database = database }

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        database = try BackendDatabase.url(parsing: &arguments)
        timeZone = try arguments.value("--time-zone")
    }

    func run(storage: any BackendStorage, console: Console) async throws {
        let started = ContinuousClock.now
        let zone: String
        do {
            try await storage.rebuildMetrics(timeZone: timeZone)
            zone = try await storage.metricsTimeZone()
        } catch { throw CommandFailure(error.description) }
        let elapsed = ContinuousClock.now - started
        console.print("rebuilt the subscription rollups, in \(zone) days, in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))")
    }
}

/// `--commission standard|small-business`: whose commission the proceeds take off.
enum CommissionOption {
    static let argument = ArgumentDeclaration.option("--commission", "PROGRAM", "whose commission proceeds take off: standard (30%, 15% on subscriptions after a year of paid service; the default) or small-business (15%)")

    static func parse(_ arguments: inout ArgumentScanner) throws(ValidationError) -> CommissionProgram {
        try arguments.value("--commission", expected: "standard or small-business", CommissionProgram.init(rawValue:)) ?? .standard
    }
}

/// `--currency CODE --rates FILE|LIST`: every amount also in one reporting currency, at rates the
/// user gives (a JSON file `{"GBP": 1.27}`, or `GBP:1.27,EUR:1.08`).
struct ReportingCurrencyOption: Sendable {
    static let arguments: [ArgumentDeclaration] = [
        .option("--currency", "CODE", "also report every amount in this currency (ISO 4217), at the rates of --rates"),
        .option("--rates", "FILE|LIST", "what one unit of each currency is worth in --currency: a JSON file {\"GBP\": 1.27} or GBP:1.27,EUR:1.08"),
    ]

    var currency: String
    var rates: String

    static func parse(_ arguments: inout ArgumentScanner) throws(ValidationError) -> ReportingCurrencyOption? {
        let currency = try arguments.value("--currency")
        let rates = try arguments.value("--rates")
        switch (currency, rates) {
        case (nil, nil): return nil
        case (let currency?, let rates?): return ReportingCurrencyOption(currency: currency, rates: rates)
        case (nil, _?): throw ValidationError("--rates needs the currency they convert to with --currency CODE")
        case (_?, nil): throw ValidationError("--currency needs the rates to it with --rates FILE or --rates GBP:1.27,EUR:1.08")
        }
    }

    /// The rates, read from the file when `rates` names one (off the cooperative pool).
    func resolved() async throws -> ReportingCurrency {
        let source = rates
        let text = try await BlockingWork.run("read --rates") { () throws(CommandFailure) -> String in
            guard FileManager.default.fileExists(atPath: source) else { return source }
            do { return try String(contentsOfFile: source, encoding: .utf8) } catch {
                throw CommandFailure("cannot read the rates in \(source): \(error.localizedDescription)")
            }
        }
        do { return try ReportingCurrency(currency: currency, ratesText: text) } catch { throw CommandFailure(error.description) }
    }
}
