import Foundation

/// The figures the daily rollups keep, as stored. Stock figures are kept as changes (+1 on the day a
/// period starts, −1 on the day it ends), so a day's value is the sum of every change up to it; flow
/// figures are counts of the day's events.
public enum SubscriptionMetric: String, CaseIterable, Sendable {
    // Stock, taken at the end of each day.
    case active, freeTrials = "trials", introductoryPrice = "intro", gracePeriod = "grace"
    /// Monthly recurring revenue, in millionths of the currency.
    case mrr
    // Flow, counted on the day of their event. Starts, conversions and ends are changes of what a
    // subscription is (paying, in a free trial, or nothing), dated when they happen; renewals and
    // refunds are notifications, dated when signed.
    case newSubscriptions = "new", trialsStarted = "trials_started", trialConversions = "trial_conversions", renewals
    case churnedVoluntary = "churned_voluntary", churnedInvoluntary = "churned_involuntary", reactivations
    /// A paid introductory price followed by the full price; free trials ended by cancelling, or by a
    /// renewal that could not be billed; paying subscriptions whose access a refund ended.
    case introductoryConversions = "intro_conversions", trialCancellations = "trial_cancellations"
    case trialBillingFailures = "trial_billing_failures", refundEnds = "refund_ends"
    /// A paying subscription changing product: per product, plan changes into and out of it; for a
    /// group or the app each change counts in both, so they cancel out.
    case movedIn = "moved_in", movedOut = "moved_out"
    case refunds
    /// What was refunded, in milliunits of the currency.
    case refunded
    /// The prices of the day's paid purchases and renewals, in milliunits, on the day of their purchase.
    case sales
    /// The part of ``sales`` (and of ``refunded``) on which Apple's commission is reduced: renewals
    /// after a year of paid service.
    case salesReducedCommission = "sales_reduced_commission", refundedReducedCommission = "refunded_reduced_commission"
    /// The day's changes of MRR, by what changed it, in millionths (decreases negative): they add up to
    /// the day's change of ``mrr``, for each product and each group (see ``isMRRMovement``).
    case mrrNew = "mrr_new", mrrExpansion = "mrr_expansion", mrrContraction = "mrr_contraction", mrrChurned = "mrr_churned"
    case mrrReactivated = "mrr_reactivated"
    /// `REFUND_REVERSED` notifications, and what they gave back (milliunits; the reduced commission's
    /// part apart), on the reversal's day.
    case refundsReversed = "refunds_reversed", reversed, reversedReducedCommission = "reversed_reduced_commission"
    /// The unused part of a plan Apple refunds when the customer upgrades mid-period, on the day of
    /// the upgrade, in millionths (the reduced commission's part apart).
    case proratedRefunded = "prorated_refunded", proratedRefundedReducedCommission = "prorated_refunded_reduced_commission"
    /// Paid transactions of any product, and those of them refunded, on the day of their purchase.
    case paidTransactions = "paid_transactions", paidTransactionsRefunded = "paid_transactions_refunded"
    /// Free trials by the day they started, once their outcome is known: how many ended, and how
    /// many of those converted.
    case trialOutcomesEnded = "trial_outcomes_ended", trialOutcomesConverted = "trial_outcomes_converted"

    public var isStock: Bool { [.active, .freeTrials, .introductoryPrice, .gracePeriod, .mrr].contains(self) }

    /// Kept per currency (amounts of money); counts are kept without one.
    public var isMoney: Bool {
        [.mrr, .refunded, .sales, .salesReducedCommission, .refundedReducedCommission, .mrrNew, .mrrExpansion, .mrrContraction, .mrrChurned,
         .mrrReactivated, .reversed, .reversedReducedCommission, .proratedRefunded, .proratedRefundedReducedCommission].contains(self)
    }

    /// A movement of MRR: kept per product and per group apart, since a plan change moves a product's
    /// MRR but only the difference of its group's.
    public var isMRRMovement: Bool { [.mrrNew, .mrrExpansion, .mrrContraction, .mrrChurned, .mrrReactivated].contains(self) }
}

/// What changed a subscription's MRR at a moment (see docs/analytics.md).
public enum MRRMovement: String, CaseIterable, Hashable, Sendable {
    /// A subscription paying for the first time (a trial converting counts here).
    case new
    /// Paying more: a dearer plan, an introductory price ending, a free offer ending after paid periods.
    case expansion
    /// Paying less, still entitled.
    case contraction
    /// Paying nothing any more: access ended (expiry, the end of a grace period, a refund).
    case churned
    /// Paying again after access had ended: a resubscription, billing recovered after a lapse, a refund
    /// reversed, or a win-back free month converting (RevenueCat counts it a resubscription).
    case reactivation

