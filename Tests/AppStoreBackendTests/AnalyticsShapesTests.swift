import AppStoreBackend
import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import Testing
import TestSupport

/// A year of subscribers each of whom has one of the shapes a recount found miscounted (issue 54): a
/// refund reversed five days later (in yen), a refund during a billing grace period, renewals after a
/// year of paid service in dollars, pounds and euros (70%/85% and the Small Business Program), a free
/// trial ended by an upgrade, upgrades in the middle of a paid period (prorated), and a win-back free
/// month that converts. Every day's figures, per app, group and product, equal the independent count
/// (``IndependentMetrics``, which follows docs/analytics.md), kept as notifications arrive and after a
/// rebuild, on SQLite and PostgreSQL; and every identity holds each day, to the cent as displayed.
@Suite(.timeLimit(.minutes(10)))
struct AnalyticsShapesTests {
    /// The year is played once and shared by the tests.
    static let year = Task { () throws -> (AnalyticsYear, IndependentMetrics, [Data]) in
        let year = try AnalyticsYear(subscribers: 0)
        try await play(year)
        return (year, try await IndependentMetrics(store: year.store), try await year.notificationBodies())
    }

    static let firstDay = CalendarDay(milliseconds: AppStoreJSON.milliseconds(from: AnalyticsYear.start))

    /// Every scope a figure is asked for: the app, each group, each product (one-time purchases among them).
    static let scopes: [IndependentMetrics.Scope] = [.app, .group(ExampleShop.plus), .group(ExampleShop.news)]
        + [ExampleShop.premiumYearly, ExampleShop.premiumMonthly, ExampleShop.standardMonthly, ExampleShop.basicWeekly, ExampleShop.newsPlus,
           ExampleShop.newsLite, ExampleShop.gems].map { .product($0) }

