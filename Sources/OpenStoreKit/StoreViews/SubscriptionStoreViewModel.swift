import Foundation

/// What StoreKit's `SubscriptionStoreView(groupID:)` shows: the group's plans by service level (level 1,
/// the highest, first), each with its price and period and the offer the customer is eligible for,
/// the customer's current plan and its state, what choosing each other plan would be (upgrade,
/// downgrade, crossgrade) and when it takes effect, and the store buttons.
public struct SubscriptionStoreViewModel: Sendable {
    /// What choosing a plan does for the customer.
    public enum Relation: String, Hashable, Sendable {
        /// No subscription in the group (or it expired): choosing subscribes.
        case subscribe
        /// The plan the customer is on now.
        case current
        /// A higher service level: it takes effect at once, the unused time refunded pro rata.
        case upgrade
        /// A lower service level: it takes effect at the next renewal.
        case downgrade
        /// The same service level: at once when the period length is the same, else at the next renewal.
        case crossgrade
    }

    /// One plan of the group.
    public struct Plan: Identifiable, Sendable {
        public let product: Product
        public var id: String { product.id }
        public let displayName: String
        /// "$9.99/month".
        public let priceText: String
        public let offer: Product.SubscriptionOffer?
        public let offerText: String?
        public let relation: Relation
        /// The customer's next renewal switches to this plan (a downgrade or crossgrade waiting).
        public let isScheduledNext: Bool

        /// The button's label.
        public var buttonLabel: String {
            switch relation {
            case .subscribe: return offer?.paymentMode == .freeTrial ? "Try It Free" : "Subscribe"
            case .current: return "Current Plan"
            case .upgrade: return "Upgrade"
            case .downgrade: return isScheduledNext ? "Starts at Renewal" : "Downgrade"
            case .crossgrade: return isScheduledNext ? "Starts at Renewal" : "Switch"
            }
        }
    }

    /// The customer's own subscription in the group.
    public struct CurrentPlan: Sendable {
        /// The current period's transaction.
        public let transactionID: UInt64
        public let productID: String
        public let state: Product.SubscriptionInfo.RenewalState
        public let willAutoRenew: Bool
        public let expirationDate: Date?
        public let gracePeriodExpirationDate: Date?
        /// The plan the next renewal switches to, when it is another.
        public let nextProductID: String?
        /// The plan is a family member's, shared with this customer through Family Sharing: the
        /// purchaser's subscription renews, fails or is cancelled, and this customer cannot change it.
        public let isFamilyShared: Bool
        /// The offer the current period is at (a free trial, an introductory price), if any.
        public let offer: Transaction.Offer?
        /// Whether the next renewal is at an offer too (the rest of a pay-as-you-go introductory price).
        public let nextRenewalHasOffer: Bool
        /// What the next renewal without an offer costs, as the customer reads it ("$9.99/month").
        public let regularPrice: String?
        /// A price increase waits for the customer's consent: without it the subscription does not renew.
        public let priceIncreasePending: Bool
        /// The price the next renewal charges, from the renewal info ("$12.99"), when it states one.
        public let renewalPrice: String?
        /// The name of the plan the next renewal switches to (``nextProductID``'s), as the customer reads it.
        public let nextDisplayName: String?
        /// What the customer paid for the current period, in the storefront's currency ("£0.99").
        public let paidPrice: String?
        /// The offer the current period is at, in words ("£0.99/month for 3 months", "2 weeks free"),
        /// when the product names it.
        public let offerText: String?
        /// The offer the next renewal is at, from the renewal info: its kind, when there is one.
        public let nextRenewalOfferType: Transaction.OfferType?

        /// The next plan's name: its display name, or its identifier when the product is not loaded.
        public var nextPlanName: String? { nextProductID.map { nextDisplayName ?? $0 } }

        /// The state in words, as a customer reads it: when the period ends, at what price it
        /// renews (an offer's price, then the regular one), as which plan.
        public var summary: String {
            let format = Date.ISO8601FormatStyle().year().month().day()
            let expiry = expirationDate.map { $0.formatted(format) } ?? "?"
            if isFamilyShared, state == .subscribed || state == .inGracePeriod {
                return "Shared with you through Family Sharing until \(expiry)" + (willAutoRenew ? ", renewed by the family member who pays" : "")
            }
            if state == .subscribed, let offer, offer.type == .introductory {
                let then = !willAutoRenew ? "; it will not renew" : nextRenewalHasOffer ? ", and the next period at it too"
                    : nextPlanName.map { next in ", then renews as \(next)" + (regularPrice.map { " at \($0)" } ?? "") }
                    ?? regularPrice.map { ", then \($0)" } ?? ""
                let terms = offerText.map { " (\($0))" } ?? ""
                if offer.paymentMode == .freeTrial { return "Free trial\(terms) until \(expiry)" + then }
                return "Introductory price\(offerText == nil ? paidPrice.map { " of \($0)" } ?? "" : terms) until \(expiry)" + then
            }
            switch state {
            case .subscribed:
                if !willAutoRenew { return "Expires on \(expiry)" }
                let plan = nextPlanName.map { " as \($0)" } ?? ""
                if nextRenewalOfferType != nil, let renewalPrice {
                    // A redeemed offer (a promotional offer, an offer code): its price first, then the regular price.
                    return "Renews on \(expiry)\(plan) at \(renewalPrice) with the offer" + (regularPrice.map { ", then \($0)" } ?? "")
                }
                return "Renews on \(expiry)\(plan)" + (regularPrice.map { " at \($0)" } ?? "")
            case .inGracePeriod:
                return "Billing problem: access continues until \(gracePeriodExpirationDate.map { $0.formatted(format) } ?? expiry)"
            case .inBillingRetryPeriod: return "Billing problem: access paused until the payment method is updated"
            case .expired: return "Expired on \(expiry)"
            case .revoked: return "Refunded"
            default: return "\(state)"
            }
        }
    }

