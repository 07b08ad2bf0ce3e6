import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import StoreKitCatalog

/// One purchase's whole story at `/transactions/{id}`: what the ledger holds, the signed transaction
/// and (for a subscription) the renewal info as the App Store signs them now, decoded, every
/// notification about the purchase with its delivery attempts, and the subscription's timeline.
struct TransactionPage {
    let transaction: LedgerTransaction
    let row: TransactionRow
    let signedTransaction: String
    let renewalInfo: String?
    let notifications: [NotificationRecord]
    let timeline: SubscriptionTimeline?
    /// The customer's visits to the subscription's cancellation page, with what each showed.
    let cancellations: [(attempt: RetentionOfferAttempt, header: String?)]

    static func load(store: SimulatedAppStore, id: UInt64) async throws -> TransactionPage {
        guard let transaction = try await store.ledgerTransaction(id) else {
            throw APIError.notFound("the store has no transaction \(id)")
        }
        let now = try await store.currentTime()
        let subscription = transaction.productKind == .autoRenewable
            ? try await store.subscriptionRecord(originalTransactionID: transaction.originalID) : nil
        let signed = transaction.isPurchased || transaction.revocation != nil ? try? await store.transaction(id).jws : nil
        let renewal = subscription != nil ? try await store.signedRenewalInfo(originalTransactionID: transaction.originalID)?.jws : nil
        let notifications = try await store.notificationRecords(aboutOriginalTransaction: transaction.originalID)
        // The timeline is drawn from the notifications and record the page has read.
        let timeline = transaction.productKind == .autoRenewable && transaction.isPurchased
            ? try await SubscriptionTimeline.load(store: store, transaction: transaction, notifications: notifications, subscription: subscription) : nil
        var cancellations: [(attempt: RetentionOfferAttempt, header: String?)] = []
        if subscription != nil {
            for attempt in try await store.cancellationAttempts(originalTransactionID: transaction.originalID) {
                let header = if let message = attempt.messageIdentifier { try await store.retentionMessage(message)?.content.header } else { String?.none }
                cancellations.append((attempt, header))
            }
        }
        return TransactionPage(transaction: transaction, row: TransactionRow(transaction, subscription: subscription, now: now),
                               signedTransaction: signed ?? "", renewalInfo: renewal, notifications: notifications, timeline: timeline,
                               cancellations: cancellations)
    }

