import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPService
import StoreKitCatalog
import Testing
import TestSupport

/// A scripted year of many subscribers in a Sandbox store: random starts, free trials and
/// introductory prices, cancellations, billing failures with and without recovery (in and out of a
/// grace period), upgrades, resubscriptions and refunds, in two currencies.
struct AnalyticsYear {
    let store: SimulatedAppStore
    let clock: ManualStoreClock
    let subscribers: Int
    static let start = TestStores.start

    init(subscribers: Int) throws {
        self.subscribers = subscribers
        clock = ManualStoreClock(startingAt: Self.start)
        store = try SimulatedAppStore.create(configuration: TestStores.shop,
                                             identity: StoreIdentity(bundleId: "com.example.shop", environment: .sandbox),
                                             authority: try CertificateAuthority.make(), storage: InMemoryLedgerStorage(), clock: clock,
                                             identifiers: .sequential())
    }

    private enum Action { case buy(String), cancel, refundLatest, upgrade, buyOnce(String), refundOneTime, downgrade, extend, expireNow, buyBack(String), reverseRefund, redeemCode, crossgrade }

    /// The plans bought, each as often as it appears: weekly plans are few (each renews fifty times a year).
    private static let plans = [ExampleShop.premiumYearly, ExampleShop.premiumYearly, ExampleShop.premiumMonthly, ExampleShop.premiumMonthly,
                                ExampleShop.premiumMonthly, ExampleShop.standardMonthly, ExampleShop.standardMonthly, ExampleShop.standardMonthly,
                                ExampleShop.basicWeekly, ExampleShop.newsPlus, ExampleShop.newsPlus, ExampleShop.newsLite]

