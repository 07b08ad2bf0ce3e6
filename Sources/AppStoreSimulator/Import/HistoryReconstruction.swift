import AppStoreModels
import Foundation
import StoreKitCatalog

/// Customers rebuilt from signed data: their accounts, transactions, subscriptions and notifications,
/// and what in the data contradicts the rest. It reads nothing but the history and the catalog's periods.
struct HistoryReconstruction {
    struct Customer {
        var name: String
        /// The key the customer's items share: their `appTransactionId`, or their original transaction.
        var key: String
        var appTransactionID: String?
        var storefront: String?
        var originalPurchaseDate: Date
        var originalApplicationVersion: String?
        var appAccountToken: UUID?
        var transactions: [LedgerTransaction] = []
        var subscriptions: [SubscriptionRecord] = []
    }

    /// What the store's rules supply: a product's period, and how long billing retry lasts after it.
    struct Rules {
        var period: (String) -> SubscriptionPeriod?
        var billingRetryPeriod: (SubscriptionPeriod) -> TimeInterval
    }

    private(set) var customers: [Customer] = []
    /// Notifications in date order (the data's order among equal dates), without outbox sequences yet.
    private(set) var notifications: [NotificationRecord] = []
    private(set) var contradictions: [ImportContradiction] = []
    /// Copies of an item that agree with another and were merged into it.
    private(set) var mergedCopies = 0

    /// - Parameters:
    ///   - accountName: The account to import into; `nil` names each customer `customer-<appTransactionId>`.
    ///   - asOf: The time the subscriptions' states are taken at (the store's clock after the import).
    init(_ history: SignedHistory, accountName: String?, asOf: Date, rules: Rules) throws(AppStoreError) {
        let accepted = acceptNotifications(history)
        let transactions = try newestCopies(of: history.transactions + accepted.flatMap { notification in
            notification.transaction.map { [SignedHistory.Item($0, source: "\(notification.source): signedTransactionInfo")] } ?? []
        })
        let renewalInfos = history.renewalInfos + accepted.compactMap { notification in
            notification.renewalInfo.map { SignedHistory.Item($0, source: "\(notification.source): signedRenewalInfo") }
        }
        try buildCustomers(transactions, renewalInfos: renewalInfos, history: history, notifications: accepted,
                           accountName: accountName, asOf: asOf, rules: rules)
        notifications = accepted.enumerated().sorted { ($0.element.payload.signedDate ?? .distantPast, $0.offset) < ($1.element.payload.signedDate ?? .distantPast, $1.offset) }
            .map { Self.record(of: $0.element) }
    }

    // MARK: Notifications

    /// The notifications to import: one copy of each UUID, and only those about customers the data's
    /// histories hold (when it holds any: a notification history page covers every customer of the app).
    private mutating func acceptNotifications(_ history: SignedHistory) -> [SignedHistory.Notification] {
        let known = Set(history.transactions.compactMap(\.payload.originalTransactionId) + history.statuses.map(\.originalTransactionID))
        var seen: [String: SignedHistory.Notification] = [:]
        var accepted: [SignedHistory.Notification] = []
        for notification in history.notifications {
            let uuid = notification.payload.notificationUUID ?? notification.source
            if let first = seen[uuid] {
                if first.content == notification.content {
                    mergedCopies += 1
                } else {
                    contradictions.append(ImportContradiction(
                        source: notification.source, message: "notification \(uuid) appears again with other content (first at \(first.source)); the first is kept"))
                }
                continue
            }
            seen[uuid] = notification
            if !known.isEmpty, let original = notification.transaction?.originalTransactionId, !known.contains(original) {
                contradictions.append(ImportContradiction(
                    source: notification.source,
                    message: "\(Self.describe(notification)) is about original transaction \(original), which no transaction history or status here holds; not imported"))
                continue
            }
            accepted.append(notification)
        }
        return accepted
    }

    private static func describe(_ notification: SignedHistory.Notification) -> String {
        let type = notification.payload.notificationType?.rawValue ?? "notification"
        let subtype = notification.payload.subtype.map { " \($0.rawValue)" } ?? ""
        return "\(type)\(subtype) \(notification.payload.notificationUUID ?? "")"
    }