    var metric: SubscriptionMetric {
        switch self {
        case .new: .mrrNew
        case .expansion: .mrrExpansion
        case .contraction: .mrrContraction
        case .churned: .mrrChurned
        case .reactivation: .mrrReactivated
        }
    }
}

/// A row of the daily rollup: a figure's change on one day, in one currency, product and group.
public struct MetricKey: Hashable, Sendable {
    public var day: Int64
    public var metric: SubscriptionMetric
    public var currency: String
    public var productID: String
    public var groupID: String
}

/// A cell of the cohort table: subscriptions that started in a month (`months` 0: how many started)
/// and were active at the end of the month `months` later.
public struct CohortKey: Hashable, Sendable {
    /// The first day of the cohort's month.
    public var cohort: Int64
    public var months: Int64
}

/// A stretch of time a subscription entitled, with what it was paying then.
public struct EntitledPeriod: Hashable, Sendable {
    public enum Kind: String, Sendable {
        case paid, freeTrial = "trial", introductoryPrice = "intro", gracePeriod = "grace"
    }

    public var start: Int64
    public var end: Int64
    public var kind: Kind
    /// For a grace period, what the subscription was in before its renewal failed (paid, a trial or
    /// an introductory price): it counts there too. Otherwise ``kind`` itself.
    public var underlying: Kind
    public var currency: String
    public var productID: String
    public var groupID: String
    /// Its price normalised to a month, in millionths of ``currency`` (0 in a free trial).
    public var monthlyMicros: Int64
    /// The transaction it comes from (not kept with a subscription's last period).
    var transactionID: String = ""
    /// What its end counts as when nothing follows it at once (a churn, a trial's end), as recorded:
    /// taken back on the current day while it still runs.
    public var endFigure: SubscriptionMetric?

    /// The period as one line of text (how the backend keeps a subscription's last period).
    var encoded: String {
        [kind.rawValue, currency, productID, groupID, String(monthlyMicros), underlying.rawValue, endFigure?.rawValue ?? ""].joined(separator: "\t")
    }

    init(start: Int64, end: Int64, kind: Kind, underlying: Kind? = nil, currency: String, productID: String, groupID: String, monthlyMicros: Int64) {
        self.start = start
        self.end = end
        self.kind = kind
        self.underlying = underlying ?? kind
        self.currency = currency
        self.productID = productID
        self.groupID = groupID
        self.monthlyMicros = monthlyMicros
    }

    init?(encoded: String, start: Int64, end: Int64) {
        let fields = encoded.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 7, let kind = Kind(rawValue: fields[0]), let micros = Int64(fields[4]), let underlying = Kind(rawValue: fields[5]) else { return nil }
        self.init(start: start, end: end, kind: kind, underlying: underlying, currency: fields[1], productID: fields[2], groupID: fields[3],
                  monthlyMicros: micros)
        endFigure = SubscriptionMetric(rawValue: fields[6])
    }

    /// Whether it pays (full or introductory price, also in a grace period), rather than a free trial.
    var isPaying: Bool { (kind == .gracePeriod ? underlying : kind) != .freeTrial }

    /// The stock figures this period adds to while it lasts: active subscriptions are the paying ones
    /// (full or introductory price); a free trial counts as a trial only; a grace period counts in its
    /// own column and as what it was before the renewal failed.
    var stock: [(SubscriptionMetric, Int64)] {
        var figures: [(SubscriptionMetric, Int64)] = []
        switch kind == .gracePeriod ? underlying : kind {
        case .paid, .gracePeriod: figures.append((.active, 1))
        case .freeTrial: figures.append((.freeTrials, 1))
        case .introductoryPrice: figures += [(.active, 1), (.introductoryPrice, 1)]
        }
        if kind == .gracePeriod { figures.append((.gracePeriod, 1)) }
        if monthlyMicros != 0 { figures.append((.mrr, monthlyMicros)) }
        return figures
    }
}

