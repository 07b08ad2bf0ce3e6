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

/// The frame of every page (`Assets/page.html`), read once.
enum PageFrame {
    static let shared = PageTemplate(PackageResources.page_html)
}
