import AppStoreModels
import AppStoreSigning
import Foundation
import StoreKitCatalog

extension SimulatedAppStore {
    /// The schedule periods follow: the time rate setting on a clock that runs (or stands in for one);
    /// real calendar lengths on a manual clock, where advancing time costs nothing.
    var schedule: RenewalSchedule {
        RenewalSchedule(timeRate: clock.followsTimeRate ? settings.timeRate : .realTime)
    }

    /// An account's own subscription record in a group (not a family member's copy).
    func ownSubscription(account: String, group: String, in change: Change? = nil) -> SubscriptionRecord? {
        if let change, let pending = change.ledger.subscriptions.values.first(where: {
            $0.account == account && $0.groupID == group && $0.familySourceID == nil
        }) { return pending }
        return ledger.subscriptions(SubscriptionQuery(account: account, groupID: group)).first { $0.familySourceID == nil }
    }

    /// Whether the account may have the introductory offer of a group: only if it never subscribed
    /// to any product of the group, so an introductory offer is used at most once per group.
    public func isEligibleForIntroOffer(groupID: String, account: String) throws(AppStoreError) -> Bool {
        try reading { introOfferEligibility(groupID: groupID, account: account) }
    }

    func introOfferEligibility(groupID: String, account: String) -> Bool {
        !ledger.transactions(TransactionQuery(account: account, subscriptionGroupID: groupID)).contains {
            ($0.isPurchased && $0.ownership == .purchased) || $0.state == .pendingApproval
        }
    }

    /// Whether an auto-renewable transaction is the entitled current period of its subscription.
    func isEntitled(_ transaction: LedgerTransaction) -> Bool {
        guard let record = ledger.subscription(transaction.originalID) else { return false }
        return record.latestTransactionID == transaction.id && record.state.isEntitled
    }

    // MARK: Buying

    /// How many periods a back-dated purchase may play up to now.
    static let backdatedPeriodLimit = 10_000

    func subscribe(_ request: PurchaseRequest, product: CatalogProduct, account: StoreAccount, device: StoreDevice?,
                   storefront: Storefront, inApp: Bool, change: inout Change) throws(AppStoreError) -> CommittedPurchase {
        let info = product.subscription!
        let now = clock.now()
        let start = request.purchaseDate ?? now
        guard start <= now else { throw .control(.invalidAction, "a purchase date cannot be in the future") }
        try StoreTimeRange.check(start, "the purchase date")
        if start < now {
            // Back-dating plays every period up to now in one purchase: bound that work before starting it.
            let period = schedule.end(of: info.period, count: 1, from: start).timeIntervalSince(start)
            let periods = now.timeIntervalSince(start) / max(period, 1)
            guard periods <= Double(Self.backdatedPeriodLimit) else {
                throw .control(.invalidAction, "a purchase back-dated to \(start.formatted(.iso8601)) would play \(Int(periods)) periods of \(product.id); at most \(Self.backdatedPeriodLimit)")
            }
        }
        if let record = ownSubscription(account: account.name, group: info.groupID),
           record.state != .expired, record.state != .revoked {
            return try changeProduct(record, to: product, request: request, account: account, device: device, inApp: inApp, change: &change)
        }
        let previous = ownSubscription(account: account.name, group: info.groupID)
        let billing = try billingPlan(request, of: product)
        var (offer, queued): (SubscriptionRecord.ActiveOffer?, SubscriptionRecord.ActiveOffer?) = (nil, nil)
        if billing?.planType == .monthly {
            guard request.offer == nil else {
                throw .purchase(.ineligibleForOffer, "subscription offers do not apply to the monthly billing plan of \(product.id)")
            }
        } else {
            (offer, queued) = try resolveOffer(request.offer, for: product, account: account.name, lapsed: previous != nil, inApp: inApp,
                                               appAccountToken: request.appAccountToken,
                                               eligibilityOverride: request.customOptions[PurchaseRequest.introductoryOfferEligibilityKey])
        }
        let state = initialState(inApp: inApp, account: account, request: request)
        if state == .pendingApproval, let waiting = waitingRequest(productID: product.id, account: account.name) {
            return .pending(transactionID: waiting.id, reason: .askToBuy)
        }
        let id = change.takeTransactionID()
        var transaction = LedgerTransaction(
            id: id, originalID: previous?.originalTransactionID ?? id, account: account.name, device: device?.name,
            productID: product.id, productKind: .autoRenewable, subscriptionGroupID: info.groupID, purchaseDate: start,
            originalPurchaseDate: start, expirationDate: nil, quantity: 1, ownership: .purchased, familySourceID: nil,
            webOrderLineItemID: nil, appAccountToken: request.appAccountToken, storefront: storefront,
            price: offer?.price ?? product.priceInMilliunits, reason: .purchase, offer: offer?.offer, state: state)
        transaction.appTransactionID = account.appTransactionID
        transaction.customPurchaseOptions = request.recordedCustomOptions
        transaction.billing = billing
        guard state == .purchased else {
            change.record(transaction)
            return .pending(transactionID: id, reason: state == .pendingApproval ? .askToBuy : .interrupted)
        }
        try startSubscription(&transaction, at: start, offer: offer, queuedOffer: queued, purchasingDevice: device,
                              updateKind: .purchase, change: &change)
        if request.purchaseDate != nil, start < now {
            try catchUpBackdated(originalTransactionID: transaction.originalID, behavior: request.renewalBehavior, now: now, change: &change)
        }
        let latest = change.ledger.transactions[transaction.id] ?? transaction
        return answer(latest, for: device, at: now)
    }