    /// Plays the year, a day at a time, each day's purchases and changes at noon.
    func play(seed: UInt64 = 24) async throws {
        var random = SplitMix64(state: seed)
        var schedule: [Int: [(account: String, action: Action)]] = [:]
        for index in 0..<subscribers {
            let account = "subscriber-\(index)"
            let plan = Self.plans[Int.random(in: 0..<Self.plans.count, using: &random)]
            let day = Int.random(in: 0..<300, using: &random)
            schedule[day, default: []].append((account, .buy(plan)))
            // Some buy once too: gems (a consumable, every tenth, refunded for every thirtieth) or Pro (every seventeenth).
            if index % 10 == 5 { schedule[day + 1, default: []].append((account, .buyOnce(ExampleShop.gems))) }
            if index % 30 == 5 { schedule[day + 3, default: []].append((account, .refundOneTime)) }
            if index % 17 == 3 { schedule[day + 2, default: []].append((account, .buyOnce(ExampleShop.pro))) }
            // Some get 40 days more from the developer; some are expired early (the store's control):
            // neither may change the MRR already counted.
            if index % 23 == 7 { schedule[day + 20, default: []].append((account, .extend)) }
            if index % 29 == 11 { schedule[day + 25, default: []].append((account, .expireNow)) }
            // A refund reversed three days later; an offer code redeemed by a subscriber (OFFER_REDEEMED, half
            // price for two months from the next renewal); a crossgrade from monthly to yearly at renewal.
            if index % 41 == 13 {
                schedule[day + 30, default: []].append((account, .refundLatest))
                schedule[day + 33, default: []].append((account, .reverseRefund))
            }
            if index % 7 == 2, plan == ExampleShop.standardMonthly { schedule[day + 20, default: []].append((account, .redeemCode)) }
            if index % 7 == 4, plan == ExampleShop.premiumMonthly { schedule[day + 45, default: []].append((account, .crossgrade)) }
            let roll = Int.random(in: 0..<100, using: &random)
            if roll < 30 {
                let cancelDay = day + Int.random(in: 1..<120, using: &random)
                schedule[cancelDay, default: []].append((account, .cancel))
                if roll < 10 { schedule[cancelDay + Int.random(in: 40..<90, using: &random), default: []].append((account, .buyBack(plan))) }
            } else if roll < 40, plan == ExampleShop.standardMonthly || plan == ExampleShop.basicWeekly {
                schedule[day + Int.random(in: 5..<60, using: &random), default: []].append((account, .upgrade))
            } else if roll < 46 {
                schedule[day + Int.random(in: 1..<200, using: &random), default: []].append((account, .refundLatest))
            } else if roll < 56, plan == ExampleShop.premiumMonthly || plan == ExampleShop.newsPlus {
                // After premium's three introductory months, or news' free month.
                schedule[day + Int.random(in: 100..<200, using: &random), default: []].append((account, .downgrade))
            }
        }
        // One subscriber stays a whole year: the renewal after it is charged at the reduced commission.
        schedule[0, default: []].append(("subscriber-veteran", .buy(ExampleShop.newsLite)))
        for day in 0..<366 {
            try await store.advanceTime(to: Self.start.addingTimeInterval(Double(day) * 86_400 + 43_200))
            // Billing fails for renewals in two spells: with a grace period, then without one. Half of
            // those caught are fixed a few days after each spell.
            switch day {
            case 120: try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = true }
            case 131, 236: try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = false }
            case 220: try await store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true; $0.billingGracePeriodIsEnabled = false }
            case 133, 240:
                for record in try await store.subscriptionRecords() where [.inGracePeriod, .inBillingRetryPeriod].contains(record.state)
                    && record.originalTransactionID % 2 == 0 {
                    try await store.resolveBillingIssue(originalTransactionID: record.originalTransactionID)
                }
            default: break
            }
            for (account, action) in schedule[day] ?? [] {
                try await perform(action, account: account)
            }
        }
        // The newest notification comes at 06:00 of the next day, before that day's noon renewals: the
        // periods ending at noon still count on that day, whose figures are taken at 06:00.
        try await store.advanceTime(to: Self.start.addingTimeInterval(366 * 86_400 + 21_600))
        try await perform(.buy(ExampleShop.newsLite), account: "subscriber-late")
    }

    private func perform(_ action: Action, account: String) async throws {
        switch action {
        case .buy(let product):
            // Every third subscriber's account is in the United Kingdom: they pay in pounds; of the others
            // every fifth in France, in euros.
            let number = Int(account.split(separator: "-").last ?? "0") ?? 0
            if number % 3 == 0 {
                try await store.configureAccount(account, storefront: "GBR")
            } else if number % 5 == 0 {
                try await store.configureAccount(account, storefront: "FRA")
            }
            _ = try await store.purchase(PurchaseRequest(productID: product, account: account, device: "\(account)-phone",
                                                         appAccountToken: BackendScenario.token(account)))
        case .cancel:
            for record in try await store.subscriptionRecords(account: account)
                where record.autoRenewEnabled && [.subscribed, .inGracePeriod, .inBillingRetryPeriod].contains(record.state) {
                try await store.setAutoRenew(originalTransactionID: record.originalTransactionID, enabled: false)
            }
        case .reverseRefund:
            if let refunded = try await store.ledgerTransactions(account: account).last(where: { $0.revocation != nil && $0.ownership == .purchased }) {
                try await store.reverseRefund(refunded.id)
            }
        case .redeemCode:
            if let record = try await store.subscriptionRecords(account: account).first(where: { $0.state == .subscribed }),
               record.productID == ExampleShop.standardMonthly {
                _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.standardMonthly, account: account, device: "\(account)-phone",
                                                             appAccountToken: BackendScenario.token(account), offer: .code(referenceName: "HALF-PRICE")))
            }
        case .crossgrade:
            if let record = try await store.subscriptionRecords(account: account).first(where: { $0.state == .subscribed }),
               record.productID == ExampleShop.premiumMonthly {
                _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumYearly, account: account, device: "\(account)-phone",
                                                             appAccountToken: BackendScenario.token(account)))
            }
        case .buyBack(let product):
            // Back with the plan's win-back offer where it has one and the customer's subscription has lapsed.
            let winBack = [ExampleShop.premiumMonthly: "premium.monthly.freemonth", ExampleShop.premiumYearly: "premium.yearly.comeback"][product]
            do {
                guard let winBack else { throw TestFailure("no win-back offer") }
                _ = try await store.purchase(PurchaseRequest(productID: product, account: account, device: "\(account)-phone",
                                                             appAccountToken: BackendScenario.token(account), offer: .winBack(id: winBack)))
            } catch {
                try await perform(.buy(product), account: account)
            }
        case .buyOnce(let product):
            _ = try await store.purchase(PurchaseRequest(productID: product, account: account, device: "\(account)-phone",
                                                         appAccountToken: BackendScenario.token(account)))
        case .refundOneTime:
            if let bought = try await store.ledgerTransactions(account: account).last(where: { $0.expirationDate == nil && $0.revocation == nil }) {
                try await store.refundTransaction(bought.id)
            }
        case .refundLatest:
            if let latest = try await store.ledgerTransactions(account: account).last(where: { $0.revocation == nil && $0.expirationDate != nil }) {
                try await store.refundTransaction(latest.id)
            }
        case .extend:
            if let record = try await store.subscriptionRecords(account: account).first(where: { $0.state == .subscribed }) {
                try await store.extendRenewalDate(originalTransactionID: record.originalTransactionID, days: 40)
            }
        case .expireNow:
            if let record = try await store.subscriptionRecords(account: account).first(where: { $0.state == .subscribed }) {
                try await store.expireSubscription(productID: record.productID, account: account)
            }
        case .downgrade:
            // Buying a lower level of the group: it takes effect at the next renewal.
            if let record = try await store.subscriptionRecords(account: account).first(where: { $0.state == .subscribed }) {
                let lower = record.groupID == ExampleShop.plus ? ExampleShop.standardMonthly : ExampleShop.newsLite
                _ = try await store.purchase(PurchaseRequest(productID: lower, account: account, device: "\(account)-phone",
                                                             appAccountToken: BackendScenario.token(account)))
            }
        case .upgrade:
            if let record = try await store.subscriptionRecords(account: account).first(where: { $0.state == .subscribed }),
               record.groupID == ExampleShop.plus {
                _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: account, device: "\(account)-phone",
                                                             appAccountToken: BackendScenario.token(account)))
            }
        }
    }

    /// A subscriber still subscribed at the end who also bought gems: a customer with history to show.
    func subscriberWithPurchases() async throws -> String? {
        for index in stride(from: 5, to: subscribers, by: 10) {
            let account = "subscriber-\(index)"
            if try await store.subscriptionRecords(account: account).contains(where: { $0.state == .subscribed }) { return account }
        }
        return nil
    }

    /// Every notification of the outbox as a webhook body, oldest first.
    func notificationBodies() async throws -> [Data] {
        try await store.notifications().map { Data(#"{"signedPayload":"\#($0.signedPayload)"}"#.utf8) }
    }

    /// A backend service trusting this store, on given storage.
    func service(on storage: any BackendStorage) throws -> BackendService {
        let verifier = try SignedDataVerifier(rootCertificates: [store.rootCertificate], bundleId: "com.example.shop", environment: .sandbox)
        let clock = self.clock
        return BackendService(storage: storage, intake: SignedDataIntake(verifier: verifier), now: { clock.now() })
    }

    /// Posts every notification to the backend, eight at a time (so its writes are grouped), and
    /// checks each was recorded.
    static func deliver(_ bodies: [Data], to service: BackendService) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in stride(from: lane, to: bodies.count, by: 8) {
                        let response = await service.post("/apple/notifications", bodies[index])
                        guard response.status == 200 else {
                            throw TestFailure("notification \(index) was answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}

/// The figures computed another way: straight from the store's own ledger (its transactions, its
/// catalog's periods, its outbox), instant by instant, without the backend's periods and rollups.
struct IndependentMetrics {
    struct Subscription {
        var transactions: [LedgerTransaction]
        var notifications: [NotificationRecord]
    }

    let subscriptions: [UInt64: Subscription]
    let transactionsByID: [UInt64: LedgerTransaction]
    let notifications: [NotificationRecord]
    let catalog = Catalog(configuration: TestStores.shop)
    /// The newest notification's date: the current day's stock figures are taken then.
    let asOf: Date

    /// Whose days the figures are counted in, by Foundation's calendar (not the backend's arithmetic).
    let calendar: Calendar

    /// When each transaction stood refunded: from the revocation date a `REFUND`'s transaction carried
    /// until a `REFUND_REVERSED` (docs/analytics.md: access is cut from the refund to the reversal).
    let refundedSpans: [UInt64: [(start: Date, end: Date)]]

    init(store: SimulatedAppStore, timeZone: TimeZone = TimeZone(identifier: "UTC")!) async throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
        let transactions = try await store.ledgerTransactions().filter { $0.ownership != .familyShared }
        notifications = try await store.notificationRecords()
        var subscriptions: [UInt64: Subscription] = [:]
        var byID: [UInt64: LedgerTransaction] = [:]
        for transaction in transactions {
            byID[transaction.id] = transaction
            subscriptions[transaction.originalID, default: Subscription(transactions: [], notifications: [])].transactions.append(transaction)
        }
        for notification in notifications {
            guard let id = notification.transactionID, let transaction = byID[id] else { continue }
            subscriptions[transaction.originalID]?.notifications.append(notification)
        }
        for key in subscriptions.keys { subscriptions[key]!.transactions.sort { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) } }
        self.subscriptions = subscriptions
        transactionsByID = byID
        asOf = notifications.map(\.date).max() ?? AnalyticsYear.start
        var spans: [UInt64: [(start: Date, end: Date)]] = [:]
        for notification in notifications.sorted(by: { ($0.date, $0.sequence) < ($1.date, $1.sequence) }) {
            guard let id = notification.transactionID, byID[id] != nil else { continue }
            if notification.type == .refund, !(spans[id]?.contains { $0.end == .distantFuture } ?? false) {
                spans[id, default: []].append((notification.transaction?.revocationDate ?? notification.date, .distantFuture))
            } else if notification.type == .refundReversed, let open = spans[id]?.lastIndex(where: { $0.end == .distantFuture }) {
                spans[id]![open].end = notification.date
            }
        }
        for transaction in transactions {
            if let revocation = transaction.revocation, !(spans[transaction.id]?.contains { $0.end == .distantFuture } ?? false) {
                spans[transaction.id, default: []].append((revocation.date, .distantFuture))
            }
        }
        refundedSpans = spans
    }

    enum Kind { case paid, trial, intro, grace }

    /// Which part of the business a count is of: the app, one group, or one product.
    enum Scope: Hashable, CustomStringConvertible {
        case app, group(String), product(String)

        func covers(_ transaction: LedgerTransaction) -> Bool {
            switch self {
            case .app: true
            case .group(let id): transaction.subscriptionGroupID == id
            case .product(let id): transaction.productID == id
            }
        }

        var query: (productID: String?, groupID: String?) {
            switch self {
            case .app: (nil, nil)
            case .group(let id): (nil, id)
            case .product(let id): (id, nil)
            }
        }

        var description: String {
            switch self {
            case .app: "the app"
            case .group(let id): "group \(id)"
            case .product(let id): "product \(id)"
            }
        }
    }

    /// The day an instant falls on in ``calendar``'s time zone.
    func localDay(_ date: Date) -> CalendarDay {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return CalendarDay(year: Int64(parts.year!), month: Int64(parts.month!), day: Int64(parts.day!))
    }

    /// The first instant of a day in ``calendar``'s time zone.
    func start(of day: CalendarDay) -> Date {
        let (year, month, dayOfMonth) = day.components
        return calendar.date(from: DateComponents(year: Int(year), month: Int(month), day: Int(dayOfMonth)))!
    }

    /// Whether a transaction stood refunded at an instant.
    func isRefunded(_ transaction: LedgerTransaction, at instant: Date) -> Bool {
        refundedSpans[transaction.id]?.contains { $0.start <= instant && instant < $0.end } ?? false
    }

    /// What a subscription was at an instant: entitled by which transaction and how, or not at all.
    func state(of subscription: Subscription, at instant: Date) -> (LedgerTransaction, Kind)? {
        let renewing = subscription.transactions.filter { $0.expirationDate != nil }
        // The transaction in force: the last one bought by then, unless it stood refunded.
        if let current = renewing.last(where: { $0.purchaseDate <= instant }), instant < current.expirationDate!, !isRefunded(current, at: instant) {
            switch current.offer?.discountType {
            case .freeTrial?: return (current, .trial)
            case .some where current.offer?.type == .introductoryOffer: return (current, .intro)
            default: return (current, .paid)
            }
        }
        // A billing grace period after a failed renewal, until it ends, the subscription renews, or is refunded or expired.
        for failure in subscription.notifications where failure.type == .didFailToRenew {
            guard let grace = failure.renewalInfo?.gracePeriodExpiresDate, let failedID = failure.transactionID,
                  let failed = transactionsByID[failedID], let expiry = failed.expirationDate, expiry <= instant, instant < grace else { continue }
            let renewedSince = renewing.contains { $0.purchaseDate > failed.purchaseDate && $0.purchaseDate <= instant }
            let refunded = refundedSpans[failedID]?.contains { $0.end > expiry && max($0.start, expiry) <= instant } ?? false
            let ended = subscription.notifications.contains {
                [.expired, .gracePeriodExpired, .revoke].contains($0.type) && $0.date >= expiry && $0.date <= instant
            }
            if !renewedSince && !refunded && !ended { return (failed, .grace) }
        }
        return nil
    }

    /// A transaction's price per month, in millionths, from the catalog's periods.
    func monthlyMicros(_ transaction: LedgerTransaction) -> Int64 {
        guard transaction.offer?.discountType != .freeTrial, let product = catalog.product(id: transaction.productID),
              let info = product.subscription else { return 0 }
        var period = info.period
        if let offer = transaction.offer, offer.type == .introductoryOffer, let intro = info.introductoryOffer { period = intro.period }
        let (numerator, denominator): (Int64, Int64)
        switch period.unit {
        case .day: (numerator, denominator) = (365, 12 * Int64(period.value))
        case .week: (numerator, denominator) = (13, 3 * Int64(period.value))
        case .month: (numerator, denominator) = (1, Int64(period.value))
        case .year: (numerator, denominator) = (1, 12 * Int64(period.value))
        }
        return MonthlyPrice.micros(price: transaction.price, numerator: numerator, denominator: denominator)
    }

    /// Each day's figures from `from` through the day of ``asOf``, for `scope`.
    func days(from: CalendarDay, scope: Scope = .app) -> [DailyMetrics] {
        let today = localDay(asOf)
        var days: [DailyMetrics] = []
        var day = from
        while day <= today {
            var figures = DailyMetrics(day: day)
            let instant = min(start(of: day.adding(days: 1)).addingTimeInterval(-0.001), asOf)
            for subscription in subscriptions.values {
                guard let (transaction, kind) = state(of: subscription, at: instant), scope.covers(transaction) else { continue }
                // Active means paying; a grace period also counts as what the failed renewal's period was.
                var paying = kind
                if kind == .grace {
                    figures.gracePeriod += 1
                    paying = transaction.offer?.discountType == .freeTrial ? .trial : transaction.offer?.type == .introductoryOffer ? .intro : .paid
                }
                switch paying {
                case .trial: figures.freeTrials += 1
                case .intro: figures.activeSubscriptions += 1; figures.introductoryPrice += 1
                case .paid, .grace: figures.activeSubscriptions += 1
                }
                let micros = monthlyMicros(transaction)
                if micros != 0 { figures.mrrMicros[transaction.currency, default: 0] += micros }
            }
            days.append(figures)
            day = day.adding(days: 1)
        }
        func index(_ instant: Date) -> Int? {
            let index = Int(localDay(instant).number - from.number)
            return days.indices.contains(index) ? index : nil
        }
        let reduced = reducedCommission()
        for transaction in transactionsByID.values where transaction.price > 0 && scope.covers(transaction) {
            guard let index = index(transaction.purchaseDate) else { continue }
            days[index].salesMilliunits[transaction.currency, default: 0] += transaction.price
            days[index].paidTransactions += 1
            if transaction.revocation != nil { days[index].paidTransactionsRefunded += 1 }
            if reduced.contains(transaction.id) { days[index].salesReducedCommissionMilliunits[transaction.currency, default: 0] += transaction.price }
        }
        for subscription in subscriptions.values {
            for (instant, figure, transaction) in changes(of: subscription) where scope.covers(transaction) {
                guard let index = index(instant) else { continue }
                days[index][keyPath: figure] += 1
            }
            for outcome in trialOutcomes(of: subscription) where scope.covers(outcome.trial) {
                guard let index = index(outcome.started) else { continue }
                days[index].trialOutcomesEnded += 1
                if outcome.converted { days[index].trialOutcomesConverted += 1 }
            }
            for found in movements(of: subscription) where found.perProduct == (scope.query.productID != nil) && scope.covers(found.transaction) {
                guard let index = index(found.instant) else { continue }
                days[index].mrrMovementMicros[found.movement, default: [:]][found.transaction.currency, default: 0] += found.micros
            }
            for (instant, left, micros) in prorations(of: subscription) where scope.covers(left) {
                guard let index = index(instant) else { continue }
                days[index].proratedRefundedMicros[left.currency, default: 0] += micros
                if reduced.contains(left.id) { days[index].proratedRefundedReducedCommissionMicros[left.currency, default: 0] += micros }
            }
        }
        for notification in notifications {
            guard let id = notification.transactionID, let transaction = transactionsByID[id], scope.covers(transaction),
                  let index = index(notification.date) else { continue }
            switch notification.type {
            case .didRenew:
                days[index].renewals += 1
            case .refund:
                days[index].refunds += 1
                days[index].refundedMilliunits[transaction.currency, default: 0] += transaction.price
                if reduced.contains(id) { days[index].refundedReducedCommissionMilliunits[transaction.currency, default: 0] += transaction.price }
            case .refundReversed:
                days[index].refundsReversed += 1
                days[index].reversedMilliunits[transaction.currency, default: 0] += transaction.price
                if reduced.contains(id) { days[index].reversedReducedCommissionMilliunits[transaction.currency, default: 0] += transaction.price }
            default: break
            }
        }
        for index in days.indices { days[index].dropZeroAmounts() }
        return days
    }

    /// The paid transactions charged after a year of paid service, as things stood when each was
    /// charged: the paid days of the paid transactions before it (to their expiry or the next purchase,
    /// never past its own purchase; none for one refunded then), added up over a run that no lapse
    /// of more than 60 days interrupts.
    func reducedCommission() -> Set<UInt64> {
        var reduced: Set<UInt64> = []
        for subscription in subscriptions.values {
            let renewing = subscription.transactions.filter { $0.expirationDate != nil }
            let paid = renewing.filter { $0.price > 0 && $0.offer?.discountType != .freeTrial }
            for (position, transaction) in paid.enumerated() {
                let charged = transaction.purchaseDate
                var total: Int64 = 0
                var reach: Date?
                for earlier in paid[..<position] where !isRefunded(earlier, at: charged) {
                    if let last = reach, earlier.purchaseDate.timeIntervalSince(last) > 60 * 86_400 { total = 0; reach = nil }
                    let end = min(paidEnd(of: earlier, in: renewing), charged)
                    let start = max(earlier.purchaseDate, reach ?? earlier.purchaseDate)
                    if end > start { total += AppStoreJSON.milliseconds(from: end) - AppStoreJSON.milliseconds(from: start) }
                    reach = max(reach ?? end, end)
                }
                if let last = reach, charged.timeIntervalSince(last) > 60 * 86_400 { total = 0 }
                if total >= 365 * 86_400_000 { reduced.insert(transaction.id) }
            }
        }
        return reduced
    }

    private func paidEnd(of transaction: LedgerTransaction, in renewing: [LedgerTransaction]) -> Date {
        let next = renewing.first { $0.purchaseDate > transaction.purchaseDate }?.purchaseDate ?? .distantFuture
        return min(transaction.expirationDate!, next)
    }

    /// The unused part of each plan an upgrade mid-period left: its price × the time it still had ÷
    /// the time it was bought for, in millionths (half to even), on the day of the upgrade.
    func prorations(of subscription: Subscription) -> [(Date, LedgerTransaction, Int64)] {
        let renewing = subscription.transactions.filter { $0.expirationDate != nil }
        var found: [(Date, LedgerTransaction, Int64)] = []
        for (left, next) in zip(renewing, renewing.dropFirst()) where left.price > 0 && left.offer?.discountType != .freeTrial {
            // The period it was charged for: to the expiry the first notification about it told (an extension adds free days).
            let expiry = subscription.notifications.filter { $0.transactionID == left.id }.min { ($0.date, $0.sequence) < ($1.date, $1.sequence) }?
                .transaction?.expiresDate ?? left.expirationDate!
            guard next.productID != left.productID, next.purchaseDate < expiry, next.purchaseDate > left.purchaseDate,
                  !isRefunded(left, at: next.purchaseDate) else { continue }
            let remaining = Decimal(AppStoreJSON.milliseconds(from: expiry) - AppStoreJSON.milliseconds(from: next.purchaseDate))
            let whole = Decimal(AppStoreJSON.milliseconds(from: expiry) - AppStoreJSON.milliseconds(from: left.purchaseDate))
            var exact = Decimal(left.price) * 1_000 * remaining / whole, rounded = Decimal()
            NSDecimalRound(&rounded, &exact, 0, .bankers)
            found.append((next.purchaseDate, left, NSDecimalNumber(decimal: rounded).int64Value))
        }
        return found
    }

    /// What a subscription is at an instant: paying (full or introductory price), in a free trial, or
    /// nothing; a grace period counts as what the failed renewal's period was.
    enum Standing: Equatable { case none, trial, paying(intro: Bool) }

    func standing(of subscription: Subscription, at instant: Date) -> (Standing, LedgerTransaction?, Kind?) {
        guard let (transaction, kind) = state(of: subscription, at: instant) else { return (.none, nil, nil) }
        if transaction.offer?.discountType == .freeTrial { return (.trial, transaction, kind) }
        return (.paying(intro: transaction.offer?.type == .introductoryOffer), transaction, kind)
    }

    /// The subscription's starts, conversions and ends up to ``asOf``, found by reading its standing at
    /// every moment it could change, each with the figure it counts in and the transaction whose product
    /// it counts for: the one after the change; for an end, and for a trial's conversion, the one before.
    func changes(of subscription: Subscription) -> [(Date, WritableKeyPath<DailyMetrics, Int64>, LedgerTransaction)] {
        var found: [(Date, WritableKeyPath<DailyMetrics, Int64>, LedgerTransaction)] = []
        var was: (standing: Standing, transaction: LedgerTransaction?, kind: Kind?) = (.none, nil, nil)
        var everPaid = false
        for instant in candidateInstants(of: subscription) where instant <= asOf {
            let now = standing(of: subscription, at: instant)
            switch (was.standing, now.0) {
            case (.none, .paying): found.append((instant, everPaid ? \.reactivations : \.newSubscriptions, now.1!))
            case (.none, .trial): found.append((instant, \.trialsStarted, now.1!))
            case (.trial, .paying):
                found.append((instant, \.trialConversions, was.transaction!))
                if was.transaction!.productID != now.1!.productID { found += [(instant, \.movedOut, was.transaction!), (instant, \.movedIn, now.1!)] }
            case (.paying, .trial): found += [(instant, \.churnedVoluntary, was.transaction!), (instant, \.trialsStarted, now.1!)]
            case (.paying(let wasIntro), .paying(let isIntro)):
                if was.transaction!.productID != now.1!.productID { found += [(instant, \.movedOut, was.transaction!), (instant, \.movedIn, now.1!)] }
                if wasIntro, !isIntro, now.2 != .grace { found.append((instant, \.introductoryConversions, now.1!)) }
            case (.paying, .none), (.trial, .none):
                // Why access ended: a refund (also in a grace period), a renewal that could not be billed, or the customer.
                let ended = was.transaction!
                let about = subscription.notifications.filter { $0.transactionID == ended.id }
                var reason: WritableKeyPath<DailyMetrics, Int64> = \.churnedVoluntary
                if refundedSpans[ended.id]?.contains(where: { $0.start == instant }) == true {
                    reason = \.refundEnds
                } else if was.kind == .grace {
                    let cancelled = subscription.notifications.contains { $0.type == .expired && $0.subtype == .voluntary && $0.date == instant }
                    reason = cancelled ? \.churnedVoluntary : \.churnedInvoluntary
                } else if about.contains(where: { $0.type == .didFailToRenew })
                            || about.contains(where: { $0.type == .expired && ($0.subtype == .billingRetry || $0.subtype == .productNotForSale) }) {
                    reason = \.churnedInvoluntary
                }
                if was.standing == .trial { reason = reason == \.churnedInvoluntary ? \.trialBillingFailures : \.trialCancellations }
                found.append((instant, reason, ended))
            default: break
            }
            if case .paying = now.0 { everPaid = true }
            was = now
        }
        return found
    }

    /// Each free trial's outcome, on the instant it started, once a notification from its end on has arrived.
    func trialOutcomes(of subscription: Subscription) -> [(started: Date, trial: LedgerTransaction, converted: Bool)] {
        var found: [(started: Date, trial: LedgerTransaction, converted: Bool)] = []
        var running: (Date, LedgerTransaction)?
        var was = Standing.none
        for instant in candidateInstants(of: subscription) where instant <= asOf {
            let now = standing(of: subscription, at: instant)
            if now.0 == .trial, was != .trial { running = (instant, now.1!) }
            if was == .trial, now.0 != .trial, let (started, trial) = running {
                running = nil
                if subscription.notifications.contains(where: { $0.date >= instant }) {
                    if case .paying = now.0 { found.append((started, trial, true)) } else { found.append((started, trial, false)) }
                }
            }
            was = now.0
        }
        return found
    }

    /// Every moment a subscription's state could change: each purchase, expiry, refund and reversal,
    /// each grace period's end, each ending notification.
    func candidateInstants(of subscription: Subscription) -> [Date] {
        var instants: Set<Date> = []
        for transaction in subscription.transactions where transaction.expirationDate != nil {
            instants.formUnion([transaction.purchaseDate, transaction.expirationDate!])
            for span in refundedSpans[transaction.id] ?? [] {
                instants.insert(span.start)
                if span.end != .distantFuture { instants.insert(span.end) }
            }
        }
        for notification in subscription.notifications {
            if let grace = notification.renewalInfo?.gracePeriodExpiresDate { instants.insert(grace) }
            if [.expired, .gracePeriodExpired, .revoke].contains(notification.type) { instants.insert(notification.date) }
        }
        return instants.sorted()
    }

    /// The subscription's changes of MRR up to ``asOf``, found by reading its state at every moment it
    /// could change (``candidateInstants(of:)``), each with the transaction whose product and currency it
    /// counts for, for its group (`perProduct` false) and for its products (`perProduct` true): a plan
    /// change moves the group by the difference, the plan left down by all it paid (a contraction) and the
    /// plan taken up by all it pays. Paying again after a lapse, a free month first or not, is a reactivation.
    func movements(of subscription: Subscription) -> [(instant: Date, movement: MRRMovement, transaction: LedgerTransaction, micros: Int64, perProduct: Bool)] {
        var found: [(instant: Date, movement: MRRMovement, transaction: LedgerTransaction, micros: Int64, perProduct: Bool)] = []
        var was: (transaction: LedgerTransaction?, micros: Int64) = (nil, 0)
        var everPaid = false
        var afterLapse = false
        for instant in candidateInstants(of: subscription) where instant <= asOf {
            let state = self.state(of: subscription, at: instant)
            let now = (transaction: state?.0, micros: state.map { monthlyMicros($0.0) } ?? 0)
            func both(_ movement: MRRMovement, _ transaction: LedgerTransaction, _ micros: Int64, group: Bool = true, product: Bool = true) {
                guard micros != 0 else { return }
                if group { found.append((instant, movement, transaction, micros, false)) }
                if product { found.append((instant, movement, transaction, micros, true)) }
            }
            if was.transaction == nil, now.transaction != nil { afterLapse = everPaid }
            let increase: MRRMovement = everPaid ? (was.transaction == nil || afterLapse ? .reactivation : .expansion) : .new
            if let before = was.transaction, let after = now.transaction {
                let moved = before.productID != after.productID
                if moved {
                    both(.contraction, before, -was.micros, group: false)
                    both(was.micros == 0 || before.currency != after.currency ? increase : .expansion, after, now.micros, group: false)
                }
                var paying = was.micros
                if before.currency != after.currency {
                    both(.contraction, before, -paying, product: !moved)
                    paying = 0
                }
                if paying == 0, now.micros > 0 {
                    both(increase, after, now.micros, product: !moved)
                } else if now.micros != paying {
                    both(now.micros > paying ? .expansion : .contraction, now.micros > paying ? after : before, now.micros - paying, product: !moved)
                }
            } else if let before = was.transaction {
                both(.churned, before, -was.micros)
            } else if let after = now.transaction {
                both(increase, after, now.micros)
            }
            if now.micros > 0 {
                everPaid = true
                afterLapse = false
            }
            was = now
        }
        return found
    }

    /// Each month's new subscriptions and how many were paying at the end of each month after (a free
    /// trial is not retained yet), for the months ended by ``asOf``.
    func cohorts() -> [CohortReport.Cohort] {
        var byMonth: [CalendarDay: [Subscription]] = [:]
        for subscription in subscriptions.values {
            guard let first = subscription.transactions.first(where: { $0.expirationDate != nil }) else { continue }
            byMonth[localDay(first.purchaseDate).firstOfMonth, default: []].append(subscription)
        }
        return byMonth.keys.sorted().map { month in
            var retained: [Int64] = []
            var months: Int64 = 1
            while start(of: month.firstOfMonth(adding: months + 1)).addingTimeInterval(-0.001) <= asOf {
                let instant = start(of: month.firstOfMonth(adding: months + 1)).addingTimeInterval(-0.001)
                retained.append(Int64(byMonth[month]!.filter {
                    if case .paying = standing(of: $0, at: instant).0 { return true } else { return false }
                }.count))
                months += 1
            }
            return CohortReport.Cohort(month: month, subscriptions: Int64(byMonth[month]!.count), retained: retained)
        }
    }
}
