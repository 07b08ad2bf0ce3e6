import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import StoreKitCatalog

/// The storefront's cancellation page, `/store/cancellation/{attempt}?account=A&device=D`: what the
/// App Store's subscription page shows a customer who taps Cancel Subscription (the developer's
/// retention message, a switch-plan suggestion or a promotional offer, chosen by the real-time URL or
/// the default), and the customer's answers, each a form (`POST` to the same address). Once answered,
/// it says what followed.
struct CancellationPage {
    let attempt: RetentionOfferAttempt
    let message: UploadMessageRequestBody?
    let product: CatalogProduct?
    let alternate: CatalogProduct?
    let offer: CatalogOffer?
    let account: String
    let device: String
    let formToken: String
    /// When the subscription's current period ends (access ends then once cancelled), and whether it
    /// still renews.
    let accessEnds: Date?
    let willRenew: Bool
    /// What the next renewal would charge, as the renewal info states it ("£4.99"), and, when that is
    /// an offer's price (the rest of an introductory price, a redeemed offer), which.
    let renewalPrice: (text: String, offer: String?)?

    /// The attempt `id` of `account`'s subscription, with what it shows; 404 for another account's.
    static func load(store: SimulatedAppStore, id: String, account: String, device: String, formToken: String) async throws -> CancellationPage {
        guard let attempt = try await store.cancellationAttempts().first(where: { $0.id == id.lowercased() }), attempt.account == account else {
            throw APIError.notFound("\(account) has no cancellation attempt \(id)")
        }
        let message = if let identifier = attempt.messageIdentifier { try await store.retentionMessage(identifier)?.content } else { UploadMessageRequestBody?.none }
        // Prices as the customer's storefront sells them, in its currency.
        let storefront = try await store.storefront(forAccount: account)
        let catalog = await store.catalog(storefront: storefront.countryCode)
        let product = catalog.product(id: attempt.productID)
        let record = try await store.subscriptionRecord(originalTransactionID: attempt.originalTransactionID)
        let active = record.map { $0.state != .expired && $0.state != .revoked } ?? false
        // The price the next renewal charges (an introductory price may go on), in the customer's currency.
        var renewalPrice: (text: String, offer: String?)?
        if active, let info = try await store.signedRenewalInfo(originalTransactionID: attempt.originalTransactionID)?.payload,
           let price = info.renewalPrice, let currency = info.currency {
            let amount = (Decimal(price) / 1000).formatted(.currency(code: currency).locale(Locale(identifier: catalog.locale)))
            renewalPrice = (amount, info.offerType.map { $0 == .introductoryOffer ? "the introductory price" : "the offer's price" })
        }
        return CancellationPage(attempt: attempt, message: message, product: product,
                                alternate: attempt.alternateProductID.flatMap { catalog.product(id: $0) },
                                offer: attempt.offerIdentifier.flatMap { id in product?.subscription?.promotionalOffers.first { $0.id == id } },
                                account: account, device: device, formToken: formToken,
                                accessEnds: active ? record?.expirationDate : nil, willRenew: record?.autoRenewEnabled ?? false,
                                renewalPrice: renewalPrice)
    }

    /// The page's own address.
    static func path(attempt: String, account: String, device: String) -> String {
        StorefrontPage.address(account: account, device: device, path: "/store/cancellation/\(attempt)")
    }

    private var productName: String { product?.displayName ?? attempt.productID }

