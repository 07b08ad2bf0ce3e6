import AppStoreModels
import Foundation
import StoreKitCatalog

/// One subscription's status as `Product.SubscriptionInfo.Status` carries it.
public struct SubscriptionStatus: Hashable, Sendable {
    public let state: SubscriptionRecord.State
    /// The transaction of the current (or last) period.
    public let transaction: SignedTransaction
    /// The renewal info, decoded and signed.
    public let renewalInfo: JWSRenewalInfoDecodedPayload
    public let signedRenewalInfo: String
    public let record: SubscriptionRecord
}

extension SimulatedAppStore {
    /// The renewal info of a subscription, as the App Store signs it (inside a unit of work, with the
    /// change in progress laid over the ledger).
    ///
    /// Apple's inclusion rules: `renewalDate` always (the end of the current period);
    /// `isInBillingRetryPeriod` true while retrying (also in grace), false once expired, absent otherwise;
    /// the renewal price, currency and offer only while the subscription will renew.
    func renewalInfo(for record: SubscriptionRecord, device: StoreDevice?, at date: Date, in change: Change? = nil) -> JWSRenewalInfoDecodedPayload {
        if var info = record.importedRenewalInfo {
            // What Apple last said of an imported subscription, until the store's own rules move it on.
            info.signedDate = date
            info.environment = identity.environment
            info.deviceVerification = nil
            info.deviceVerificationNonce = nil
            if let device {
                let nonce = identifiers()
                info.deviceVerificationNonce = nonce
                info.deviceVerification = DeviceVerificationValue.of(nonce: nonce, device: device)
            }
            return info
        }
        var info = JWSRenewalInfoDecodedPayload()
        info.originalTransactionId = String(record.originalTransactionID)
        info.productId = record.productID
        info.autoRenewProductId = record.autoRenewProductID
        info.autoRenewStatus = record.autoRenewEnabled ? .on : .off
        switch record.state {
        case .inBillingRetryPeriod, .inGracePeriod: info.isInBillingRetryPeriod = true
        case .expired: info.isInBillingRetryPeriod = false
        case .subscribed, .revoked: info.isInBillingRetryPeriod = nil
        }
        info.gracePeriodExpiresDate = record.gracePeriodExpirationDate
        if record.state == .expired || record.state == .revoked { info.expirationIntent = record.expirationIntent }
        switch record.priceIncrease {
        case .pending?, .declined?: info.priceIncreaseStatus = .customerHasNotResponded
        case .agreed?: info.priceIncreaseStatus = .customerConsentedOrWasNotifiedWithoutClaimingConsent
        case nil: break
        }
        info.signedDate = date
        info.environment = identity.environment
        info.recentSubscriptionStartDate = record.recentSubscriptionStartDate
        info.renewalDate = record.expirationDate
        let latest = storedTransaction(record.latestTransactionID, in: change)
        if record.autoRenewEnabled, record.state != .expired, record.state != .revoked {
            let product = catalog().product(id: record.autoRenewProductID)
            info.currency = latest?.currency ?? product?.currency
            let next = nextOffer(of: record)
            info.renewalPrice = next?.price ?? product?.priceInMilliunits
            info.offerType = next?.offer.type
            info.offerIdentifier = next?.offer.id
            info.offerDiscountType = next?.offer.discountType
            info.offerPeriod = next?.offer.period
        }
        if let commitment = record.commitment, record.state != .expired, record.state != .revoked {
            // Monthly payments of a commitment: each renewal bills a payment, and the commitment itself
            // renews (or not) when it ends.
            info.renewalBillingPlanType = .monthly
            if commitment.hasPaymentsLeft || record.autoRenewEnabled {
                info.renewalPrice = commitment.paymentPrice
                info.currency = latest?.currency ?? catalog().product(id: record.productID)?.currency
            }
            var committed = RenewalCommitmentInfo()
            committed.commitmentAutoRenewProductId = record.autoRenewProductID
            committed.commitmentAutoRenewStatus = record.autoRenewEnabled ? .on : .off
            committed.commitmentRenewalBillingPlanType = .monthly
            committed.commitmentRenewalDate = commitment.end
            committed.commitmentRenewalPrice = commitment.price
            info.commitmentInfo = committed
        }
        if record.state == .expired, let offers = catalog().product(id: record.productID)?.subscription?.winBackOffers {
            let eligible = offers.filter(\.isEligible).compactMap(\.id)
            if !eligible.isEmpty { info.eligibleWinBackOfferIds = eligible }
        }
        info.appAccountToken = record.appAccountToken
        info.appTransactionId = latest?.appTransactionID ?? storedAccount(record.account, in: change)?.appTransactionID
        if let device {
            let nonce = identifiers()
            info.deviceVerificationNonce = nonce
            info.deviceVerification = DeviceVerificationValue.of(nonce: nonce, device: device)
        }
        return info
    }

