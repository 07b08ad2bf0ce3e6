import AppStoreModels
import AppStoreSimulator
import Foundation
import StoreKitCatalog

/// A subscription's life drawn on a date axis, as an SVG the server makes: every period of every plan
/// (offers marked), upgrades and downgrades, billing problems (grace period, billing retry), refunds
/// and revocations, expiries and the store's "now" — the picture for "I was charged but lost access".
///
/// Periods come from the ledger's transactions; what happened between them (billing failures,
/// recoveries, plan changes, expiries) from the notifications the store sent about them.
public struct SubscriptionTimeline: Sendable {
    /// One period: a transaction from its purchase to its expiration (or revocation).
    public struct Period: Sendable {
        let transaction: LedgerTransaction
        let start: Date
        let end: Date
    }

    /// A moment worth a mark: a notification about the subscription.
    public struct Event: Sendable {
        let date: Date
        let label: String
        /// `problem` (billing failure, refund), `recovery` (renewal after a problem), `change`, `end`.
        let kind: String
    }

    /// A stretch without regular billing: grace period (still entitled) or billing retry (not).
    struct Stretch: Sendable {
        let start: Date
        let end: Date
        let isGrace: Bool
    }

    public let originalTransactionID: UInt64
    let account: String
    public let periods: [Period]
    public let events: [Event]
    let stretches: [Stretch]
    let now: Date
    let state: String

    /// Reads a subscription's transactions, record and notifications from the store.
    ///
    /// - Parameter id: Any transaction of the subscription; its original transaction names it.
    public static func load(store: SimulatedAppStore, originalTransactionID id: UInt64) async throws -> SubscriptionTimeline {
        guard let original = try await store.ledgerTransaction(id), original.productKind == .autoRenewable else {
            throw AppStoreError.control(.noSubscriptionFound, "transaction \(id) is not a transaction of an auto-renewable subscription")
        }
        let transactions = try await store.ledgerTransactions(account: original.account)
            .filter { $0.originalID == original.originalID && $0.state == .purchased }
        let ids = Set(transactions.map(\.id))
        var records: [NotificationRecord] = []
        var after: Int64 = 0
        while true {
            let page = try await store.notificationRecords(after: after, limit: 1_000)
            records += page.filter { $0.transactionID.map(ids.contains) ?? false }
            guard let last = page.last, page.count == 1_000 else { break }
            after = last.sequence
        }
        let record = try await store.subscriptionRecords(account: original.account).first { $0.originalTransactionID == original.originalID }
        return SubscriptionTimeline(originalTransactionID: original.originalID, transactions: transactions, notifications: records,
                                    now: try await store.currentTime(), state: record?.state.rawValue ?? "unknown")
    }

