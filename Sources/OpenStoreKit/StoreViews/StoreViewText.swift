import Foundation

/// The words StoreKit's views put beside prices: periods ("month", "3 months") and offers ("1 week
/// free", "$0.99/month for 3 months"), in English.
enum StoreViewText {
    /// "day", "week", "month", "year", or "3 months" for several.
    static func period(_ period: Product.SubscriptionPeriod) -> String {
        let unit: String
        switch period.unit {
        case .day: unit = "day"
        case .week: unit = "week"
        case .month: unit = "month"
        case .year: unit = "year"
        }
        return period.value == 1 ? unit : "\(period.value) \(unit)s"
    }

    /// "1 month", "2 weeks": a duration rather than a rate.
    static func duration(_ period: Product.SubscriptionPeriod, times count: Int = 1) -> String {
        let total = period.value * max(count, 1)
        let unit = self.period(Product.SubscriptionPeriod(value: 1, unit: period.unit))
        return total == 1 ? "1 \(unit)" : "\(total) \(unit)s"
    }

    /// The price with its period: "$9.99/month", "$29.99/3 months".
    static func price(_ product: Product) -> String {
        guard let subscription = product.subscription else { return product.displayPrice }
        return "\(product.displayPrice)/\(period(subscription.subscriptionPeriod))"
    }

    /// What an offer gives: "1 week free", "$0.99/month for 3 months", "$1.99 for 3 months".
    static func offer(_ offer: Product.SubscriptionOffer) -> String {
        switch offer.paymentMode {
        case .freeTrial: return "\(duration(offer.period, times: offer.periodCount)) free"
        case .payUpFront: return "\(offer.displayPrice) for \(duration(offer.period, times: offer.periodCount))"
        default:
            let count = offer.periodCount
            return "\(offer.displayPrice)/\(period(offer.period)) for \(count == 1 ? "the first \(period(offer.period))" : "\(count) \(period(offer.period))s")"
        }
    }
}
