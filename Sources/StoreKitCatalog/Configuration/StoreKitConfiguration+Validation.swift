import AppStoreModels
import Foundation

extension StoreKitConfiguration {
    /// The product types of `products`.
    static let oneTimeProductTypes: Set<String> = ["Consumable", "NonConsumable"]
    /// The product type of `nonRenewingSubscriptions`.
    static let nonRenewingProductType = "NonRenewingSubscription"
    /// The product type of subscriptions in groups.
    static let recurringProductType = "RecurringSubscription"
    /// Offer payment modes.
    static let paymentModes: Set<String> = ["free", "payAsYouGo", "payUpFront"]
    /// Offer-code eligibility values.
    static let codeEligibilities: Set<String> = ["new", "existing", "expired"]
    /// Billing plan types.
    static let billingPlanTypes: Set<String> = ["BILLED_UPFRONT", "MONTHLY"]
    /// The APIs of Xcode's simulated StoreKit failures, in Xcode's order.
    public static let failableAPINames = [
        "Load Products", "Purchase", "Verification", "App Store Sync", "Subscription Status", "App Transaction",
        "Manage Subscriptions Sheet", "Refund Request Sheet", "Offer Code Redeem Sheet",
    ]

    /// Whether `text` is a price as `.storekit` files write it: digits with an optional `.` fraction.
    static func isPrice(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
    }

    /// Checks the meaning of a configuration that was read, logging every problem.
    func validate(into log: ProblemLog) {
        var firstDeclaration: [String: ConfigurationPath] = [:]
        func checkIdentity(_ productID: String?, at path: ConfigurationPath) {
            guard let productID, !productID.isEmpty else {
                log.error(path.appending("productID"), "missing product ID")
                return
            }
            if let first = firstDeclaration[productID] {
                log.error(path.appending("productID"), "duplicate product ID \"\(productID)\", first declared at \(first)")
            } else {
                firstDeclaration[productID] = path
            }
        }
        func checkPrice(_ price: String?, at path: ConfigurationPath, required: Bool) {
            guard let price else {
                if required { log.error(path, "missing price; expected a decimal such as \"0.99\"") }
                return
            }
            if !Self.isPrice(price) { log.error(path, "expected a decimal price such as \"0.99\", found \"\(price)\"") }
        }
        func checkPeriod(_ period: String?, at path: ConfigurationPath) {
            guard let period else {
                log.error(path, "missing period; expected an ISO 8601 period such as P1M")
                return
            }
            if SubscriptionPeriod(iso8601: period) == nil {
                log.error(path, "expected an ISO 8601 period such as P3D, P1W, P1M or P1Y, found \"\(period)\"")
            }
        }

        let root = ConfigurationPath.root
        if let major = version?.major, major > 5 {
            log.warning(root.appending("version"), "format version \(major) is newer than 5; reading it leniently")
        }
        for (index, product) in (products ?? []).enumerated() {
            let path = root.appending("products").appending(index)
            checkIdentity(product.productID, at: path)
            switch product.type {
            case nil: log.error(path.appending("type"), "missing product type; expected Consumable or NonConsumable")
            case let type? where !Self.oneTimeProductTypes.contains(type):
                log.error(path.appending("type"), "unknown product type \"\(type)\"; expected Consumable or NonConsumable")
            default: break
            }
            checkPrice(product.displayPrice, at: path.appending("displayPrice"), required: true)
        }
        for (index, product) in (nonRenewingSubscriptions ?? []).enumerated() {
            let path = root.appending("nonRenewingSubscriptions").appending(index)
            checkIdentity(product.productID, at: path)
            if let type = product.type, type != Self.nonRenewingProductType {
                log.error(path.appending("type"), "unknown product type \"\(type)\"; expected NonRenewingSubscription")
            }
            checkPrice(product.displayPrice, at: path.appending("displayPrice"), required: true)
        }
        var groupIDs: [String: ConfigurationPath] = [:]
        for (groupIndex, group) in (subscriptionGroups ?? []).enumerated() {
            let groupPath = root.appending("subscriptionGroups").appending(groupIndex)
            if let id = group.id, !id.isEmpty {
                if let first = groupIDs[id] {
                    log.error(groupPath.appending("id"), "duplicate subscription group ID \"\(id)\", first declared at \(first)")
                } else {
                    groupIDs[id] = groupPath
                }
            } else {
                log.error(groupPath.appending("id"), "missing subscription group ID")
            }
            var levels: [Int: (productID: String, period: String?)] = [:]
            for (index, subscription) in (group.subscriptions ?? []).enumerated() {
                let path = groupPath.appending("subscriptions").appending(index)
                checkIdentity(subscription.productID, at: path)
                if let type = subscription.type, type != Self.recurringProductType {
                    log.error(path.appending("type"), "unknown product type \"\(type)\"; expected RecurringSubscription")
                }
                checkPrice(subscription.displayPrice, at: path.appending("displayPrice"), required: true)
                checkPeriod(subscription.recurringSubscriptionPeriod, at: path.appending("recurringSubscriptionPeriod"))
                if let groupID = subscription.subscriptionGroupID, let id = group.id, groupID != id {
                    log.warning(path.appending("subscriptionGroupID"), "says \"\(groupID)\" but the subscription is in group \"\(id)\"; the group wins")
                }
                switch subscription.groupNumber {
                case nil:
                    log.warning(path.appending("groupNumber"), "missing level; treating the subscription as level 1, the highest")
                case let level? where level < 1:
                    log.error(path.appending("groupNumber"), "the level must be 1 (highest) or more, found \(level)")
                case let level?:
                    if let peer = levels[level], let productID = subscription.productID {
                        if peer.period == subscription.recurringSubscriptionPeriod {
                            log.warning(path.appending("groupNumber"),
                                        "\(productID) shares level \(level) and period \(peer.period ?? "?") with \(peer.productID); switching between them is a crossgrade that takes effect immediately")
                        }
                    } else if let productID = subscription.productID {
                        levels[level] = (productID, subscription.recurringSubscriptionPeriod)
                    }
                }
                validateOffers(of: subscription, at: path, log: log, checkPrice: checkPrice, checkPeriod: checkPeriod)
            }
        }
        validateSettings(log: log)
    }

