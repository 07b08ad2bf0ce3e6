import Foundation
import HTTPService

/// The store's pages: every one in the same frame.
extension HTML {
    /// A page of the server in the frame every page shares (`Assets/page.html`): the stylesheet and
    /// icon, a skip link to `main`, the header with the page's name as its one `h1`, a link to the other
    /// page and an optional live-status badge, an (empty) banner for the page's script, then `main`
    /// (the caller's markup is its content), an optional footer and the page's script, if any.
    static func page(title: String, pageName: String, otherPage: (href: String, text: String), main: String,
                     mainAttributes: KeyValuePairs<String, String> = [:], script: String? = nil,
                     bodyClass: String? = nil, skipText: String = "Skip to the content",
                     liveStatus: Bool = false, footer: String? = nil) -> String {
        func attributes(_ pairs: KeyValuePairs<String, String>) -> String {
            pairs.map { " \($0.key)=\"\(escape($0.value))\"" }.joined()
        }
        return PageFrame.shared.fill([
            "title": escape(title),
            // A module: deferred like `defer`, and it may import its parts (the Transaction Manager's).
            "script": script.map { #"<script type="module" src="\#(escape($0))"></script>"# } ?? "",
            "body-attributes": bodyClass.map { attributes(["class": $0]) } ?? "",
            "skip-text": escape(skipText),
            "page-name": escape(pageName),
            "other-page-href": escape(otherPage.href),
            "other-page-text": escape(otherPage.text),
            "header-status": liveStatus ? #"<span id="live" class="badge" role="status">Connecting…</span>"# : "",
            "main-attributes": attributes(mainAttributes),
            "main": main,
            "footer": footer.map { #"<footer class="muted">\#(escape($0))</footer>"# } ?? "",
        ])
    }

    /// A page that says what went wrong, with the way back.
    static func problemPage(title: String, message: String, pageName: String = "Storefront",
                            back: (href: String, text: String) = ("/store", "Choose a device on the storefront")) -> String {
        var html = HTML()
        html.raw(#"<section class="card problem" role="alert"><h2>"#)
        html.add(title)
        html.raw("</h2><p>")
        html.add(message)
        html.raw(#"</p><p><a href=""#)
        html.add(back.href)
        html.raw(#"">"#)
        html.add(back.text)
        html.raw("</a></p></section>")
        return page(title: "\(title) — OpenStoreKit", pageName: pageName, otherPage: ("/", "Transaction Manager"), main: html.text)
    }
}

extension HTML {
    private static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                                     "October", "November", "December"]

    /// A date as a customer reads it, in UTC: `6 February 2026, 09:30 UTC`.
    static func dateInWords(_ date: Date) -> String {
        let parts = Calendar.utc.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let month = monthNames[max(0, min(11, (parts.month ?? 1) - 1))]
        return "\(parts.day ?? 0) \(month) \(parts.year ?? 0), " + String(format: "%02d:%02d UTC", parts.hour ?? 0, parts.minute ?? 0)
    }

    /// A date as the transaction page writes it: `2026-02-06 09:30:00 UTC (6 February 2026)`, ISO 8601
    /// order with its time zone, and the day in words.
    static func dateAndTime(_ date: Date) -> String {
        let parts = Calendar.utc.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let month = monthNames[max(0, min(11, (parts.month ?? 1) - 1))]
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d UTC", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0, parts.minute ?? 0,
                      parts.second ?? 0) + " (\(parts.day ?? 0) \(month) \(parts.year ?? 0))"
    }
}

/// The frame of every page (`Assets/page.html`), read once.
enum PageFrame {
    static let shared = PageTemplate(PackageResources.page_html)
}