/// What one subscription (a customer's original transaction: a subscription in one group, or a
/// single purchase) adds to the rollups, computed from its facts alone. The backend adds the
/// difference between a subscription's contribution after a change and before it, in the change's
/// own database transaction, so the rollups always equal the sum over every subscription, which is
/// what a rebuild computes.
public struct SubscriptionContribution: Equatable, Sendable {
    public var days: [MetricKey: Int64] = [:]
    public var cohorts: [CohortKey: Int64] = [:]
    /// The entitled periods, oldest first, none overlapping.
    public var periods: [EntitledPeriod] = []

    /// The period that ends last: the only one that can still be running at the backend's latest
    /// signed date (the current day's stock figures are taken then).
    public var lastPeriod: EntitledPeriod? { periods.last }

    /// The days its figures fall on.
    private let calendar: ReportingCalendar

    /// The product of the rows that hold a group's own MRR movements (``SubscriptionMetric/isMRRMovement``).
    static let groupScope = "*"

    /// The contribution of one subscription's transactions and notifications, on the days of `calendar`.
    public init(transactions: [TransactionFact], notifications: [NotificationFact], calendar: ReportingCalendar = .utc) {
        self.calendar = calendar
        let owned = transactions.filter { !$0.isFamilyShared }
        var byID: [String: TransactionFact] = [:]
        for transaction in owned { byID[transaction.transactionID] = transaction }
        let renewing = owned.filter { $0.expiresMilliseconds != nil }.sorted(by: TransactionFact.inPurchaseOrder)
        let notifications = notifications.sorted { ($0.signedMilliseconds, $0.notificationUUID) < ($1.signedMilliseconds, $1.notificationUUID) }
        let revocations = Self.revocations(owned, notifications: notifications)
        let charged = Self.chargedExpiries(notifications)
        periods = Self.periods(renewing, notifications: notifications, byID: byID, charged: charged, revocations: revocations)
        for period in periods {
            let startDay = calendar.day(period.start).number
            let endDay = calendar.day(period.end).number
            guard endDay > startDay else { continue }
            for (metric, amount) in period.stock {
                add(day: startDay, metric, amount, period.currency, period.productID, period.groupID)
                add(day: endDay, metric, -amount, period.currency, period.productID, period.groupID)
            }
        }
        let reduced = Self.reducedCommission(renewing, revocations: revocations)
        addEvents(notifications, byID: byID, reducedCommission: reduced)
        addSales(owned, reducedCommission: reduced, revocations: revocations)
        addProration(renewing, charged: charged, reducedCommission: reduced, revocations: revocations)
        addMovements()
        addTransitions(notifications: notifications, revocations: revocations)
        addCohort(firstPurchase: renewing.first?.purchaseMilliseconds)
    }

    /// Each transaction's expiry as the earliest notification about it told it (by signed date, then
    /// UUID, so the order they arrive in does not matter): the end of the period it was charged for.
    static func chargedExpiries(_ notifications: [NotificationFact]) -> [String: Int64] {
        var charged: [String: (signed: Int64, uuid: String, expires: Int64)] = [:]
        for notification in notifications {
            guard let id = notification.transactionID, let expires = notification.transactionExpiresMilliseconds else { continue }
            if let known = charged[id], (known.signed, known.uuid) <= (notification.signedMilliseconds, notification.notificationUUID) { continue }
            charged[id] = (notification.signedMilliseconds, notification.notificationUUID, expires)
        }
        return charged.mapValues(\.expires)
    }

    /// When each transaction was refunded, and until when: a `REFUND` revokes it from the revocation
    /// date its transaction carried, a later `REFUND_REVERSED` gives it back from its own signed date.
    /// A revocation the stored transaction still carries with no notification of it is open-ended; one
    /// a notification told that the stored transaction no longer carries, with no reversal recorded,
    /// ends when the unrevoked view was signed. Intervals are half-open, `Int64.max` for open ones.
    static func revocations(_ owned: [TransactionFact], notifications: [NotificationFact]) -> [String: [(start: Int64, end: Int64)]] {
        var byTransaction: [String: [(start: Int64, end: Int64)]] = [:]
        let facts = Dictionary(owned.map { ($0.transactionID, $0) }, uniquingKeysWith: { first, _ in first })
        for notification in notifications {
            guard let id = notification.transactionID, facts[id] != nil else { continue }
            switch notification.type {
            case "REFUND":
                let start = notification.transactionRevokedMilliseconds ?? notification.signedMilliseconds
                if byTransaction[id]?.contains(where: { $0.end == .max }) == true { continue }
                byTransaction[id, default: []].append((start, .max))
            case "REFUND_REVERSED":
                guard var intervals = byTransaction[id], let open = intervals.lastIndex(where: { $0.end == .max }),
                      intervals[open].start <= notification.signedMilliseconds else { continue }
                intervals[open].end = notification.signedMilliseconds
                byTransaction[id] = intervals
            default:
                break
            }
        }
        for (id, fact) in facts {
            var intervals = byTransaction[id] ?? []
            if let revoked = fact.revokedMilliseconds {
                if !intervals.contains(where: { $0.end == .max }) { intervals.append((revoked, .max)) }
            } else if let open = intervals.lastIndex(where: { $0.end == .max }) {
                intervals[open].end = max(intervals[open].start, fact.signedMilliseconds)
            }
            intervals.removeAll { $0.end <= $0.start }
            if !intervals.isEmpty { byTransaction[id] = intervals.sorted { $0.start < $1.start } }
        }
        return byTransaction
    }