    init(originalTransactionID: UInt64, transactions: [LedgerTransaction], notifications: [NotificationRecord], now: Date, state: String) {
        self.originalTransactionID = originalTransactionID
        self.account = transactions.first?.account ?? ""
        self.now = now
        self.state = state
        periods = transactions.sorted { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) }.map { transaction in
            let expiry = transaction.expirationDate ?? transaction.purchaseDate
            let end = transaction.revocation.map { min($0.date, expiry) } ?? expiry
            return Period(transaction: transaction, start: transaction.purchaseDate, end: max(end, transaction.purchaseDate))
        }
        var events: [Event] = []
        var stretches: [Stretch] = []
        var problemStart: (date: Date, grace: Bool)?
        for record in notifications.sorted(by: { $0.sequence < $1.sequence }) {
            let subtype = record.subtype.map { " \($0.rawValue)" } ?? ""
            let label = record.type.rawValue + subtype
            switch record.type {
            case .didFailToRenew:
                problemStart = (record.date, record.subtype == .gracePeriod)
                events.append(Event(date: record.date, label: label, kind: "problem"))
            case .gracePeriodExpired:
                if let start = problemStart, start.grace { stretches.append(Stretch(start: start.date, end: record.date, isGrace: true)) }
                problemStart = (record.date, false)
                events.append(Event(date: record.date, label: label, kind: "problem"))
            case .didRenew where record.subtype == .billingRecovery, .expired:
                if let start = problemStart { stretches.append(Stretch(start: start.date, end: record.date, isGrace: start.grace)) }
                problemStart = nil
                events.append(Event(date: record.date, label: label, kind: record.type == .expired ? "end" : "recovery"))
            case .refund, .revoke:
                events.append(Event(date: record.date, label: label, kind: "problem"))
            case .didChangeRenewalPref, .didChangeRenewalStatus, .offerRedeemed, .priceIncrease, .renewalExtended, .refundReversed, .subscribed:
                events.append(Event(date: record.date, label: label, kind: "change"))
            default:
                continue
            }
        }
        if let start = problemStart { stretches.append(Stretch(start: start.date, end: now, isGrace: start.grace)) }
        self.events = events
        self.stretches = stretches
    }

    // MARK: Drawing

    private static let width = 960.0
    private static let left = 190.0
    private static let right = 24.0
    private static let laneHeight = 34.0

    /// The picture, as a standalone SVG document.
    public var svg: String {
        let products = periods.reduce(into: [String]()) { if !$0.contains($1.transaction.productID) { $0.append($1.transaction.productID) } }
        let first = periods.map(\.start).min() ?? now
        let last = max(periods.map(\.end).max() ?? now, now)
        let span = max(last.timeIntervalSince(first), 86_400)
        let from = first.addingTimeInterval(-span * 0.03), to = last.addingTimeInterval(span * 0.03)
        let plot = Self.width - Self.left - Self.right
        func x(_ date: Date) -> Double { Self.left + plot * date.timeIntervalSince(from) / to.timeIntervalSince(from) }
        let top = 56.0
        let lanesBottom = top + Double(products.count) * Self.laneHeight
        let eventRows = 4
        let height = lanesBottom + 40 + Double(eventRows) * 16 + 30
        var svg = HTML()
        svg.raw(#"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(Self.width))" height="\#(Int(height))" viewBox="0 0 \#(Int(Self.width)) \#(Int(height))" role="img" aria-labelledby="timeline-title" font-family="system-ui, sans-serif" font-size="12">"#)
        svg.raw(#"<title id="timeline-title">"#)
        svg.add("Subscription \(originalTransactionID) of \(account): \(state)")
        svg.raw("</title>")
        svg.raw(#"<rect width="100%" height="100%" fill="rgb(255,255,255)"/>"#)
        svg.raw(#"<text x="16" y="24" font-size="15" font-weight="600">"#)
        svg.add("Subscription \(originalTransactionID) — \(account) — now \(state)")
        svg.raw("</text>")
        // Date axis with ticks.
        svg.raw(#"<g class="axis" stroke="rgb(200,204,212)">"#)
        for tick in Self.ticks(from: from, to: to) {
            let position = x(tick)
            svg.raw(#"<line x1="\#(Self.number(position))" y1="\#(Self.number(top - 8))" x2="\#(Self.number(position))" y2="\#(Self.number(lanesBottom))" stroke-dasharray="2 3"/>"#)
            svg.raw(#"<text x="\#(Self.number(position))" y="\#(Self.number(top - 12))" text-anchor="middle" fill="rgb(91,97,112)" stroke="none">"#)
            svg.add(tick.formatted(Date.ISO8601FormatStyle().year().month().day()))
            svg.raw("</text>")
        }
        svg.raw("</g>")
        // Stretches without regular billing.
        for stretch in stretches {
            let colour = stretch.isGrace ? "rgb(245,166,35)" : "rgb(208,2,27)"
            svg.raw(#"<rect class="\#(stretch.isGrace ? "grace-period" : "billing-retry")" x="\#(Self.number(x(stretch.start)))" y="\#(Self.number(top))" width="\#(Self.number(max(2, x(stretch.end) - x(stretch.start))))" height="\#(Self.number(lanesBottom - top))" fill="\#(colour)" fill-opacity="0.12" stroke="\#(colour)" stroke-dasharray="4 3"><title>"#)
            svg.add("\(stretch.isGrace ? "Grace period (entitled)" : "Billing retry (not entitled)") from \(Self.date(stretch.start)) to \(Self.date(stretch.end))")
            svg.raw("</title></rect>")
        }
        // One lane per plan, one bar per period.
        let colours = ["rgb(47,111,222)", "rgb(22,160,133)", "rgb(142,68,173)", "rgb(192,57,43)", "rgb(211,84,0)", "rgb(44,62,80)"]
        for (index, product) in products.enumerated() {
            let y = top + Double(index) * Self.laneHeight
            svg.raw(#"<text x="16" y="\#(Self.number(y + 21))" fill="rgb(31,35,48)">"#)
            svg.add(product.split(separator: ".").suffix(2).joined(separator: "."))
            svg.raw("</text>")
            for period in periods where period.transaction.productID == product {
                let transaction = period.transaction
                let refunded = transaction.revocation != nil
                let colour = refunded ? "rgb(208,2,27)" : colours[index % colours.count]
                let barX = x(period.start), barWidth = max(3, x(period.end) - x(period.start))
                svg.raw(#"<rect class="period" data-transaction-id="\#(transaction.id)" x="\#(Self.number(barX))" y="\#(Self.number(y + 6))" width="\#(Self.number(barWidth))" height="\#(Self.number(Self.laneHeight - 12))" rx="3" fill="\#(colour)" fill-opacity="\#(transaction.offer != nil || transaction.isUpgraded ? "0.45" : "0.85")"\#(refunded ? #" stroke="rgb(122,0,16)" stroke-width="2""# : "")><title>"#)
                var words = "Transaction \(transaction.id) (\(transaction.reason.rawValue)): \(Self.date(period.start)) to \(Self.date(period.end))"
                if let offer = transaction.offer { words += ", \(Self.offerName(offer.type)) offer" }
                if transaction.isUpgraded { words += ", upgraded" }
                if let revocation = transaction.revocation { words += ", revoked \(Self.date(revocation.date))" }
                svg.add(words)
                svg.raw("</title></rect>")
                if let offer = transaction.offer, barWidth > 40 {
                    svg.raw(#"<text x="\#(Self.number(barX + 4))" y="\#(Self.number(y + 21))" fill="rgb(255,255,255)" font-size="10">"#)
                    svg.add(Self.offerName(offer.type))
                    svg.raw("</text>")
                }
                if refunded, let revocation = transaction.revocation {
                    let mark = x(revocation.date)
                    svg.raw(#"<path class="revocation" d="M\#(Self.number(mark - 5)) \#(Self.number(y + 4)) l10 \#(Self.number(Self.laneHeight - 8)) m0 -\#(Self.number(Self.laneHeight - 8)) l-10 \#(Self.number(Self.laneHeight - 8))" stroke="rgb(122,0,16)" stroke-width="2"/>"#)
                }
            }
        }
        // Events, staggered on rows so labels do not overlap.
        var rowEnds = [Double](repeating: -1, count: eventRows)
        for event in events.sorted(by: { $0.date < $1.date }) {
            let position = x(event.date)
            let labelWidth = Double(event.label.count) * 6.2 + 8
            let row = rowEnds.firstIndex { $0 < position } ?? 0
            rowEnds[row] = position + labelWidth
            let colour = ["problem": "rgb(208,2,27)", "recovery": "rgb(22,160,133)", "end": "rgb(91,97,112)"][event.kind] ?? "rgb(47,111,222)"
            let labelY = lanesBottom + 30 + Double(row) * 16
            svg.raw(#"<g class="event" data-kind="\#(event.kind)"><line x1="\#(Self.number(position))" y1="\#(Self.number(top))" x2="\#(Self.number(position))" y2="\#(Self.number(labelY - 10))" stroke="\#(colour)" stroke-width="1.5"/><circle cx="\#(Self.number(position))" cy="\#(Self.number(labelY - 4))" r="3" fill="\#(colour)"/><text x="\#(Self.number(position + 5))" y="\#(Self.number(labelY))" fill="\#(colour)" font-size="11">"#)
            svg.add(event.label)
            svg.raw("<title>")
            svg.add("\(event.label) on \(Self.date(event.date))")
            svg.raw("</title></text></g>")
        }
        let nowX = x(now)
        svg.raw(#"<g class="now"><line x1="\#(Self.number(nowX))" y1="\#(Self.number(top - 6))" x2="\#(Self.number(nowX))" y2="\#(Self.number(lanesBottom + 8))" stroke="rgb(31,35,48)" stroke-width="2"/><text x="\#(Self.number(nowX))" y="\#(Self.number(lanesBottom + 20))" text-anchor="middle" font-weight="600">now</text></g>"#)
        svg.raw("</svg>\n")
        return svg.text
    }

    private static func number(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func offerName(_ type: OfferType) -> String {
        switch type {
        case .introductoryOffer: return "intro"
        case .promotionalOffer: return "promo"
        case .subscriptionOfferCode: return "code"
        case .winBackOffer: return "win-back"
        default: return "offer"
        }
    }

    private static func date(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle().year().month().day().time(includingFractionalSeconds: false))
    }

    /// Axis ticks at whole days, weeks, months or years, about eight of them.
    private static func ticks(from: Date, to: Date) -> [Date] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let span = to.timeIntervalSince(from)
        // At most seven labels fit the axis side by side.
        func step(_ unit: Double) -> Int { max(1, Int((span / unit / 7).rounded(.up))) }
        let (component, step): (Calendar.Component, Int) = span < 20 * 86_400 ? (.day, step(86_400))
            : span < 120 * 86_400 ? (.day, 7 * step(7 * 86_400)) : span < 4 * 365 * 86_400 ? (.month, step(30.4 * 86_400))
            : (.year, step(365.25 * 86_400))
        var start = calendar.dateInterval(of: component == .day ? .day : component == .month ? .month : .year, for: from)?.start ?? from
        var ticks: [Date] = []
        while start <= to, ticks.count < 40 {
            if start >= from { ticks.append(start) }
            guard let next = calendar.date(byAdding: component, value: step, to: start) else { break }
            start = next
        }
        return ticks
    }
}
