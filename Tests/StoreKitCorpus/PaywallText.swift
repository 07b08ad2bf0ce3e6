// Corpus: paywall copy as subscription apps build it from StoreKit's format styles. Shaped like the
// paywall helpers of many apps: an extension on `Product` that writes "one month", "$4.99 / month",
// "two weeks free, then …", with a hand-written fallback behind an availability check, as code that
// supports iOS 15 writes it. Imports only StoreKit.
import StoreKit

extension Product {
    /// "one month", "one year": the period in the storefront's words.
    var billingPeriodText: String? {
        guard let period = subscription?.subscriptionPeriod else { return nil }
        return period.formatted(subscriptionPeriodFormatStyle)
    }

    /// "$9.99 / month", or "$29.99 / 3 months".
    var pricePerPeriodText: String {
        guard let period = subscription?.subscriptionPeriod else { return displayPrice }
        let unitText: String
        if #available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, *) {
            unitText = period.unit.formatted(subscriptionPeriodUnitFormatStyle)
        } else {
            switch period.unit {
            case .day: unitText = "day"
            case .week: unitText = "week"
            case .month: unitText = "month"
            case .year: unitText = "year"
            @unknown default: unitText = "period"
            }
        }
        return period.value > 1 ? "\(displayPrice) / \(period.value) \(unitText)s" : "\(displayPrice) / \(unitText)"
    }

    /// "Free Trial: two weeks, then $99.99 / year", when the product has an introductory offer.
    var introductoryOfferText: String? {
        guard let offer = subscription?.introductoryOffer else { return nil }
        let length = offer.period.formatted(subscriptionPeriodFormatStyle)
        var mode = "Offer"
        if #available(iOS 15.4, macOS 12.3, tvOS 15.4, watchOS 8.5, *) {
            mode = offer.paymentMode.localizedDescription
        }
        if offer.paymentMode == .freeTrial {
            return "\(mode): \(length), then \(pricePerPeriodText)"
        }
        return "\(mode): \(offer.displayPrice) for \(length), then \(pricePerPeriodText)"
    }

    /// The dates one period covers from `start`, written out, as code that formats explicit ranges does.
    func periodRangeText(from start: Date) -> String? {
        guard let period = subscription?.subscriptionPeriod else { return nil }
        let calendar = Calendar(identifier: .gregorian)
        guard let end = calendar.date(byAdding: DateComponents(subscriptionPeriod: period), to: start) else { return nil }
        return (start..<end).formatted(subscriptionPeriodFormatStyle)
    }
}
