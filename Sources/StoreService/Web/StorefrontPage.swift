import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import StoreKitCatalog

/// The web storefront at `/store?account=A&device=D`: the store views' models rendered as HTML. Its
/// forms buy, restore and redeem as the app on that device would through StoreKit's views, so an
/// app connected to the device hears each purchase through `Transaction.updates`.
struct StorefrontPage {
    let account: String
    let device: String
    /// The one-time products and the subscription groups, as the store views show them.
    let products: StoreViewModel
    let groups: [SubscriptionStoreViewModel]
    let storefront: OpenStoreKit.Storefront?
    /// Every account and its devices, for the device picker.
    let accounts: [(account: String, devices: [String])]
    let message: String?
    /// What the page's forms carry, so the server knows they are its own (see `CrossSiteCheck`).
    let formToken: String

    /// Loads what the page shows for a device through `client`, acting for it.
    static func load(store: SimulatedAppStore, client: StoreClient, account: String, message: String?,
                     accounts: [(account: String, devices: [String])], formToken: String) async -> StorefrontPage {
        let catalog = await store.catalog()
        let environment = StoreViewEnvironment(client: client)
        let views = await StoreViewModel.loadStorefront(oneTimeIDs: catalog.products.filter { $0.subscription == nil }.map(\.id),
                                                        groupIDs: catalog.subscriptionGroups.map(\.id), productIDs: catalog.products.map(\.id),
                                                        environment: environment)
        return StorefrontPage(account: account, device: client.device, products: views.products, groups: views.groups,
                              storefront: await client.storefront(), accounts: accounts, message: message, formToken: formToken)
    }