    /// Whether `id` stood refunded at `instant`.
    static func isRevoked(_ id: String, at instant: Int64, _ revocations: [String: [(start: Int64, end: Int64)]]) -> Bool {
        revocations[id]?.contains { $0.start <= instant && instant < $0.end } ?? false
    }

    /// A year of paid service, and how long a lapse may last before the days accrued start over
    /// (Apple's rule for the reduced commission on subscriptions).
    static let yearOfPaidService: Int64 = 365 * 86_400_000
    static let lapseKeepingPaidService: Int64 = 60 * 86_400_000

    /// The subscription's transactions charged after a year of paid service, as things stood when each
    /// was charged: days of paid service accrue over the paid transactions before it (plan changes
    /// included; free trials and transactions refunded by then add none), and start over after a
    /// lapse of more than 60 days. A later refund or reversal never changes a charge already made.
    static func reducedCommission(_ renewing: [TransactionFact], revocations: [String: [(start: Int64, end: Int64)]]) -> Set<String> {
        var reduced: Set<String> = []
        let paid = renewing.enumerated().filter { $0.element.price > 0 && $0.element.offer != .freeTrial }
        for (position, (_, transaction)) in paid.enumerated() where position > 0 {
            let charged = transaction.purchaseMilliseconds
            var accrued: Int64 = 0
            var paidUntil: Int64?
            for (index, earlier) in paid[..<position] {
                if let until = paidUntil, earlier.purchaseMilliseconds - until > lapseKeepingPaidService { accrued = 0 }
                guard !isRevoked(earlier.transactionID, at: charged, revocations), var end = earlier.expiresMilliseconds else { continue }
                if index + 1 < renewing.count { end = min(end, renewing[index + 1].purchaseMilliseconds) }
                end = min(end, charged)
                let start = max(earlier.purchaseMilliseconds, paidUntil ?? earlier.purchaseMilliseconds)
                accrued += max(0, end - start)
                paidUntil = max(paidUntil ?? end, end)
            }
            if let until = paidUntil, charged - until > lapseKeepingPaidService { accrued = 0 }
            if accrued >= yearOfPaidService { reduced.insert(transaction.transactionID) }
        }
        return reduced
    }

    /// Each paid transaction's price on the day of its purchase (any product), the part of it on which
    /// the commission is reduced, and its count (and whether it stands refunded) for the refund rate.
    private mutating func addSales(_ owned: [TransactionFact], reducedCommission: Set<String>, revocations: [String: [(start: Int64, end: Int64)]]) {
        for transaction in owned where transaction.price > 0 {
            let day = calendar.day(transaction.purchaseMilliseconds).number
            add(day: day, .sales, transaction.price, transaction.currency, transaction.productID, transaction.groupID)
            add(day: day, .paidTransactions, 1, "", transaction.productID, transaction.groupID)
            if revocations[transaction.transactionID]?.contains(where: { $0.end == .max }) == true {
                add(day: day, .paidTransactionsRefunded, 1, "", transaction.productID, transaction.groupID)
            }
            if reducedCommission.contains(transaction.transactionID) {
                add(day: day, .salesReducedCommission, transaction.price, transaction.currency, transaction.productID, transaction.groupID)
            }
        }
    }

