import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import StoreKitCatalog

/// The web storefront at `/store?account=A&device=D`: the store views' models rendered as HTML. Its
/// forms buy, restore and redeem as the app on that device would through StoreKit's views, so an
/// app connected to the device hears each purchase through `Transaction.updates`. The page works
/// without script; with it (`/assets/storefront.js`) a purchase answers in place and the page follows
/// the store live (approvals, refunds, renewals, the clock).
struct StorefrontPage {
    let account: String
    let device: String
    /// The one-time products and the subscription groups, as the store views show them.
    let products: StoreViewModel
    let groups: [SubscriptionStoreViewModel]
    let storefront: OpenStoreKit.Storefront?
    /// Every account and its devices, for the device picker.
    let accounts: [(account: String, devices: [String])]
    /// Products the account asked for that wait for a parent's approval.
    let waiting: Set<String>
    /// The token the page's purchases carry (the account's), if it has one.
    let appAccountToken: UUID?
    /// Who shares each subscription group's plan with the account through Family Sharing, by group.
    let sharedBy: [String: String]
    /// What the page's forms carry, so the server knows they are its own (see `CrossSiteCheck`).
    let formToken: String

    static let title = "Storefront — OpenStoreKit"
    static let otherPage = (href: "/", text: "Transaction Manager")

    /// Loads what the page shows for a device through `client`, acting for it.
    static func load(store: SimulatedAppStore, client: StoreClient, account: String,
                     accounts: [(account: String, devices: [String])], formToken: String) async throws -> StorefrontPage {
        let catalog = await store.catalog()
        let environment = StoreViewEnvironment(client: client)
        let views = await StoreViewModel.loadStorefront(oneTimeIDs: catalog.products.filter { $0.subscription == nil }.map(\.id),
                                                        groupIDs: catalog.subscriptionGroups.map(\.id), productIDs: catalog.products.map(\.id),
                                                        environment: environment)
        let waiting = Set(try await store.waitingRequests(account: account).map(\.productID))
        var sharedBy: [String: String] = [:]
        for copy in try await store.subscriptionRecords(account: account) where copy.familySourceID != nil {
            if let source = copy.familySourceID, let purchaser = try await store.subscriptionRecord(originalTransactionID: source) {
                sharedBy[copy.groupID] = purchaser.account
            }
        }
        return StorefrontPage(account: account, device: client.device, products: views.products, groups: views.groups,
                              storefront: await client.storefront(), accounts: accounts, waiting: waiting,
                              appAccountToken: try await store.account(named: account)?.appAccountToken, sharedBy: sharedBy, formToken: formToken)
    }

