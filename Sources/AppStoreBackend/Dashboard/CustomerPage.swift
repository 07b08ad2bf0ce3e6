import AppStoreModels
import Foundation
import HTTPService

/// The dashboard's customer page (`/dashboard/customers?q=`): one customer found by app account
/// token (any case), app user id or a purchase's transaction identifier, with what they are entitled
/// to now, every transaction, and the newest notifications about their purchases: what support
/// reads when a customer writes "I paid but lost access".
extension BackendDashboard {
    /// How many notifications the page shows, newest first.
    static let customerNotificationLimit = 200

    func customerPage(_ request: HTTPRequest, session: String) async -> HTTPResponse {
        let search = (request.queryValue("q") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        var html = HTML()
        html.raw(#"<form class="range card" method="get" action="/dashboard/customers" role="search" aria-label="Find a customer"><div class="field wide"><label for="q">App account token, user id or transaction id</label><input id="q" name="q" type="search" autocomplete="off" spellcheck="false" value=""#)
        html.add(search)
        html.raw(#""></div>"# + Self.sessionInput(session) + #"<button type="submit">Find</button></form>"#)
        var status = 200
        if !search.isEmpty {
            do {
                if let record = try await service.ledger.lookup(search, notificationLimit: Self.customerNotificationLimit) {
                    html.raw(Self.customerMarkup(record))
                } else {
                    status = 404
                    html.raw(Self.problemMarkup("No customer or purchase matches “\(search)”: give an app account token, the user id an app sent with a purchase, or a transaction id."))
                }
            } catch {
                return Self.page(Self.frame.fill(["title": "Customers — OpenStoreKit", "main": Self.problemMarkup("\(error)")]), status: 503)
            }
        }
        let actions = headerActions(session, other: ("/dashboard", "Figures"))
        let title = search.isEmpty ? "Customers — OpenStoreKit" : "\(search) — customers — OpenStoreKit"
        return Self.page(Self.frame.fill(["title": HTML.escape(title), "as-of": "", "header-actions": actions, "main": html.text]), status: status)
    }

    static func customerMarkup(_ record: CustomerRecord) -> String {
        var html = HTML()
        html.raw(#"<section aria-labelledby="customer-title"><h2 id="customer-title" data-customer=""#)
        html.add(record.customerID ?? "")
        html.raw(#"">"#)
        if let customer = record.customerID {
            html.add("Customer \(customer)")
        } else {
            html.add("Purchase \(record.history.first?.originalTransactionId ?? ""), linked to no customer")
        }
        html.raw("</h2>")
        if record.customerID == nil {
            html.raw(#"<p class="muted">Its transactions carry no app account token and no app sent a user id with it.</p>"#)
        }
        html.raw(#"<h3 id="entitlements-title">Entitled now</h3>"#)
        if record.entitlements.isEmpty {
            html.raw("<p>Nothing: no purchase entitles this customer now.</p>")
        } else {
            table(&html, label: "Entitlements", headers: ["Product", "Type", "Why", "Expires", "Grace period ends", "Renews"],
                  rows: record.entitlements.map { entitlement in
                      (("product", entitlement.productId), [entitlement.productId, entitlement.type, reasonWords(entitlement.reason),
                                                             dateText(entitlement.expiresDate), dateText(entitlement.gracePeriodExpiresDate),
                                                             entitlement.willAutoRenew.map { $0 ? "yes" : "no" } ?? "—"])
                  })
        }
        html.raw(#"<h3 id="history-title">Transactions</h3>"#)
        table(&html, label: "Transactions", headers: ["Transaction", "Original", "Product", "Type", "Purchased", "Expires", "Refunded or revoked", "Entitles"],
              rows: record.history.map { entry in
                  var entitles = entry.entitled ? "yes" : "no"
                  if entry.expiredUnconfirmed { entitles = "no: ended, the App Store is asked at the next reconciliation" }
                  if entry.isUpgraded { entitles = "no: upgraded" }
                  return (("transaction", entry.transactionId), [entry.transactionId, entry.originalTransactionId, entry.productId, entry.type,
                                                                  dateText(entry.purchaseDate), dateText(entry.expiresDate), dateText(entry.revocationDate),
                                                                  entitles])
              })
        html.raw(#"<h3 id="notifications-title">Notifications</h3>"#)
        if record.notifications.isEmpty {
            html.raw("<p>None recorded about these purchases.</p>")
        } else {
            if record.notifications.count == customerNotificationLimit {
                html.raw(#"<p class="muted">The newest \#(customerNotificationLimit).</p>"#)
            }
            table(&html, label: "Notifications", headers: ["Signed", "Type", "Subtype", "Transaction", "Grace period ends"],
                  rows: record.notifications.map { notification in
                      (("notification", notification.notificationUUID), [dateText(notification.signedDate), notification.type, notification.subtype ?? "—",
                                                                          notification.transactionID ?? "—", dateText(notification.gracePeriodExpiresDate)])
                  })
        }
        html.raw("</section>")
        return html.text
    }

    /// A table that scrolls sideways on a phone; each row marked with what it shows (`data-…`).
    private static func table(_ html: inout HTML, label: String, headers: [String], rows: [((String, String), [String])]) {
        html.raw(#"<div class="scroll" role="region" tabindex="0" aria-label=""#)
        html.add("\(label), scrolls sideways")
        html.raw(#""><table class="records"><thead><tr>"#)
        for header in headers {
            html.raw(#"<th scope="col">"#)
            html.add(header)
            html.raw("</th>")
        }
        html.raw("</tr></thead><tbody>")
        for ((attribute, key), cells) in rows {
            html.raw(#"<tr data-\#(attribute)=""#)
            html.add(key)
            html.raw(#"">"#)
            for (index, cell) in cells.enumerated() {
                html.raw(index == 0 ? #"<th scope="row">"# : "<td>")
                html.add(cell)
                html.raw(index == 0 ? "</th>" : "</td>")
            }
            html.raw("</tr>")
        }
        html.raw("</tbody></table></div>")
    }

    static func reasonWords(_ reason: String) -> String {
        switch reason {
        case "purchased": "bought"
        case "familyShared": "shared by family"
        case "subscribed": "subscribed"
        case "gracePeriod": "billing grace period"
        case "notYetConfirmed": "subscribed, not yet confirmed by a notification"
        default: reason
        }
    }

    static func dateText(_ date: Date?) -> String {
        date.map { $0.formatted(.iso8601) } ?? "—"
    }
}