    public let groupID: String
    public let groupDisplayName: String?
    public let plans: [Plan]
    public let currentPlan: CurrentPlan?
    public let buttons: StoreButtons
    let environment: StoreViewEnvironment

    /// Loads the view of a subscription group on the environment's client.
    ///
    /// - Parameter productIDs: The group's products to ask for: StoreKit finds them by group; a
    ///   client asks by identifier, so the caller names them (all the catalog's, for a web storefront).
    public static func load(groupID: String, productIDs: [String],
                            environment: StoreViewEnvironment = StoreViewEnvironment()) async -> SubscriptionStoreViewModel {
        let snapshot = await StoreViewSnapshot.load(ids: productIDs, environment: environment)
        return make(groupID: groupID, snapshot: snapshot, buttons: await StoreButtons.load(environment: environment), environment: environment)
    }

    /// The view of a group from what the store told once (a storefront shows several groups).
    static func make(groupID: String, snapshot: StoreViewSnapshot, buttons: StoreButtons,
                     environment: StoreViewEnvironment) -> SubscriptionStoreViewModel {
        let products = snapshot.products.values.filter { $0.subscription?.subscriptionGroupID == groupID }
            .sorted { ($0.subscription?.groupLevel ?? 0, $1.price, $0.id) < ($1.subscription?.groupLevel ?? 0, $0.price, $1.id) }
        let status = snapshot.statuses[groupID]
        var current: CurrentPlan?
        if let status, case .verified(let transaction) = status.transaction, case .verified(let renewal) = status.renewalInfo {
            let renewing = products.first { $0.id == (renewal.autoRenewPreference ?? transaction.productID) }
            let currentProduct = products.first { $0.id == transaction.productID }
            // The offer the current period is at, as the product describes it.
            var offerText: String?
            if transaction.offer?.type == .introductory {
                offerText = currentProduct?.subscription?.introductoryOffer.map(StoreViewText.offer)
            } else if transaction.offer?.type == .promotional {
                offerText = currentProduct?.subscription?.promotionalOffers.first { $0.id == transaction.offer?.id }.map(StoreViewText.offer)
            }
            let money = Self.moneyStyle
            current = CurrentPlan(transactionID: transaction.id, productID: transaction.productID, state: status.state, willAutoRenew: renewal.willAutoRenew,
                                  expirationDate: transaction.expirationDate, gracePeriodExpirationDate: renewal.gracePeriodExpirationDate,
                                  nextProductID: renewal.autoRenewPreference == transaction.productID ? nil : renewal.autoRenewPreference,
                                  isFamilyShared: transaction.ownershipType == .familyShared, offer: transaction.offer,
                                  nextRenewalHasOffer: renewal.offer != nil, regularPrice: renewing.map(StoreViewText.price),
                                  priceIncreasePending: renewal.priceIncreaseStatus == .pending,
                                  renewalPrice: renewal.renewalPrice.map { money($0, renewal.currency?.identifier ?? transaction.currency?.identifier) },
                                  nextDisplayName: renewal.autoRenewPreference.flatMap { next in products.first { $0.id == next }?.displayName },
                                  paidPrice: transaction.price.map { money($0, transaction.currency?.identifier) },
                                  offerText: offerText, nextRenewalOfferType: renewal.offerType)
        }
        // A plan shared by the family is not the customer's to change: any plan they choose is a
        // subscription of their own.
        let active = current.map { $0.state != .expired && $0.state != .revoked && !$0.isFamilyShared } ?? false
        let currentProduct = products.first { $0.id == current?.productID }
        let plans = products.map { product -> Plan in
            let relation: Relation
            if let current, current.isFamilyShared, current.state != .expired, current.state != .revoked, product.id == current.productID {
                relation = .current
            } else if !active || currentProduct == nil {
                relation = .subscribe
            } else if product.id == currentProduct?.id {
                relation = .current
            } else {
                let level = product.subscription?.groupLevel ?? 0, currentLevel = currentProduct?.subscription?.groupLevel ?? 0
                relation = level < currentLevel ? .upgrade : level > currentLevel ? .downgrade : .crossgrade
            }
            let offer = relation == .subscribe ? snapshot.eligibleOffer(for: product) : nil
            return Plan(product: product, displayName: product.displayName, priceText: StoreViewText.price(product), offer: offer,
                        offerText: offer.map(StoreViewText.offer), relation: relation,
                        isScheduledNext: active && current?.nextProductID == product.id)
        }
        return SubscriptionStoreViewModel(groupID: groupID, groupDisplayName: products.first?.subscription?.groupDisplayName,
                                          plans: plans, currentPlan: current, buttons: buttons, environment: environment)
    }

    /// An amount in its currency as the storefront writes prices ("£4.99", "€4.99").
    static func moneyStyle(_ amount: Decimal, _ currency: String?) -> String {
        amount.formatted(.currency(code: currency ?? "USD").locale(Locale(identifier: "en_US")))
    }

    /// Buys a plan as the view's button does: the environment's handlers, the eligible offer applied
    /// by the App Store, the transaction through `Transaction.updates`.
    public func buy(_ plan: Plan) async {
        guard plan.relation != .current else { return }
        await environment.buy(plan.product)
    }
}
