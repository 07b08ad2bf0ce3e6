import AppStoreBackend
import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import Testing
import TestSupport

/// The backend's subscription metrics against the same figures computed independently from the
/// store's own ledger, for a scripted year of 1,000 subscribers, on SQLite and PostgreSQL, as kept
/// while notifications arrive and again after a rebuild.
// The limit catches a hang, not slowness: these are the suite's heaviest tests, they start with it and
// share two cores with everything else, so they end last (a clean-clone run whose machine was busier
// took 645 s in all and stopped them at 600 s).
@Suite(.timeLimit(.minutes(15)))
struct SubscriptionAnalyticsTests {
    /// The year is played once and shared by the tests.
    static let year = Task { () throws -> (AnalyticsYear, IndependentMetrics, [Data]) in
        let year = try AnalyticsYear(subscribers: 1_000)
        try await year.play()
        return (year, try await IndependentMetrics(store: year.store), try await year.notificationBodies())
    }

    static let firstDay = CalendarDay(milliseconds: AppStoreJSON.milliseconds(from: AnalyticsYear.start))

    @Test("a year of 1,000 subscribers: every day's figures and the cohorts equal the ledger's, kept and rebuilt", arguments: BackendEngine.available)
    func yearOfSubscribers(engine: BackendEngine) async throws {
        let (year, expected, bodies) = try await Self.year.value
        let expectedDays = expected.days(from: Self.firstDay)
        let expectedCohorts = expected.cohorts()
        // The scenario has every kind of event, in both currencies.
        let totals = expectedDays.reduce(into: DailyMetrics(day: Self.firstDay)) { total, day in
            total.newSubscriptions += day.newSubscriptions; total.trialConversions += day.trialConversions
            total.churnedVoluntary += day.churnedVoluntary; total.churnedInvoluntary += day.churnedInvoluntary
            total.reactivations += day.reactivations; total.refunds += day.refunds; total.gracePeriod += day.gracePeriod
            total.introductoryPrice += day.introductoryPrice; total.freeTrials += day.freeTrials
            total.trialsStarted += day.trialsStarted; total.trialCancellations += day.trialCancellations; total.introductoryConversions += day.introductoryConversions
            total.refundEnds += day.refundEnds; total.movedIn += day.movedIn
        }
        #expect(totals.newSubscriptions + totals.trialsStarted > 900 && totals.trialConversions > 50 && totals.churnedVoluntary > 50 && totals.churnedInvoluntary > 10)
        #expect(totals.reactivations > 10 && totals.refunds > 20 && totals.gracePeriod > 0 && totals.introductoryPrice > 0 && totals.freeTrials > 0)
        #expect(Set(expectedDays.flatMap(\.mrrMicros.keys)) == ["USD", "GBP", "EUR"])
        // Money: sales in both currencies (one-time purchases among them), some after a year of paid service,
        // every kind of MRR movement, and each day's movements adding up to its change of MRR.
        #expect(Set(expectedDays.flatMap(\.salesMilliunits.keys)) == ["USD", "GBP", "EUR"])
        // Every change of what a subscription is has its figure, and each day's add up to the change of
        // active subscriptions and of trials: the daily reconciliation.
        #expect(totals.trialCancellations > 20 && totals.introductoryConversions > 20 && totals.refundEnds > 5 && totals.movedIn > 5, "\(totals)")
        for (yesterday, day) in zip(expectedDays, expectedDays.dropFirst()) {
            #expect(Self.reconciles(day, after: yesterday), "\(day.day): \(yesterday) → \(day)")
        }
        // Extensions and early expiries are among the year's events.
        #expect(expected.notifications.contains { $0.type == .renewalExtended })
        #expect(expected.transactionsByID.values.contains { $0.offer?.type == .winBackOffer }, "subscribers won back with an offer")
        #expect(expected.notifications.contains { $0.type == .offerRedeemed }, "offer codes redeemed")
        #expect(expected.notifications.contains { $0.type == .refundReversed }, "refunds reversed")
        let monthlyOriginals = Set(expected.transactionsByID.values.filter { $0.productID == ExampleShop.premiumMonthly }.map(\.originalID))
        #expect(expected.transactionsByID.values.contains { $0.productID == ExampleShop.premiumYearly && $0.reason == .renewal
            && monthlyOriginals.contains($0.originalID) }, "crossgrades from monthly to yearly")
        #expect(expected.notifications.contains { $0.type == .expired && $0.subtype == .voluntary })
        #expect(expectedDays.contains { !$0.salesReducedCommissionMilliunits.isEmpty })
        for movement in MRRMovement.allCases {
            #expect(expectedDays.contains { !($0.mrrMovementMicros[movement] ?? [:]).isEmpty }, "no \(movement) MRR in the year")
        }
        for (yesterday, day) in zip(expectedDays, expectedDays.dropFirst()) {
            var change = day.mrrMicros
            for (currency, micros) in yesterday.mrrMicros { change[currency, default: 0] -= micros }
            #expect(day.netMRRMovementMicros == change.filter { $0.value != 0 }, "\(day.day): movements \(day.mrrMovementMicros), MRR \(yesterday.mrrMicros) → \(day.mrrMicros)")
        }
        // The last day's figures are taken at its newest notification, before periods that end later that day.
        let endOfLastDay = AppStoreJSON.date(fromMilliseconds: CalendarDay(milliseconds: AppStoreJSON.milliseconds(from: expected.asOf)).lastMilliseconds)
        #expect(expected.subscriptions.values.contains { expected.state(of: $0, at: expected.asOf) != nil && expected.state(of: $0, at: endOfLastDay) == nil })

        try await BackendScenario.withStorage(engine: engine) { storage in
            let service = try year.service(on: storage)
            try await AnalyticsYear.deliver(bodies, to: service)
            let query = MetricsQuery(from: Self.firstDay, to: Self.firstDay.adding(days: 400))
            let kept = try await storage.metrics(query)
            #expect(kept.asOf == expected.asOf)
            Self.expectEqual(kept.days, expectedDays, "kept as notifications arrived")
            let keptCohorts = try await storage.cohorts(from: Self.firstDay, to: Self.firstDay.adding(days: 400)).cohorts
            #expect(keptCohorts == expectedCohorts)

            try await storage.rebuildMetrics()
            Self.expectEqual(try await storage.metrics(query).days, expectedDays, "after a rebuild")
            #expect(try await storage.cohorts(from: Self.firstDay, to: Self.firstDay.adding(days: 400)).cohorts == expectedCohorts)

            // Per group and per product too: every day's figures equal the independent count, and every
            // identity (active subscriptions, trials, MRR movements as shown) holds each day.
            AnalyticsShapesTests.expectIdentities(try await storage.metrics(query), "the app")
            let scopes: [IndependentMetrics.Scope] = [.group(ExampleShop.plus), .group(ExampleShop.news)]
                + [ExampleShop.premiumYearly, ExampleShop.premiumMonthly, ExampleShop.standardMonthly, ExampleShop.basicWeekly, ExampleShop.newsPlus,
                   ExampleShop.newsLite, ExampleShop.gems, ExampleShop.pro].map { .product($0) }
            for scope in scopes {
                let report = try await storage.metrics(MetricsQuery(from: Self.firstDay, to: query.to, productID: scope.query.productID,
                                                                    groupID: scope.query.groupID))
                Self.expectEqual(report.days, expected.days(from: Self.firstDay, scope: scope), "\(scope)")
                AnalyticsShapesTests.expectIdentities(report, "\(scope)")
            }
            // Per product and group: the parts add up to the whole.
            var active = [Int64](repeating: 0, count: expectedDays.count)
            for product in [ExampleShop.premiumYearly, ExampleShop.premiumMonthly, ExampleShop.standardMonthly, ExampleShop.basicWeekly,
                            ExampleShop.newsPlus, ExampleShop.newsLite] {
                let part = try await storage.metrics(MetricsQuery(from: Self.firstDay, to: query.to, productID: product))
                for (index, day) in part.days.enumerated() { active[index] += day.activeSubscriptions }
            }
            #expect(active == expectedDays.map(\.activeSubscriptions))
            // Per product too, with the plan changes into and out of it.
            for product in [ExampleShop.premiumMonthly, ExampleShop.standardMonthly] {
                let days = try await storage.metrics(MetricsQuery(from: Self.firstDay, to: query.to, productID: product)).days
                #expect(days.reduce(0) { $0 + $1.movedIn + $1.movedOut } > 0, "\(product) has plan changes")
                for (yesterday, day) in zip(days, days.dropFirst()) {
                    #expect(Self.reconciles(day, after: yesterday), "\(product) \(day.day): \(yesterday) → \(day)")
                }
            }
            let news = try await storage.metrics(MetricsQuery(from: Self.firstDay, to: query.to, groupID: ExampleShop.news))
            let plus = try await storage.metrics(MetricsQuery(from: Self.firstDay, to: query.to, groupID: ExampleShop.plus))
            #expect(zip(news.days, plus.days).map { $0.renewals + $1.renewals } == expectedDays.map(\.renewals))
            for (name, days) in [("news", news.days), ("plus", plus.days)] {
                for (yesterday, day) in zip(days, days.dropFirst()) {
                    #expect(Self.reconciles(day, after: yesterday), "group \(name) \(day.day): \(yesterday) → \(day)")
                }
            }
        }
    }

    @Test("in a named time zone's days (Pacific/Auckland: each noon in UTC is past midnight there, and daylight saving time starts and ends): every day's figures and the cohorts equal the ledger's counted in that zone, kept and rebuilt")
    func inATimeZone() async throws {
        let (year, utc, bodies) = try await Self.year.value
        let auckland = try #require(TimeZone(identifier: "Pacific/Auckland"))
        let expected = try await IndependentMetrics(store: year.store, timeZone: auckland)
        let first = Self.firstDay
        let expectedDays = expected.days(from: first)
        let expectedCohorts = expected.cohorts()
        // The store acts at noon UTC, which is the next day in Auckland: the first purchases are counted on January 2.
        #expect(utc.days(from: first).first.map { $0.newSubscriptions + $0.trialsStarted } ?? 0 > 0)
        #expect(expectedDays.first.map { $0.newSubscriptions + $0.trialsStarted } == 0)
        try await BackendScenario.withStorage(engine: .sqlite) { storage in
            // Set on an empty database, so the rollups are kept in Auckland's days as the notifications arrive.
            try await storage.rebuildMetrics(timeZone: "Pacific/Auckland")
            try await AnalyticsYear.deliver(bodies, to: try year.service(on: storage))
            let query = MetricsQuery(from: first, to: first.adding(days: 400))
            let kept = try await storage.metrics(query)
            #expect(kept.timeZone == "Pacific/Auckland")
            Self.expectEqual(kept.days, expectedDays, "kept in Auckland's days")
            #expect(try await storage.cohorts(from: first, to: first.adding(days: 400)).cohorts == expectedCohorts)
            // To UTC and back: a rebuild puts every figure on the zone's days.
            try await storage.rebuildMetrics(timeZone: "UTC")
            Self.expectEqual(try await storage.metrics(query).days, utc.days(from: first), "rebuilt in UTC")
            try await storage.rebuildMetrics(timeZone: "Pacific/Auckland")
            Self.expectEqual(try await storage.metrics(query).days, expectedDays, "rebuilt in Auckland's days")
            await #expect(throws: BackendError.self) { try await storage.rebuildMetrics(timeZone: "Mars/Olympus_Mons") }
        }
    }

    @Test("an extension or an early expiry leaves the MRR already reported unchanged: a renewal is priced by the period it was charged for")
    func reportedMRRStays() async throws {
        let year = try AnalyticsYear(subscribers: 0)
        let store = year.store
        // A weekly plan after its free three days, and six months paid up front (an introductory offer) in pounds.
        _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.basicWeekly, account: "walt", device: "walt-phone"))
        try await store.configureAccount("sixer", storefront: "GBR")
        _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.standardMonthly, account: "sixer", device: "sixer-phone"))
        try await store.advanceTime(to: AnalyticsYear.start.addingTimeInterval(12 * 86_400 + 3_600))
        let first = Self.firstDay, lastReported = Self.firstDay.adding(days: 12)
        try await BackendScenario.withStorage(engine: .sqlite) { storage in
            let service = try year.service(on: storage)
            try await AnalyticsYear.deliver(try await year.notificationBodies(), to: service)
            let before = try await storage.metrics(MetricsQuery(from: first, to: lastReported)).days.map(\.mrrMicros)
            #expect(before.last == ["USD": 4_290_000, "GBP": 1_665_000], "0.99 a week and 9.99 for six months: \(before)")

            let walt = try #require(try await store.subscriptionRecords(account: "walt").first)
            try await store.extendRenewalDate(originalTransactionID: walt.originalTransactionID, days: 40)
            try await store.advanceTime(to: AnalyticsYear.start.addingTimeInterval(13 * 86_400 + 3_600))
            try await store.expireSubscription(productID: ExampleShop.standardMonthly, account: "sixer")
            try await store.advanceTime(to: AnalyticsYear.start.addingTimeInterval(14 * 86_400 + 3_600))
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "walt", device: "walt-phone"))
            try await AnalyticsYear.deliver(try await year.notificationBodies(), to: service)
            let after = try await storage.metrics(MetricsQuery(from: first, to: lastReported.adding(days: 2))).days.map(\.mrrMicros)
            #expect(Array(after.prefix(before.count)) == before, "the days already reported")
            // The extended week still counts 0.99 a week, not 0.99 over 47 days; the expired plan nothing.
            #expect(after.last == ["USD": 4_290_000], "\(after)")
            try await storage.rebuildMetrics()
            #expect(try await storage.metrics(MetricsQuery(from: first, to: lastReported.adding(days: 2))).days.map(\.mrrMicros) == after)
        }
    }

    @Test("one reporting currency: every amount also added up in the currency asked for, at the rates given, and said which; a currency without a rate is refused by name")
    func reportingCurrency() async throws {
        let year = try AnalyticsYear(subscribers: 0)
        let store = year.store
        for (account, storefront) in [("ursula", "USA"), ("gwen", "GBR"), ("emile", "FRA")] {
            try await store.configureAccount(account, storefront: storefront)
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.newsLite, account: account, device: "\(account)-phone"))
            _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: account, device: "\(account)-phone"))
        }
        try await store.advanceTime(to: AnalyticsYear.start.addingTimeInterval(3 * 86_400))
        let day = Self.firstDay.description
        try await BackendScenario.withStorage(engine: .sqlite) { storage in
            let service = try year.service(on: storage)
            try await AnalyticsYear.deliver(try await year.notificationBodies(), to: service)
            let figures = try #require(try await storage.metrics(MetricsQuery(from: Self.firstDay, to: Self.firstDay)).days.first)
            #expect(Set(figures.mrrMicros.keys) == ["USD", "GBP", "EUR"], "three currencies: \(figures.mrrMicros)")

            let answer = await service.get("/v1/metrics?from=\(day)&to=\(day)&currency=usd&rates=GBP:1.25,EUR:1.1")
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            let body = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
            let reporting = try #require(body["reporting"] as? [String: Any])
            #expect(reporting["currency"] as? String == "USD")
            #expect(reporting["rates"] as? [String: Double] == ["USD": 1, "GBP": 1.25, "EUR": 1.1])
            let converted = try #require(((body["days"] as? [[String: Any]])?.first?["in_reporting_currency"]) as? [String: Any])
            // Each currency's exact amount times its rate, added up, then rounded to the cent.
            func expected(_ amounts: [String: Int64], perUnit: Double) -> Double {
                let rates = ["USD": 1.0, "GBP": 1.25, "EUR": 1.1]
                return (amounts.reduce(0.0) { $0 + Double($1.value) * rates[$1.key]! } / perUnit * 100).rounded() / 100
            }
            #expect(converted["mrr"] as? Double == expected(figures.mrrMicros, perUnit: 1_000_000), "\(converted) from \(figures.mrrMicros)")
            #expect(converted["sales"] as? Double == expected(figures.salesMilliunits, perUnit: 1_000), "\(converted) from \(figures.salesMilliunits)")
            #expect((converted["mrr_movement"] as? [String: Double])?["new"] == expected(figures.mrrMovementMicros[.new] ?? [:], perUnit: 1_000_000))

            for (query, words) in [("currency=USD&rates=GBP:1.25", "EUR"), ("currency=USD", "give the rates"), ("rates=GBP:1.25", "currency"),
                                   ("currency=dollars&rates=GBP:1", "ISO 4217"), ("currency=USD&rates=GBP:0", "above 0"),
                                   ("currency=USD&rates=GBP=1.2", "CODE:RATE")] {
                let refused = await service.get("/v1/metrics?from=\(day)&to=\(day)&\(query)")
                let text = String(decoding: refused.body, as: UTF8.self)
                #expect(refused.status == 400 && text.contains(words), "\(query): \(refused.status) \(text)")
            }
        }
    }

    /// Whether a day's starts, conversions, plan changes and ends account for the change of its active
    /// subscriptions and of its trials since the day before.
    static func reconciles(_ day: DailyMetrics, after yesterday: DailyMetrics) -> Bool {
        let paying = day.newSubscriptions + day.reactivations + day.trialConversions + day.movedIn
            - day.movedOut - day.churnedVoluntary - day.churnedInvoluntary - day.refundEnds
        let trials = day.trialsStarted - day.trialConversions - day.trialCancellations - day.trialBillingFailures
        return day.activeSubscriptions - yesterday.activeSubscriptions == paying && day.freeTrials - yesterday.freeTrials == trials
    }

    /// Compares day by day and reports the first days that differ, field by field.
    static func expectEqual(_ actual: [DailyMetrics], _ expected: [DailyMetrics], _ when: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(actual.count == expected.count, "\(when): \(actual.count) days, expected \(expected.count)", sourceLocation: sourceLocation)
        let differing = zip(actual, expected).filter { $0 != $1 }
        for (got, want) in differing.prefix(3) {
            Issue.record("\(when): \(got.day) is\n  \(got)\nexpected\n  \(want)", sourceLocation: sourceLocation)
        }
        if differing.count > 3 { Issue.record("\(when): \(differing.count) days differ in all", sourceLocation: sourceLocation) }
    }
}