    /// Starts (or restarts) the subscription of a completed purchase: its first period, its record,
    /// delivery, `SUBSCRIBED` and family copies.
    func startSubscription(_ transaction: inout LedgerTransaction, at start: Date, offer: SubscriptionRecord.ActiveOffer? = nil,
                           queuedOffer: SubscriptionRecord.ActiveOffer? = nil, purchasingDevice: StoreDevice? = nil,
                           updateKind: LedgerUpdate.Kind, change: inout Change) throws(AppStoreError) {
        guard let product = catalog().product(id: transaction.productID), let info = product.subscription else {
            throw .purchase(.productUnavailable, "no subscription \(transaction.productID) in the catalog")
        }
        var offer = offer
        if offer == nil, let applied = transaction.offer {
            offer = try activeOffer(for: applied, product: product)
        }
        let previous = ownSubscription(account: transaction.account, group: info.groupID, in: change)
        // Monthly billing of a commitment: a month's payment at a time, the commitment over the product's period.
        let monthly = monthlyPlan(of: transaction, product: product)
        let anchorPeriod = monthly != nil ? SubscriptionPeriod(value: 1, unit: .month) : offer?.period ?? info.period
        let periods = monthly != nil ? 1 : offer.map { $0.offer.discountType == .payAsYouGo ? 1 : $0.remainingPeriods } ?? 1
        let expiration = schedule.end(of: anchorPeriod, count: periods, from: start)
        let commitment = monthly.map { plan -> SubscriptionRecord.Commitment in
            let payment = NSDecimalNumber(decimal: plan.price * 1000).int64Value
            let total = SubscriptionRecord.Commitment.payments(in: info.period)
            return SubscriptionRecord.Commitment(
                paymentNumber: 1, totalPayments: total, start: start, end: schedule.end(of: info.period, count: 1, from: start),
                price: plan.commitmentPrice.map { NSDecimalNumber(decimal: $0 * 1000).int64Value } ?? payment * Int64(total), paymentPrice: payment)
        }
        transaction.originalID = previous?.originalTransactionID ?? transaction.originalID
        if let previous, let original = ledger.transaction(previous.originalTransactionID) {
            transaction.originalPurchaseDate = original.originalPurchaseDate
        }
        transaction.expirationDate = expiration
        transaction.webOrderLineItemID = change.takeWebOrderLineItemID()
        transaction.price = commitment?.paymentPrice ?? offer?.price ?? product.priceInMilliunits
        transaction.offer = offer?.offer
        transaction.subscriptionGroupID = info.groupID
        if let commitment { transaction.billing = commitment.billing }
        var recent = start
        if let previous, previous.expirationDate.addingTimeInterval(60 * 86_400) >= start { recent = previous.recentSubscriptionStartDate }
        var current = offer
        if current?.offer.discountType != .payAsYouGo { current?.remainingPeriods = 1 }
        var record = SubscriptionRecord(
            originalTransactionID: transaction.originalID, account: transaction.account, groupID: info.groupID, productID: product.id,
            autoRenewProductID: product.id, autoRenewEnabled: true, state: .subscribed, latestTransactionID: transaction.id,
            expirationDate: expiration, anchorDate: start, anchorPeriod: anchorPeriod, periodsSinceAnchor: periods,
            gracePeriodExpirationDate: nil, billingRetryEndDate: nil, expirationIntent: nil, priceIncrease: nil,
            currentOffer: current, queuedOffer: queuedOffer, recentSubscriptionStartDate: recent,
            appAccountToken: transaction.appAccountToken, familySourceID: nil)
        record.commitment = commitment
        change.record(transaction)
        change.ledger.subscriptions[record.originalTransactionID] = record
        try deliver(transaction, purchasingDevice: purchasingDevice, kind: updateKind, change: &change)
        // Redeeming a promotional offer or an offer code is OFFER_REDEEMED; an introductory or win-back
        // offer, or none, is SUBSCRIBED. Either way the subtype says first purchase or return.
        let redeemsOffer = [OfferType.promotionalOffer, .subscriptionOfferCode].contains(transaction.offer?.type ?? .introductoryOffer)
        try appendSubscriptionNotification(redeemsOffer ? .offerRedeemed : .subscribed, subtype: previous == nil ? .initialBuy : .resubscribe, record: record,
                                           transaction: transaction, change: &change)
        try enqueueStatusUpdates(record, change: &change)
        try syncFamily(record, newTransaction: transaction, change: &change)
    }

