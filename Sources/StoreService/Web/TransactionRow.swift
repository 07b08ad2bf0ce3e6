import AppStoreModels
import AppStoreSimulator
import Foundation
import StoreKitCatalog

/// How the Transaction Manager shows one transaction: the state it is listed under, its badge, what
/// the row says about the purchase and its subscription, and the actions that apply. The rules live
/// here, beside the admin API that carries them; the page only draws what it is given.
struct TransactionRow: Encodable, Sendable {
    /// A button of the row (the admin action it runs, its label, whether it cannot be undone), or a
    /// link (`href`) to another page.
    struct Action: Encodable, Sendable {
        var action: String
        var label: String
        var destructive: Bool
        var href: String?
    }

    /// A line the row says, with the name tests and styles find it by.
    struct Detail: Encodable, Sendable {
        var detail: String?
        var text: String
    }

    /// The state the list shows and the `state` filter takes (`expired` for a period that ended).
    var state: String
    var stateLabel: String
    /// The badge's style: owned, pending, warning, info, or plain.
    var badge: String
    var details: [Detail]
    var actions: [Action]
    /// The subscription's state when this row is its current period; `nil` otherwise.
    var subscriptionState: String?
    var autoRenew: Bool?
    var priceIncrease: String?

    static let states = ListedState.allCases.map(\.rawValue)

    private static let stateLabels = ["purchased": "purchased", "pendingApproval": "pending approval", "interrupted": "interrupted",
                                      "declined": "declined", "refunded": "refunded", "revoked": "revoked", "upgraded": "upgraded",
                                      "inGracePeriod": "in grace period", "expired": "expired"]
    private static let badges = ["purchased": "owned", "pendingApproval": "pending", "interrupted": "pending", "refunded": "warning",
                                 "revoked": "warning", "declined": "warning", "upgraded": "info", "inGracePeriod": "warning"]
    private static let subscriptionWords = ["subscribed": "subscribed", "expired": "expired", "inGracePeriod": "in grace period",
                                            "inBillingRetryPeriod": "in billing retry", "revoked": "revoked"]
    private static let intents: [Int32: String] = [1: "the customer cancelled", 2: "billing failed", 3: "the customer declined a price increase",
                                                   4: "the product was no longer for sale", 5: "another reason"]
    private static let offerKinds: [Int32: String] = [1: "introductory offer", 2: "promotional offer", 3: "offer code", 4: "win-back offer"]
    private static let discounts = ["FREE_TRIAL": "free trial", "PAY_AS_YOU_GO": "pay as you go", "PAY_UP_FRONT": "pay up front", "ONE_TIME": "one time"]
    private static let refundReasons: [Int32: String] = [0: "other reason", 1: "developer issue"]

    /// A state's name in words: "pending approval".
    static func label(of state: String) -> String { stateLabels[state] ?? state }

    init(_ transaction: LedgerTransaction, subscription: SubscriptionRecord?, now: Date) {
        let state = ListedState.of(transaction, subscription: subscription, now: now).rawValue
        self.state = state
        stateLabel = Self.label(of: state)
        badge = Self.badges[state] ?? ""
        let current = subscription.flatMap { $0.latestTransactionID == transaction.id ? $0 : nil }
        subscriptionState = current?.state.rawValue
        autoRenew = current?.autoRenewEnabled
        priceIncrease = current?.priceIncrease?.rawValue
        details = Self.details(of: transaction, subscription: subscription, current: current)
        actions = Self.actions(for: transaction, state: state, current: current)
    }