    private static func record(of notification: SignedHistory.Notification) -> NotificationRecord {
        let body = notification.content
        var record = NotificationRecord(
            sequence: 0, notificationUUID: notification.payload.notificationUUID ?? "", type: notification.payload.notificationType ?? .test,
            subtype: notification.payload.subtype, transactionID: notification.transaction?.transactionId.flatMap { UInt64($0) },
            date: notification.payload.signedDate ?? .distantPast, payload: body.payload, transaction: body.transaction, renewalInfo: body.renewalInfo)
        // Imported notifications were delivered (or not) by the App Store; this store never posts them.
        record.delivery = NotificationDelivery(attempts: notification.sendAttempts, nextAttemptDate: nil)
        return record
    }

    // MARK: Transactions

    /// The newest copy of each transaction (by `signedDate`); copies signed at the same moment must agree.
    private mutating func newestCopies(of items: [SignedHistory.Item<JWSTransactionDecodedPayload>]) throws(AppStoreError)
        -> [SignedHistory.Item<JWSTransactionDecodedPayload>] {
        var newest: [String: SignedHistory.Item<JWSTransactionDecodedPayload>] = [:]
        var order: [String] = []
        for item in items {
            guard let id = item.payload.transactionId, UInt64(id) != nil else {
                throw .control(.invalidAction, "\(item.source): the transaction has no numeric transactionId (\(item.payload.transactionId ?? "none"))")
            }
            guard let original = item.payload.originalTransactionId, UInt64(original) != nil else {
                throw .control(.invalidAction, "\(item.source): transaction \(id) has no numeric originalTransactionId")
            }
            guard item.payload.productId != nil, item.payload.purchaseDate != nil, item.payload.type != nil else {
                throw .control(.invalidAction, "\(item.source): transaction \(id) lacks its productId, purchaseDate or type")
            }
            // The currency goes into every report and CSV export: an ISO 4217 code, three upper-case
            // letters, or the import is refused (an unverified file could carry a spreadsheet formula).
            if let currency = item.payload.currency, !Self.isCurrencyCode(currency) {
                throw .control(.invalidAction, "\(item.source): transaction \(id) has the currency \(Self.excerpt(currency)), which is not an ISO 4217 code (three upper-case letters)")
            }
            guard let existing = newest[id] else {
                newest[id] = item
                order.append(id)
                continue
            }
            let (old, new) = (existing.payload.signedDate ?? .distantPast, item.payload.signedDate ?? .distantPast)
            if old == new {
                if existing.payload == item.payload { mergedCopies += 1 } else {
                    contradictions.append(ImportContradiction(
                        source: item.source, message: "transaction \(id) appears again, signed at the same moment with other content (first at \(existing.source)); the first is kept"))
                }
            } else {
                mergedCopies += 1
                if new > old { newest[id] = item }
            }
        }
        return order.compactMap { newest[$0] }
    }