    /// An upgrade mid-period: Apple refunds the unused part of the plan left (its price × the time it
    /// still had ÷ the time it was charged for), on the day of the upgrade, to the product left.
    private mutating func addProration(_ renewing: [TransactionFact], charged: [String: Int64], reducedCommission: Set<String>,
                                       revocations: [String: [(start: Int64, end: Int64)]]) {
        for (index, left) in renewing.enumerated() where index + 1 < renewing.count && left.price > 0 && left.offer != .freeTrial {
            let next = renewing[index + 1]
            guard let expires = charged[left.transactionID] ?? left.expiresMilliseconds, next.productID != left.productID,
                  next.purchaseMilliseconds < expires, next.purchaseMilliseconds > left.purchaseMilliseconds,
                  !Self.isRevoked(left.transactionID, at: next.purchaseMilliseconds, revocations) else { continue }
            let micros = MonthlyPrice.proportion(milliunits: left.price, part: expires - next.purchaseMilliseconds,
                                                 of: expires - left.purchaseMilliseconds)
            let day = calendar.day(next.purchaseMilliseconds).number
            add(day: day, .proratedRefunded, micros, left.currency, left.productID, left.groupID)
            if reducedCommission.contains(left.transactionID) {
                add(day: day, .proratedRefundedReducedCommission, micros, left.currency, left.productID, left.groupID)
            }
        }
    }

    /// The changes of the subscription's MRR, each at the moment of its change: when a period starts
    /// (after the one before it, or after a time without access) and when access ends. The group's
    /// movements (kept in its rows, product ``groupScope``) add up to its change of MRR; each
    /// product's too: a plan change is a contraction of the plan left by all it paid and an increase
    /// of the plan taken by all it pays (new or a reactivation as the group counts it, else expansion).
    private mutating func addMovements() {
        var everPaid = false
        /// Whether the run of periods without a break began after a lapse of a subscription that had paid.
        var afterLapse = false
        var previous: EntitledPeriod?
        func move(_ movement: MRRMovement, _ micros: Int64, at instant: Int64, _ period: EntitledPeriod, product: String) {
            guard micros != 0 else { return }
            add(day: calendar.day(instant).number, movement.metric, micros, period.currency, product, period.groupID)
        }
        func both(_ movement: MRRMovement, _ micros: Int64, at instant: Int64, _ period: EntitledPeriod) {
            move(movement, micros, at: instant, period, product: Self.groupScope)
            move(movement, micros, at: instant, period, product: period.productID)
        }
        for period in periods {
            var before: EntitledPeriod? = nil
            if let previous {
                if previous.end == period.start {
                    before = previous
                } else {
                    both(.churned, -previous.monthlyMicros, at: previous.end, previous)
                }
            }
            if before == nil { afterLapse = everPaid }
            let now = period.monthlyMicros
            var paying = before?.monthlyMicros ?? 0
            let increase: MRRMovement = everPaid ? (before == nil || afterLapse ? .reactivation : .expansion) : .new
            if let before, before.productID != period.productID {
                // Per product: all of the plan left, and all of the plan taken.
                move(.contraction, -before.monthlyMicros, at: period.start, before, product: before.productID)
                move(before.monthlyMicros == 0 || before.currency != period.currency ? increase : .expansion, now, at: period.start, period,
                     product: period.productID)
            }
            let sameProduct = before.map { $0.productID == period.productID } ?? true
            func group(_ movement: MRRMovement, _ micros: Int64, _ attributed: EntitledPeriod) {
                move(movement, micros, at: period.start, attributed, product: Self.groupScope)
                if sameProduct { move(movement, micros, at: period.start, attributed, product: attributed.productID) }
            }
            if let before, before.currency != period.currency {
                group(.contraction, -paying, before)
                paying = 0
            }
            if paying == 0, now > 0 {
                group(increase, now, period)
            } else if now > paying {
                group(.expansion, now - paying, period)
            } else if now < paying {
                group(.contraction, now - paying, before ?? period)
            }
            if now > 0 {
                everPaid = true
                afterLapse = false
            }
            previous = period
        }
        if let previous { both(.churned, -previous.monthlyMicros, at: previous.end, previous) }
    }