    /// The script: what each customer does on which day (at noon), in which storefront.
    static func play(_ year: AnalyticsYear) async throws {
        let store = year.store
        func buy(_ product: String, _ account: String, offer: PurchaseOffer? = nil) async throws {
            _ = try await store.purchase(PurchaseRequest(productID: product, account: account, device: "\(account)-phone",
                                                         appAccountToken: BackendScenario.token(account), offer: offer))
        }
        func latest(_ account: String) async throws -> LedgerTransaction? {
            try await store.ledgerTransactions(account: account).last { $0.revocation == nil && $0.expirationDate != nil }
        }
        let storefronts = ["usa-veteran": "USA", "gbr-veteran": "GBR", "fra-veteran": "FRA", "jiro": "JPN", "greta": "GBR", "ulf": "FRA", "kenji": "JPN"]
        for (account, storefront) in storefronts { try await store.configureAccount(account, storefront: storefront) }
        var script: [Int: [() async throws -> Void]] = [:]
        func on(_ day: Int, _ action: @escaping () async throws -> Void) { script[day, default: []].append(action) }
        // A year and more of paid service in three currencies: the thirteenth charge is at the reduced commission.
        for account in ["usa-veteran", "gbr-veteran", "fra-veteran"] { on(0) { try await buy(ExampleShop.newsLite, account) } }
        // A one-time purchase refunded: in the refund rate's numerator and denominator alike.
        on(2) { try await buy(ExampleShop.gems, "usa-veteran") }
        on(4) {
            if let gems = try await store.ledgerTransactions(account: "usa-veteran").last(where: { $0.productID == ExampleShop.gems }) {
                try await store.refundTransaction(gems.id)
            }
        }
        // A monthly plan in yen refunded on day 64 and the refund reversed five days later.
        on(3) { try await buy(ExampleShop.newsLite, "jiro") }
        on(64) { if let period = try await latest("jiro") { try await store.refundTransaction(period.id) } }
        on(69) {
            if let refunded = try await store.ledgerTransactions(account: "jiro").last(where: { $0.revocation != nil }) {
                try await store.reverseRefund(refunded.id)
            }
        }
        // Another in yen, refunded and never reversed.
        on(8) { try await buy(ExampleShop.newsLite, "kenji") }
        on(50) { if let period = try await latest("kenji") { try await store.refundTransaction(period.id) } }
        // A win-back free month after a lapse, converting to the full price.
        on(10) { try await buy(ExampleShop.premiumMonthly, "wendy") }
        on(50) {
            for record in try await store.subscriptionRecords(account: "wendy") where record.autoRenewEnabled {
                try await store.setAutoRenew(originalTransactionID: record.originalTransactionID, enabled: false)
            }
        }
        on(160) { try await buy(ExampleShop.premiumMonthly, "wendy", offer: .winBack(id: "premium.monthly.freemonth")) }
        // A free trial ended by an upgrade the next day.
        on(20) { try await buy(ExampleShop.basicWeekly, "tara") }
        on(21) { try await buy(ExampleShop.premiumMonthly, "tara") }
        // Upgrades in the middle of a paid period: six months paid up front, and a month in euros.
        on(30) { try await buy(ExampleShop.standardMonthly, "uma") }
        on(75) { try await buy(ExampleShop.premiumMonthly, "uma") }
        on(40) { try await buy(ExampleShop.newsLite, "ulf") }
        on(55) { try await buy(ExampleShop.newsPlus, "ulf") }
        // A renewal that fails into a billing grace period, refunded during it.
        on(105) { try await buy(ExampleShop.newsLite, "greta") }
        on(130) { try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true } }
        on(140) {
            try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = false }
            if let failed = try await latest("greta") { try await store.refundTransaction(failed.id) }
        }
        for day in 0..<400 {
            try await store.advanceTime(to: AnalyticsYear.start.addingTimeInterval(Double(day) * 86_400 + 43_200))
            for action in script[day] ?? [] { try await action() }
        }
        // The newest notification at 06:00 of the next day.
        try await store.advanceTime(to: AnalyticsYear.start.addingTimeInterval(400 * 86_400 + 21_600))
        try await buy(ExampleShop.newsLite, "late")
    }

    @Test("every shape: each day's figures per app, group and product equal the independent count, kept and rebuilt; every identity holds to the cent as shown",
          arguments: BackendEngine.available)
    func everyShape(engine: BackendEngine) async throws {
        let (year, expected, bodies) = try await Self.year.value
        let last = Self.firstDay.adding(days: 401)
        let app = expected.days(from: Self.firstDay)
        // The shapes are all there.
        let total = { (value: KeyPath<DailyMetrics, Int64>) in app.reduce(0) { $0 + $1[keyPath: value] } }
        #expect(total(\.refundsReversed) == 1 && app.contains { $0.reversedMilliunits["JPY"] != nil }, "a refund in yen reversed")
        #expect(total(\.refundEnds) >= 3, "refunds ending access, one in a grace period")
        #expect(expected.notifications.contains { $0.type == .didFailToRenew && $0.renewalInfo?.gracePeriodExpiresDate != nil })
        #expect(Set(app.flatMap(\.salesReducedCommissionMilliunits.keys)) == ["USD", "GBP", "EUR"], "renewals at 85% in three currencies")
        #expect(Set(app.flatMap(\.proratedRefundedMicros.keys)) == ["USD", "EUR"], "upgrades mid-period in two currencies")
        #expect(expected.transactionsByID.values.contains { $0.offer?.type == .winBackOffer }, "a win-back month")
        #expect(total(\.trialOutcomesConverted) >= 2 && total(\.paidTransactionsRefunded) >= 3)
        // The refund in grace ends access as a refund; the reversal gives it back as a reactivation on its day.
        #expect(expected.subscriptions.values.contains { subscription in
            expected.changes(of: subscription).contains { change in
                change.1 == \DailyMetrics.refundEnds && expected.state(of: subscription, at: change.0.addingTimeInterval(-1))?.1 == .grace
            }
        }, "a refund during a grace period")
        let reversal = try #require(expected.notifications.first { $0.type == .refundReversed })
        let jiro = try #require(expected.subscriptions.values.first { $0.notifications.contains { $0.notificationUUID == reversal.notificationUUID } })
        #expect(expected.changes(of: jiro).contains { $0.0 == reversal.date && $0.1 == \DailyMetrics.reactivations })
        #expect(expected.changes(of: jiro).contains { $0.1 == \DailyMetrics.refundEnds && reversal.date.timeIntervalSince($0.0) == 5 * 86_400 })
        let tara = try #require(expected.subscriptions.values.first { $0.transactions.first?.productID == ExampleShop.basicWeekly })
        #expect(expected.changes(of: tara).contains { $0.1 == \DailyMetrics.trialConversions && $0.2.productID == ExampleShop.basicWeekly },
                "the trial converts on its own product")

        try await BackendScenario.withStorage(engine: engine) { storage in
            try await AnalyticsYear.deliver(bodies, to: try year.service(on: storage))
            for pass in ["kept as notifications arrived", "after a rebuild"] {
                if pass == "after a rebuild" { try await storage.rebuildMetrics() }
                for scope in Self.scopes {
                    let query = MetricsQuery(from: Self.firstDay, to: last, productID: scope.query.productID, groupID: scope.query.groupID)
                    let report = try await storage.metrics(query)
                    SubscriptionAnalyticsTests.expectEqual(report.days, expected.days(from: Self.firstDay, scope: scope), "\(scope), \(pass)")
                    Self.expectIdentities(report, "\(scope), \(pass)")
                }
                #expect(try await storage.cohorts(from: Self.firstDay, to: last).cohorts == expected.cohorts(), "cohorts, \(pass)")
            }
        }
    }

    @Test("proceeds are rounded once, half to even, at display: 2.97 at 85% shows 2.52, and the standard and Small Business programs equal the exact shares rounded")
    func proceedsRoundedOnce() async throws {
        var day = DailyMetrics(day: Self.firstDay)
        day.salesMilliunits = ["USD": 2_970, "GBP": 2_970, "EUR": 1_450]
        day.salesReducedCommissionMilliunits = ["GBP": 2_970]
        let report = MetricsReport(asOf: AnalyticsYear.start, days: [day])
        let small = try #require(report.displayedDays(.smallBusiness).first)
        // 2.97 × 85% = 2.5245; 1.45 × 85% = 1.2325.
        #expect(small.money["proceeds"] == ["USD": Decimal(string: "2.52")!, "GBP": Decimal(string: "2.52")!, "EUR": Decimal(string: "1.23")!])
        let standard = try #require(report.displayedDays(.standard).first)
        // 2.97 × 70% = 2.079; 1.45 × 70% = 1.015 (half to even: 1.02); pounds after a year at 85%.
        #expect(standard.money["proceeds"] == ["USD": Decimal(string: "2.08")!, "GBP": Decimal(string: "2.52")!, "EUR": Decimal(string: "1.02")!])
        #expect(Money.rounded(Decimal(string: "2.525")!) == Decimal(string: "2.52")! && Money.rounded(Decimal(string: "2.535")!) == Decimal(string: "2.54")!)

        // Across the year, in every currency and under both programs: the exact share, rounded once.
        let (_, expected, _) = try await Self.year.value
        for figures in expected.days(from: Self.firstDay) {
            for program in CommissionProgram.allCases {
                let kept = Decimal(program == .standard ? 70 : 85) / 100
                var want: [String: Decimal] = [:]
                for currency in figures.currencies {
                    func units(_ amounts: [String: Int64], per: Decimal) -> Decimal { Decimal(amounts[currency] ?? 0) / per }
                    let revenue = units(figures.salesMilliunits, per: 1_000) - units(figures.refundedMilliunits, per: 1_000)
                        + units(figures.reversedMilliunits, per: 1_000) - units(figures.proratedRefundedMicros, per: 1_000_000)
                    let reduced = units(figures.salesReducedCommissionMilliunits, per: 1_000) - units(figures.refundedReducedCommissionMilliunits, per: 1_000)
                        + units(figures.reversedReducedCommissionMilliunits, per: 1_000)
                        - units(figures.proratedRefundedReducedCommissionMicros, per: 1_000_000)
                    var exact = (revenue - reduced) * kept + reduced * Decimal(85) / 100, rounded = Decimal()
                    NSDecimalRound(&rounded, &exact, 2, .bankers)
                    if rounded != 0 { want[currency] = rounded }
                }
                let shown = MetricsReport(asOf: AnalyticsYear.start, days: [figures]).displayedDays(program).first?.money["proceeds"] ?? [:]
                #expect(shown == want, "\(figures.day) \(program)")
            }
        }
    }

    @Test("the rates: churn per 30-day period from the last day back, trial conversion by the trials started, refunds over paid transactions of every kind")
    func rates() async throws {
        let (_, expected, _) = try await Self.year.value
        let days = expected.days(from: Self.firstDay)
        let report = MetricsReport(asOf: expected.asOf, days: days)
        let rates = report.rates
        // 402 days hold thirteen whole 30-day periods counted back from the last day; the first 12 days are left out.
        #expect(rates.churnPeriods.count == days.count / 30 && rates.churnPeriods.last?.first == days[days.count - 30].day)
        for period in rates.churnPeriods {
            let index = days.firstIndex { $0.day == period.first }!
            #expect(period.activeAtStart == (index > 0 ? days[index - 1].activeSubscriptions : 0))
        }
        let tooShort = MetricsReport(asOf: expected.asOf, days: Array(days.prefix(29))).rates
        #expect(tooShort.churn == nil && RateFigures.percent(tooShort.churn) == "—")
        let trials = days.reduce(0) { $0 + $1.trialsStarted }
        #expect(rates.trialsEnded + rates.trialsPending == trials && rates.trialConversion.map { $0 >= 0 && $0 <= 1 } == true)
        #expect(rates.refund.map { $0 > 0 && $0 < 1 } == true && rates.paidTransactions == days.reduce(0) { $0 + $1.paidTransactions })
    }

    /// Each day: active subscriptions and trials reconcile with the day's changes, and the MRR
    /// movements as shown add up to the change of the MRR as shown, each within a cent of its exact
    /// amount.
    static func expectIdentities(_ report: MetricsReport, _ when: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for (yesterday, day) in zip(report.days, report.days.dropFirst()) where !SubscriptionAnalyticsTests.reconciles(day, after: yesterday) {
            Issue.record("\(when) \(day.day): the counts do not reconcile: \(yesterday) → \(day)", sourceLocation: sourceLocation)
        }
        var before = report.mrrBeforeMicros.mapValues(Money.units(micros:))
        for (day, shown) in zip(report.days, report.displayedDays()) {
            let after = day.mrrMicros.mapValues(Money.units(micros:))
            for currency in Set(before.keys).union(after.keys).union(shown.movements.values.flatMap(\.keys)) {
                let moved = shown.movements.values.reduce(Decimal(0)) { $0 + ($1[currency] ?? 0) }
                if moved != (after[currency] ?? 0) - (before[currency] ?? 0) {
                    Issue.record("\(when) \(day.day) \(currency): movements shown \(shown.movements) add to \(moved), MRR shown \(before[currency] ?? 0) → \(after[currency] ?? 0)",
                                 sourceLocation: sourceLocation)
                }
                for (movement, byCurrency) in shown.movements {
                    let exact = Money.exact(micros: day.mrrMovementMicros[movement]?[currency] ?? 0)
                    let gap = (byCurrency[currency] ?? 0) - exact
                    if gap > Decimal(string: "0.01")! || gap < Decimal(string: "-0.01")! {
                        Issue.record("\(when) \(day.day) \(currency) \(movement): shown \(byCurrency[currency] ?? 0), exactly \(exact)", sourceLocation: sourceLocation)
                    }
                }
            }
            before = after
        }
    }
}