    /// Queues a transaction for every device of the account but the one that asked (which gets it as
    /// the purchase's answer).
    func deliver(_ transaction: LedgerTransaction, purchasingDevice: StoreDevice?, kind: LedgerUpdate.Kind,
                 change: inout Change) throws(AppStoreError) {
        let now = clock.now()
        for device in devices(of: transaction.account, including: change) where device.name != purchasingDevice?.name {
            try enqueueUpdate(transaction, for: device, kind: kind, at: now, change: &change)
        }
    }

    // MARK: Changing products inside a group

    /// A purchase in a group where the account already subscribes: the same product (nothing to do,
    /// or cancelling a pending downgrade), an upgrade or same-length crossgrade (immediate), or a
    /// downgrade or different-length crossgrade (at the next renewal).
    ///
    /// Changing to another product is buying a new item, so under Ask to Buy it waits for a parent as
    /// any purchase does (docs/ask-to-buy.md): the answer is pending and nothing changes until the
    /// approval, which makes the change then (``approveChange(_:record:change:)``).
    private func changeProduct(_ record: SubscriptionRecord, to product: CatalogProduct, request: PurchaseRequest, account: StoreAccount,
                               device: StoreDevice?, inApp: Bool, change: inout Change) throws(AppStoreError) -> CommittedPurchase {
        guard let current = ledger.transaction(record.latestTransactionID) else {
            throw .control(.invalidAction, "the subscription's current transaction is missing")
        }
        let offer = try changeOffer(request, to: product, record: record, inApp: inApp)
        let state = initialState(inApp: inApp, account: account, request: request)
        if product.id != record.productID, state != .purchased {
            if state == .pendingApproval, let waiting = waitingRequest(productID: product.id, account: record.account) {
                return .pending(transactionID: waiting.id, reason: .askToBuy)
            }
            let id = change.takeTransactionID()
            var pending = LedgerTransaction(
                id: id, originalID: record.originalTransactionID, account: record.account, device: device?.name, productID: product.id,
                productKind: .autoRenewable, subscriptionGroupID: record.groupID, purchaseDate: clock.now(),
                originalPurchaseDate: current.originalPurchaseDate, expirationDate: nil, quantity: 1, ownership: .purchased,
                familySourceID: nil, webOrderLineItemID: nil, appAccountToken: request.appAccountToken ?? record.appAccountToken,
                storefront: Storefront(code: current.storefront) ?? .unitedStates, price: offer?.price ?? product.priceInMilliunits,
                reason: .purchase, offer: offer?.offer, state: state)
            pending.appTransactionID = current.appTransactionID
            pending.customPurchaseOptions = request.recordedCustomOptions
            change.record(pending)
            return .pending(transactionID: id, reason: state == .pendingApproval ? .askToBuy : .interrupted)
        }
        return try applyChange(record, to: product, offer: offer, appAccountToken: request.appAccountToken, device: device,
                               approvedID: nil, customOptions: request.recordedCustomOptions, change: &change)
    }