    /// Each transaction entitles from its purchase until it expires or is followed by the next, except
    /// while it stands refunded (from the refund to a reversal); a failed renewal in a billing grace
    /// period entitles from the expiry until the grace ends, the subscription renews again, or it is
    /// refunded or expired.
    private static func periods(_ renewing: [TransactionFact], notifications: [NotificationFact], byID: [String: TransactionFact],
                                charged: [String: Int64], revocations: [String: [(start: Int64, end: Int64)]]) -> [EntitledPeriod] {
        var periods: [EntitledPeriod] = []
        for (index, transaction) in renewing.enumerated() {
            guard let expires = transaction.expiresMilliseconds else { continue }
            var end = expires
            if index + 1 < renewing.count { end = min(end, renewing[index + 1].purchaseMilliseconds) }
            let kind: EntitledPeriod.Kind
            switch transaction.offer {
            case .freeTrial: kind = .freeTrial
            case .introductoryPrice: kind = .introductoryPrice
            case .none: kind = .paid
            }
            // A renewal charged after a gap (a billing problem fixed late) pays either for the period from
            // the missed renewal (fixed in the grace period: the cycle is kept) or for a new period from now.
            let missedRenewal = index > 0 && transaction.isRenewal
                ? renewing[index - 1].expiresMilliseconds.flatMap { $0 < transaction.purchaseMilliseconds ? $0 : nil } : nil
            // Priced by the period it was charged for, not by what an extension or early expiry made of it.
            var asCharged = transaction
            asCharged.expiresMilliseconds = charged[transaction.transactionID] ?? expires
            let monthly = MonthlyPrice.micros(of: asCharged, orFrom: missedRenewal)
            // The time it entitles, less the times it stood refunded.
            var pieces = [(transaction.purchaseMilliseconds, end)]
            for revoked in revocations[transaction.transactionID] ?? [] {
                pieces = pieces.flatMap { start, end -> [(Int64, Int64)] in
                    guard revoked.start < end, revoked.end > start else { return [(start, end)] }
                    return [(start, max(start, revoked.start)), (min(end, revoked.end), end)].filter { $0.1 > $0.0 }
                }
            }
            for (start, end) in pieces {
                var period = EntitledPeriod(start: start, end: end, kind: kind, currency: transaction.currency,
                                            productID: transaction.productID, groupID: transaction.groupID, monthlyMicros: monthly)
                period.transactionID = transaction.transactionID
                periods.append(period)
            }
        }
        let position = Dictionary(renewing.enumerated().map { ($0.element.transactionID, $0.offset) }, uniquingKeysWith: { first, _ in first })
        let endings = notifications.filter { ["EXPIRED", "GRACE_PERIOD_EXPIRED", "REVOKE"].contains($0.type) }.map(\.signedMilliseconds)
        var graced: Set<String> = []
        for notification in notifications where notification.type == "DID_FAIL_TO_RENEW" {
            guard let grace = notification.graceExpiresMilliseconds, let failedID = notification.transactionID,
                  let failed = byID[failedID], let start = failed.expiresMilliseconds, graced.insert(failedID).inserted,
                  let index = position[failedID] else { continue }
            var end = grace
            for revoked in revocations[failedID] ?? [] where revoked.end > start { end = min(end, max(revoked.start, start)) }
            if index + 1 < renewing.count { end = min(end, max(renewing[index + 1].purchaseMilliseconds, start)) }
            if let ending = endings.first(where: { $0 >= start }) { end = min(end, ending) }
            let underlying: EntitledPeriod.Kind = switch failed.offer {
            case .freeTrial: .freeTrial
            case .introductoryPrice: .introductoryPrice
            case .none: .paid
            }
            var gracePeriod = EntitledPeriod(start: start, end: end, kind: .gracePeriod, underlying: underlying, currency: failed.currency,
                                          productID: failed.productID,
                                          groupID: failed.groupID, monthlyMicros: periods.first { $0.transactionID == failedID }?.monthlyMicros
                                            ?? MonthlyPrice.micros(of: failed, orFrom: nil))
            gracePeriod.transactionID = failedID
            periods.append(gracePeriod)
        }
        // Oldest first, each cut where the next begins: a subscription is counted once at any moment.
        periods.sort { ($0.start, $0.end) < ($1.start, $1.end) }
        var disjoint: [EntitledPeriod] = []
        for (index, var period) in periods.enumerated() {
            if index + 1 < periods.count { period.end = min(period.end, periods[index + 1].start) }
            if period.end > period.start { disjoint.append(period) }
        }
        return disjoint
    }