extension AnalyticsShapesTests {
    @Test("one set of names and figures: /v1/metrics answers every figure daily.csv and the command line show, under the same names, with the rates and their definitions")
    func oneSetOfNames() async throws {
        let (year, _, bodies) = try await Self.year.value
        try await BackendScenario.withStorage(engine: .sqlite) { storage in
            let service = try year.service(on: storage)
            try await AnalyticsYear.deliver(bodies, to: service)
            let (from, to) = (Self.firstDay.adding(days: 60), Self.firstDay.adding(days: 130))
            let answer = await service.get("/v1/metrics?from=\(from)&to=\(to)")
            let body = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any], "\(answer.status)")
            let days = try #require(body["days"] as? [[String: Any]])
            let names = ["date"] + DailyMetrics.countFigures.map(\.name) + DailyMetrics.moneyFigures + ["mrr_movement"]
            #expect(Set(days.first?.keys.map { $0 } ?? []) == Set(names), "\(days.first ?? [:])")
            let rates = try #require(body["rates"] as? [String: [String: Any]])
            #expect(Set(rates.keys) == ["churn_rate", "trial_conversion_rate", "refund_rate"])
            #expect(rates["churn_rate"]?["definition"] as? String == RateFigures.churnDefinition && rates["churn_rate"]?["value"] is Double)
            // daily.csv: `date`, then the same counts, then the same amounts per currency.
            let report = try await storage.metrics(MetricsQuery(from: from, to: to))
            let csv = report.dailyCSV().split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            let header = try #require(csv.first)
            #expect(Array(header.prefix(1 + DailyMetrics.countFigures.count)) == ["date"] + DailyMetrics.countFigures.map(\.name))
            #expect(Set(header.dropFirst(1 + DailyMetrics.countFigures.count).map { $0.split(separator: ".").dropLast().joined(separator: ".") })
                    == Set(DailyMetrics.moneyFigures + MRRMovement.allCases.map { "mrr_movement.\($0.rawValue)" }))
            // The same values: each CSV cell is the API's figure.
            for (row, day) in zip(csv.dropFirst(), days) {
                for (name, cell) in zip(header, row) {
                    let parts = name.split(separator: ".").map(String.init)
                    let value: Any? = switch parts.count {
                    case 1: day[name]
                    case 2: (day[parts[0]] as? [String: Any])?[parts[1]] ?? 0.0
                    default: ((day[parts[0]] as? [String: Any])?[parts[1]] as? [String: Any])?[parts[2]] ?? 0.0
                    }
                    let text = switch value {
                    case let string as String: string
                    case let number as NSNumber where parts.count == 1: number.stringValue
                    case let number as NSNumber: Money.text(units: Decimal(string: number.stringValue)!)
                    default: "?"
                    }
                    #expect(text == cell, "\(row[0]) \(name)")
                }
            }
        }
    }
}