    /// The offer the next renewal will use, if any.
    func nextOffer(of record: SubscriptionRecord) -> SubscriptionRecord.ActiveOffer? {
        if let current = record.currentOffer, current.remainingPeriods > 1, record.autoRenewProductID == record.productID { return current }
        return record.queuedOffer
    }

    func signedRenewalInfo(for record: SubscriptionRecord, device: StoreDevice?, at date: Date,
                           in change: Change? = nil) throws(AppStoreError) -> (JWSRenewalInfoDecodedPayload, String) {
        let info = renewalInfo(for: record, device: device, at: date, in: change)
        return (info, try sign(info, at: date))
    }

    /// Appends a subscription notification with the transaction, renewal info and status (signed when read).
    ///
    /// About a purchaser's subscription shared through Family Sharing, each member's copy gets the same
    /// notification about its own transaction, owned `FAMILY_SHARED`, for the changes a copy follows
    /// without a new period: a failed renewal, grace ending, a renewal status or plan change, an
    /// extension, an expiry. (A new period's copy is told by ``syncFamily(_:newTransaction:change:)``;
    /// a refund's copies are revoked with `REVOKE`.)
    func appendSubscriptionNotification(_ type: NotificationTypeV2, subtype: Subtype?, record: SubscriptionRecord,
                                        transaction: LedgerTransaction?, change: inout Change) throws(AppStoreError) {
        let now = clock.now()
        try appendNotification(type, subtype: subtype, transaction: transaction, renewalInfo: renewalInfo(for: record, device: nil, at: now, in: change),
                               status: record.state.status, at: now, change: &change)
        guard record.familySourceID == nil, Self.typesFamilyCopiesFollow.contains(type) else { return }
        // About a new period, the copies' own new periods are told when they are made.
        if let transaction, change.ledger.transactions[transaction.id] != nil, ledger.transaction(transaction.id) == nil { return }
        for copy in familyCopies(of: record, in: change) {
            guard let copyTransaction = latestTransaction(of: copy, in: change) else { continue }
            try appendNotification(type, subtype: subtype, transaction: copyTransaction, renewalInfo: renewalInfo(for: copy, device: nil, at: now, in: change),
                                   status: copy.state.status, at: now, change: &change)
        }
    }

    /// The notifications a family member's copy gets with the purchaser's, about its own transaction.
    static let typesFamilyCopiesFollow: Set<NotificationTypeV2> = [.didFailToRenew, .gracePeriodExpired, .didChangeRenewalStatus,
                                                                    .didChangeRenewalPref, .renewalExtended, .expired]

    /// The family members' copies of a purchaser's subscription, as they stand after following it.
    func familyCopies(of source: SubscriptionRecord, in change: Change) -> [SubscriptionRecord] {
        var copies: [UInt64: SubscriptionRecord] = [:]
        for copy in ledger.subscriptions(SubscriptionQuery(familySourceID: source.originalTransactionID)) { copies[copy.originalTransactionID] = copy }
        for copy in change.ledger.subscriptions.values where copy.familySourceID == source.originalTransactionID { copies[copy.originalTransactionID] = copy }
        return copies.values.sorted { $0.originalTransactionID < $1.originalTransactionID }.map { $0.following(source) }
    }