    private func validateOffers(of subscription: Subscription, at path: ConfigurationPath, log: ProblemLog,
                                checkPrice: (String?, ConfigurationPath, Bool) -> Void,
                                checkPeriod: (String?, ConfigurationPath) -> Void) {
        func checkCommon(_ offer: Offer, at offerPath: ConfigurationPath) {
            switch offer.paymentMode {
            case nil: log.error(offerPath.appending("paymentMode"), "missing payment mode; expected free, payAsYouGo or payUpFront")
            case let mode? where !Self.paymentModes.contains(mode):
                log.error(offerPath.appending("paymentMode"), "unknown payment mode \"\(mode)\"; expected free, payAsYouGo or payUpFront")
            case let mode?:
                checkPrice(offer.displayPrice, offerPath.appending("displayPrice"), mode != "free")
            }
            checkPeriod(offer.subscriptionPeriod, offerPath.appending("subscriptionPeriod"))
            if let count = offer.numberOfPeriods, count < 1 {
                log.error(offerPath.appending("numberOfPeriods"), "the number of periods must be at least 1, found \(count)")
            }
            if let plan = offer.billingPlanType, !Self.billingPlanTypes.contains(plan) {
                log.error(offerPath.appending("billingPlanType"), "unknown billing plan \"\(plan)\"; expected BILLED_UPFRONT or MONTHLY")
            }
        }
        func checkIdentified(_ offers: [Offer]?, key: String, kind: String) {
            var seen: [String: ConfigurationPath] = [:]
            for (index, offer) in (offers ?? []).enumerated() {
                let offerPath = path.appending(key).appending(index)
                checkCommon(offer, at: offerPath)
                guard let offerID = offer.offerID, !offerID.isEmpty else {
                    log.error(offerPath.appending("offerID"), "missing offer ID; apps select \(kind) offers by it")
                    continue
                }
                if let first = seen[offerID] {
                    log.error(offerPath.appending("offerID"), "duplicate \(kind) offer ID \"\(offerID)\", first declared at \(first)")
                } else {
                    seen[offerID] = offerPath
                }
            }
        }
        if let intro = subscription.introductoryOffer { checkCommon(intro, at: path.appending("introductoryOffer")) }
        for (index, offer) in (subscription.introductoryOffers ?? []).enumerated() {
            checkCommon(offer, at: path.appending("introductoryOffers").appending(index))
        }
        checkIdentified(subscription.adHocOffers, key: "adHocOffers", kind: "promotional")
        checkIdentified(subscription.winbackOffers, key: "winbackOffers", kind: "win-back")
        var references: [String: ConfigurationPath] = [:]
        for (index, offer) in (subscription.codeOffers ?? []).enumerated() {
            let offerPath = path.appending("codeOffers").appending(index)
            checkCommon(offer, at: offerPath)
            if let name = offer.referenceName, !name.isEmpty {
                if let first = references[name] {
                    log.error(offerPath.appending("referenceName"), "duplicate offer code reference name \"\(name)\", first declared at \(first)")
                } else {
                    references[name] = offerPath
                }
            } else {
                log.error(offerPath.appending("referenceName"), "missing reference name; offer codes are redeemed by it")
            }
            for value in offer.eligibility ?? [] where !Self.codeEligibilities.contains(value) {
                log.error(offerPath.appending("eligibility"), "unknown eligibility \"\(value)\"; expected new, existing or expired")
            }
        }
        for (index, plan) in (subscription.billingPlans ?? []).enumerated() {
            let planPath = path.appending("billingPlans").appending(index)
            if let type = plan.billingPlanType, !Self.billingPlanTypes.contains(type) {
                log.error(planPath.appending("billingPlanType"), "unknown billing plan \"\(type)\"; expected BILLED_UPFRONT or MONTHLY")
            }
            checkPrice(plan.displayPrice, planPath.appending("displayPrice"), false)
            checkPrice(plan.commitmentDisplayPrice, planPath.appending("commitmentDisplayPrice"), false)
        }
    }

    private func validateSettings(log: ProblemLog) {
        guard let settings else { return }
        let path = ConfigurationPath.root.appending("settings")
        if let rate = settings.timeRate, TimeRate(rawValue: rate) == nil {
            log.warning(path.appending("_timeRate"), "unknown time rate \(rate); subscriptions run in real time")
        }
        if let storefront = settings.storefront, Storefront(code: storefront) == nil {
            log.warning(path.appending("_storefront"), "unknown storefront \"\(storefront)\"; using USA")
        }
        for (index, entry) in (settings.storeKitErrors ?? []).enumerated() {
            if let name = entry.name, !Self.failableAPINames.contains(name) {
                log.warning(path.appending("_storeKitErrors").appending(index).appending("name"), "unknown StoreKit API \"\(name)\"")
            }
        }
        if let key = subscriptionOffersKeyPair?.privateKey, Data(base64Encoded: key) == nil {
            log.warning(ConfigurationPath.root.appending("subscriptionOffersKeyPair").appending("privateKey"),
                        "not a base64 private key; promotional offers cannot be signed with it")
        }
    }
}
