import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
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
    /// An upper bound for the width of a character of an event label (11 px; capitals and digits).
    private static let characterWidth = 7.4
    private static let eventRowHeight = 18.0

    /// Where a label goes: its row and its extent, never overlapping another label of its row, and
    /// turned to end at its mark when it would run past the right edge.
    struct LabelPlacement {
        let row: Int
        let start: Double
        let end: Double
        let anchorsEnd: Bool
    }

    /// Places labels of the given marks and widths on rows, first fit, with a gap between labels.
    static func placeLabels(_ labels: [(position: Double, width: Double)], limit: Double) -> [LabelPlacement] {
        var rows: [[ClosedRange<Double>]] = []
        return labels.map { label in
            let anchorsEnd = label.position + 5 + label.width > limit
            let start = anchorsEnd ? label.position - 5 - label.width : label.position - 4
            let end = anchorsEnd ? label.position + 4 : label.position + 5 + label.width
            let span = (start - 6)...(end + 6)
            let row = rows.firstIndex { $0.allSatisfy { !$0.overlaps(span) } } ?? rows.count
            if row == rows.count { rows.append([]) }
            rows[row].append(span)
            return LabelPlacement(row: row, start: start, end: end, anchorsEnd: anchorsEnd)
        }
    }

    /// The colours of the plans' lanes, in order.
    static let laneColours = ["rgb(47,111,222)", "rgb(22,128,106)", "rgb(142,68,173)", "rgb(176,52,40)", "rgb(176,72,0)", "rgb(44,62,80)"]
    static let eventColours = ["problem": "rgb(190,2,25)", "recovery": "rgb(18,120,98)", "end": "rgb(80,86,100)", "change": "rgb(39,81,211)"]

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
        // "now" and every event get a label below the lanes, on rows where they never overlap.
        let sortedEvents = events.sorted { $0.date < $1.date }
        var marks: [(position: Double, width: Double)] = [(x(now), 3 * Self.characterWidth)]
        marks += sortedEvents.map { (x($0.date), Double($0.label.count) * Self.characterWidth) }
        let placements = Self.placeLabels(marks, limit: Self.width - 8)
        let rows = (placements.map(\.row).max() ?? 0) + 1
        let labelsTop = lanesBottom + 24
        let height = labelsTop + Double(rows) * Self.eventRowHeight + 16
        var svg = HTML()
        svg.raw(#"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(Self.width))" height="\#(Int(height))" viewBox="0 0 \#(Int(Self.width)) \#(Int(height))" role="img" aria-labelledby="timeline-title" font-family="system-ui, sans-serif" font-size="12">"#)
        svg.raw(#"<title id="timeline-title">"#)
        svg.add("Subscription \(originalTransactionID) of \(account): \(state)")
        svg.raw("</title>")
        svg.raw(#"<rect width="100%" height="100%" fill="rgb(255,255,255)"/>"#)
        svg.raw(#"<text x="16" y="24" font-size="15" font-weight="600" fill="rgb(27,33,48)">"#)
        svg.add("Subscription \(originalTransactionID) — \(account) — now \(state)")
        svg.raw("</text>")
        // Date axis with ticks.
        svg.raw(#"<g class="axis" stroke="rgb(200,204,212)">"#)
        for tick in Self.ticks(from: from, to: to) {
            let position = x(tick)
            svg.raw(#"<line x1="\#(Self.number(position))" y1="\#(Self.number(top - 8))" x2="\#(Self.number(position))" y2="\#(Self.number(lanesBottom))" stroke-dasharray="2 3"/>"#)
            svg.raw(#"<text class="tick" x="\#(Self.number(position))" y="\#(Self.number(top - 12))" text-anchor="middle" fill="rgb(81,90,109)" stroke="none">"#)
            svg.add(tick.formatted(Date.ISO8601FormatStyle().year().month().day()))
            svg.raw("</text>")
        }
        svg.raw("</g>")
        // Stretches without regular billing.
        for stretch in stretches {
            let colour = stretch.isGrace ? "rgb(224,140,20)" : "rgb(190,2,25)"
            svg.raw(#"<rect class="\#(stretch.isGrace ? "grace-period" : "billing-retry")" x="\#(Self.number(x(stretch.start)))" y="\#(Self.number(top))" width="\#(Self.number(max(2, x(stretch.end) - x(stretch.start))))" height="\#(Self.number(lanesBottom - top))" fill="\#(colour)" fill-opacity="0.12" stroke="\#(colour)" stroke-dasharray="4 3"><title>"#)
            svg.add("\(stretch.isGrace ? "Grace period (entitled)" : "Billing retry (not entitled)") from \(Self.date(stretch.start)) to \(Self.date(stretch.end))")
            svg.raw("</title></rect>")
        }
        // One lane per plan, one bar per period; a renewal's bar starts with a white notch.
        for (index, product) in products.enumerated() {
            let y = top + Double(index) * Self.laneHeight
            svg.raw(#"<text class="lane" x="16" y="\#(Self.number(y + 21))" fill="rgb(27,33,48)">"#)
            svg.add(product.split(separator: ".").suffix(2).joined(separator: "."))
            svg.raw("</text>")
            for period in periods where period.transaction.productID == product {
                let transaction = period.transaction
                let refunded = transaction.revocation != nil
                let colour = refunded ? "rgb(190,2,25)" : Self.laneColours[index % Self.laneColours.count]
                let barX = x(period.start), barWidth = max(3, x(period.end) - x(period.start))
                svg.raw(#"<rect class="period" data-transaction-id="\#(transaction.id)" data-reason="\#(transaction.reason.rawValue)" x="\#(Self.number(barX))" y="\#(Self.number(y + 6))" width="\#(Self.number(barWidth))" height="\#(Self.number(Self.laneHeight - 12))" rx="3" fill="\#(colour)" fill-opacity="\#(transaction.offer != nil || transaction.isUpgraded ? "0.45" : "0.85")"\#(refunded ? #" stroke="rgb(122,0,16)" stroke-width="2""# : "")><title>"#)
                svg.add(Self.describe(period))
                svg.raw("</title></rect>")
                if transaction.reason == .renewal {
                    svg.raw(#"<rect class="renewal" x="\#(Self.number(barX))" y="\#(Self.number(y + 4))" width="3" height="\#(Self.number(Self.laneHeight - 8))" fill="rgb(27,33,48)"><title>"#)
                    svg.add("Renewed \(Self.date(period.start))")
                    svg.raw("</title></rect>")
                }
                if let offer = transaction.offer, barWidth > 40 {
                    svg.raw(#"<text class="offer" x="\#(Self.number(barX + 6))" y="\#(Self.number(y + 21))" fill="rgb(27,33,48)" font-size="10">"#)
                    svg.add(Self.offerName(offer.type))
                    svg.raw("</text>")
                }
                if refunded, let revocation = transaction.revocation {
                    let mark = x(revocation.date)
                    svg.raw(#"<path class="revocation" d="M\#(Self.number(mark - 5)) \#(Self.number(y + 4)) l10 \#(Self.number(Self.laneHeight - 8)) m0 -\#(Self.number(Self.laneHeight - 8)) l-10 \#(Self.number(Self.laneHeight - 8))" stroke="rgb(122,0,16)" stroke-width="2"/>"#)
                }
            }
        }
        // "now", then the events, each with its line down to its label.
        let nowX = x(now), nowPlacement = placements[0]
        let nowY = labelsTop + Double(nowPlacement.row) * Self.eventRowHeight
        svg.raw(#"<g class="now"><line x1="\#(Self.number(nowX))" y1="\#(Self.number(top - 6))" x2="\#(Self.number(nowX))" y2="\#(Self.number(nowY - 10))" stroke="rgb(27,33,48)" stroke-width="2"/><text class="label" x="\#(Self.number(nowPlacement.anchorsEnd ? nowX - 5 : nowX + 5))" y="\#(Self.number(nowY))" text-anchor="\#(nowPlacement.anchorsEnd ? "end" : "start")" font-weight="600" font-size="11" fill="rgb(27,33,48)">now</text></g>"#)
        for (event, placement) in zip(sortedEvents, placements.dropFirst()) {
            let position = x(event.date)
            let colour = Self.eventColours[event.kind] ?? "rgb(39,81,211)"
            let labelY = labelsTop + Double(placement.row) * Self.eventRowHeight
            let textX = placement.anchorsEnd ? position - 5 : position + 5
            svg.raw(#"<g class="event" data-kind="\#(event.kind)"><line x1="\#(Self.number(position))" y1="\#(Self.number(top))" x2="\#(Self.number(position))" y2="\#(Self.number(labelY - 4))" stroke="\#(colour)" stroke-width="1.5"/><circle cx="\#(Self.number(position))" cy="\#(Self.number(labelY - 4))" r="3" fill="\#(colour)"/><text class="label" x="\#(Self.number(textX))" y="\#(Self.number(labelY))" text-anchor="\#(placement.anchorsEnd ? "end" : "start")" fill="\#(colour)" font-size="11">"#)
            svg.add(event.label)
            svg.raw("<title>")
            svg.add("\(event.label) on \(Self.date(event.date))")
            svg.raw("</title></text></g>")
        }
        svg.raw("</svg>\n")
        return svg.text
    }

    /// A period in words.
    static func describe(_ period: Period) -> String {
        let transaction = period.transaction
        var words = "Transaction \(transaction.id) (\(transaction.reason.rawValue)): \(Self.date(period.start)) to \(Self.date(period.end))"
        if let offer = transaction.offer { words += ", \(Self.offerName(offer.type)) offer" }
        if transaction.isUpgraded { words += ", upgraded" }
        if let revocation = transaction.revocation { words += ", revoked \(Self.date(revocation.date))" }
        return words
    }

    /// The timeline's page: the picture at its own size (it scrolls sideways on a narrow screen, so its
    /// text stays readable), a legend, and the periods and events as tables.
    var page: String {
        var html = HTML()
        html.raw(#"<section class="card" aria-labelledby="timeline-heading"><h2 id="timeline-heading">"#)
        html.add("Subscription \(originalTransactionID) of \(account)")
        html.raw(#"</h2><p>Now <strong data-state>"#)
        html.add(state)
        html.raw(#"</strong>, at "#)
        html.add(Self.date(now))
        html.raw(#" UTC store time. <a href="/">Back to the Transaction Manager</a></p>"#)
        html.raw(#"<ul class="legend" aria-label="Legend">"#)
        let legend: [(String, String)] = [
            ("background: rgb(47,111,222)", "A paid period (one lane per plan)"),
            ("background: rgba(47,111,222,.45)", "A period with an offer, or one that was upgraded"),
            ("background: rgb(27,33,48); width: 4px", "A renewal"),
            ("background: rgba(224,140,20,.25); border-color: rgb(224,140,20)", "Grace period (still entitled)"),
            ("background: rgba(190,2,25,.15); border-color: rgb(190,2,25)", "Billing retry (not entitled)"),
            ("background: rgb(190,2,25)", "Refunded or revoked, or a billing problem"),
            ("background: rgb(18,120,98)", "Recovered"),
            ("background: rgb(39,81,211)", "A change (plan, renewal, offer, price)"),
        ]
        for (style, words) in legend {
            html.raw(#"<li><span class="swatch" style=""#)
            html.add(style)
            html.raw(#""></span>"#)
            html.add(words)
            html.raw("</li>")
        }
        html.raw(#"</ul></section><section class="card" aria-label="Picture"><div class="timeline-scroll" role="region" aria-label="The timeline, scrollable sideways" tabindex="0">"#)
        html.raw(svg)
        html.raw(#"</div><p><a href="/timeline/\#(originalTransactionID).svg">The picture alone (SVG)</a></p></section>"#)
        html.raw(#"<section class="card" aria-labelledby="periods-title"><h2 id="periods-title">Periods</h2><div class="table-scroll"><table class="cards"><thead><tr><th scope="col">Transaction</th><th scope="col">Plan</th><th scope="col">From (UTC)</th><th scope="col">To (UTC)</th><th scope="col">How</th></tr></thead><tbody>"#)
        for period in periods {
            let transaction = period.transaction
            html.raw(#"<tr><th scope="row">#"#)
            html.add(String(transaction.id))
            html.raw(#"</th><td data-label="Plan"><code>"#)
            html.add(transaction.productID)
            html.raw(#"</code></td><td data-label="From">"#)
            html.add(Self.date(period.start))
            html.raw(#"</td><td data-label="To">"#)
            html.add(Self.date(period.end))
            html.raw(#"</td><td data-label="How">"#)
            var how = [transaction.reason == .renewal ? "renewal" : "purchase"]
            if let offer = transaction.offer { how.append("\(Self.offerName(offer.type)) offer") }
            if transaction.isUpgraded { how.append("upgraded") }
            if let revocation = transaction.revocation { how.append("refunded \(Self.date(revocation.date))") }
            html.add(how.joined(separator: ", "))
            html.raw("</td></tr>")
        }
        html.raw(#"</tbody></table></div></section><section class="card" aria-labelledby="events-title"><h2 id="events-title">Events</h2>"#)
        if events.isEmpty {
            html.raw(#"<p class="empty-state">No notifications about this subscription yet.</p>"#)
        } else {
            html.raw(#"<div class="table-scroll"><table class="cards"><thead><tr><th scope="col">Date (UTC)</th><th scope="col">Notification</th></tr></thead><tbody>"#)
            for event in events.sorted(by: { $0.date < $1.date }) {
                html.raw(#"<tr><th scope="row">"#)
                html.add(Self.date(event.date))
                html.raw(#"</th><td data-label="Notification"><code>"#)
                html.add(event.label)
                html.raw("</code></td></tr>")
            }
            html.raw("</tbody></table></div>")
        }
        html.raw("</section>")
        return HTML.page(title: "Subscription \(originalTransactionID) — OpenStoreKit", pageName: "Subscription timeline",
                         otherPage: ("/", "Transaction Manager"), main: html.text)
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
