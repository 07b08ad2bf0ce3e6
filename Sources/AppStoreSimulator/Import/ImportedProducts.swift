import AppStoreModels
import Foundation
import StoreKitCatalog

extension SignedHistory {
    /// A product the data names, as far as its transactions tell.
    public struct InferredProduct: Hashable, Sendable {
        public var productID: String
        public var kind: CatalogProduct.Kind
        public var subscriptionGroupID: String?
        /// The price of its newest full-price transaction, in milliunits of ``currency``.
        public var price: Int64
        public var currency: String?
        public var storefront: String?
        public var period: SubscriptionPeriod?
        /// How the period was found, said in a sentence.
        public var periodEvidence: String?
    }

    /// The sandbox's subscription renewal rates (App Store Connect's "monthly renewal every N minutes"),
    /// as the length of one period of each duration in seconds.
    static let sandboxRenewalRates: [(name: String, periods: [(SubscriptionPeriod, TimeInterval)])] = [
        ("monthly renewal every 3 minutes", [(.months(1), 180), (.months(2), 360), (.months(3), 540), (.months(6), 1_080), (.years(1), 2_160)]),
        ("monthly renewal every 5 minutes", [(.weeks(1), 180), (.months(1), 300), (.months(2), 600), (.months(3), 900), (.months(6), 1_800), (.years(1), 3_600)]),
        ("monthly renewal every 15 minutes", [(.weeks(1), 300), (.months(1), 900), (.months(2), 1_800), (.months(3), 2_700), (.months(6), 5_400), (.years(1), 10_800)]),
        ("monthly renewal every 30 minutes", [(.weeks(1), 600), (.months(1), 1_800), (.months(2), 3_600), (.months(3), 5_400), (.months(6), 10_800), (.years(1), 21_600)]),
        ("monthly renewal every hour", [(.weeks(1), 900), (.months(1), 3_600), (.months(2), 7_200), (.months(3), 10_800), (.months(6), 21_600), (.years(1), 43_200)]),
    ]

