import AppStoreModels
import Foundation
import StoreKitCatalog

/// What reaches an app besides transactions and statuses: messages (`Message.messages`), purchase
/// intents (`PurchaseIntent.intents`) and storefront changes (`Storefront.updates`), each on a channel
/// of the device's feed; and whether the account may buy at all (`AppStore.canMakePayments`).
extension SimulatedAppStore {
    // MARK: Feed entries

    /// Queues an entry that is not a transaction on one channel of a device's feed.
    func enqueueEvent(_ channel: LedgerUpdate.Channel, kind: LedgerUpdate.Kind, detail: LedgerUpdate.Detail, device: String,
                      about transactionID: UInt64 = 0, groupID: String? = nil, change: inout Change) {
        let sequence = change.counters.nextUpdateSequence
        change.counters.nextUpdateSequence += 1
        var update = LedgerUpdate(sequence: sequence, device: device, transactionID: transactionID, kind: kind, signedTransaction: "",
                                  date: clock.now())
        update.channel = channel
        update.detail = detail
        update.subscriptionGroupID = groupID
        change.ledger.appendedUpdates.append(update)
    }

    /// Sends a message about a subscription to every device of its account: a billing issue when a
    /// renewal fails, a price increase waiting for consent (sent again on every request, as StoreKit
    /// does), a win-back offer when an expired subscription has one the customer may take.
    func enqueueMessage(_ reason: LedgerUpdate.MessageReason, about record: SubscriptionRecord, change: inout Change) {
        for device in devices(of: record.account, including: change) {
            enqueueEvent(.messages, kind: .message, detail: LedgerUpdate.Detail(messageReason: reason, productID: record.productID),
                         device: device.name, about: record.originalTransactionID, groupID: record.groupID, change: &change)
        }
    }

    /// Tells the account's devices that its storefront is now `storefront`.
    func enqueueStorefrontChange(_ storefront: Storefront, account: String, change: inout Change) {
        for device in devices(of: account, including: change) {
            enqueueEvent(.storefronts, kind: .storefrontChange, detail: LedgerUpdate.Detail(storefront: storefront.countryCode),
                         device: device.name, change: &change)
        }
    }

