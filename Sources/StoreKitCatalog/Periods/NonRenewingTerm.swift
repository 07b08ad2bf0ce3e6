import Foundation

/// When a customer's non-renewing subscription runs out.
///
/// The App Store gives non-renewing subscriptions no expiration: the app decides how long each
/// purchase lasts. A common rule, implemented here, is that every purchase adds one `period`,
/// starting when it was bought or, if the customer was still covered, when the earlier purchases
/// run out, so buying again early extends the term instead of wasting it.
public enum NonRenewingTerm {
    /// The end of the term that purchases made at `purchaseDates` (in any order) give, or `nil` for none.
    public static func expirationDate(purchaseDates: [Date], period: SubscriptionPeriod) -> Date? {
        var end: Date?
        for date in purchaseDates.sorted() {
            let start = max(date, end ?? date)
            end = period.date(byAdding: 1, to: start)
        }
        return end
    }

    /// Whether the purchases cover `date`.
    public static func isActive(purchaseDates: [Date], period: SubscriptionPeriod, at date: Date) -> Bool {
        guard let first = purchaseDates.min(), let end = expirationDate(purchaseDates: purchaseDates, period: period) else { return false }
        return first <= date && date < end
    }
}