    private static func details(of transaction: LedgerTransaction, subscription: SubscriptionRecord?, current: SubscriptionRecord?) -> [Detail] {
        var lines: [Detail] = []
        if let offer = transaction.offer {
            let kind = offerKinds[offer.type.rawValue] ?? "offer"
            let discount = discounts[offer.discountType.rawValue] ?? ""
            lines.append(Detail(detail: "offer", text: "Offer: \(kind)\(discount.isEmpty ? "" : ", " + discount)"
                                + (offer.discountType == .freeTrial ? "" : " at \(money(transaction.price, transaction.currency))")))
        }
        if let revocation = transaction.revocation {
            lines.append(Detail(detail: "refund", text: "\(revocation.type == .familyRevoke ? "Revoked" : "Refunded") \(date(revocation.date)) UTC, reason: "
                                + (refundReasons[revocation.reason.rawValue] ?? String(revocation.reason.rawValue))))
        }
        guard let subscription else { return lines }
        guard let current else {
            if transaction.revocation == nil, !transaction.isUpgraded {
                lines.append(Detail(detail: nil, text: "An earlier period; the subscription is now \(words(of: subscription.state))"))
            }
            return lines
        }
        var words = "Subscription: \(words(of: current.state))"
        if current.state == .expired, let intent = current.expirationIntent {
            words += " (\(intents[intent.rawValue] ?? "reason \(intent.rawValue)"))"
        }
        if current.state == .inGracePeriod, let until = current.gracePeriodExpirationDate { words += " until \(date(until)) UTC" }
        if current.state == .inBillingRetryPeriod, let until = current.billingRetryEndDate { words += " until \(date(until)) UTC" }
        lines.append(Detail(detail: "subscription-state", text: words))
        if current.familySourceID != nil {
            lines.append(Detail(detail: "family", text: "Shared through Family Sharing: it renews, fails and ends with the purchaser's subscription"))
        }
        if current.state != .expired, current.state != .revoked {
            lines.append(Detail(detail: "auto-renew", text: current.autoRenewEnabled
                ? "Renews" + (current.autoRenewProductID != transaction.productID ? " as \(current.autoRenewProductID)" : "")
                : "Will not renew (automatic renewal off)"))
        }
        if let increase = current.priceIncrease {
            let text = switch increase {
            case .pending: "Price increase: waiting for the customer's consent"
            case .agreed: "Price increase: agreed"
            case .declined: "Price increase: declined"
            }
            lines.append(Detail(detail: "price-increase", text: text))
        }
        return lines
    }

    private static func actions(for transaction: LedgerTransaction, state: String, current: SubscriptionRecord?) -> [Action] {
        var list: [Action] = []
        func add(_ action: String, _ label: String, destructive: Bool = false, href: String? = nil) {
            list.append(Action(action: action, label: label, destructive: destructive, href: href))
        }
        if state == "pendingApproval" { add("approve", "Approve"); add("decline", "Decline") }
        if state == "interrupted" { add("resolve", "Resolve") }
        if transaction.state == .purchased, transaction.revocation == nil, transaction.ownership != .familyShared { add("refund", "Refund", destructive: true) }
        if let current, transaction.revocation == nil {
            let active = [.subscribed, .inGracePeriod, .inBillingRetryPeriod].contains(current.state)
            if current.state == .inGracePeriod || current.state == .inBillingRetryPeriod { add("resolve", "Resolve billing") }
            // A family member's copy follows the purchaser's subscription: its billing and renewal controls act
            // on the purchaser's, and what only a purchase can be asked for (expire, renew, price, extend) is not offered.
            let sharedCopy = current.familySourceID != nil
            if active {
                if !sharedCopy { add("expire", "Expire"); add("renew", "Force renew") }
                if current.autoRenewEnabled { add("auto-renew-off", "Renewal off") } else { add("auto-renew-on", "Renewal on") }
            }
            if current.state == .subscribed, !sharedCopy { add("price-increase", "Price increase"); add("extend", "Extend") }
        }
        if transaction.productKind == .autoRenewable { add("timeline", "Timeline", href: "/timeline/\(transaction.originalID)") }
        add("delete", "Delete", destructive: true)
        return list
    }

    private static func words(of state: SubscriptionRecord.State) -> String { subscriptionWords[state.rawValue] ?? state.rawValue }

    /// `2026-01-31 09:30`, in UTC.
    static func date(_ date: Date) -> String {
        let components = Calendar.utc.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(components.year ?? 0)-\(two(components.month))-\(two(components.day)) \(two(components.hour)):\(two(components.minute))"
    }

    /// `4.99 USD`, from milliunits.
    static func money(_ milliunits: Int64, _ currency: String) -> String {
        "\(String(format: "%.2f", Double(milliunits) / 1000)) \(currency)".trimmingCharacters(in: .whitespaces)
    }
}

extension Calendar {
    /// The Gregorian calendar in UTC, as the pages write dates.
    static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()
}