    /// A JWS's payload as indented JSON with sorted keys, or the text itself when it is not one.
    static func decodedPayload(_ jws: String) -> String {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return jws }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let object = try? JSONSerialization.jsonObject(with: data),
              let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            return jws
        }
        return String(decoding: pretty, as: UTF8.self)
    }

    var html: String {
        var html = HTML()
        let t = transaction
        html.raw(#"<section class="card" aria-labelledby="purchase-heading" data-transaction-id="\#(t.id)" data-state="\#(row.state)"><h2 id="purchase-heading">"#)
        html.add("Transaction \(t.id)")
        html.raw(#" <span class="badge \#(row.badge)">"#)
        html.add(row.stateLabel)
        html.raw(#"</span></h2><p><a href="/">Back to the Transaction Manager</a>"#)
        if t.productKind == .autoRenewable {
            html.raw(#" · <a href="/timeline/\#(t.originalID)">The subscription's timeline</a>"#)
        }
        html.raw(#"</p><dl class="facts">"#)
        var facts: [(String, String)] = [
            ("Account", t.account + (t.device.map { " (device \($0))" } ?? "")),
            ("Product", "\(t.productID) (\(t.productKind.rawValue))"),
            ("Price", TransactionRow.money(t.price, t.currency)),
            ("Storefront", "\(t.storefront) (\(t.storefrontID))"),
            ("Purchased", HTML.dateAndTime(t.purchaseDate) + (t.reason == .renewal ? ", a renewal" : "")),
        ]
        if t.originalID != t.id { facts.append(("Original transaction", "#\(t.originalID)")) }
        if t.originalPurchaseDate != t.purchaseDate { facts.append(("First purchased", HTML.dateAndTime(t.originalPurchaseDate))) }
        if let expiration = t.expirationDate { facts.append(("Expires", HTML.dateAndTime(expiration))) }
        facts.append(("App account token", t.appAccountToken.map { $0.uuidString.lowercased() } ?? "none"))
        facts.append(("Ownership", t.ownership.rawValue))
        facts.append(("Finished by the app", t.finishedDate.map(HTML.dateAndTime) ?? "not yet"))
        if let options = t.customPurchaseOptions, !options.isEmpty {
            // What the app passed as custom purchase options: kept by the store, never signed.
            facts.append(("Custom purchase options", options.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)" }.joined(separator: "; ")))
        }
        for detail in row.details { facts.append(("", detail.text)) }
        for (term, value) in facts {
            html.raw("<dt>")
            html.add(term)
            html.raw("</dt><dd>")
            html.add(value)
            html.raw("</dd>")
        }
        html.raw("</dl></section>")
        actions(&html)

        html.raw(#"<section class="card" aria-labelledby="payloads-heading"><h2 id="payloads-heading">Signed data, decoded</h2><div class="payloads">"#)
        func payload(_ title: String, _ jws: String, id: String) {
            html.raw(#"<div><h3 id="\#(id)-title">"#)
            html.add(title)
            html.raw(#"</h3><pre id="\#(id)" tabindex="0" aria-labelledby="\#(id)-title">"#)
            Self.annotatedPayload(&html, Self.decodedPayload(jws))
            html.raw(#"</pre><details><summary>The JWS</summary><pre class="jws">"#)
            html.add(jws)
            html.raw("</pre></details></div>")
        }
        if signedTransaction.isEmpty {
            html.raw(#"<p class="empty-state">Not signed: the purchase did not complete.</p>"#)
        } else {
            payload("Transaction (JWSTransaction)", signedTransaction, id: "signed-transaction")
        }
        if let renewalInfo { payload("Renewal info (JWSRenewalInfo), as of now", renewalInfo, id: "signed-renewal-info") }
        html.raw("</div></section>")

        html.raw(#"<section class="card" aria-labelledby="notes-heading"><h2 id="notes-heading">Server notifications</h2>"#)
        if notifications.isEmpty {
            html.raw(#"<p class="empty-state">No notifications about this purchase.</p>"#)
        } else {
            html.raw(#"<div class="table-scroll" role="region" aria-label="Notifications about this purchase, scrolls sideways" tabindex="0"><table class="cards"><thead><tr><th scope="col">#</th><th scope="col">Date (UTC)</th><th scope="col">Type</th><th scope="col">Transaction</th><th scope="col">Delivery attempts</th></tr></thead><tbody>"#)
            for note in notifications {
                html.raw(#"<tr data-notification-sequence="\#(note.sequence)"><th scope="row">"#)
                html.add(String(note.sequence))
                html.raw(#"</th><td data-label="Date">"#)
                html.add(TransactionRow.date(note.date))
                html.raw(#"</td><td data-label="Type"><code>"#)
                html.add(note.type.rawValue + (note.subtype.map { " / \($0.rawValue)" } ?? ""))
                html.raw(#"</code></td><td data-label="Transaction">"#)
                html.add(note.transactionID.map { "#\($0)" } ?? "—")
                html.raw(#"</td><td data-label="Delivery attempts">"#)
                let delivery = note.delivery
                var words = delivery.attempts.map { "\(TransactionRow.date($0.date)): \($0.result)" }
                if delivery.isGivenUp { words.append("given up") }
                if let next = delivery.nextAttemptDate { words.append("next \(TransactionRow.date(next))") }
                html.add(words.isEmpty ? "none yet" : words.joined(separator: "; "))
                html.raw("</td></tr>")
            }
            html.raw("</tbody></table></div>")
        }
        html.raw("</section>")
        if !cancellations.isEmpty {
            html.raw(#"<section class="card" aria-labelledby="cancellations-heading"><h2 id="cancellations-heading">Cancellation attempts</h2>"#)
            html.raw(#"<div class="table-scroll" role="region" aria-label="Cancellation attempts, scrolls sideways" tabindex="0"><table class="cards"><thead><tr><th scope="col">Date (UTC)</th><th scope="col">Shown</th><th scope="col">From</th><th scope="col">Outcome</th></tr></thead><tbody>"#)
            for (attempt, header) in cancellations {
                html.raw(#"<tr data-cancellation="\#(attempt.id)" data-outcome="\#(attempt.outcome?.rawValue ?? "open")"><td data-label="Date">"#)
                html.add(TransactionRow.date(AppStoreJSON.date(fromMilliseconds: attempt.date)))
                html.raw(#"</td><td data-label="Shown">"#)
                var shown = header.map { "“\($0)”" } ?? "nothing"
                if let plan = attempt.alternateProductID { shown += ", switch to \(plan)" }
                if let offer = attempt.offerIdentifier { shown += ", offer \(offer)" }
                html.add(shown)
                html.raw(#"</td><td data-label="From">"#)
                let source = ["realtime": "the real-time URL", "defaultMessage": "the default message", "none": "—"][attempt.source.rawValue] ?? attempt.source.rawValue
                html.add(source + (attempt.realtimeFailure.map { " (real-time answer not used: \($0))" } ?? ""))
                html.raw(#"</td><td data-label="Outcome">"#)
                html.add(attempt.outcome?.rawValue ?? "not answered")
                html.raw("</td></tr>")
            }
            html.raw("</tbody></table></div></section>")
        }
        if let timeline {
            html.raw(#"<section class="card" aria-labelledby="timeline-title-section"><h2 id="timeline-title-section">Timeline</h2>"#)
            html.raw(timeline.picture)
            html.raw("</section>")
        }
        return HTML.page(title: "Transaction \(t.id) — OpenStoreKit", pageName: "Transaction", otherPage: ("/", "Transaction Manager"), main: html.text,
                         mainAttributes: ["data-transaction-id": String(t.id), "data-original-id": String(t.originalID),
                                          "data-account": t.account, "data-product-id": t.productID],
                         script: "/assets/transaction-page.js")
    }

    /// The actions that apply to the purchase now (the Transaction Manager's, from ``TransactionRow``),
    /// each a button the page's script sends to the admin API as the Transaction Manager does
    /// (`POST`, with `X-OpenStoreKit-Request` and the session): the page changes nothing by itself.
    private func actions(_ html: inout HTML) {
        let buttons = row.actions.filter { $0.href == nil && $0.action != "delete" }
        html.raw(#"<section class="card transaction-actions" aria-labelledby="actions-heading"><h2 id="actions-heading">Actions</h2>"#)
        guard !buttons.isEmpty else {
            html.raw(#"<p class="empty-state">Nothing to do: no action applies to this purchase now.</p></section>"#)
            return
        }
        html.raw(#"<noscript><p>These actions need JavaScript; the Transaction Manager offers them too.</p></noscript>"#)
        html.raw(#"<div class="controls action-options">"#)
        if buttons.contains(where: { $0.action == "refund" }) {
            html.raw(#"<label>Refund reason <select id="refund-reason"><option value="other" selected>Other</option><option value="developerIssue">Developer issue</option></select></label>"#)
        }
        if buttons.contains(where: { $0.action == "price-increase" }) {
            html.raw(#"<label>Price-increase step <select id="price-increase-action"><option value="request">Request consent</option><option value="accept">Accept</option><option value="decline">Decline</option></select></label>"#)
        }
        if buttons.contains(where: { $0.action == "extend" }) {
            html.raw(#"<label>Extend by (days, 1–90) <input id="extend-days" type="number" min="1" max="90" value="7" inputmode="numeric"></label>"#)
        }
        html.raw(#"</div><div class="controls action-buttons">"#)
        for action in buttons {
            html.raw(action.destructive ? #"<button type="button" class="danger" data-action=""# : #"<button type="button" data-action=""#)
            html.add(action.action)
            html.raw(#"" aria-label=""#)
            html.add("\(action.label) transaction \(transaction.id) (\(transaction.productID))")
            html.raw(#"">"#)
            html.add(action.label)
            html.raw("</button>")
        }
        html.raw(#"</div><p id="action-status" class="muted" role="status" aria-live="polite"></p></section>"#)
    }

    /// Writes a decoded payload, each millisecond date (a key ending in `Date`) followed by the date in
    /// words, in UTC.
    static func annotatedPayload(_ html: inout HTML, _ text: String) {
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if index > 0 { html.raw("\n") }
            html.add(String(line))
            if let date = millisecondDate(in: line) {
                html.raw(#"<span class="date-words" data-date-words>  ← "#)
                html.add(HTML.dateAndTime(date))
                html.raw("</span>")
            }
        }
    }

    /// The date of a payload line `"somethingDate" : 1767225600000,`, if it is one.
    static func millisecondDate(in line: Substring) -> Date? {
        let parts = line.split(separator: ":", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let key = parts[0].trimmingCharacters(in: .whitespaces)
        guard key.hasPrefix("\""), key.hasSuffix("Date\""), key.count > 6 else { return nil }
        let value = parts[1].trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: ",")))
        guard let milliseconds = Int64(value), milliseconds > 0 else { return nil }
        return AppStoreJSON.date(fromMilliseconds: milliseconds)
    }
}