    /// Whether `code` has the shape of an ISO 4217 currency code: three letters A to Z.
    static func isCurrencyCode(_ code: String) -> Bool {
        code.utf8.count == 3 && code.utf8.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    /// At most 64 characters of untrusted text, its controls escaped, for an error.
    static func excerpt(_ text: String) -> String {
        let escaped = String(text.prefix(64).unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
        return "\"" + escaped + (text.count > 64 ? "…" : "") + "\""
    }

    private static func ledgerTransaction(_ payload: JWSTransactionDecodedPayload, account: String) -> LedgerTransaction {
        let kind: CatalogProduct.Kind = switch payload.type {
        case .consumable?: .consumable
        case .nonConsumable?: .nonConsumable
        case .nonRenewingSubscription?: .nonRenewable
        default: .autoRenewable
        }
        let id = UInt64(payload.transactionId ?? "") ?? 0
        let purchaseDate = payload.purchaseDate ?? .distantPast
        let storefront = payload.storefront.flatMap { Storefront(code: $0) } ?? payload.storefrontId.flatMap { Storefront(id: $0) } ?? .unitedStates
        var transaction = LedgerTransaction(
            id: id, originalID: UInt64(payload.originalTransactionId ?? "") ?? id, account: account, device: nil,
            productID: payload.productId ?? "", productKind: kind, subscriptionGroupID: payload.subscriptionGroupIdentifier,
            purchaseDate: purchaseDate, originalPurchaseDate: payload.originalPurchaseDate ?? purchaseDate, expirationDate: payload.expiresDate,
            quantity: Int(payload.quantity ?? 1), ownership: payload.inAppOwnershipType == .familyShared ? .familyShared : .purchased,
            familySourceID: nil, webOrderLineItemID: payload.webOrderLineItemId, appAccountToken: payload.appAccountToken,
            storefront: storefront, price: payload.price ?? 0, reason: payload.transactionReason == .renewal ? .renewal : .purchase,
            offer: nil, state: .purchased)
        transaction.storefront = payload.storefront ?? storefront.countryCode
        transaction.storefrontID = payload.storefrontId ?? storefront.id
        transaction.currency = payload.currency ?? storefront.currency
        if let type = payload.offerType {
            transaction.offer = LedgerTransaction.Offer(type: type, id: payload.offerIdentifier,
                                                        discountType: payload.offerDiscountType ?? (payload.price == 0 ? .freeTrial : .payAsYouGo),
                                                        period: payload.offerPeriod ?? "")
        }
        if let date = payload.revocationDate {
            transaction.revocation = LedgerTransaction.Revocation(date: date, reason: payload.revocationReason ?? .refundedForOtherReason, type: payload.revocationType)
        }
        transaction.isUpgraded = payload.isUpgraded == true
        transaction.appTransactionID = payload.appTransactionId
        // History: the app delivered it long ago.
        transaction.finishedDate = purchaseDate
        transaction.imported = payload
        return transaction
    }

    // MARK: Customers

    private mutating func buildCustomers(_ transactions: [SignedHistory.Item<JWSTransactionDecodedPayload>],
                                         renewalInfos: [SignedHistory.Item<JWSRenewalInfoDecodedPayload>], history: SignedHistory,
                                         notifications: [SignedHistory.Notification], accountName: String?, asOf: Date, rules: Rules) throws(AppStoreError) {
        var keys: [String] = []
        var byKey: [String: [SignedHistory.Item<JWSTransactionDecodedPayload>]] = [:]
        for item in transactions {
            let key = item.payload.appTransactionId ?? "original-\(item.payload.originalTransactionId ?? "")"
            if byKey[key] == nil { keys.append(key) }
            byKey[key, default: []].append(item)
        }
        if accountName != nil, keys.count > 1 {
            throw .control(.invalidAction, "the data holds \(keys.count) customers (\(keys.joined(separator: ", "))); --account names one, so import them without it (each becomes customer-<appTransactionId>)")
        }
        let appTransactions = Dictionary(history.appTransactions.compactMap { item in item.payload.appTransactionId.map { ($0, item.payload) } },
                                         uniquingKeysWith: { first, _ in first })
        let renewalsByOriginal = Dictionary(grouping: renewalInfos) { $0.payload.originalTransactionId ?? "" }
        var statusClaims: [String: (status: Status, date: Date)] = [:]
        func claim(_ original: String, _ status: Status, _ date: Date) {
            if let existing = statusClaims[original], existing.date > date { return }
            statusClaims[original] = (status, date)
        }
        for status in history.statuses { claim(status.originalTransactionID, status.status, status.signedDate) }
        for notification in notifications {
            guard let original = notification.transaction?.originalTransactionId, let status = notification.payload.data?.status,
                  let date = notification.payload.signedDate else { continue }
            claim(original, status, date)
        }

        var originalsWithTransactions = Set<String>()
        for key in keys {
            let items = byKey[key] ?? []
            let name = accountName ?? "customer-\(key.hasPrefix("original-") ? String(key.dropFirst("original-".count)) : key)"
            let newest = items.max { ($0.payload.purchaseDate ?? .distantPast) < ($1.payload.purchaseDate ?? .distantPast) }
            let appTransaction = newest?.payload.appTransactionId.flatMap { appTransactions[$0] }
            var customer = Customer(
                name: name, key: key, appTransactionID: items.first?.payload.appTransactionId, storefront: newest?.payload.storefront,
                originalPurchaseDate: appTransaction?.originalPurchaseDate ?? items.compactMap { $0.payload.originalPurchaseDate ?? $0.payload.purchaseDate }.min() ?? asOf,
                originalApplicationVersion: appTransaction?.originalApplicationVersion,
                appAccountToken: newest?.payload.appAccountToken)
            customer.transactions = items.map { Self.ledgerTransaction($0.payload, account: name) }
            let originals = Dictionary(grouping: customer.transactions.filter { $0.productKind == .autoRenewable }, by: \.originalID)
            for (original, group) in originals.sorted(by: { $0.key < $1.key }) {
                originalsWithTransactions.insert(String(original))
                let renewal = renewalsByOriginal[String(original)]?.max { ($0.payload.signedDate ?? .distantPast) < ($1.payload.signedDate ?? .distantPast) }
                if let record = subscription(of: group, renewal: renewal, claim: statusClaims[String(original)], account: name, asOf: asOf, rules: rules) {
                    customer.subscriptions.append(record)
                }
            }
            customers.append(customer)
        }
        for (original, items) in renewalsByOriginal.sorted(by: { $0.key < $1.key }) where !originalsWithTransactions.contains(original) {
            for item in items {
                contradictions.append(ImportContradiction(
                    source: item.source, message: "renewal info of original transaction \(original), but no transaction of it is here; not imported"))
            }
        }
    }

    /// The subscription record of one original transaction: its current period from the newest
    /// transaction, its renewal state from the newest renewal info, its status from the newest report.
    private mutating func subscription(of transactions: [LedgerTransaction], renewal: SignedHistory.Item<JWSRenewalInfoDecodedPayload>?,
                                       claim: (status: Status, date: Date)?, account: String, asOf: Date, rules: Rules) -> SubscriptionRecord? {
        let current = transactions.filter { !$0.isUpgraded }.max { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) }
            ?? transactions.max { ($0.purchaseDate, $0.id) < ($1.purchaseDate, $1.id) }
        guard let latest = current, let groupID = latest.subscriptionGroupID, let expiration = latest.expirationDate else { return nil }
        let info = renewal?.payload
        if let renewal, let renewalDate = info?.renewalDate, renewalDate > expiration.addingTimeInterval(1) {
            contradictions.append(ImportContradiction(
                source: renewal.source,
                message: "renewal info of original transaction \(latest.originalID) is newer than any transaction: it renews on \(AppStoreJSON.milliseconds(from: renewalDate)), after the newest transaction (\(latest.id)) expires on \(AppStoreJSON.milliseconds(from: expiration)); a renewal is missing from the data"))
        }
        let productID = info?.productId ?? latest.productID
        let period = rules.period(productID) ?? rules.period(latest.productID) ?? .months(1)
        let state: SubscriptionRecord.State
        if let claim, claim.date >= (info?.signedDate ?? .distantPast), let claimed = Self.state(of: claim.status) {
            state = claimed
        } else if latest.isRevoked {
            state = .revoked
        } else if let grace = info?.gracePeriodExpiresDate, grace > asOf, info?.isInBillingRetryPeriod == true {
            state = .inGracePeriod
        } else if info?.isInBillingRetryPeriod == true {
            state = .inBillingRetryPeriod
        } else {
            state = expiration > asOf ? .subscribed : .expired
        }
        let autoRenew = info.map { $0.autoRenewStatus == .on } ?? (state == .subscribed)
        var record = SubscriptionRecord(
            originalTransactionID: latest.originalID, account: account, groupID: groupID, productID: productID,
            autoRenewProductID: info?.autoRenewProductId ?? productID, autoRenewEnabled: autoRenew, state: state, latestTransactionID: latest.id,
            expirationDate: expiration, anchorDate: expiration, anchorPeriod: period, periodsSinceAnchor: 0,
            gracePeriodExpirationDate: state == .inGracePeriod ? info?.gracePeriodExpiresDate : nil,
            billingRetryEndDate: state == .inGracePeriod || state == .inBillingRetryPeriod ? expiration.addingTimeInterval(rules.billingRetryPeriod(period)) : nil,
            expirationIntent: info?.expirationIntent, priceIncrease: Self.priceIncrease(info?.priceIncreaseStatus), currentOffer: nil, queuedOffer: nil,
            recentSubscriptionStartDate: info?.recentSubscriptionStartDate ?? transactions.map(\.purchaseDate).min() ?? latest.purchaseDate,
            appAccountToken: info?.appAccountToken ?? latest.appAccountToken, familySourceID: nil)
        // The store's periods run from the end of the imported one: its length may be the sandbox's, not the product's.
        record.importedRenewalInfo = info
        return record
    }

    private static func state(of status: Status) -> SubscriptionRecord.State? {
        switch status {
        case .active: return .subscribed
        case .expired: return .expired
        case .billingRetry: return .inBillingRetryPeriod
        case .billingGracePeriod: return .inGracePeriod
        case .revoked: return .revoked
        default: return nil
        }
    }

    private static func priceIncrease(_ status: PriceIncreaseStatus?) -> SubscriptionRecord.PriceIncrease? {
        switch status {
        case .customerHasNotResponded?: return .pending
        case .customerConsentedOrWasNotifiedWithoutClaimingConsent?: return .agreed
        default: return nil
        }
    }
}
