import AppStoreModels
import BlockingWork
import Foundation
import StoreKitCatalog

extension SimulatedAppStore {
    /// Buys a product, as `product.purchase(options:)` does.
    ///
    /// Checks in StoreKit's order: a simulated purchase failure, the legacy fail-transactions switch,
    /// the product, the quantity, then Ask to Buy and interrupted purchases (which make the purchase
    /// pending). A non-consumable the account already owns is given back free, as the App Store
    /// does, without a new transaction. Everything the purchase changes (the transaction, family
    /// copies, other devices' updates, the `ONE_TIME_CHARGE` notification) is durable when this returns.
    ///
    /// Purchases in flight at once (a server's connections, an app's concurrent tasks) are committed
    /// together: the store commits the purchases waiting for it as one group, in one transaction,
    /// letting those on their way join first, and each caller returns only after that commit.
    /// Purchases by one account (or one Family Sharing group) never share a commit, so each sees the
    /// one before it exactly as if they had been committed one by one. Each caller signs its own
    /// transaction, on its own executor, once the commit is durable.
    public nonisolated func purchase(_ request: PurchaseRequest) async throws(AppStoreError) -> PurchaseOutcome {
        let outcome = await purchaseCommits.submit(request) { requests in await commitTogether(requests) }
        // Signed here, on the caller's executor: the purchases of a group are signed at once on every
        // core while the store's executor commits the next group.
        return try outcome.get().signed(with: storeSigner)
    }

    /// Commits purchases in one unit of work; a purchase whose account (or Family Sharing group) an
    /// earlier one in the group already touched gets `nil`, to be committed next.
    /// A failure of the whole unit is every purchase's outcome.
    private func commitTogether(_ requests: [PurchaseRequest]) -> [Result<CommittedPurchase, AppStoreError>?] {
        var touched: Set<String> = []
        do throws(AppStoreError) {
            return try writingTogether(requests, body: { (request, change) throws(AppStoreError) -> CommittedPurchase? in
                let account = storedAccount(request.account, in: change)
                let customer = account?.familyGroup.map { "family \($0)" } ?? "account \(request.account)"
                guard touched.insert(customer).inserted else { return nil }
                return try purchaseUnit(request, change: &change)
            })
        } catch {
            return Array(repeating: .failure(error), count: requests.count)
        }
    }

    /// A purchase made inside a unit of work.
    private func purchaseUnit(_ request: PurchaseRequest, change: inout Change) throws(AppStoreError) -> CommittedPurchase {
        let settings = self.settings
        if let failure = settings.simulatedErrors[.purchase] {
            if failure == .generic(.userCancelled) { return .userCancelled }
            throw failure.error(for: .purchase)
        }
        if settings.failTransactionsEnabled { throw settings.failureError.error(for: .purchase) }
        return try buy(request, inApp: true, change: &change)
    }

    /// Buys a product outside the app (`SKTestSession.buyProduct`, the transaction manager): no sheet,
    /// no Ask to Buy, optionally back-dated; the transaction reaches the account's devices through
    /// `Transaction.updates`.
    public func buyProduct(_ productID: String, account: String = "default", quantity: Int = 1, appAccountToken: UUID? = nil,
                           offer: PurchaseOffer? = nil, purchaseDate: Date? = nil,
                           renewalBehavior: RenewalBehavior = .renewUntilNow) throws(AppStoreError) -> LedgerTransaction {
        let request = PurchaseRequest(productID: productID, account: account, device: nil, quantity: quantity, appAccountToken: appAccountToken,
                                      offer: offer, purchaseDate: purchaseDate, renewalBehavior: renewalBehavior)
        let outcome = try writing { (change) throws(AppStoreError) in try buy(request, inApp: false, change: &change) }
        guard case .completed(let transaction, _, _, _) = outcome else {
            throw .control(.invalidAction, "the purchase did not complete")
        }
        return transaction
    }

    func buy(_ request: PurchaseRequest, inApp: Bool, change: inout Change) throws(AppStoreError) -> CommittedPurchase {
        let outcome = try buyAnswering(request, inApp: inApp, change: &change)
        // A purchase made in this very unit through a store view reaches its own device's updates too.
        if request.deliversThroughUpdates, case .completed(let transaction, let device?, let date, _) = outcome,
           change.ledger.transactions[transaction.id] != nil {
            try enqueueUpdate(transaction, for: device, kind: .purchase, at: date, change: &change)
        }
        return outcome
    }