    /// The page that asks which device to shop on.
    static func picker(accounts: [(account: String, devices: [String])], message: String?) -> String {
        var html = HTML()
        header(&html)
        html.raw(#"<main class="storefront">"#)
        flash(&html, message ?? "Choose the account and device to shop on.")
        devicePicker(&html, accounts: accounts, account: nil, device: nil)
        html.raw("</main>")
        return HTML.page(title: "Storefront — OpenStoreKit", body: html.text)
    }

    /// The page for a device the store does not have: it offers to sign the device in to the account
    /// (a form, since a page view changes nothing).
    static func signIn(account: String, device: String, formToken: String) -> String {
        var html = HTML()
        header(&html)
        html.raw(#"<main class="storefront">"#)
        flash(&html, "The store has no device \(device). Sign it in to \(account) to shop on it, as opening the App Store there would.")
        html.raw(#"<form method="post" action="/store/sign-in">"#)
        for (name, value) in [("account", account), ("device", device), (CrossSiteCheck.formTokenField, formToken)] {
            html.raw(#"<input type="hidden" name=""#)
            html.add(name)
            html.raw(#"" value=""#)
            html.add(value)
            html.raw(#"">"#)
        }
        html.raw(#"<button type="submit" class="primary">Sign in "#)
        html.add(device)
        html.raw(" to ")
        html.add(account)
        html.raw(#"</button></form> <a href="/store">Choose another device</a></main>"#)
        return HTML.page(title: "Storefront — OpenStoreKit", body: html.text)
    }

    /// A page that says what is wrong, with the way back to the device picker.
    static func problem(_ message: String, title: String) -> String {
        var html = HTML()
        header(&html)
        html.raw(#"<main class="storefront"><h1>"#)
        html.add(title)
        html.raw("</h1>")
        flash(&html, message)
        html.raw(#"<a href="/store">Choose a device</a></main>"#)
        return HTML.page(title: "Storefront — OpenStoreKit", body: html.text)
    }

    var html: String {
        var html = HTML()
        Self.header(&html)
        html.raw(#"<main class="storefront">"#)
        Self.devicePicker(&html, accounts: accounts, account: account, device: device)
        if let message { Self.flash(&html, message) }
        html.raw(#"<p class="context">Shopping as <strong>"#)
        html.add(account)
        html.raw("</strong> on <strong>")
        html.add(device)
        html.raw("</strong>")
        if let storefront {
            html.raw(" in the ")
            html.add(storefront.countryCode)
            html.raw(" storefront")
        }
        html.raw("</p>")
        oneTimeProducts(&html)
        for group in groups where !group.plans.isEmpty { subscriptionGroup(&html, group) }
        storeButtons(&html)
        html.raw("</main>")
        return HTML.page(title: "Storefront — OpenStoreKit", body: html.text)
    }

    private static func header(_ html: inout HTML) {
        html.raw(#"<header class="app-header"><p class="brand"><span class="app-name">OpenStoreKit</span> <span class="app-page">Storefront</span></p><nav aria-label="Pages"><a href="/">Transaction Manager</a></nav></header>"#)
    }

    private static func flash(_ html: inout HTML, _ message: String) {
        html.raw(#"<p class="flash" role="status">"#)
        html.add(message)
        html.raw("</p>")
    }

    private static func devicePicker(_ html: inout HTML, accounts: [(account: String, devices: [String])], account: String?, device: String?) {
        html.raw(#"<form class="device-picker" method="get" action="/store"><label>Device <select name="pick" aria-label="Account and device">"#)
        for entry in accounts {
            for name in entry.devices {
                let value = Self.pickValue(account: entry.account, device: name)
                html.raw(#"<option value=""#)
                html.add(value)
                html.raw(entry.account == account && name == device ? #"" selected>"# : #"">"#)
                html.add("\(entry.account) — \(name)")
                html.raw("</option>")
            }
        }
        html.raw(#"</select></label> <button type="submit">Show</button></form>"#)
    }

    /// The picker's value for a device: both names percent-encoded, joined by `/`.
    static func pickValue(account: String, device: String) -> String {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        return [account, device].map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }.joined(separator: "/")
    }

    /// The account and device a picker value names.
    static func parsePick(_ value: String) -> (account: String, device: String)? {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let account = parts[0].removingPercentEncoding, let device = parts[1].removingPercentEncoding,
              !account.isEmpty, !device.isEmpty else { return nil }
        return (account, device)
    }

    /// A form posting one action for this device.
    private func actionForm(_ html: inout HTML, action: String, fields: [(String, String)], button: String, primary: Bool = false,
                            label: String, dataAction: String, disabled: Bool = false) {
        html.raw(#"<form method="post" action="/store/"#)
        html.add(action)
        html.raw(#"">"#)
        for (name, value) in [("account", account), ("device", device), (CrossSiteCheck.formTokenField, formToken)] + fields {
            html.raw(#"<input type="hidden" name=""#)
            html.add(name)
            html.raw(#"" value=""#)
            html.add(value)
            html.raw(#"">"#)
        }
        html.raw(primary ? #"<button type="submit" class="primary" data-action=""# : #"<button type="submit" data-action=""#)
        html.add(dataAction)
        html.raw(#"" aria-label=""#)
        html.add(label)
        html.raw(disabled ? #"" disabled>"# : #"">"#)
        html.add(button)
        html.raw("</button></form>")
    }

    /// Opens a product's card (`<article class="product|plan">`) with its heading; the caller closes it.
    private func openCard(_ html: inout HTML, kind: String, productID: String, state: String, name: String) {
        html.raw(#"<article class=""#)
        html.raw(kind)
        html.raw(#"" data-product-id=""#)
        html.add(productID)
        html.raw(#"" data-state=""#)
        html.add(state)
        html.raw(#""><h3>"#)
        html.add(name)
        html.raw("</h3>")
    }

    private func oneTimeProducts(_ html: inout HTML) {
        let available = products.products.filter { $0.state != .unavailable }
        guard !available.isEmpty else { return }
        html.raw(#"<section class="group" aria-labelledby="one-time"><h2 id="one-time">In-App Purchases</h2><div class="products">"#)
        for product in available {
            openCard(&html, kind: "product", productID: product.id, state: product.state.rawValue, name: product.displayName)
            html.raw("<p>")
            html.add(product.description)
            html.raw(#"</p><p class="price">"#)
            html.add(product.priceText)
            html.raw("</p>")
            if product.state == .owned { html.raw(#"<p><span class="badge owned">Purchased</span></p>"#) }
            actionForm(&html, action: "buy", fields: [("product", product.id)], button: product.buttonLabel, primary: product.canBuy,
                       label: "Buy \(product.displayName) for \(product.priceText)", dataAction: "buy", disabled: !product.canBuy)
            html.raw("</article>")
        }
        html.raw("</div></section>")
    }

    private func subscriptionGroup(_ html: inout HTML, _ group: SubscriptionStoreViewModel) {
        let headingID = "group-\(group.groupID)"
        html.raw(#"<section class="group" data-group-id=""#)
        html.add(group.groupID)
        html.raw(#"" aria-labelledby=""#)
        html.add(headingID)
        html.raw(#""><h2 id=""#)
        html.add(headingID)
        html.raw(#"">"#)
        html.add(group.groupDisplayName ?? group.groupID)
        html.raw("</h2>")
        if let current = group.currentPlan {
            let warning = current.state == .inGracePeriod || current.state == .inBillingRetryPeriod || current.state == .revoked
            html.raw(#"<p class="current-plan" data-state=""#)
            html.add(Self.stateName(current.state))
            html.raw(#""><span class="badge "#)
            html.raw(warning ? "warning" : "current")
            html.raw(#"">"#)
            html.add(Self.stateLabel(current.state, willAutoRenew: current.willAutoRenew))
            html.raw("</span> ")
            html.add(group.plans.first { $0.id == current.productID }?.displayName ?? current.productID)
            html.raw(": ")
            html.add(current.summary)
            html.raw("</p>")
        }
        html.raw(#"<div class="plans">"#)
        for plan in group.plans {
            openCard(&html, kind: "plan", productID: plan.id, state: plan.relation.rawValue, name: plan.displayName)
            if plan.relation == .current { html.raw(#"<p><span class="badge current">Current plan</span></p>"#) }
            html.raw(#"<p class="price">"#)
            html.add(plan.priceText)
            html.raw("</p>")
            if let offer = plan.offerText {
                html.raw(#"<p class="offer">"#)
                html.add(offer)
                html.raw("</p>")
            }
            actionForm(&html, action: "buy", fields: [("product", plan.id)], button: plan.buttonLabel, primary: plan.relation != .current,
                       label: "\(plan.buttonLabel): \(plan.displayName), \(plan.priceText)", dataAction: "buy",
                       disabled: plan.relation == .current || plan.isScheduledNext)
            html.raw("</article>")
        }
        html.raw("</div></section>")
    }

    private func storeButtons(_ html: inout HTML) {
        html.raw(#"<section class="store-buttons card" aria-label="Store buttons">"#)
        actionForm(&html, action: "restore", fields: [], button: "Restore Purchases", label: "Restore purchases", dataAction: "restore")
        html.raw(#"<form method="post" action="/store/redeem"><input type="hidden" name="account" value=""#)
        html.add(account)
        html.raw(#""><input type="hidden" name="device" value=""#)
        html.add(device)
        html.raw(#""><input type="hidden" name="form_token" value=""#)
        html.add(formToken)
        html.raw(#""><label>Offer code <input name="code" autocomplete="off"></label> <button type="submit" data-action="redeem">Redeem Code</button></form>"#)
        let policies = products.buttons.policies
        // Only web addresses become links: a `javascript:` URL in a .storekit file would run in the store's origin.
        if let terms = policies.termsOfServiceURL, Self.isWebAddress(terms) {
            html.raw(#"<a href=""#)
            html.add(terms.absoluteString)
            html.raw(#"">Terms of Service</a>"#)
        } else if let text = policies.termsOfServiceText {
            html.raw("<details><summary>Terms of Service</summary><p>")
            html.add(text)
            html.raw("</p></details>")
        }
        if let privacy = policies.privacyPolicyURL, Self.isWebAddress(privacy) {
            html.raw(#"<a href=""#)
            html.add(privacy.absoluteString)
            html.raw(#"">Privacy Policy</a>"#)
        } else if let text = policies.privacyPolicyText {
            html.raw("<details><summary>Privacy Policy</summary><p>")
            html.add(text)
            html.raw("</p></details>")
        }
        html.raw("</section>")
    }

    /// Whether a URL is an `http` or `https` address, the only kind the pages link to.
    static func isWebAddress(_ url: URL) -> Bool {
        ["http", "https"].contains(url.scheme?.lowercased() ?? "")
    }

    static func stateName(_ state: Product.SubscriptionInfo.RenewalState) -> String {
        switch state {
        case .subscribed: return "subscribed"
        case .expired: return "expired"
        case .inBillingRetryPeriod: return "billingRetry"
        case .inGracePeriod: return "gracePeriod"
        case .revoked: return "revoked"
        default: return "unknown"
        }
    }

    static func stateLabel(_ state: Product.SubscriptionInfo.RenewalState, willAutoRenew: Bool) -> String {
        switch state {
        case .subscribed: return willAutoRenew ? "Subscribed" : "Expiring"
        case .expired: return "Expired"
        case .inBillingRetryPeriod: return "Billing retry"
        case .inGracePeriod: return "Grace period"
        case .revoked: return "Refunded"
        default: return "Unknown"
        }
    }
}