    /// The page that asks which device to shop on.
    static func picker(accounts: [(account: String, devices: [String])]) -> String {
        var html = HTML()
        html.raw(#"<section class="card" aria-labelledby="picker-title"><h2 id="picker-title">Choose a device</h2>"#)
        if accounts.isEmpty {
            html.raw(#"<p class="empty-state">The store has no devices yet. Sign one in with <code>storekit account DIR NAME --device DEVICE</code>, or in the Transaction Manager's accounts.</p>"#)
        } else {
            html.raw("<p>Shop as one of the store's accounts, on one of its devices.</p>")
            devicePicker(&html, accounts: accounts, account: nil, device: nil)
        }
        html.raw("</section>")
        return HTML.page(title: title, pageName: "Storefront", otherPage: otherPage, main: html.text)
    }

    /// The page for a device the store does not have: it offers to sign the device in to the account
    /// (a form, since a page view changes nothing).
    static func signIn(account: String, device: String, formToken: String) -> String {
        var html = HTML()
        html.raw(#"<section class="card" aria-labelledby="sign-in-title"><h2 id="sign-in-title">No such device</h2><p>"#)
        html.add("The store has no device \(device). Sign it in to \(account) to shop on it, as opening the App Store there would; nothing changes until you do.")
        html.raw(#"</p><form method="post" action="/store/sign-in" class="controls">"#)
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
        html.raw(#"</button> <a href="/store">Choose another device</a></form></section>"#)
        return HTML.page(title: title, pageName: "Storefront", otherPage: otherPage, main: html.text)
    }

    var html: String {
        var html = HTML()
        html.raw(#"<section class="card" aria-labelledby="shopping-title"><h2 id="shopping-title" class="visually-hidden">Device</h2>"#)
        Self.devicePicker(&html, accounts: accounts, account: account, device: device)
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
        if let appAccountToken {
            html.raw(#"; purchases carry the app account token <code data-token>"#)
            html.add(appAccountToken.uuidString.lowercased())
            html.raw("</code>")
        }
        html.raw(".</p></section>")
        if let error = products.loadError {
            html.raw(#"<section class="card" aria-labelledby="load-error"><h2 id="load-error">The store could not load its products</h2><p class="empty-state" data-load-error>"#)
            html.add("\(error) The Transaction Manager's simulated errors (Store settings) may be set for loadProducts.")
            html.raw("</p></section>")
        } else {
            oneTimeProducts(&html)
            for group in groups where !group.plans.isEmpty { subscriptionGroup(&html, group) }
        }
        storeButtons(&html)
        return HTML.page(title: Self.title, pageName: "Storefront", otherPage: Self.otherPage, main: html.text,
                         mainAttributes: ["data-account": account, "data-device": device], script: "/assets/storefront.js")
    }

    private static func devicePicker(_ html: inout HTML, accounts: [(account: String, devices: [String])], account: String?, device: String?) {
        html.raw(#"<form class="device-picker" method="get" action="/store"><label>Account and device <select name="pick">"#)
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

    /// The address of a storefront page (`path`) for a device of an account.
    static func address(account: String, device: String, path: String = "/store") -> String {
        var components = URLComponents()
        components.path = path
        components.queryItems = [URLQueryItem(name: "account", value: account), URLQueryItem(name: "device", value: device)]
        return components.string ?? "/store"
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

    /// A form posting one action for this device (the page's script sends it in place).
    private func actionForm(_ html: inout HTML, action: String, fields: [(String, String)], button: String, primary: Bool = false,
                            label: String, dataAction: String, disabled: Bool = false, enhanced: Bool = true) {
        html.raw(#"<form method="post" action="/store/"#)
        html.add(action)
        html.raw(enhanced ? #"" data-enhanced>"# : #"">"#)
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
    private func openCard(_ html: inout HTML, kind: String, productID: String, state: String, name: String, waiting: Bool) {
        html.raw(#"<article class=""#)
        html.raw(kind)
        html.raw(#"" data-product-id=""#)
        html.add(productID)
        html.raw(#"" data-state=""#)
        html.add(state)
        html.raw(waiting ? #"" data-waiting="approval"><h3>"# : #""><h3>"#)
        html.add(name)
        html.raw("</h3>")
    }

    private static let waitingBadge = #"<p><span class="badge info" data-badge="waiting">Waiting for approval</span></p>"#

    private func oneTimeProducts(_ html: inout HTML) {
        let available = products.products.filter { $0.state != .unavailable }
        html.raw(#"<section class="group" aria-labelledby="one-time"><h2 id="one-time">In-App Purchases</h2>"#)
        guard !available.isEmpty else {
            html.raw(#"<p class="empty-state">No one-time purchases are for sale in this storefront.</p></section>"#)
            return
        }
        html.raw(#"<div class="products">"#)
        for product in available {
            // A parent is asked once: an item waiting for approval, a consumable included, is not
            // asked for again (Apple consolidates repeated requests into the one waiting).
            let waiting = waiting.contains(product.id)
            let blocked = waiting
            openCard(&html, kind: "product", productID: product.id, state: product.state.rawValue, name: product.displayName, waiting: waiting)
            html.raw("<p>")
            html.add(product.description)
            html.raw(#"</p><p class="price">"#)
            html.add(product.priceText)
            html.raw("</p>")
            if product.state == .owned { html.raw(#"<p><span class="badge owned">Purchased</span></p>"#) }
            if waiting { html.raw(Self.waitingBadge) }
            let (button, label): (String, String)
            if product.state == .owned {
                (button, label) = ("Purchased", "Purchased: \(product.displayName)")
            } else if blocked {
                (button, label) = ("Requested", "Requested: \(product.displayName), waiting for approval")
            } else {
                (button, label) = ("Buy", "Buy \(product.displayName) for \(product.priceText)")
            }
            actionForm(&html, action: "buy", fields: [("product", product.id)], button: button, primary: product.canBuy && !blocked,
                       label: label, dataAction: "buy", disabled: !product.canBuy || blocked)
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
            html.add(current.isFamilyShared && current.state != .expired && current.state != .revoked
                     ? "Family Sharing" : Self.stateLabel(current.state, willAutoRenew: current.willAutoRenew))
            html.raw("</span> ")
            html.add(group.plans.first { $0.id == current.productID }?.displayName ?? current.productID)
            html.raw(": ")
            html.add(current.summary)
            html.raw("</p>")
            let planName = group.plans.first { $0.id == current.productID }?.displayName ?? current.productID
            if current.priceIncreasePending, !current.isFamilyShared, current.state == .subscribed || current.state == .inGracePeriod {
                // The App Store's price consent sheet: without an answer the subscription does not renew.
                html.raw(#"<div class="price-increase" role="group" aria-label="Price increase"><p data-price-consent>"#)
                html.add(Self.priceConsentText(current, planName: planName))
                html.raw("</p>")
                actionForm(&html, action: "price-increase", fields: [("transaction", String(current.transactionID)), ("answer", "agree")], button: "Agree",
                           primary: true, label: "Agree to the new price", dataAction: "price-increase")
                actionForm(&html, action: "price-increase", fields: [("transaction", String(current.transactionID)), ("answer", "decline")], button: "Decline",
                           label: "Decline the new price; the subscription ends with this period", dataAction: "price-increase")
                html.raw("</div>")
            }
            if !current.willAutoRenew, !current.isFamilyShared, [.subscribed, .inGracePeriod, .inBillingRetryPeriod].contains(current.state) {
                // The App Store's subscription page offers to subscribe again while the period lasts: automatic renewal back on.
                let price = current.regularPrice.map { " at \($0)" } ?? ""
                actionForm(&html, action: "resubscribe", fields: [("transaction", String(current.transactionID))], button: "Resubscribe",
                           primary: true, label: "Resubscribe to \(planName): it renews again\(price)", dataAction: "resubscribe")
            }
            if current.willAutoRenew, !current.isFamilyShared,
               [.subscribed, .inGracePeriod, .inBillingRetryPeriod].contains(current.state) {
                // The App Store's Cancel Subscription: a plain form, whose answer is the cancellation page.
                actionForm(&html, action: "cancel", fields: [("transaction", String(current.transactionID))], button: "Cancel Subscription",
                           label: "Cancel Subscription to \(group.plans.first { $0.id == current.productID }?.displayName ?? current.productID)",
                           dataAction: "cancel", enhanced: false)
            }
        }
        html.raw(#"<div class="plans">"#)
        for plan in group.plans {
            let waiting = waiting.contains(plan.id)
            openCard(&html, kind: "plan", productID: plan.id, state: plan.relation.rawValue, name: plan.displayName, waiting: waiting)
            if plan.relation == .current {
                if group.currentPlan?.isFamilyShared == true {
                    html.raw(#"<p><span class="badge current">"#)
                    html.add(sharedBy[group.groupID].map { "Shared with you by \($0) (Family Sharing)" } ?? "Shared with you (Family Sharing)")
                    html.raw("</span></p>")
                } else {
                    html.raw(#"<p><span class="badge current">Current plan</span></p>"#)
                }
            }
            if waiting { html.raw(Self.waitingBadge) }
            html.raw(#"<p class="price">"#)
            html.add(plan.priceText)
            html.raw("</p>")
            if let offer = plan.offerText {
                html.raw(#"<p class="offer">"#)
                html.add(offer)
                html.raw("</p>")
            }
            let button = waiting ? "Requested" : plan.buttonLabel
            actionForm(&html, action: "buy", fields: [("product", plan.id)], button: button, primary: plan.relation != .current && !waiting,
                       label: waiting ? "Requested: \(plan.displayName), waiting for approval" : "\(plan.buttonLabel): \(plan.displayName), \(plan.priceText)",
                       dataAction: "buy", disabled: plan.relation == .current || plan.isScheduledNext || waiting)
            html.raw("</article>")
        }
        html.raw("</div></section>")
    }

    private func storeButtons(_ html: inout HTML) {
        html.raw(#"<section class="store-buttons card" aria-label="Store buttons">"#)
        actionForm(&html, action: "restore", fields: [], button: "Restore Purchases", label: "Restore purchases", dataAction: "restore")
        html.raw(#"<form method="post" action="/store/redeem" data-enhanced><input type="hidden" name="account" value=""#)
        html.add(account)
        html.raw(#""><input type="hidden" name="device" value=""#)
        html.add(device)
        html.raw(#""><input type="hidden" name="form_token" value=""#)
        html.add(formToken)
        html.raw(#""><label>Offer code <input name="code" autocomplete="off" required></label><button type="submit" data-action="redeem">Redeem Code</button></form>"#)
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

    /// What the price consent sheet says: the price the customer pays now and the one the next
    /// renewal charges, each in the storefront's currency, or, during a trial or an introductory price,
    /// what the plan costs once it ends.
    static func priceConsentText(_ current: SubscriptionStoreViewModel.CurrentPlan, planName: String) -> String {
        let format = Date.ISO8601FormatStyle().year().month().day()
        let date = current.expirationDate.map { " on \($0.formatted(format))" } ?? ""
        // "£4.99/month": the renewing plan's price and period; the renewal info's amount when it has no product.
        let next = current.regularPrice ?? current.renewalPrice ?? "the new price"
        let per = current.regularPrice.flatMap { text in text.firstIndex(of: "/").map { String(text[$0...]) } } ?? ""
        let consent = " Agree to keep the subscription; without your consent it ends when this period does."
        if let offer = current.offer, offer.type == .introductory {
            let what = offer.paymentMode == .freeTrial ? "free trial" : "introductory price"
            return "Your \(what) of \(planName) ends\(date); after it, you pay \(next)." + consent
        }
        guard let paid = current.paidPrice else { return "From the next renewal\(date), \(planName) costs \(next)." + consent }
        if let renewal = current.renewalPrice, renewal != paid {
            return "The price of \(planName) changes from \(paid)\(per) to \(renewal)\(per) at the next renewal\(date)." + consent
        }
        return "The App Store asks you to confirm the price of \(planName): \(next) from the next renewal\(date), the same as you pay now." + consent
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