    private func buyAnswering(_ request: PurchaseRequest, inApp: Bool, change: inout Change) throws(AppStoreError) -> CommittedPurchase {
        let (account, device) = try register(account: request.account, device: request.device, in: &change)
        guard !inApp || account.purchasesAllowed else {
            throw .purchase(.purchaseNotAllowed, "in-app purchases are restricted for account \(account.name)")
        }
        let storefront = self.storefront(of: account)
        guard let product = catalog(storefront: storefront.countryCode).product(id: request.productID) else {
            throw .purchase(.productUnavailable, "no product \(request.productID) in the catalog")
        }
        guard !settings.unavailableProducts.contains(product.id) else {
            throw .purchase(.productUnavailable, "\(product.id) is not for sale")
        }
        guard request.purchaseDate == nil || product.kind == .autoRenewable else {
            throw .control(.invalidAction, "a purchase date applies to auto-renewable subscriptions (their periods renew up to now); \(product.id) is \(product.kind.rawValue)")
        }
        let maximumQuantity = product.kind == .consumable ? 10 : 1
        guard (1...maximumQuantity).contains(request.quantity) else {
            throw .purchase(.invalidQuantity, "\(product.kind.rawValue) \(product.id) can be bought \(maximumQuantity == 1 ? "once at a time" : "1 to \(maximumQuantity) at a time"), not \(request.quantity)")
        }
        guard product.kind != .autoRenewable else {
            try spendOfferSignature(request.offer, change: &change)
            return try subscribe(request, product: product, account: account, device: device, storefront: storefront,
                                 inApp: inApp, change: &change)
        }
        if product.kind == .nonConsumable, let owned = ownedTransaction(productID: product.id, account: account.name) {
            return answer(owned, for: device, at: clock.now())
        }
        let now = clock.now()
        let state = initialState(inApp: inApp, account: account, request: request)
        if state == .pendingApproval, let waiting = waitingRequest(productID: product.id, account: account.name) {
            return .pending(transactionID: waiting.id, reason: .askToBuy)
        }
        let id = change.takeTransactionID()
        var transaction = LedgerTransaction(
            id: id, originalID: id, account: account.name, device: device?.name, productID: product.id, productKind: product.kind,
            subscriptionGroupID: nil, purchaseDate: now, originalPurchaseDate: now, expirationDate: nil, quantity: request.quantity,
            ownership: .purchased, familySourceID: nil, webOrderLineItemID: nil, appAccountToken: request.appAccountToken,
            storefront: storefront, price: product.priceInMilliunits * Int64(request.quantity), reason: .purchase, offer: nil, state: state)
        transaction.appTransactionID = account.appTransactionID
        transaction.customPurchaseOptions = request.recordedCustomOptions
        change.record(transaction)
        guard state == .purchased else {
            return .pending(transactionID: id, reason: state == .pendingApproval ? .askToBuy : .interrupted)
        }
        try completePurchase(transaction, purchasingDevice: device, updateKind: .purchase, at: now, change: &change)
        return answer(transaction, for: device, at: now)
    }

    /// A request for the product that waits for a parent's approval: asking again for an item already
    /// asked for makes no second request, a consumable's included. Apple consolidates repeated Ask to
    /// Buy requests into the one waiting, and approving it completes one purchase.
    func waitingRequest(productID: String, account: String) -> LedgerTransaction? {
        ledger.transactions(TransactionQuery(account: account, productID: productID)).last { $0.state == .pendingApproval }
    }

    /// How a new purchase starts: waiting for a parent (Ask to Buy), interrupted, or purchased.
    /// Purchases outside the app (the transaction manager) always complete.
    /// A Sandbox store also honours a purchase's `simulatesAskToBuyInSandbox`, as Apple's sandbox does.
    func initialState(inApp: Bool, account: StoreAccount, request: PurchaseRequest) -> LedgerTransaction.State {
        guard inApp else { return .purchased }
        let settings = self.settings
        if settings.askToBuyEnabled || account.askToBuy { return .pendingApproval }
        if request.simulatesAskToBuyInSandbox, identity.environment == .sandbox { return .pendingApproval }
        return settings.interruptedPurchasesEnabled ? .interrupted : .purchased
    }