    var html: String {
        var html = HTML()
        html.raw(#"<section class="card cancellation" aria-labelledby="cancellation-title" data-attempt=""#)
        html.add(attempt.id)
        html.raw(#"" data-source=""#)
        html.add(attempt.source.rawValue)
        html.raw(#"" data-kind=""#)
        html.add(attempt.kind?.rawValue ?? "")
        html.raw(#"" data-message-id=""#)
        html.add(attempt.messageIdentifier ?? "")
        html.raw(#"" data-outcome=""#)
        html.add(attempt.outcome?.rawValue ?? "")
        html.raw(#""><h2 id="cancellation-title">Cancel "#)
        html.add(productName)
        html.raw("</h2>")
        if let message { self.message(&html, message) }
        if let alternate {
            html.raw(#"<p class="suggestion" data-alternate-product=""#)
            html.add(alternate.id)
            html.raw(#"">"#)
            html.add("Switch to \(alternate.displayName) for \(alternate.displayPrice)\(alternate.subscription.map { " per \(Self.text($0.period))" } ?? "").")
            html.raw("</p>")
        }
        if let offer {
            html.raw(#"<p class="offer" data-offer=""#)
            html.add(offer.id ?? "")
            html.raw(#"">"#)
            html.add("Stay with \(productName): \(Self.text(offer)), then \(product?.displayPrice ?? "the regular price").")
            html.raw("</p>")
        }
        if message == nil, attempt.kind == nil, willRenew {
            html.raw("<p>")
            html.add("Your subscription to \(productName) renews until you cancel it.")
            html.raw("</p>")
        }
        if attempt.outcome == nil, let accessEnds {
            // What cancelling means for access, before the customer answers.
            html.raw(#"<p class="access-ends" data-access-ends=""#)
            html.add(accessEnds.formatted(.iso8601))
            html.raw(#"">"#)
            let per = product?.subscription.map { " per \(Self.text($0.period))" } ?? ""
            let renewal = renewalPrice.map { "; it would renew then at \($0.text)\(per)" + ($0.offer.map { " (\($0)), then \(product?.displayPrice ?? "the regular price")\(per)" } ?? "") }
                ?? (willRenew ? product.map { "; it would renew then at \($0.displayPrice)\(per)" } : nil) ?? ""
            html.add("If you cancel, you keep \(productName) until \(HTML.dateInWords(accessEnds)), the end of the period you have paid for\(renewal).")
            html.raw("</p>")
        }
        if let failure = attempt.realtimeFailure {
            // The developer's view of a local store: why their endpoint's answer was not used, in words
            // (Apple's `sendAttemptResult` name stays in the attribute).
            html.raw(#"<p class="muted" data-realtime-failure=""#)
            html.add(failure)
            html.raw(#"">"#)
            html.add(Self.failureWords(failure, shown: attempt.source == .defaultMessage))
            html.raw("</p>")
        }
        if let outcome = attempt.outcome {
            html.raw(#"<p class="outcome" role="status">"#)
            html.add(Self.text(outcome, product: productName, alternate: alternate?.displayName, accessEnds: accessEnds,
                               offerPrice: offer.map { Self.text($0) }, regularPrice: product?.displayPrice))
            html.raw(#"</p><p><a href=""#)
            html.add(StorefrontPage.address(account: account, device: device))
            html.raw(#"">Back to the storefront</a></p>"#)
        } else {
            html.raw(#"<div class="controls answers">"#)
            for answer in attempt.answers { form(&html, answer) }
            html.raw("</div>")
        }
        html.raw("</section>")
        return HTML.page(title: "Cancel \(productName) — OpenStoreKit", pageName: "Storefront", otherPage: StorefrontPage.otherPage, main: html.text,
                         mainAttributes: ["data-account": account, "data-device": device])
    }

    /// The message as the App Store lays it out: the header above the image or above the body, the
    /// body, and up to five bullet points with their icons.
    private func message(_ html: inout HTML, _ message: UploadMessageRequestBody) {
        html.raw(#"<div class="retention-message">"#)
        let headerFirst = message.headerPosition != .aboveBody
        if headerFirst { header(&html, message.header) }
        if let image = message.image {
            html.raw(#"<img class="retention-image" src="/v1/admin/retention/images/"#)
            html.add(image.imageIdentifier)
            html.raw(#"" alt=""#)
            html.add(image.altText)
            html.raw(#"">"#)
        }
        if !headerFirst { header(&html, message.header) }
        html.raw(#"<p class="retention-body">"#)
        html.add(message.body)
        html.raw("</p>")
        if let bullets = message.bulletPoints, !bullets.isEmpty {
            html.raw(#"<ul class="retention-bullets">"#)
            for bullet in bullets {
                html.raw(#"<li><img src="/v1/admin/retention/images/"#)
                html.add(bullet.imageIdentifier)
                html.raw(#"" alt=""#)
                html.add(bullet.altText)
                html.raw(#"" width="24" height="24"> "#)
                html.add(bullet.text)
                html.raw("</li>")
            }
            html.raw("</ul>")
        }
        html.raw("</div>")
    }

    private func header(_ html: inout HTML, _ text: String) {
        html.raw(#"<h3 class="retention-header">"#)
        html.add(text)
        html.raw("</h3>")
    }

    private func form(_ html: inout HTML, _ answer: RetentionOfferAttempt.Outcome) {
        html.raw(#"<form method="post" action=""#)
        html.add("/store/cancellation/\(attempt.id)")
        html.raw(#"">"#)
        for (name, value) in [("account", account), ("device", device), ("outcome", answer.rawValue), (CrossSiteCheck.formTokenField, formToken)] {
            html.raw(#"<input type="hidden" name=""#)
            html.add(name)
            html.raw(#"" value=""#)
            html.add(value)
            html.raw(#"">"#)
        }
        let (label, primary): (String, Bool) = switch answer {
        case .kept: ("Keep Subscription", true)
        case .switched: ("Switch to \(alternate?.displayName ?? "the other plan")", true)
        case .redeemed: ("Redeem Offer", true)
        case .cancelled: ("Confirm Cancellation", false)
        }
        html.raw(primary ? #"<button type="submit" class="primary" data-answer=""# : #"<button type="submit" data-answer=""#)
        html.add(answer.rawValue)
        html.raw(#"">"#)
        html.add(label)
        html.raw("</button></form>")
    }


    static func text(_ outcome: RetentionOfferAttempt.Outcome, product: String, alternate: String?, accessEnds: Date? = nil,
                     offerPrice: String? = nil, regularPrice: String? = nil) -> String {
        switch outcome {
        case .kept: return "You kept \(product): nothing changed."
        case .switched: return "You switched to \(alternate ?? "the other plan"), as the plan-change rules say (at once for an upgrade, at renewal otherwise)."
        case .redeemed:
            return "You redeemed the offer: the next renewal of \(product)\(accessEnds.map { ", \(HTML.dateInWords($0)), " } ?? " ")is at the offer's price"
                + (offerPrice.map { " (\($0))" } ?? "") + (regularPrice.map { ", then \($0)" } ?? "") + "."
        case .cancelled:
            return accessEnds.map { "Cancelled: \(product) does not renew. You keep it until \(HTML.dateInWords($0)); you can resubscribe on the storefront until then." }
                ?? "Cancelled: \(product) does not renew and ends when this period does."
        }
    }

    /// Why the developer's real-time answer was not used, as a person reads it.
    static func failureWords(_ failure: String, shown: Bool) -> String {
        let reason: String
        switch failure.split(separator: ":").first.map(String.init) ?? failure {
        case "UNSUCCESSFUL_HTTP_RESPONSE_CODE":
            reason = "the developer's server had no message for this subscription (it answered with an error status, as a backend does when none of its retention rules applies)"
        case "TIMED_OUT": reason = "the developer's server did not answer in time"
        case "NO_RESPONSE": reason = "the developer's server could not be reached"
        case "INVALID_RESPONSE":
            let detail = failure.split(separator: ":", maxSplits: 1).dropFirst().first.map { " (\($0.trimmingCharacters(in: .whitespaces)))" } ?? ""
            reason = "the developer's server answered with something the App Store cannot show\(detail)"
        default: reason = "the developer's server could not be asked (\(failure))"
        }
        return "No special offer for this subscription: \(reason); " + (shown ? "the app's default message is shown." : "there is nothing more to show.")
    }

    static func text(_ period: SubscriptionPeriod) -> String {
        period.value == 1 ? period.unit.rawValue : "\(period.value) \(period.unit.rawValue)s"
    }

    static func text(_ offer: CatalogOffer) -> String {
        let (period, count) = offer.totalDuration
        let whole = period.value * count
        let duration = "\(whole) \(period.unit.rawValue)\(whole == 1 ? "" : "s")"
        switch offer.paymentMode {
        case .freeTrial: return "free for \(duration)"
        case .payAsYouGo: return "\(offer.displayPrice) per \(text(period)) for \(duration)"
        case .payUpFront: return "\(offer.displayPrice) for \(duration)"
        }
    }
}