    /// A parent approved a plan change, or its interruption was resolved: the change happens now, as
    /// it would have when asked for. An upgrade's transaction is the approved one; a downgrade or a
    /// crossgrade to another length only changes what renews next, so the request, which never became
    /// a purchase of its own, leaves the ledger. When the subscription ended in the meantime, the
    /// approval is a new subscription (`false`: the caller starts it).
    func approveChange(_ pending: LedgerTransaction, change: inout Change) throws(AppStoreError) -> Bool {
        guard let group = pending.subscriptionGroupID, let record = ownSubscription(account: pending.account, group: group, in: change),
              record.state != .expired, record.state != .revoked, record.originalTransactionID == pending.originalID,
              let product = catalog().product(id: pending.productID)
        else { return false }
        let offer = try pending.offer.flatMap { (applied) throws(AppStoreError) in try activeOffer(for: applied, product: product) }
        let device = pending.device.flatMap { storedDevice($0, in: change) }
        _ = try applyChange(record, to: product, offer: offer, appAccountToken: pending.appAccountToken, device: device,
                            approvedID: pending.id, customOptions: pending.customPurchaseOptions, change: &change)
        return true
    }

    /// The offer a plan change asks for, checked for a current subscriber.
    private func changeOffer(_ request: PurchaseRequest, to product: CatalogProduct, record: SubscriptionRecord,
                             inApp: Bool) throws(AppStoreError) -> SubscriptionRecord.ActiveOffer? {
        guard let newInfo = product.subscription else { throw .control(.invalidAction, "\(product.id) is not a subscription") }
        var offer: SubscriptionRecord.ActiveOffer?
        if let requested = request.offer {
            switch requested {
            case .introductory: throw .purchase(.ineligibleForOffer, "introductory offers are for new subscribers of the group")
            case .winBack: throw .purchase(.ineligibleForOffer, "win-back offers are for customers whose subscription expired")
            case .code(let reference):
                guard let code = newInfo.codeOffers.first(where: { $0.id == reference }) else {
                    throw .purchase(.invalidOfferIdentifier, "no offer code \(reference) for \(product.id)")
                }
                guard code.eligibility.isEmpty || code.eligibility.contains(.existing) else {
                    throw .purchase(.ineligibleForOffer, "offer code \(reference) is not for current subscribers")
                }
                offer = try activeOffer(for: code, product: product)
            case .promotional(let id, let signature):
                offer = try promotionalOffer(id: id, signature: signature, product: product, account: record.account, inApp: inApp,
                                             appAccountToken: request.appAccountToken)
            }
        }
        return offer
    }