    /// Everything that follows a completed one-time purchase: delivery to the account's other devices
    /// (or all of them when no device bought it), family copies, and the server notification. The
    /// purchasing device gets the transaction as the purchase's answer, not through its updates.
    func completePurchase(_ transaction: LedgerTransaction, purchasingDevice: StoreDevice?, updateKind: LedgerUpdate.Kind,
                          at now: Date, change: inout Change) throws(AppStoreError) {
        try deliver(transaction, purchasingDevice: purchasingDevice, kind: updateKind, change: &change)
        try shareWithFamily(transaction, at: now, change: &change)
        try appendNotification(.oneTimeCharge, subtype: nil, transaction: transaction, at: now, change: &change)
    }

    /// The account's current purchase of a non-consumable, its own or a family member's, if not revoked.
    func ownedTransaction(productID: String, account: String) -> LedgerTransaction? {
        ledger.transactions(TransactionQuery(account: account, productID: productID, entitlementCandidatesOnly: true, newestFirst: true)).first {
            $0.isPurchased && !$0.isRevoked
        }
    }

    /// A completed purchase's answer: the transaction, to be signed for `device` at `date`, with the
    /// simulated verification failure in force.
    func answer(_ transaction: LedgerTransaction, for device: StoreDevice?, at date: Date) -> CommittedPurchase {
        .completed(transaction, for: device, at: date, verificationFailure: verificationFailure)
    }

    /// The simulated verification failure in force, if any.
    var verificationFailure: VerificationErrorCode? {
        if case .verification(let code)? = settings.simulatedErrors[.verification] { return code }
        return nil
    }

    func signed(_ transaction: LedgerTransaction, for device: StoreDevice?) throws(AppStoreError) -> SignedTransaction {
        SignedTransaction(transaction: transaction, jws: try sign(transaction, for: device, at: clock.now()),
                          simulatedVerificationFailure: verificationFailure)
    }

    // MARK: Accounts and devices

    /// The account and device of a request, registering them (in `change`) on first use.
    func register(account name: String, device deviceName: String?, in change: inout Change) throws(AppStoreError) -> (StoreAccount, StoreDevice?) {
        // Names are kept in Unicode's composed form (NFC): "café" typed either way is one account.
        let name = name.ledgerName
        let deviceName = deviceName?.ledgerName
        guard !name.isEmpty else { throw .control(.invalidAction, "an account needs a name") }
        let account: StoreAccount
        if let existing = storedAccount(name, in: change) {
            account = existing
        } else {
            account = StoreAccount(name: name, appTransactionID: change.takeAppTransactionID(), originalPurchaseDate: clock.now(),
                                   originalApplicationVersion: identity.originalApplicationVersion)
            change.ledger.accounts[name] = account
        }
        guard let deviceName else { return (account, nil) }
        guard !deviceName.isEmpty else { throw .control(.invalidAction, "a device needs a name") }
        if let device = storedDevice(deviceName, in: change) {
            guard device.account == name else {
                throw .control(.invalidAction, "device \(deviceName) is signed in to account \(device.account), not \(name)")
            }
            return (account, device)
        }
        let device = StoreDevice(name: deviceName, account: name, deviceVerificationID: identifiers())
        change.ledger.devices[deviceName] = device
        return (account, device)
    }

