import AppStoreBackend
import Foundation
import StoreKitCommands

/// A year of made-up subscribers, as the backend's facts, for measuring the metrics queries at a
/// size no test ingests: monthly, yearly and weekly plans in three currencies, free trials, renewals
/// until a voluntary or billing churn, and some refunds. The same seed gives the same subscribers.
struct SyntheticSubscribers {
    var count: Int
    var start: Date
    var seed: UInt64 = 0x5EED_2026

    private struct Plan { var product: String; var group: String; var price: Int64; var days: Int64 }
    private static let plans = [Plan(product: "pro.monthly", group: "pro", price: 9_990, days: 30),
                                Plan(product: "pro.yearly", group: "pro", price: 59_990, days: 365),
                                Plan(product: "lite.weekly", group: "lite", price: 2_990, days: 7)]

    /// The rollups of every subscriber, summed, and each subscription's last period.
    func rollups() -> (days: [MetricKey: Int64], cohorts: [CohortKey: Int64], lastPeriods: [(subscription: String, period: EntitledPeriod?)], asOf: Date) {
        var random = seed
        func next(_ bound: Int64) -> Int64 {
            // SplitMix64.
            random &+= 0x9E37_79B9_7F4A_7C15
            var value = random
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int64((value ^ (value >> 31)) % UInt64(bound))
        }
        let day: Int64 = 86_400_000
        let yearStart = Int64(start.timeIntervalSince1970 * 1_000)
        let asOf = yearStart + 365 * day - 1
        var days: [MetricKey: Int64] = [:]
        var cohorts: [CohortKey: Int64] = [:]
        var lastPeriods: [(subscription: String, period: EntitledPeriod?)] = []
        lastPeriods.reserveCapacity(count)
        for index in 0..<count {
            let roll = next(100)
            let plan = Self.plans[roll < 60 ? 0 : roll < 85 ? 1 : 2]
            let currency = ["USD", "USD", "USD", "USD", "USD", "EUR", "EUR", "EUR", "GBP", "GBP"][Int(next(10))]
            let subscription = String(4_000_000_000 + index)
            var transactions: [TransactionFact] = []
            var notifications: [NotificationFact] = []
            var purchase = yearStart + next(365 * day)
            var serial = 0
            func transaction(_ offer: TransactionFact.Offer, length: Int64, renewal: Bool) -> TransactionFact {
                serial += 1
                return TransactionFact(transactionID: "\(subscription)-\(serial)", subscription: subscription, signedMilliseconds: purchase,
                                       productID: plan.product, groupID: plan.group, currency: currency,
                                       price: offer == .freeTrial ? 0 : plan.price, offer: offer, purchaseMilliseconds: purchase,
                                       expiresMilliseconds: purchase + length, revokedMilliseconds: nil, isFamilyShared: false, isRenewal: renewal)
            }
            func notify(_ type: String, _ subtype: String?, at instant: Int64, about id: String) {
                notifications.append(NotificationFact(notificationUUID: "\(subscription)-n\(notifications.count)", type: type, subtype: subtype,
                                                      signedMilliseconds: instant, transactionID: id, graceExpiresMilliseconds: nil))
            }
            var current = next(100) < 40 ? transaction(.freeTrial, length: 7 * day, renewal: false) : transaction(.none, length: plan.days * day, renewal: false)
            transactions.append(current)
            notify("SUBSCRIBED", "INITIAL_BUY", at: purchase, about: current.transactionID)
            while let expires = current.expiresMilliseconds, expires <= asOf {
                if next(100) < 12 {
                    notify("EXPIRED", next(100) < 70 ? "VOLUNTARY" : "BILLING_RETRY", at: expires, about: current.transactionID)
                    break
                }
                purchase = expires
                current = transaction(.none, length: plan.days * day, renewal: true)
                transactions.append(current)
                notify("DID_RENEW", nil, at: purchase, about: current.transactionID)
            }
            if next(100) < 2, var refunded = transactions.last, let expires = refunded.expiresMilliseconds {
                let instant = min(refunded.purchaseMilliseconds + next(max(1, min(expires, asOf) - refunded.purchaseMilliseconds)), asOf)
                refunded.revokedMilliseconds = instant
                refunded.signedMilliseconds = instant
                transactions[transactions.count - 1] = refunded
                notify("REFUND", nil, at: instant, about: refunded.transactionID)
            }
            let contribution = SubscriptionContribution(transactions: transactions, notifications: notifications)
            for (key, value) in contribution.days { days[key, default: 0] += value }
            for (key, value) in contribution.cohorts { cohorts[key, default: 0] += value }
            lastPeriods.append((subscription, contribution.lastPeriod))
        }
        return (days, cohorts, lastPeriods, Date(timeIntervalSince1970: Double(asOf) / 1_000))
    }
}