    /// Queues the subscription's new status in the status feed of every device of its account.
    func enqueueStatusUpdates(_ record: SubscriptionRecord, change: inout Change) throws(AppStoreError) {
        guard let transaction = latestTransaction(of: record, in: change) else { return }
        let now = clock.now()
        for device in devices(of: record.account, including: change) {
            let (_, renewal) = try signedRenewalInfo(for: record, device: device, at: now, in: change)
            let sequence = change.counters.nextUpdateSequence
            change.counters.nextUpdateSequence += 1
            var update = LedgerUpdate(sequence: sequence, device: device.name, transactionID: transaction.id, kind: .status,
                                      signedTransaction: try sign(transaction, for: device, at: now), date: now)
            update.channel = .statuses
            update.signedRenewalInfo = renewal
            update.renewalState = record.state
            update.subscriptionGroupID = record.groupID
            change.ledger.appendedUpdates.append(update)
        }
    }

    /// `Product.SubscriptionInfo.status(for:)`: every subscription of a group the account has,
    /// its own and family-shared ones, with state, transaction and renewal info.
    public func subscriptionStatuses(groupID: String, device: String? = nil, account: String? = nil) throws(AppStoreError) -> [SubscriptionStatus] {
        try reading { () throws(AppStoreError) in
            try checkSimulatedFailure(.subscriptionStatus)
            let (accountName, device) = try self.account(device: device, account: account)
            let now = clock.now()
            let records = ledger.subscriptions(SubscriptionQuery(account: accountName, groupID: groupID))
                .sorted { ($0.familySourceID != nil ? 1 : 0, $0.originalTransactionID) < ($1.familySourceID != nil ? 1 : 0, $1.originalTransactionID) }
            var statuses: [SubscriptionStatus] = []
            for record in records {
                guard let transaction = ledger.transaction(record.latestTransactionID) else { continue }
                let (info, jws) = try signedRenewalInfo(for: record, device: device, at: now)
                statuses.append(SubscriptionStatus(state: record.state, transaction: try signed(transaction, for: device), renewalInfo: info,
                                                   signedRenewalInfo: jws, record: record))
            }
            return statuses
        }
    }

    /// The subscription records of an account, or of the whole store.
    public func subscriptionRecords(account: String? = nil, after: UInt64? = nil, limit: Int = .max) throws(AppStoreError) -> [SubscriptionRecord] {
        try reading { ledger.subscriptions(SubscriptionQuery(account: account, afterID: after, limit: limit)) }
    }

    /// The renewal record of one subscription, by its original transaction identifier.
    public func subscriptionRecord(originalTransactionID: UInt64) throws(AppStoreError) -> SubscriptionRecord? {
        try reading { ledger.subscription(originalTransactionID) }
    }

    /// The account's own subscription to a product's group whose current product is `productID`.
    func subscription(productID: String, account: String) throws(AppStoreError) -> SubscriptionRecord {
        guard let product = catalog().product(id: productID) else { throw .control(.invalidProductIdentifier, "no product \(productID)") }
        guard let group = product.subscription?.groupID else {
            throw .control(.invalidProductType, "\(productID) is not an auto-renewable subscription")
        }
        guard let record = ownSubscription(account: account, group: group), record.productID == productID || record.autoRenewProductID == productID else {
            if let shared = ledger.subscriptions(SubscriptionQuery(account: account, groupID: group)).first(where: { $0.familySourceID != nil }) {
                throw sharedCopyRefusal(shared)
            }
            throw .control(.noSubscriptionFound, "account \(account) has no subscription to \(productID)")
        }
        return record
    }