    /// Makes a plan change: immediate for an upgrade or a same-length crossgrade, at the next renewal
    /// otherwise. `approvedID` is the pending request an approval completes.
    private func applyChange(_ record: SubscriptionRecord, to product: CatalogProduct, offer: SubscriptionRecord.ActiveOffer?,
                             appAccountToken: UUID?, device: StoreDevice?, approvedID: UInt64?, customOptions: [String: String]?,
                             change: inout Change) throws(AppStoreError) -> CommittedPurchase {
        var record = record
        let now = clock.now()
        guard let current = storedTransaction(record.latestTransactionID, in: change),
              let currentProduct = catalog().product(id: record.productID)?.subscription, let newInfo = product.subscription
        else { throw .control(.invalidAction, "the subscription's current transaction is missing") }
        let sameProduct = product.id == record.productID
        let immediate = !sameProduct && (newInfo.groupLevel < currentProduct.groupLevel
            || (newInfo.groupLevel == currentProduct.groupLevel && newInfo.period == currentProduct.period))
        if immediate {
            var old = current
            old.isUpgraded = true
            change.record(old)
            try enqueueUpdateForAllDevices(old, kind: .subscriptionChange, at: now, change: &change)
            let id = approvedID ?? change.takeTransactionID()
            let anchorPeriod = offer?.period ?? newInfo.period
            let expiration = schedule.end(of: anchorPeriod, from: now)
            var transaction = LedgerTransaction(
                id: id, originalID: record.originalTransactionID, account: record.account, device: device?.name, productID: product.id,
                productKind: .autoRenewable, subscriptionGroupID: record.groupID, purchaseDate: now,
                originalPurchaseDate: current.originalPurchaseDate, expirationDate: expiration, quantity: 1, ownership: .purchased,
                familySourceID: nil, webOrderLineItemID: change.takeWebOrderLineItemID(),
                appAccountToken: appAccountToken ?? record.appAccountToken,
                storefront: Storefront(code: current.storefront) ?? .unitedStates,
                price: offer?.price ?? product.priceInMilliunits, reason: .purchase, offer: offer?.offer, state: .purchased)
            transaction.appTransactionID = current.appTransactionID
            transaction.customPurchaseOptions = customOptions
            record.productID = product.id
            record.autoRenewProductID = product.id
            record.autoRenewEnabled = true
            record.state = .subscribed
            record.latestTransactionID = id
            record.expirationDate = expiration
            record.anchorDate = now
            record.anchorPeriod = anchorPeriod
            record.periodsSinceAnchor = 1
            record.currentOffer = offer
            record.gracePeriodExpirationDate = nil
            record.billingRetryEndDate = nil
            record.expirationIntent = nil
            change.record(transaction)
            change.ledger.subscriptions[record.originalTransactionID] = record
            // An approval reaches every device; a change made in the app answers its own device.
            try deliver(transaction, purchasingDevice: approvedID == nil ? device : nil, kind: approvedID == nil ? .purchase : .approval, change: &change)
            try appendSubscriptionNotification(offer != nil ? .offerRedeemed : .didChangeRenewalPref, subtype: .upgrade, record: record, transaction: transaction, change: &change)
            try enqueueStatusUpdates(record, change: &change)
            try syncFamily(record, newTransaction: transaction, change: &change)
            return answer(transaction, for: device, at: now)
        }
        if let approvedID { change.ledger.deletedTransactions.insert(approvedID) }
        let previousRenewalProduct = record.autoRenewProductID
        record.autoRenewProductID = product.id
        if let offer { record.queuedOffer = offer }
        change.ledger.subscriptions[record.originalTransactionID] = record
        if offer != nil {
            try appendSubscriptionNotification(.offerRedeemed, subtype: sameProduct ? nil : .downgrade, record: record, transaction: current, change: &change)
        } else if previousRenewalProduct != product.id {
            try appendSubscriptionNotification(.didChangeRenewalPref, subtype: sameProduct ? nil : .downgrade, record: record,
                                               transaction: current, change: &change)
        }
        try enqueueStatusUpdates(record, change: &change)
        return answer(current, for: device, at: now)
    }

    // MARK: Billing plans

    /// The billing plan a purchase asked for (`Product.PurchaseOption.billingPlanType(_:)`), checked
    /// against the product's enabled plans; `nil` when it asked for none.
    private func billingPlan(_ request: PurchaseRequest, of product: CatalogProduct) throws(AppStoreError) -> LedgerTransaction.Billing? {
        guard let asked = request.billingPlanType else { return nil }
        let type = BillingPlanType(rawValue: asked)
        guard product.subscription?.billingPlans.contains(where: { $0.type == type && $0.isEnabled }) == true else {
            throw .purchase(.productUnavailable, "\(product.id) has no enabled \(asked) billing plan")
        }
        return LedgerTransaction.Billing(planType: type)
    }

    /// The monthly billing plan a transaction was bought under, if any.
    func monthlyPlan(of transaction: LedgerTransaction, product: CatalogProduct) -> CatalogProduct.BillingPlan? {
        guard transaction.billing?.planType == .monthly else { return nil }
        return product.subscription?.billingPlans.first { $0.type == .monthly && $0.isEnabled }
    }

    // MARK: Offers