    /// Every product the data's transactions name, in order of first appearance.
    public var inferredProducts: [InferredProduct] {
        let transactions = allTransactions.map(\.payload)
        var order: [String] = []
        var byProduct: [String: [JWSTransactionDecodedPayload]] = [:]
        for transaction in transactions {
            guard let id = transaction.productId else { continue }
            if byProduct[id] == nil { order.append(id) }
            byProduct[id, default: []].append(transaction)
        }
        let durations = byProduct.mapValues { items in
            Set(items.compactMap { item -> TimeInterval? in
                guard item.offerType == nil, let start = item.purchaseDate, let end = item.expiresDate else { return nil }
                return end.timeIntervalSince(start).rounded()
            })
        }
        let rate = Self.sandboxRate(explaining: durations.values.flatMap { $0 }.filter { $0 < 86_400 })
        return order.map { id in
            let items = byProduct[id] ?? []
            let newest = items.filter { $0.offerType == nil }.max { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) } ?? items[0]
            let kind: CatalogProduct.Kind = switch newest.type {
            case .consumable?: .consumable
            case .nonConsumable?: .nonConsumable
            case .nonRenewingSubscription?: .nonRenewable
            default: .autoRenewable
            }
            var product = InferredProduct(productID: id, kind: kind, subscriptionGroupID: newest.subscriptionGroupIdentifier, price: newest.price ?? 0,
                                          currency: newest.currency, storefront: newest.storefront)
            if kind == .autoRenewable {
                (product.period, product.periodEvidence) = Self.period(from: items, durations: durations[id] ?? [], rate: rate)
            }
            return product
        }
    }

    /// The sandbox rate whose table explains every short duration, preferring the faster rates.
    private static func sandboxRate(explaining durations: [TimeInterval]) -> (name: String, periods: [(SubscriptionPeriod, TimeInterval)])? {
        guard !durations.isEmpty else { return nil }
        return sandboxRenewalRates.first { rate in
            durations.allSatisfy { duration in rate.periods.contains { abs($0.1 - duration) <= 2 } }
        }
    }

    private static func period(from items: [JWSTransactionDecodedPayload], durations: Set<TimeInterval>,
                               rate: (name: String, periods: [(SubscriptionPeriod, TimeInterval)])?) -> (SubscriptionPeriod, String) {
        let calendar: [SubscriptionPeriod] = [.weeks(1), .months(1), .months(2), .months(3), .months(6), .years(1)]
        for item in items where item.offerType == nil {
            guard let start = item.purchaseDate, let end = item.expiresDate, end.timeIntervalSince(start) >= 86_400 else { continue }
            if let period = calendar.first(where: { abs($0.date(byAdding: 1, to: start).timeIntervalSince(end)) <= 2 * 86_400 }) {
                return (period, "a period of \(period.iso8601) from \(item.transactionId ?? "a transaction")'s purchase and expiry dates")
            }
        }
        if let rate, let duration = durations.min(), let match = rate.periods.first(where: { abs($0.1 - duration) <= 2 }) {
            return (match.0, "periods of \(Int(duration)) s: the sandbox's \(rate.name); the store continues in real periods")
        }
        return (.months(1), "no full-price period in the data; P1M assumed")
    }

    /// `base` with every product the data names that it lacks, priced and sized from the data: the
    /// configuration a store made by an import sells. Subscription levels follow the order in which
    /// products first appear; a `.storekit` file given with the data says the real ones.
    public func configuration(completing base: StoreKitConfiguration) -> (configuration: StoreKitConfiguration, added: [InferredProduct]) {
        var configuration = base
        let known = Set((base.products ?? []).compactMap(\.productID) + (base.nonRenewingSubscriptions ?? []).compactMap(\.productID)
            + (base.subscriptionGroups ?? []).flatMap { ($0.subscriptions ?? []).compactMap(\.productID) })
        let added = inferredProducts.filter { !known.contains($0.productID) }
        for (index, product) in added.enumerated() {
            let internalID = String(format: "%08X", 0x1A00_0000 + index)
            let localization = StoreKitConfiguration.Localization(locale: "en_US", displayName: product.productID, description: "Imported from signed data")
            switch product.kind {
            case .autoRenewable:
                var subscription = StoreKitConfiguration.Subscription()
                subscription.type = "RecurringSubscription"
                subscription.productID = product.productID
                subscription.referenceName = product.productID
                subscription.displayPrice = Self.displayPrice(product.price)
                subscription.familyShareable = false
                subscription.internalID = internalID
                subscription.localizations = [localization]
                subscription.recurringSubscriptionPeriod = (product.period ?? .months(1)).iso8601
                let groupID = product.subscriptionGroupID ?? "imported"
                subscription.subscriptionGroupID = groupID
                var groups = configuration.subscriptionGroups ?? []
                if let index = groups.firstIndex(where: { $0.id == groupID }) {
                    subscription.groupNumber = (groups[index].subscriptions ?? []).count + 1
                    groups[index].subscriptions = (groups[index].subscriptions ?? []) + [subscription]
                } else {
                    var group = StoreKitConfiguration.SubscriptionGroup()
                    group.id = groupID
                    group.name = "Group \(groupID)"
                    group.localizations = []
                    subscription.groupNumber = 1
                    group.subscriptions = [subscription]
                    groups.append(group)
                }
                configuration.subscriptionGroups = groups
            case .nonRenewable, .consumable, .nonConsumable:
                var item = StoreKitConfiguration.Product()
                item.type = product.kind == .consumable ? "Consumable" : product.kind == .nonConsumable ? "NonConsumable" : "NonRenewingSubscription"
                item.productID = product.productID
                item.referenceName = product.productID
                item.displayPrice = Self.displayPrice(product.price)
                item.familyShareable = false
                item.internalID = internalID
                item.localizations = [localization]
                if product.kind == .nonRenewable {
                    configuration.nonRenewingSubscriptions = (configuration.nonRenewingSubscriptions ?? []) + [item]
                } else {
                    configuration.products = (configuration.products ?? []) + [item]
                }
            }
        }
        if configuration.settings?.storefront == nil, let storefront = added.first(where: { $0.storefront != nil })?.storefront {
            var settings = configuration.settings ?? StoreKitConfiguration.Settings()
            settings.storefront = storefront
            configuration.settings = settings
        }
        if configuration.version == nil { configuration.version = StoreKitConfiguration.Version(major: 4, minor: 0) }
        return (configuration, added)
    }

    /// A price in milliunits as a `.storekit` display price: "1.99", or "0.999" when it needs a third digit.
    public static func displayPrice(_ milliunits: Int64) -> String {
        let units = milliunits / 1_000, rest = milliunits % 1_000
        return rest % 10 == 0 ? String(format: "%lld.%02lld", units, rest / 10) : String(format: "%lld.%03lld", units, rest)
    }
}