    /// Flow figures, on the day each notification was signed.
    private mutating func addEvents(_ notifications: [NotificationFact], byID: [String: TransactionFact], reducedCommission: Set<String>) {
        for notification in notifications {
            guard let id = notification.transactionID, let transaction = byID[id] else { continue }
            let day = calendar.day(notification.signedMilliseconds).number
            func count(_ metric: SubscriptionMetric, _ amount: Int64 = 1) {
                add(day: day, metric, amount, transaction.currency, transaction.productID, transaction.groupID)
            }
            switch notification.type {
            case "DID_RENEW":
                count(.renewals)
            case "REFUND":
                count(.refunds)
                count(.refunded, transaction.price)
                if reducedCommission.contains(id) { count(.refundedReducedCommission, transaction.price) }
            case "REFUND_REVERSED":
                count(.refundsReversed)
                count(.reversed, transaction.price)
                if reducedCommission.contains(id) { count(.reversedReducedCommission, transaction.price) }
            default:
                break
            }
        }
    }

    /// Starts, conversions and ends: each change of what the subscription is (paying, in a free
    /// trial, or nothing), at its moment, counted for the product it is on after the change (before
    /// it, for an end, and for a trial's conversion: a trial ended by a plan change converts on its
    /// own product, then moves). A day's changes therefore add up to the change of its active
    /// subscriptions and of its trials. Each period's end figure is kept on it
    /// (``EntitledPeriod/endFigure``). Each trial's outcome is also counted on the day it started,
    /// once a notification from its end on has arrived.
    private mutating func addTransitions(notifications: [NotificationFact], revocations: [String: [(start: Int64, end: Int64)]]) {
        func count(_ metric: SubscriptionMetric, at instant: Int64, _ period: EntitledPeriod) {
            add(day: calendar.day(instant).number, metric, 1, "", period.productID, period.groupID)
        }
        let newest = notifications.map(\.signedMilliseconds).max() ?? .min
        /// Why access ended at the end of `period`: a refund, a renewal that could not be billed, or the customer.
        func endReason(of period: EntitledPeriod) -> SubscriptionMetric {
            if revocations[period.transactionID]?.contains(where: { $0.start == period.end }) == true { return .refundEnds }
            let about = notifications.filter { $0.transactionID == period.transactionID }
            if period.kind == .gracePeriod {
                let cancelled = notifications.contains { $0.type == "EXPIRED" && $0.subtype == "VOLUNTARY" && $0.signedMilliseconds == period.end }
                return cancelled ? .churnedVoluntary : .churnedInvoluntary
            }
            if about.contains(where: { $0.type == "DID_FAIL_TO_RENEW" })
                || about.contains(where: { $0.type == "EXPIRED" && ["BILLING_RETRY", "PRODUCT_NOT_FOR_SALE"].contains($0.subtype ?? "") }) {
                return .churnedInvoluntary
            }
            return .churnedVoluntary
        }
        var everPaid = false
        /// The trial running: the period it started with.
        var trial: EntitledPeriod?
        func trialOutcome(converted: Bool, at instant: Int64) {
            guard let started = trial else { return }
            trial = nil
            guard newest >= instant else { return }
            count(.trialOutcomesEnded, at: started.start, started)
            if converted { count(.trialOutcomesConverted, at: started.start, started) }
        }
        for index in periods.indices {
            let period = periods[index]
            let before = index > 0 && periods[index - 1].end == period.start ? periods[index - 1] : nil
            switch (before.map(\.isPaying), period.isPaying) {
            case (nil, true): count(everPaid ? .reactivations : .newSubscriptions, at: period.start, period)
            case (nil, false), (true?, false):
                // A paying subscription moving to a free period stops paying: counted as cancelled, then as a trial.
                if before != nil { count(.churnedVoluntary, at: period.start, before!) }
                count(.trialsStarted, at: period.start, period)
                trial = period
            case (false?, true):
                count(.trialConversions, at: period.start, before!)
                trialOutcome(converted: true, at: period.start)
                if before!.productID != period.productID {
                    count(.movedOut, at: period.start, before!)
                    count(.movedIn, at: period.start, period)
                }
            case (true?, true):
                if before!.productID != period.productID {
                    count(.movedOut, at: period.start, before!)
                    count(.movedIn, at: period.start, period)
                }
                if before!.underlying == .introductoryPrice, period.underlying == .paid { count(.introductoryConversions, at: period.start, period) }
            case (false?, false): break
            }
            if period.isPaying { everPaid = true }
            // An end with nothing after it at once.
            if index + 1 == periods.count || periods[index + 1].start != period.end {
                var figure = endReason(of: period)
                if !period.isPaying {
                    figure = figure == .churnedInvoluntary ? .trialBillingFailures : .trialCancellations
                    trialOutcome(converted: false, at: period.end)
                }
                periods[index].endFigure = figure
                count(figure, at: period.end, period)
            }
        }
    }

