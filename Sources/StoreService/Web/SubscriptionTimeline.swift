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
        return try await load(store: store, transaction: original,
                              notifications: try await store.notificationRecords(aboutOriginalTransaction: original.originalID),
                              subscription: try await store.subscriptionRecord(originalTransactionID: original.originalID))
    }

    /// The timeline of `transaction`'s subscription, from its notifications and record already read
    /// (a purchase's page has them).
    static func load(store: SimulatedAppStore, transaction: LedgerTransaction, notifications: [NotificationRecord],
                     subscription: SubscriptionRecord?) async throws -> SubscriptionTimeline {
        let transactions = try await store.ledgerTransactions(account: transaction.account)
            .filter { $0.originalID == transaction.originalID && $0.state == .purchased }
        let ids = Set(transactions.map(\.id))
        return SubscriptionTimeline(originalTransactionID: transaction.originalID, transactions: transactions,
                                    notifications: notifications.filter { $0.transactionID.map(ids.contains) ?? false },
                                    now: try await store.currentTime(), state: subscription?.state.rawValue ?? "unknown")
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

    /// The widths the picture is drawn at: each is shown where it fits its box at about its own size
    /// (so labels keep their size): a phone, a tablet or narrow window, and a desktop.
    enum Layout: CaseIterable {
        case phone, medium, wide

        var width: Double {
            switch self {
            case .phone: 340
            case .medium: 640
            case .wide: 960
            }
        }
        /// Where the plot begins: after the lane names, which a phone shows above each lane instead.
        var left: Double { self == .phone ? 12 : self == .medium ? 150 : 190 }
        var laneHeight: Double { self == .phone ? 46 : 34 }
        /// How many date labels fit the axis side by side.
        var ticks: Int { self == .phone ? 3 : self == .medium ? 5 : 7 }
    }

    private static let right = 16.0
    /// An upper bound for the width of a character of an event label (11 px; capitals and digits).
    private static let characterWidth = 7.4
    private static let eventRowHeight = 18.0

    /// Where a label goes: its row and its extent, never overlapping another label of its row. It
    /// starts at its mark, or ends there when it would run past the right edge; one too wide for
    /// either side (on a phone) ends at the right edge.
    struct LabelPlacement {
        let row: Int
        let start: Double
        let end: Double
        /// Where its text is drawn from (its start, or its end when `anchorsEnd`).
        let textX: Double
        let anchorsEnd: Bool
    }

    /// Places labels of the given marks and widths on rows, first fit, with a gap between labels.
    static func placeLabels(_ labels: [(position: Double, width: Double)], limit: Double) -> [LabelPlacement] {
        var rows: [[ClosedRange<Double>]] = []
        return labels.map { label in
            let start: Double, end: Double, textX: Double, anchorsEnd: Bool
            if label.position + 5 + label.width <= limit {
                (start, end, textX, anchorsEnd) = (label.position - 4, label.position + 5 + label.width, label.position + 5, false)
            } else if label.position - 5 - label.width >= 4 {
                (start, end, textX, anchorsEnd) = (label.position - 5 - label.width, label.position + 4, label.position - 5, true)
            } else {
                (start, end, textX, anchorsEnd) = (max(4, limit - label.width), limit, limit, true)
            }
            let span = (start - 6)...(end + 6)
            let row = rows.firstIndex { $0.allSatisfy { !$0.overlaps(span) } } ?? rows.count
            if row == rows.count { rows.append([]) }
            rows[row].append(span)
            return LabelPlacement(row: row, start: start, end: end, textX: textX, anchorsEnd: anchorsEnd)
        }
    }

    /// How many plans' lanes have colours of their own (`tl-lane0` …), in order.
    static let laneColourCount = 6

    /// The picture's colours, light and dark, as classes: the picture follows the page's scheme
    /// (and the viewer's, alone as a file).
    static let styles = """
        .tl-bg{fill:#fff}.tl-ink{fill:#1b2130}.tl-muted{fill:#515a6d}.tl-axis{stroke:#c8ccd4}.tl-now{stroke:#1b2130}
        .tl-lane0{fill:#2f6fde}.tl-lane1{fill:#16806a}.tl-lane2{fill:#8e44ad}.tl-lane3{fill:#b03428}.tl-lane4{fill:#b04800}.tl-lane5{fill:#2c3e50}
        .tl-refunded{fill:#be0219;stroke:#7a0010}.tl-grace{fill:#e08c14;stroke:#e08c14}.tl-retry{fill:#be0219;stroke:#be0219}
        .tl-problem{fill:#be0219;stroke:#be0219}.tl-recovery{fill:#127862;stroke:#127862}.tl-end{fill:#505664;stroke:#505664}
        .tl-change{fill:#2751d3;stroke:#2751d3}
        @media (prefers-color-scheme: dark){.tl-bg{fill:#1a2029}.tl-ink{fill:#e7eaf0}.tl-muted{fill:#a9b1c1}.tl-axis{stroke:#434c5e}
        .tl-now{stroke:#e7eaf0}.tl-lane0{fill:#6d9bf0}.tl-lane1{fill:#3bb394}.tl-lane2{fill:#b17fd0}.tl-lane3{fill:#e0705f}
        .tl-lane4{fill:#e08a3c}.tl-lane5{fill:#8aa0b8}.tl-refunded{fill:#ff7b70;stroke:#ffb3ab}.tl-problem{fill:#ff8a80;stroke:#ff8a80}
        .tl-retry{fill:#ff8a80;stroke:#ff8a80}.tl-grace{fill:#f2b15a;stroke:#f2b15a}.tl-recovery{fill:#6fd6b4;stroke:#6fd6b4}
        .tl-end{fill:#b4bccb;stroke:#b4bccb}.tl-change{fill:#9cb6ff;stroke:#9cb6ff}}
        """

    /// The picture, as a standalone SVG document (the desktop layout).
    public var svg: String { svg(.wide, idSuffix: "") }

    /// The picture for a page: each layout in turn, the page's stylesheet showing the one that fits.
    var picture: String {
        Layout.allCases.map { layout in
            #"<div class="timeline-scroll timeline-\#(layout)" role="region" aria-label="The timeline" tabindex="0">"#
                + svg(layout, idSuffix: "-\(layout)") + "</div>"
        }.joined()
    }

    /// The picture drawn at a layout's width; `idSuffix` keeps element ids unique when a page holds several.
    func svg(_ layout: Layout, idSuffix: String) -> String {
        let width = layout.width, compact = layout == .phone
        let products = periods.reduce(into: [String]()) { if !$0.contains($1.transaction.productID) { $0.append($1.transaction.productID) } }
        let first = periods.map(\.start).min() ?? now
        let last = max(periods.map(\.end).max() ?? now, now)
        let span = max(last.timeIntervalSince(first), 86_400)
        let from = first.addingTimeInterval(-span * 0.03), to = last.addingTimeInterval(span * 0.03)
        let plot = width - layout.left - Self.right
        func x(_ date: Date) -> Double { layout.left + plot * date.timeIntervalSince(from) / to.timeIntervalSince(from) }
        let top = compact ? 64.0 : 56.0
        let laneHeight = layout.laneHeight
        // On a phone the lane's name is above its bars.
        let barTop = compact ? 18.0 : 6.0
        let lanesBottom = top + Double(products.count) * laneHeight
        // "now" and every event get a label below the lanes, on rows where they never overlap.
        let sortedEvents = events.sorted { $0.date < $1.date }
        var marks: [(position: Double, width: Double)] = [(x(now), 3 * Self.characterWidth)]
        marks += sortedEvents.map { (x($0.date), Double($0.label.count) * Self.characterWidth) }
        let placements = Self.placeLabels(marks, limit: width - 8)
        let rows = (placements.map(\.row).max() ?? 0) + 1
        let labelsTop = lanesBottom + 24
        let height = labelsTop + Double(rows) * Self.eventRowHeight + 16
        let titleID = "timeline-title\(idSuffix)"
        var svg = HTML()
        svg.raw(#"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))" role="img" aria-labelledby="\#(titleID)" font-family="system-ui, sans-serif" font-size="12">"#)
        svg.raw("<style>\(Self.styles)</style>")
        svg.raw(#"<title id="\#(titleID)">"#)
        svg.add("Subscription \(originalTransactionID) of \(account): \(state)")
        svg.raw("</title>")
        svg.raw(#"<rect class="tl-bg" width="100%" height="100%"/>"#)
        if compact {
            svg.raw(#"<text x="12" y="22" font-size="14" font-weight="600" class="tl-ink">"#)
            svg.add("Subscription \(originalTransactionID)")
            svg.raw(#"</text><text x="12" y="40" font-size="12" class="tl-muted">"#)
            svg.add("\(account) — now \(state)")
            svg.raw("</text>")
        } else {
            svg.raw(#"<text x="16" y="24" font-size="15" font-weight="600" class="tl-ink">"#)
            svg.add("Subscription \(originalTransactionID) — \(account) — now \(state)")
            svg.raw("</text>")
        }
        // Date axis with ticks.
        svg.raw(#"<g class="axis tl-axis">"#)
        for tick in Self.ticks(from: from, to: to, labels: layout.ticks) {
            let position = x(tick)
            svg.raw(#"<line x1="\#(Self.number(position))" y1="\#(Self.number(top - 8))" x2="\#(Self.number(position))" y2="\#(Self.number(lanesBottom))" stroke-dasharray="2 3"/>"#)
            svg.raw(#"<text class="tick tl-muted" x="\#(Self.number(position))" y="\#(Self.number(top - 12))" text-anchor="middle" stroke="none">"#)
            svg.add(tick.formatted(Date.ISO8601FormatStyle().year().month().day()))
            svg.raw("</text>")
        }
        svg.raw("</g>")
        // Stretches without regular billing.
        for stretch in stretches {
            svg.raw(#"<rect class="\#(stretch.isGrace ? "grace-period tl-grace" : "billing-retry tl-retry")" x="\#(Self.number(x(stretch.start)))" y="\#(Self.number(top))" width="\#(Self.number(max(2, x(stretch.end) - x(stretch.start))))" height="\#(Self.number(lanesBottom - top))" fill-opacity="0.14" stroke-dasharray="4 3"><title>"#)
            svg.add("\(stretch.isGrace ? "Grace period (entitled)" : "Billing retry (not entitled)") from \(Self.date(stretch.start)) to \(Self.date(stretch.end))")
            svg.raw("</title></rect>")
        }
        // One lane per plan, one bar per period; a renewal's bar starts with a notch.
        let barHeight = laneHeight - barTop - 6
        for (index, product) in products.enumerated() {
            let y = top + Double(index) * laneHeight
            svg.raw(#"<text class="lane tl-ink" x="\#(compact ? 12 : 16)" y="\#(Self.number(compact ? y + 13 : y + 21))"\#(compact ? #" font-size="11""# : "")>"#)
            svg.add(product.split(separator: ".").suffix(2).joined(separator: "."))
            svg.raw("</text>")
            for period in periods where period.transaction.productID == product {
                let transaction = period.transaction
                let refunded = transaction.revocation != nil
                let colour = refunded ? "tl-refunded" : "tl-lane\(index % Self.laneColourCount)"
                let barX = x(period.start), barWidth = max(3, x(period.end) - x(period.start))
                svg.raw(#"<rect class="period \#(colour)" data-transaction-id="\#(transaction.id)" data-reason="\#(transaction.reason.rawValue)" x="\#(Self.number(barX))" y="\#(Self.number(y + barTop))" width="\#(Self.number(barWidth))" height="\#(Self.number(barHeight))" rx="3" fill-opacity="\#(transaction.offer != nil || transaction.isUpgraded ? "0.45" : "0.85")"\#(refunded ? #" stroke-width="2""# : "")><title>"#)
                svg.add(Self.describe(period))
                svg.raw("</title></rect>")
                if transaction.reason == .renewal {
                    svg.raw(#"<rect class="renewal tl-ink" x="\#(Self.number(barX))" y="\#(Self.number(y + barTop - 2))" width="3" height="\#(Self.number(barHeight + 4))"><title>"#)
                    svg.add("Renewed \(Self.date(period.start))")
                    svg.raw("</title></rect>")
                }
                if let offer = transaction.offer, barWidth > 40 {
                    svg.raw(#"<text class="offer tl-ink" x="\#(Self.number(barX + 6))" y="\#(Self.number(y + barTop + barHeight / 2 + 4))" font-size="10">"#)
                    svg.add(Self.offerName(offer.type))
                    svg.raw("</text>")
                }
                if refunded, let revocation = transaction.revocation {
                    let mark = x(revocation.date)
                    svg.raw(#"<path class="revocation tl-refunded" d="M\#(Self.number(mark - 5)) \#(Self.number(y + barTop - 2)) l10 \#(Self.number(barHeight + 4)) m0 -\#(Self.number(barHeight + 4)) l-10 \#(Self.number(barHeight + 4))" fill="none" stroke-width="2"/>"#)
                }
            }
        }
        // "now", then the events, each with its line down to its label.
        let nowX = x(now), nowPlacement = placements[0]
        let nowY = labelsTop + Double(nowPlacement.row) * Self.eventRowHeight
        svg.raw(#"<g class="now"><line class="tl-now" x1="\#(Self.number(nowX))" y1="\#(Self.number(top - 6))" x2="\#(Self.number(nowX))" y2="\#(Self.number(nowY - 10))" stroke-width="2"/><text class="label tl-ink" x="\#(Self.number(nowPlacement.textX))" y="\#(Self.number(nowY))" text-anchor="\#(nowPlacement.anchorsEnd ? "end" : "start")" font-weight="600" font-size="11">now</text></g>"#)
        for (event, placement) in zip(sortedEvents, placements.dropFirst()) {
            let position = x(event.date)
            let colour = "tl-\(["problem", "recovery", "end", "change"].contains(event.kind) ? event.kind : "change")"
            let labelY = labelsTop + Double(placement.row) * Self.eventRowHeight
            let textX = placement.textX
            svg.raw(#"<g class="event" data-kind="\#(event.kind)"><line class="\#(colour)" x1="\#(Self.number(position))" y1="\#(Self.number(top))" x2="\#(Self.number(position))" y2="\#(Self.number(labelY - 4))" stroke-width="1.5"/><circle class="\#(colour)" cx="\#(Self.number(position))" cy="\#(Self.number(labelY - 4))" r="3"/><text class="label \#(colour)" x="\#(Self.number(textX))" y="\#(Self.number(labelY))" text-anchor="\#(placement.anchorsEnd ? "end" : "start")" stroke="none" font-size="11">"#)
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

    /// The timeline's page: the picture drawn at the width that fits the screen (so its text keeps its
    /// size), in the page's colour scheme, a legend, and the periods and events as tables.
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
        html.raw(#"</ul></section><section class="card" aria-label="Picture">"#)
        html.raw(picture)
        html.raw(#"<p><a href="/timeline/\#(originalTransactionID).svg">The picture alone (SVG)</a></p></section>"#)
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
    private static func ticks(from: Date, to: Date, labels: Int) -> [Date] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let span = to.timeIntervalSince(from)
        // At most `labels` labels fit the axis side by side.
        func step(_ unit: Double) -> Int { max(1, Int((span / unit / Double(labels)).rounded(.up))) }
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