    /// The offer a new or lapsed subscriber gets, and an offer code stacked after the introductory offer.
    ///
    /// `eligibilityOverride` is a compact JWS of `introductoryOfferEligibility(compactJWS:)`: signed
    /// with the store's offer key for this product, it decides eligibility for the introductory offer
    /// in place of the account's history (`allowIntroductoryOffer`).
    private func resolveOffer(_ requested: PurchaseOffer?, for product: CatalogProduct, account: String, lapsed: Bool, inApp: Bool,
                              appAccountToken: UUID?,
                              eligibilityOverride: String? = nil) throws(AppStoreError) -> (SubscriptionRecord.ActiveOffer?, SubscriptionRecord.ActiveOffer?) {
        let info = product.subscription!
        let introEligible = try eligibilityOverride.map { (jws) throws(AppStoreError) in try introductoryOfferEligibility(jws, product: product) }
            ?? introOfferEligibility(groupID: info.groupID, account: account)
        let intro = try info.introductoryOffer.flatMap { (offer) throws(AppStoreError) in try activeOffer(for: offer, product: product) }
        switch requested {
        case nil:
            return (introEligible ? intro : nil, nil)
        case .introductory?:
            guard let intro else { throw .purchase(.invalidOfferIdentifier, "\(product.id) has no introductory offer") }
            guard introEligible else { throw .purchase(.ineligibleForOffer, "the account already subscribed in group \(info.groupID)") }
            return (intro, nil)
        case .promotional(let id, let signature)?:
            guard lapsed else {
                throw .purchase(.ineligibleForOffer, "promotional offers are for current and former subscribers of group \(info.groupID)")
            }
            return (try promotionalOffer(id: id, signature: signature, product: product, account: account, inApp: inApp,
                                         appAccountToken: appAccountToken), nil)
        case .code(let reference)?:
            guard let code = info.codeOffers.first(where: { $0.id == reference }) else {
                throw .purchase(.invalidOfferIdentifier, "no offer code \(reference) for \(product.id)")
            }
            let eligibility: CatalogOffer.Eligibility = lapsed ? .expired : .new
            guard code.eligibility.isEmpty || code.eligibility.contains(eligibility) else {
                throw .purchase(.ineligibleForOffer, "offer code \(reference) is not for \(eligibility.rawValue) subscribers")
            }
            let codeOffer = try activeOffer(for: code, product: product)
            if code.isStackable, introEligible, let intro { return (intro, codeOffer) }
            return (codeOffer, nil)
        case .winBack(let id)?:
            guard let offer = info.winBackOffers.first(where: { $0.id == id }) else {
                throw .purchase(.invalidOfferIdentifier, "no win-back offer \(id) for \(product.id)")
            }
            guard lapsed, offer.isEligible else {
                throw .purchase(.ineligibleForOffer, "win-back offer \(id) is only for customers whose subscription expired")
            }
            return (try activeOffer(for: offer, product: product), nil)
        }
    }

    /// Checks a promotional offer's identifier and signature.
    private func promotionalOffer(id: String, signature: PromotionalOfferSignatureInput?, product: CatalogProduct, account: String,
                                  inApp: Bool, appAccountToken: UUID?) throws(AppStoreError) -> SubscriptionRecord.ActiveOffer {
        guard let offer = product.subscription?.promotionalOffers.first(where: { $0.id == id }) else {
            throw .purchase(.invalidOfferIdentifier, "no promotional offer \(id) for \(product.id)")
        }
        switch signature {
        case nil:
            guard !inApp else { throw .purchase(.missingOfferParameters, "promotional offer \(id) needs a signature") }
        case .legacy(let keyID, let nonce, let timestamp, let signature)?:
            let (key, expectedKeyID) = try offerSigningKey()
            guard keyID == expectedKeyID else { throw .purchase(.invalidOfferSignature, "key \(keyID) is not the store's offer key \(expectedKeyID)") }
            let message = PromotionalOfferSignature(
                bundleId: identity.bundleId, keyId: keyID, productIdentifier: product.id, subscriptionOfferID: id,
                applicationUsername: appAccountToken?.uuidString.lowercased() ?? "", nonce: nonce, timestamp: timestamp)
            guard message.isValidSignature(signature, publicKey: key) else {
                throw .purchase(.invalidOfferSignature, "the signature of promotional offer \(id) does not verify")
            }
        case .jws(let jws)?:
            let (key, keyID) = try offerSigningKey()
            let claims: OfferSignatureClaims
            do {
                claims = try OfferSignatureVerifier(publicKey: key, keyId: keyID, bundleId: identity.bundleId)
                    .verify(jws, audience: OfferSignatureClaims.promotionalOfferAudience)
            } catch {
                throw .purchase(.invalidOfferSignature, "promotional offer \(id): \(error)")
            }
            guard claims.productId == product.id, claims.offerIdentifier == id else {
                throw .purchase(.invalidOfferSignature, "the signature is for \(claims.productId)/\(claims.offerIdentifier ?? "-"), not \(product.id)/\(id)")
            }
        }
        return try activeOffer(for: offer, product: product)
    }