    /// The cohort of the month of the first purchase: counted as started, and as retained at the end
    /// of each later month a paying period covers (a free trial is not retained yet).
    private mutating func addCohort(firstPurchase: Int64?) {
        guard let firstPurchase else { return }
        let month = calendar.day(firstPurchase).firstOfMonth
        cohorts[CohortKey(cohort: month.number, months: 0), default: 0] += 1
        guard let lastEnd = lastPeriod?.end else { return }
        var months: Int64 = 1
        while months <= 1_200 {
            let instant = calendar.start(of: month.firstOfMonth(adding: months + 1)) - 1
            if instant >= lastEnd { break }
            if periods.contains(where: { $0.start <= instant && instant < $0.end && $0.isPaying }) {
                cohorts[CohortKey(cohort: month.number, months: months), default: 0] += 1
            }
            months += 1
        }
    }

    private mutating func add(day: Int64, _ metric: SubscriptionMetric, _ amount: Int64, _ currency: String, _ productID: String, _ groupID: String) {
        days[MetricKey(day: day, metric: metric, currency: currency, productID: productID, groupID: groupID), default: 0] += amount
    }

    /// What changes in the rollups when `old` is replaced by `self`: only the cells that differ.
    public func difference(from old: SubscriptionContribution) -> (days: [MetricKey: Int64], cohorts: [CohortKey: Int64]) {
        var days = self.days
        for (key, value) in old.days { days[key, default: 0] -= value }
        var cohorts = self.cohorts
        for (key, value) in old.cohorts { cohorts[key, default: 0] -= value }
        return (days.filter { $0.value != 0 }, cohorts.filter { $0.value != 0 })
    }
}

/// A subscription price normalised to a month.
public enum MonthlyPrice {
    /// Apple's subscription and offer durations, with how many of each make a month (as a fraction).
    /// Two weeks and three days are offer durations only.
    static let durations: [(days: Double, numerator: Int64, denominator: Int64, offersOnly: Bool)] = [
        (3, 365, 36, true), (7, 13, 3, false), (14, 13, 6, true), (30.436875, 1, 1, false), (60.87375, 1, 2, false), (91.310625, 1, 3, false),
        (182.62125, 1, 6, false), (365.2425, 1, 12, false),
    ]

    /// A transaction's price per month, in millionths: its price over the time it pays for, taken
    /// as the nearest of Apple's durations (a week, one, two, three or six months, a year; for an
    /// introductory price also three days and two weeks), rounded to the nearest millionth. Free
    /// trials pay nothing.
    ///
    /// `missedRenewal`, for a renewal bought after its subscription lapsed for a while, is the
    /// renewal date it missed: the time paid for is then measured from it or from the purchase,
    /// whichever is nearer one of Apple's durations (recovery in a grace period keeps the billing
    /// cycle; recovery later starts a new one).
    public static func micros(of transaction: TransactionFact, orFrom missedRenewal: Int64?) -> Int64 {
        guard transaction.offer != .freeTrial, let expires = transaction.expiresMilliseconds, transaction.price > 0 else { return 0 }
        var best: (distance: Double, numerator: Int64, denominator: Int64)?
        for start in [transaction.purchaseMilliseconds, missedRenewal].compactMap({ $0 }) {
            let days = max(Double(expires - start) / 86_400_000, 0.001)
            for duration in durations where transaction.offer != .none || !duration.offersOnly {
                let distance = abs(log(days / duration.days))
                if best.map({ distance < $0.distance }) ?? true { best = (distance, duration.numerator, duration.denominator) }
            }
        }
        guard let best else { return 0 }
        return micros(price: transaction.price, numerator: best.numerator, denominator: best.denominator)
    }

    /// `part ÷ whole` of `milliunits`, in millionths, rounded half to even.
    public static func proportion(milliunits: Int64, part: Int64, of whole: Int64) -> Int64 {
        guard whole > 0 else { return 0 }
        let exact = Decimal(milliunits) * 1_000 * Decimal(part) / Decimal(whole)
        var value = exact, rounded = Decimal()
        NSDecimalRound(&rounded, &value, 0, .bankers)
        return NSDecimalNumber(decimal: rounded).int64Value
    }

    /// `price` (milliunits) × numerator ÷ denominator, in millionths, rounded half up.
    public static func micros(price: Int64, numerator: Int64, denominator: Int64) -> Int64 {
        (price * 1_000 * numerator + denominator / 2) / denominator
    }
}