    /// Why a control that only the purchaser's subscription takes is refused on a family member's copy.
    func sharedCopyRefusal(_ copy: SubscriptionRecord) -> AppStoreError {
        let purchaser = copy.familySourceID.flatMap { ledger.subscription($0)?.account } ?? "the purchaser"
        return .control(.invalidAction, """
            \(copy.account)'s subscription \(copy.originalTransactionID) is shared by \(purchaser) through Family Sharing: \
            \(purchaser)'s subscription is the one that renews, expires or changes price, and the family's copies follow it
            """)
    }

    // MARK: Controls

    /// Turns automatic renewal on or off (`enableAutoRenewForTransaction` / `disableAutoRenewForTransaction`),
    /// with `DID_CHANGE_RENEWAL_STATUS`. Given a family member's shared copy, it acts on the purchaser's
    /// subscription, which the copies follow.
    public func setAutoRenew(originalTransactionID: UInt64, enabled: Bool) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in try setAutoRenew(originalTransactionID: originalTransactionID, enabled: enabled, change: &change) }
    }

    func setAutoRenew(originalTransactionID: UInt64, enabled: Bool, change: inout Change) throws(AppStoreError) {
        do {
            guard var record = controlledSubscription(originalTransactionID) else {
                throw .control(.noSubscriptionFound, "transaction \(originalTransactionID) has no subscription")
            }
            guard record.state != .expired, record.state != .revoked else {
                throw .control(.invalidAction, "subscription \(record.originalTransactionID) has \(record.state.rawValue)")
            }
            guard record.autoRenewEnabled != enabled else { return }
            record.autoRenewEnabled = enabled
            if enabled, record.priceIncrease == .declined { record.priceIncrease = nil }
            change.ledger.subscriptions[record.originalTransactionID] = record
            try appendSubscriptionNotification(.didChangeRenewalStatus, subtype: enabled ? .autoRenewEnabled : .autoRenewDisabled, record: record,
                                               transaction: latestTransaction(of: record, in: change), change: &change)
            try enqueueStatusUpdates(record, change: &change)
            try syncFamily(record, newTransaction: nil, change: &change)
            // "The App Store continues to retry billing for 60 days, or until the customer resolves
            // their billing issue or cancels their subscription, whichever comes first" (Apple,
            // DID_FAIL_TO_RENEW): turning renewal off while billing is retried ends the retries, and
            // with them a billing grace period, now.
            if !enabled, record.state == .inBillingRetryPeriod || record.state == .inGracePeriod {
                try expire(record, intent: .customerCancelled, subtype: .voluntary, at: clock.now(), change: &change)
            }
        }
    }

    /// The subscription a control addressed to `id` (any of its transactions) acts on: the purchaser's
    /// when `id` names a family member's shared copy. In the App Store the purchaser's subscription is
    /// the one that renews, fails, recovers or is cancelled, and the family's copies follow it
    /// (``syncFamily(_:newTransaction:change:)``); a control on a copy alone would leave the copy and
    /// the purchase telling two stories.
    func controlledSubscription(_ id: UInt64) -> SubscriptionRecord? {
        guard let record = ledger.subscription(ownOriginal(id)) else { return nil }
        guard let source = record.familySourceID else { return record }
        return ledger.subscription(source) ?? record
    }

    /// The record a transaction identifier refers to: an original, or any transaction of a subscription.
    func ownOriginal(_ id: UInt64) -> UInt64 {
        if ledger.subscription(id) != nil { return id }
        return ledger.transaction(id)?.originalID ?? id
    }

    /// Expires a subscription now (`expireSubscription`): automatic renewal off, the period ends now,
    /// `EXPIRED` `VOLUNTARY`.
    public func expireSubscription(productID: String, account: String = "default") throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            var record = try subscription(productID: productID, account: account)
            guard record.state != .expired, record.state != .revoked else {
                throw .control(.invalidAction, "the subscription to \(productID) has already \(record.state.rawValue)")
            }
            let now = clock.now()
            // The period ends first, so both notifications signed at this instant carry the same
            // transaction (a backend cannot tell which of two views signed at one millisecond is newer).
            record.expirationDate = now
            if var latest = latestTransaction(of: record, in: change), (latest.expirationDate ?? now) > now {
                latest.expirationDate = now
                change.record(latest)
                try enqueueUpdateForAllDevices(latest, kind: .subscriptionChange, at: now, change: &change)
            }
            if record.autoRenewEnabled {
                record.autoRenewEnabled = false
                try appendSubscriptionNotification(.didChangeRenewalStatus, subtype: .autoRenewDisabled, record: record,
                                                   transaction: latestTransaction(of: record, in: change), change: &change)
            }
            try expire(record, intent: .customerCancelled, subtype: .voluntary, at: now, change: &change)
        }
    }

    /// Ends the current period now and renews (`forceRenewalOfSubscription`): automatic renewal back
    /// on, a pending price increase cleared; with billing retry on, the renewal fails as any would.
    public func forceRenewalOfSubscription(productID: String, account: String = "default") throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            var record = try subscription(productID: productID, account: account)
            guard record.state == .subscribed else {
                throw .control(.invalidAction, "the subscription to \(productID) is \(record.state.rawValue), not subscribed")
            }
            let now = clock.now()
            record.autoRenewEnabled = true
            record.priceIncrease = nil
            if var latest = latestTransaction(of: record, in: change), (latest.expirationDate ?? now) > now {
                latest.expirationDate = now
                change.record(latest)
            }
            record.expirationDate = now
            record.anchorDate = now
            record.periodsSinceAnchor = 0
            change.ledger.subscriptions[record.originalTransactionID] = record
            try renew(record, at: now, change: &change)
        }
    }

    /// Asks the customer to agree to a price increase (`PRICE_INCREASE` `PENDING`); sent again on every request.
    public func requestPriceIncreaseConsent(transactionID: UInt64) throws(AppStoreError) {
        try changePriceIncrease(transactionID, to: .pending, notify: .pending)
    }

    /// The customer agrees to the price increase (`PRICE_INCREASE` `ACCEPTED`).
    public func consentToPriceIncrease(transactionID: UInt64) throws(AppStoreError) {
        try changePriceIncrease(transactionID, to: .agreed, notify: .accepted)
    }

    /// The customer declines: automatic renewal off; the subscription expires at the period's end
    /// with `EXPIRED` `PRICE_INCREASE`.
    public func declinePriceIncrease(transactionID: UInt64) throws(AppStoreError) {
        try changePriceIncrease(transactionID, to: .declined, notify: nil)
    }

    private func changePriceIncrease(_ id: UInt64, to status: SubscriptionRecord.PriceIncrease, notify subtype: Subtype?) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in try changePriceIncrease(id, to: status, notify: subtype, change: &change) }
    }

    /// The customer's answer to a price increase, within a unit of work.
    func changePriceIncrease(_ id: UInt64, to status: SubscriptionRecord.PriceIncrease, notify subtype: Subtype?,
                             change: inout Change) throws(AppStoreError) {
        do {
            guard var record = ledger.subscription(ownOriginal(id)) else {
                throw .control(.noSubscriptionFound, "transaction \(id) has no subscription")
            }
            guard record.familySourceID == nil else { throw sharedCopyRefusal(record) }
            guard record.state == .subscribed || record.state == .inGracePeriod || record.state == .inBillingRetryPeriod else {
                throw .control(.invalidAction, "subscription \(record.originalTransactionID) has \(record.state.rawValue)")
            }
            if status != .pending, record.priceIncrease != .pending {
                throw .control(.invalidAction, "subscription \(record.originalTransactionID) has no price increase waiting for consent")
            }
            record.priceIncrease = status
            let latest = latestTransaction(of: record, in: change)
            if status == .declined, record.autoRenewEnabled {
                record.autoRenewEnabled = false
                try appendSubscriptionNotification(.didChangeRenewalStatus, subtype: .autoRenewDisabled, record: record, transaction: latest, change: &change)
            }
            change.ledger.subscriptions[record.originalTransactionID] = record
            if let subtype { try appendSubscriptionNotification(.priceIncrease, subtype: subtype, record: record, transaction: latest, change: &change) }
            try enqueueStatusUpdates(record, change: &change)
            if status == .pending { enqueueMessage(.priceIncreaseConsent, about: record, change: &change) }
        }
    }

    /// Extends a subscription's renewal date by whole days, as the App Store Server API does
    /// (`RENEWAL_EXTENDED`): at most 90 days per request and two extensions in 365 days.
    ///
    /// - Returns: The subscription after the extension.
    @discardableResult
    public func extendRenewalDate(originalTransactionID: UInt64, days: Int) throws(AppStoreError) -> SubscriptionRecord {
        try writing { (change) throws(AppStoreError) in
            guard let record = ledger.subscription(ownOriginal(originalTransactionID)) else {
                throw .control(.noSubscriptionFound, "transaction \(originalTransactionID) has no subscription")
            }
            return try extendRenewal(record, days: days, change: &change)
        }
    }

    /// The limits Apple puts on extensions.
    static let maximumExtensionDays = 90
    static let extensionsPerYear = 2

    func extendRenewal(_ record: SubscriptionRecord, days: Int, change: inout Change) throws(AppStoreError) -> SubscriptionRecord {
        var record = record
        guard (1...Self.maximumExtensionDays).contains(days) else { throw .control(.invalidAction, "an extension is 1 to 90 days, not \(days)") }
        guard record.familySourceID == nil else { throw sharedCopyRefusal(record) }
        guard record.state == .subscribed else {
            throw .control(.invalidAction, "only an active subscription can be extended; this one is \(record.state.rawValue)")
        }
        let now = clock.now()
        let recent = (record.renewalExtensions ?? []).filter { $0 > now.addingTimeInterval(-365 * 86_400) }
        guard recent.count < Self.extensionsPerYear else {
            throw .control(.invalidAction, "subscription \(record.originalTransactionID) was already extended twice in the last 365 days")
        }
        let extended = SubscriptionPeriod.days(days).date(byAdding: 1, to: record.expirationDate)
        let shift = extended.timeIntervalSince(record.expirationDate)
        record.expirationDate = extended
        record.anchorDate = record.anchorDate.addingTimeInterval(shift)
        record.renewalExtensions = recent + [now]
        if var latest = latestTransaction(of: record, in: change) {
            latest.expirationDate = extended
            change.record(latest)
            try enqueueUpdateForAllDevices(latest, kind: .subscriptionChange, at: now, change: &change)
        }
        change.ledger.subscriptions[record.originalTransactionID] = record
        try appendSubscriptionNotification(.renewalExtended, subtype: nil, record: record, transaction: latestTransaction(of: record, in: change),
                                           change: &change)
        try enqueueStatusUpdates(record, change: &change)
        try syncFamily(record, newTransaction: nil, change: &change)
        return record
    }
}

extension SubscriptionRecord {
    /// A family member's copy as it follows the purchaser's subscription `source`: its plan, renewal
    /// and state, dates and expiration intent are the purchaser's; its identifiers and account its own.
    func following(_ source: SubscriptionRecord) -> SubscriptionRecord {
        var copy = self
        copy.productID = source.productID
        copy.autoRenewProductID = source.autoRenewProductID
        copy.autoRenewEnabled = source.autoRenewEnabled
        copy.state = source.state
        copy.expirationDate = source.expirationDate
        copy.gracePeriodExpirationDate = source.gracePeriodExpirationDate
        copy.billingRetryEndDate = source.billingRetryEndDate
        copy.expirationIntent = source.expirationIntent
        return copy
    }
}
