import Foundation

/// Builds HTML text with everything interpolated escaped.
struct HTML {
    private(set) var text = ""

    /// Escapes `&`, `<`, `>`, `"` and `'` for text and attribute values.
    static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for character in value {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Appends markup as written (only for literals of this code).
    mutating func raw(_ markup: String) { text += markup }

    /// Appends escaped text.
    mutating func add(_ value: String) { text += Self.escape(value) }

    /// Appends an element with escaped text: `element("p", "hello", attributes: ["class": "muted"])`.
    mutating func element(_ name: String, _ content: String, attributes: KeyValuePairs<String, String> = [:]) {
        raw("<\(name)")
        for (key, value) in attributes {
            raw(" \(key)=\"")
            add(value)
            raw("\"")
        }
        raw(">")
        add(content)
        raw("</\(name)>")
    }

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
            "script": script.map { #"<script src="\#(escape($0))" defer></script>"# } ?? "",
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

/// The frame of every page (`Assets/page.html`), read once: markup in which `{{name}}` marks a slot. A
/// page fills the slots in one pass, so markup put into one slot is never read for another.
struct PageFrame: Sendable {
    private enum Part: Sendable { case markup(String), slot(String) }
    private let parts: [Part]

    static let shared = PageFrame(String(decoding: PackageResources.page_html, as: UTF8.self))

    init(_ template: String) {
        var parts: [Part] = []
        var rest = Substring(template)
        while let open = rest.range(of: "{{"), let close = rest.range(of: "}}", range: open.upperBound..<rest.endIndex) {
            parts.append(.markup(String(rest[..<open.lowerBound])))
            parts.append(.slot(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        parts.append(.markup(String(rest)))
        self.parts = parts
    }

    /// The frame with each slot replaced by its markup (an unnamed slot is left empty).
    func fill(_ slots: [String: String]) -> String {
        var text = ""
        for part in parts {
            switch part {
            case .markup(let markup): text += markup
            case .slot(let name): text += slots[name] ?? ""
            }
        }
        return text
    }
}