    /// The devices of an account, counting ones registered in `change`.
    func devices(of account: String, including change: Change) -> [StoreDevice] {
        var all = Dictionary(ledger.devices(account: account).map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        for (name, device) in change.ledger.devices { all[name] = device }
        return all.values.filter { $0.account == account }.sorted { $0.name < $1.name }
    }

    // MARK: Feed and outbox

    /// Queues a transaction, signed for the device now, in the device's update feed.
    func enqueueUpdate(_ transaction: LedgerTransaction, for device: StoreDevice, kind: LedgerUpdate.Kind, at date: Date,
                       change: inout Change) throws(AppStoreError) {
        let sequence = change.counters.nextUpdateSequence
        change.counters.nextUpdateSequence += 1
        change.ledger.appendedUpdates.append(LedgerUpdate(
            sequence: sequence, device: device.name, transactionID: transaction.id, kind: kind,
            signedTransaction: try sign(transaction, for: device, at: date), date: date))
    }

    /// Queues a transaction in the feed of every device of its account.
    func enqueueUpdateForAllDevices(_ transaction: LedgerTransaction, kind: LedgerUpdate.Kind, at date: Date,
                                    change: inout Change) throws(AppStoreError) {
        for device in devices(of: transaction.account, including: change) {
            try enqueueUpdate(transaction, for: device, kind: kind, at: date, change: &change)
        }
    }

    /// Appends an App Store Server Notification V2 to the outbox: its content now, signed when read.
    func appendNotification(_ type: NotificationTypeV2, subtype: Subtype?, transaction: LedgerTransaction?,
                            renewalInfo: JWSRenewalInfoDecodedPayload? = nil, status: Status? = nil,
                            consumptionRequestReason: ConsumptionRequestReason? = nil, summary: Summary? = nil,
                            at date: Date, change: inout Change) throws(AppStoreError) {
        // Every notification about an auto-renewable subscription carries its status and renewal info,
        // as Apple's do (CONSUMPTION_REQUEST, REFUND and a family REVOKE included).
        var renewalInfo = renewalInfo
        var status = status
        if type != .test, renewalInfo == nil || status == nil, let transaction, transaction.productKind == .autoRenewable,
           let record = storedSubscription(transaction.originalID, in: change) {
            if renewalInfo == nil { renewalInfo = self.renewalInfo(for: record, device: nil, at: date, in: change) }
            if status == nil { status = record.state.status }
        }
        var data = NotificationData()
        data.environment = identity.environment
        // Sandbox TEST notifications leave the app Apple ID out; every other one carries it (Apple's
        // verifiers require it in Production, TEST included).
        data.appAppleId = type == .test && identity.environment != .production ? nil : identity.appAppleId
        data.bundleId = identity.bundleId
        if type != .test {
            data.bundleVersion = identity.applicationVersion
            data.status = status
            data.consumptionRequestReason = consumptionRequestReason
        }
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationType = type
        payload.subtype = subtype
        payload.notificationUUID = identifiers().uuidString.lowercased()
        // A summary (the end of a mass extension) stands in place of `data`, as in Apple's payloads.
        if let summary { payload.summary = summary } else { payload.data = data }
        payload.version = "2.0"
        payload.signedDate = date
        let sequence = change.counters.nextNotificationSequence
        change.counters.nextNotificationSequence += 1
        // The content is committed now; it is signed when the outbox is read (see `signed(_:)`).
        var record = NotificationRecord(
            sequence: sequence, notificationUUID: payload.notificationUUID!, type: type, subtype: subtype,
            transactionID: transaction?.id, date: date, payload: payload,
            transaction: type == .test ? nil : transaction?.payload(identity: identity, signedDate: date),
            renewalInfo: type == .test ? nil : renewalInfo)
        // With a notification URL set, the first delivery attempt is due at once.
        if settings.notificationURL != nil { record.delivery.nextAttemptDate = date }
        change.ledger.appendedNotifications.append(record)
    }
}

extension SimulatedAppStore {
    /// How long a legacy promotional-offer signature is good for after its timestamp, as on the App Store.
    static let offerSignatureLifetime: Int64 = 86_400_000

    /// A legacy promotional-offer signature is good once, and for 24 hours from its timestamp (by the
    /// store's clock), as Apple's: its nonce is recorded with the purchase that uses it, and refused
    /// after that. Nonces are kept only as long as their signatures could still be used.
    func spendOfferSignature(_ offer: PurchaseOffer?, change: inout Change) throws(AppStoreError) {
        guard case .promotional(let id, .legacy(_, let nonce, let timestamp, _)?)? = offer else { return }
        let now = AppStoreJSON.milliseconds(from: clock.now())
        guard timestamp <= now + 300_000, now - timestamp <= Self.offerSignatureLifetime else {
            throw .purchase(.invalidOfferSignature, "the signature of promotional offer \(id) has timestamp \(timestamp); it is good for 24 hours, and the store's time is \(now) (milliseconds since 1970)")
        }
        let key = nonce.uuidString.lowercased()
        var spent: [String: Int64] = [:]
        if let text = change.ledger.meta[MetaKey.offerNonces] ?? ledger.meta(MetaKey.offerNonces) {
            spent = try Self.decode([String: Int64].self, text)
        }
        guard spent[key] == nil else {
            throw .purchase(.invalidOfferSignature, "the nonce \(key) of promotional offer \(id) was already used; a signature is good once")
        }
        spent = spent.filter { now - $0.value <= Self.offerSignatureLifetime }
        spent[key] = timestamp
        change.ledger.meta[MetaKey.offerNonces] = try Self.encode(spent)
    }
}

extension String {
    /// The form the ledger keeps account and device names in: Unicode's composed form (NFC), so a
    /// name typed either way is one name, and Swift's `==` and SQL's byte comparison agree on it.
    package var ledgerName: String { precomposedStringWithCanonicalMapping }
}
