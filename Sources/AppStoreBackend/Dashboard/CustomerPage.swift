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
                    html.raw(Self.customerMarkup(record, storePages: service.storePages))
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

    static func customerMarkup(_ record: CustomerRecord, storePages: URL? = nil) -> String {
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
        // Where the customer buys: the storefront (country) and currency of their newest transaction.
        if let latest = record.history.last(where: { $0.storefront != nil }), let storefront = latest.storefront {
            html.raw(#"<p class="customer-storefront" data-storefront=""#)
            html.add(storefront)
            html.raw(#"">"#)
            html.add("Storefront: \(countryName(storefront)) (\(storefront)\(latest.storefrontId.map { ", \($0)" } ?? ""))"
                     + (latest.currency.map { ", paying in \($0)" } ?? ""))
            html.raw("</p>")
        }
        html.raw(#"<h3 id="entitlements-title">Entitled now</h3>"#)
        if record.entitlements.isEmpty {
            html.raw("<p>Nothing: no purchase entitles this customer now.</p>")
        } else {
            table(&html, label: "Entitlements", headers: ["Product", "Type", "Why", "Expires", "Grace period ends", "Renews"],
                  rows: record.entitlements.map { entitlement in
                      (("product", entitlement.productId), [.text(entitlement.productId), .text(entitlement.type), .text(reasonWords(entitlement.reason)),
                                                             .text(dateText(entitlement.expiresDate)), .text(dateText(entitlement.gracePeriodExpiresDate)),
                                                             .text(entitlement.willAutoRenew.map { $0 ? "yes" : "no" } ?? "—")])
                  })
        }
        html.raw(#"<h3 id="history-title">Transactions</h3>"#)
        table(&html, label: "Transactions", headers: ["Transaction", "Original", "Product", "Type", "Price", "Storefront", "Purchased", "Expires",
                                                      "Refunded or revoked", "Entitles"],
              rows: record.history.map { entry in
                  var entitles = entry.entitled ? "yes" : "no"
                  if entry.expiredUnconfirmed { entitles = "no: ended, the App Store is asked at the next reconciliation" }
                  if entry.isUpgraded { entitles = "no: upgraded" }
                  let link = storePages.map { storeLink($0, transaction: entry.transactionId) }
                  let first: Cell = link.map { Cell.link($0, entry.transactionId, "The store's page of transaction \(entry.transactionId)") }
                      ?? Cell.text(entry.transactionId)
                  return (("transaction", entry.transactionId), [first,
                                                                  .text(entry.originalTransactionId), .text(entry.productId), .text(entry.type),
                                                                  .text(moneyText(entry.price, entry.currency)),
                                                                  .text(entry.storefront.map { countryName($0) == $0 ? $0 : "\(countryName($0)) (\($0))" } ?? "—"),
                                                                  .text(dateText(entry.purchaseDate)), .text(dateText(entry.expiresDate)),
                                                                  .text(dateText(entry.revocationDate)), .text(entitles)])
              })
        if storePages == nil {
            html.raw(#"<p class="muted">Start the backend with <code>--store-pages URL</code> (or <code>--api-url</code> of a local store) to link each transaction to the store's page of it.</p>"#)
        }
        html.raw(#"<h3 id="notifications-title">Notifications</h3>"#)
        if record.notifications.isEmpty {
            html.raw("<p>None recorded about these purchases.</p>")
        } else {
            if record.notifications.count == customerNotificationLimit {
                html.raw(#"<p class="muted">The newest \#(customerNotificationLimit).</p>"#)
            }
            table(&html, label: "Notifications", headers: ["Signed", "Type", "Subtype", "Transaction", "Grace period ends"],
                  rows: record.notifications.map { notification in
                      (("notification", notification.notificationUUID), [.text(dateText(notification.signedDate)), .text(notification.type),
                                                                          .text(notification.subtype ?? "—"), .text(notification.transactionID ?? "—"),
                                                                          .text(dateText(notification.gracePeriodExpiresDate))])
                  })
        }
        html.raw("</section>")
        return html.text
    }

    /// A cell of a customer table: text, or a link.
    enum Cell {
        case text(String)
        case link(URL, String, String)
    }

    /// A table whose rows stack into cards on a narrow screen (each cell under its column's name,
    /// `data-label`), so nothing hides behind sideways scrolling; each row marked with what it shows (`data-…`).
    private static func table(_ html: inout HTML, label: String, headers: [String], rows: [((String, String), [Cell])]) {
        html.raw(#"<div class="stacking" role="region" aria-label=""#)
        html.add(label)
        html.raw(#""><table class="records stack"><thead><tr>"#)
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
                html.raw(index == 0 ? #"<th scope="row" data-label=""# : #"<td data-label=""#)
                html.add(index < headers.count ? headers[index] : "")
                html.raw(#"">"#)
                switch cell {
                case .text(let text): html.add(text)
                case .link(let url, let text, let name):
                    html.raw(#"<a class="store-link" href=""#)
                    html.add(url.absoluteString)
                    html.raw(#"" aria-label=""#)
                    html.add(name)
                    html.raw(#"">"#)
                    html.add(text)
                    html.raw("</a>")
                }
                html.raw(index == 0 ? "</th>" : "</td>")
            }
            html.raw("</tr>")
        }
        html.raw("</tbody></table></div>")
    }

    /// The store's page of a transaction: `{store}/transactions/{id}`.
    static func storeLink(_ store: URL, transaction: String) -> URL {
        let digits = transaction.filter(\.isNumber)
        return store.appendingPathComponent("transactions").appendingPathComponent(digits.isEmpty ? "0" : digits)
    }

    /// `4.99 GBP` from milliunits; `—` when the transaction states no price.
    static func moneyText(_ milliunits: Int64?, _ currency: String?) -> String {
        guard let milliunits else { return "—" }
        let amount = Decimal(milliunits) / 1000
        return amount.formatted(.number.precision(.fractionLength(2)).locale(Locale(identifier: "en_US_POSIX"))) + (currency.map { " \($0)" } ?? "")
    }

    /// A storefront's country in words, for the common ones; the code itself otherwise.
    static func countryName(_ code: String) -> String {
        let names = ["USA": "United States", "GBR": "United Kingdom", "DEU": "Germany", "FRA": "France", "JPN": "Japan", "CAN": "Canada",
                     "AUS": "Australia", "ITA": "Italy", "ESP": "Spain", "NLD": "Netherlands", "CHE": "Switzerland", "SWE": "Sweden",
                     "BRA": "Brazil", "MEX": "Mexico", "IND": "India", "CHN": "China", "KOR": "South Korea", "IRL": "Ireland"]
        return names[code.uppercased()] ?? code
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