    /// What an introductory-offer eligibility signature decides for `product`: checked as StoreKit
    /// checks a promotional offer's JWS (the store's offer key, the app's bundle ID, its audience), then
    /// its `allowIntroductoryOffer`.
    private func introductoryOfferEligibility(_ jws: String, product: CatalogProduct) throws(AppStoreError) -> Bool {
        let (key, keyID) = try offerSigningKey()
        let claims: OfferSignatureClaims
        do {
            claims = try OfferSignatureVerifier(publicKey: key, keyId: keyID, bundleId: identity.bundleId)
                .verify(jws, audience: OfferSignatureClaims.introductoryOfferEligibilityAudience)
        } catch {
            throw .purchase(.invalidOfferSignature, "introductory offer eligibility: \(error)")
        }
        guard claims.productId == product.id else {
            throw .purchase(.invalidOfferSignature, "the eligibility signature is for \(claims.productId), not \(product.id)")
        }
        guard let allowed = claims.allowIntroductoryOffer else {
            throw .purchase(.missingOfferParameters, "the eligibility signature has no allowIntroductoryOffer")
        }
        return allowed
    }

    /// The public half of the configuration's promotional-offer key, and its identifier.
    func offerSigningKey() throws(AppStoreError) -> (P256PublicKey, String) {
        guard let pair = configuration.subscriptionOffersKeyPair, let id = pair.id, let text = pair.privateKey,
              let key = try? P256PrivateKey(pemRepresentation: text)
        else { throw .purchase(.invalidOfferSignature, "the configuration has no usable subscription offers key to check signatures with") }
        return (key.publicKey, id)
    }

    /// A catalog offer as it applies to a subscription.
    func activeOffer(for offer: CatalogOffer, product: CatalogProduct) throws(AppStoreError) -> SubscriptionRecord.ActiveOffer {
        let count = offer.paymentMode == .payAsYouGo ? offer.periodCount : 1
        let whole = offer.paymentMode == .payAsYouGo
            ? SubscriptionPeriod(value: offer.period.value * offer.periodCount, unit: offer.period.unit)
            : SubscriptionPeriod(value: offer.period.value * max(1, offer.periodCount), unit: offer.period.unit)
        let period = offer.paymentMode == .payAsYouGo ? offer.period : whole
        let price = NSDecimalNumber(decimal: offer.price * 1000).int64Value
        return SubscriptionRecord.ActiveOffer(
            offer: LedgerTransaction.Offer(type: offer.kind.offerType, id: offer.id, discountType: offer.paymentMode.discountType, period: whole.iso8601),
            price: price, period: period, remainingPeriods: count)
    }

    /// Rebuilds an offer recorded on a pending transaction.
    func activeOffer(for recorded: LedgerTransaction.Offer, product: CatalogProduct) throws(AppStoreError) -> SubscriptionRecord.ActiveOffer? {
        guard let info = product.subscription else { return nil }
        let candidates: [CatalogOffer]
        switch recorded.type {
        case .introductoryOffer: candidates = info.introductoryOffer.map { [$0] } ?? []
        case .promotionalOffer: candidates = info.promotionalOffers
        case .subscriptionOfferCode: candidates = info.codeOffers
        default: candidates = info.winBackOffers
        }
        guard let offer = candidates.first(where: { recorded.type == .introductoryOffer || $0.id == recorded.id }) else { return nil }
        return try activeOffer(for: offer, product: product)
    }
}