    /// Sends a purchase intent to the app on a device, as when the customer starts buying a promoted
    /// in-app purchase on the App Store (Xcode's transaction manager "Send Purchase Intent"): the app
    /// hears it through `PurchaseIntent.intents` and decides whether to buy.
    ///
    /// - Parameter offerID: A promotional or win-back offer of the subscription to buy it with.
    /// - Throws: ``AppStoreError/control(_:_:)`` for an unknown device, product or offer.
    public func sendPurchaseIntent(productID: String, offerID: String? = nil, device: String) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard let target = storedDevice(device, in: change) else { throw .control(.invalidAction, "no device \(device)") }
            guard let product = catalog().product(id: productID) else { throw .control(.invalidProductIdentifier, "no product \(productID)") }
            if let offerID {
                let offers = (product.subscription?.promotionalOffers ?? []) + (product.subscription?.winBackOffers ?? [])
                guard offers.contains(where: { $0.id == offerID }) else {
                    throw .control(.invalidAction, "\(productID) has no promotional or win-back offer \(offerID)")
                }
            }
            enqueueEvent(.purchaseIntents, kind: .purchaseIntent, detail: LedgerUpdate.Detail(productID: productID, offerID: offerID),
                         device: target.name, change: &change)
        }
    }

    /// Queues storefront changes for the accounts that follow the store's storefront setting, when a
    /// settings change moves it.
    func enqueueStorefrontChanges(from old: StoreSettings, to new: StoreSettings, change: inout Change) {
        guard let storefront = Storefront(code: new.storefront), Storefront(code: old.storefront) != storefront else { return }
        var accounts: Set<String> = []
        for device in ledger.devices(after: nil, limit: .max) where !accounts.contains(device.account) {
            accounts.insert(device.account)
            guard storedAccount(device.account, in: change)?.storefront == nil else { continue }
            enqueueStorefrontChange(storefront, account: device.account, change: &change)
        }
    }

    // MARK: Promoted purchases

    /// The device's promoted in-app purchases in the order the App Store shows them, with their
    /// visibility: the app's order once it set one, else App Store Connect's (here, every product of
    /// the catalog in the file's order, as configured).
    ///
    /// - Throws: ``AppStoreError/control(_:_:)`` for an unknown device.
    public func promotedProducts(device: String) throws(AppStoreError) -> [PromotedProduct] {
        try reading { () throws(AppStoreError) -> [PromotedProduct] in
            guard let target = ledger.device(device) else { throw .control(.invalidAction, "no device \(device)") }
            return target.promotedProducts ?? catalog().products.map { PromotedProduct(productID: $0.id, visibility: .appStoreConnectDefault) }
        }
    }

    /// Sets the order and visibility of the device's promoted in-app purchases (`Product.PromotionInfo.updateAll`).
    ///
    /// - Throws: ``AppStoreError/control(_:_:)`` for an unknown device, a product the catalog does not
    ///   sell, or a product listed twice.
    public func updatePromotedProducts(_ products: [PromotedProduct], device: String) throws(AppStoreError) {
        let sold = Set(catalog().products.map(\.id))
        var seen: Set<String> = []
        for product in products {
            guard sold.contains(product.productID) else { throw .control(.invalidProductIdentifier, "no product \(product.productID)") }
            guard seen.insert(product.productID).inserted else { throw .control(.invalidAction, "\(product.productID) is listed twice") }
        }
        try writing { (change) throws(AppStoreError) in
            guard var target = storedDevice(device, in: change) else { throw .control(.invalidAction, "no device \(device)") }
            target.promotedProducts = products
            change.ledger.devices[target.name] = target
        }
    }

    // MARK: Reviews

    /// The app on a device asks the customer for a review (`AppStore.requestReview`,
    /// `SKStoreReviewController.requestReview()`): the request is recorded on the device with whether
    /// the prompt showed, for the Transaction Manager and tests to see. A Production app's prompt
    /// shows at most ``ReviewRequest/promptsPerYear`` times in 365 days; in Xcode and Sandbox it always
    /// shows, as in development builds.
    ///
    /// - Throws: ``AppStoreError/control(_:_:)`` for an unknown device.
    @discardableResult
    public func requestReview(device: String) throws(AppStoreError) -> ReviewRequest {
        try writing { (change) throws(AppStoreError) -> ReviewRequest in
            guard var target = storedDevice(device, in: change) else { throw .control(.invalidAction, "no device \(device)") }
            let now = clock.now()
            var requests = target.reviewRequests ?? []
            let yearAgo = now.addingTimeInterval(-365 * 86_400)
            let shownThisYear = requests.filter { $0.shown && $0.date > yearAgo }
            let shown = identity.environment != .production || shownThisYear.count < ReviewRequest.promptsPerYear
            let request = ReviewRequest(date: now, shown: shown)
            requests.append(request)
            // The last few requests, and every prompt shown in the last year (the rule counts them).
            var kept = Array(requests.suffix(ReviewRequest.kept))
            kept.insert(contentsOf: shownThisYear.filter { !kept.contains($0) }, at: 0)
            target.reviewRequests = kept
            change.ledger.devices[target.name] = target
            return request
        }
    }

    // MARK: Payments

    /// Whether the device's account may buy (`AppStore.canMakePayments`): not when its in-app
    /// purchases are restricted (``setPurchasesAllowed(_:account:)``), nor while the test session
    /// simulates `purchaseNotAllowed` for purchases.
    public func canMakePayments(device: String) throws(AppStoreError) -> Bool {
        try reading { () throws(AppStoreError) in
            guard let target = ledger.device(device) else { throw .control(.invalidAction, "no device \(device)") }
            if case .purchase(.purchaseNotAllowed)? = settings.simulatedErrors[.purchase] { return false }
            return ledger.account(target.account)?.purchasesAllowed ?? true
        }
    }

    /// Allows or restricts an account's in-app purchases, as Screen Time's "In-App Purchases: Don't
    /// Allow" does: while restricted, its purchases fail with `purchaseNotAllowed` and
    /// `AppStore.canMakePayments` is false on its devices.
    public func setPurchasesAllowed(_ allowed: Bool, account name: String) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            var (account, _) = try register(account: name, device: nil, in: &change)
            account.purchasesAllowed = allowed
            change.ledger.accounts[name] = account
        }
    }
}
