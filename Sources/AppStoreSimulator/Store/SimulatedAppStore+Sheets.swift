import AppStoreModels
import Foundation
import StoreKitCatalog

/// A sheet StoreKit shows over the app: the manage-subscriptions and offer-code sheets an app opens,
/// and the sheets behind the messages it displays.
public enum CustomerSheet: String, Hashable, Sendable, Codable, CaseIterable {
    /// `AppStore.showManageSubscriptions(in:)`.
    case manageSubscriptions
    /// `AppStore.presentOfferCodeRedeemSheet(in:)`.
    case offerCodeRedeem
    /// A `Message` with reason `billingIssue`, displayed.
    case billingIssue
    /// A `Message` with reason `priceIncreaseConsent`, displayed.
    case priceIncreaseConsent
    /// A `Message` with reason `winBackOffer`, displayed.
    case winBackOffer
    /// A `Message` with reason `generic`, displayed.
    case generic
}

/// What the customer does in a sheet, queued by a test (or the transaction manager) before the app
/// shows it. With nothing queued, the customer closes the sheet.
public enum CustomerResponse: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Closes the sheet, changing nothing. Fits every sheet.
    case dismiss
    /// Offer-code sheet: redeems the code offer with this reference name; the transaction reaches
    /// the app through `Transaction.updates`.
    case redeemOfferCode(referenceName: String)
    /// Manage subscriptions: turns automatic renewal off for the subscription to this product.
    case cancelSubscription(productID: String)
    /// Manage subscriptions: switches to this product of the subscription's group (an upgrade at
    /// once, a downgrade at the next renewal); the change reaches the app through its updates.
    case changeSubscription(toProductID: String)
    /// Price-increase message: the customer accepts the new price.
    case acceptPriceIncrease
    /// Price-increase message: the customer declines; the subscription stops renewing.
    case declinePriceIncrease
    /// Billing-issue message: the customer updates the payment method and the App Store bills the
    /// renewal again, which succeeds.
    case updatePaymentMethod
    /// Win-back message: the customer subscribes again with the offer.
    case redeemWinBackOffer(offerID: String)

    /// The sheets this response can be given in.
    public var sheets: Set<CustomerSheet> {
        switch self {
        case .dismiss: return Set(CustomerSheet.allCases)
        case .redeemOfferCode: return [.offerCodeRedeem]
        case .cancelSubscription, .changeSubscription: return [.manageSubscriptions]
        case .acceptPriceIncrease, .declinePriceIncrease: return [.priceIncreaseConsent]
        case .updatePaymentMethod: return [.billingIssue]
        case .redeemWinBackOffer: return [.winBackOffer]
        }
    }

    public var description: String {
        switch self {
        case .dismiss: return "dismiss"
        case .redeemOfferCode(let name): return "redeem offer code \(name)"
        case .cancelSubscription(let product): return "cancel \(product)"
        case .changeSubscription(let product): return "change to \(product)"
        case .acceptPriceIncrease: return "accept the price increase"
        case .declinePriceIncrease: return "decline the price increase"
        case .updatePaymentMethod: return "update the payment method"
        case .redeemWinBackOffer(let offer): return "redeem win-back offer \(offer)"
        }
    }
}

extension SimulatedAppStore {
    /// The responses waiting for each device's sheets, as the ledger holds them.
    typealias QueuedResponses = [String: [CustomerSheet: [CustomerResponse]]]

    /// Queues what the customer on `device` will do the next time the app shows `sheet` there.
    /// Responses for one sheet are used in the order queued.
    ///
    /// - Throws: ``AppStoreError/control(_:_:)`` when the device is unknown or the response does not
    ///   fit the sheet (`cancelSubscription` in the offer-code sheet).
    public func queueCustomerResponse(_ response: CustomerResponse, in sheet: CustomerSheet, device: String) throws(AppStoreError) {
        guard response.sheets.contains(sheet) else {
            throw .control(.invalidAction, "\"\(response)\" is not something a customer can do in the \(sheet.rawValue) sheet")
        }
        try writing { (change) throws(AppStoreError) in
            guard storedDevice(device, in: change) != nil else { throw .control(.invalidAction, "no device \(device)") }
            var queued = try queuedResponses(in: change)
            queued[device, default: [:]][sheet, default: []].append(response)
            change.ledger.meta[MetaKey.customerResponses] = try Self.encode(queued)
        }
    }

    /// The responses waiting for a device's sheets.
    public func queuedCustomerResponses(device: String) throws(AppStoreError) -> [CustomerSheet: [CustomerResponse]] {
        try reading { () throws(AppStoreError) in try queuedResponses(in: nil)[device] ?? [:] }
    }

    /// The app on `device` shows `sheet`: the customer does what was queued for it (or closes it), in
    /// the same commit that uses the response up. What the customer buys or changes reaches the app
    /// through its updates, as with StoreKit's sheets.
    ///
    /// - Parameter transactionID: For a message's sheet, the subscription the message is about.
    /// - Returns: What the customer did.
    /// - Throws: The test session's simulated error for the sheet (nothing is used up then), or what
    ///   the response's action throws (an ineligible code, a subscription that is gone): the customer
    ///   tried, so the response is used up, and nothing else changes.
    @discardableResult
    public func presentSheet(_ sheet: CustomerSheet, device: String, about transactionID: UInt64? = nil) throws(AppStoreError) -> CustomerResponse {
        switch sheet {
        case .manageSubscriptions: try checkSimulatedFailure(.manageSubscriptions)
        case .offerCodeRedeem: try checkSimulatedFailure(.offerCodeRedeem)
        default: break
        }
        do {
            return try writing { (change) throws(AppStoreError) -> CustomerResponse in
                guard let target = storedDevice(device, in: change) else { throw .control(.invalidAction, "no device \(device)") }
                guard let response = try takeResponse(for: sheet, device: device, change: &change) else { return .dismiss }
                try perform(response, account: target.account, about: transactionID, change: &change)
                return response
            }
        } catch {
            _ = try? writing { (change) throws(AppStoreError) in try takeResponse(for: sheet, device: device, change: &change) }
            throw error
        }
    }

    /// Uses up the first response queued for a device's sheet.
    private func takeResponse(for sheet: CustomerSheet, device: String, change: inout Change) throws(AppStoreError) -> CustomerResponse? {
        var queued = try queuedResponses(in: change)
        guard var waiting = queued[device]?[sheet], !waiting.isEmpty else { return nil }
        let response = waiting.removeFirst()
        queued[device]?[sheet] = waiting.isEmpty ? nil : waiting
        if queued[device]?.isEmpty == true { queued[device] = nil }
        change.ledger.meta[MetaKey.customerResponses] = try Self.encode(queued)
        return response
    }

    private func perform(_ response: CustomerResponse, account: String, about transactionID: UInt64?, change: inout Change) throws(AppStoreError) {
        func subject() throws(AppStoreError) -> UInt64 {
            if let transactionID { return ownOriginal(transactionID) }
            // A sheet shown without its message (the original API's `showPriceConsentIfNeeded()`) is
            // about the account's subscription that waits for the customer's consent.
            if [.acceptPriceIncrease, .declinePriceIncrease].contains(response),
               let waiting = ledger.subscriptions(SubscriptionQuery(account: account)).first(where: { $0.isPendingPriceIncreaseConsent }) {
                return waiting.originalTransactionID
            }
            throw .control(.invalidAction, "\"\(response)\" needs the subscription the message is about")
        }
        switch response {
        case .dismiss: return
        case .redeemOfferCode(let name):
            guard let product = catalog().products.first(where: { $0.subscription?.codeOffers.contains { $0.referenceName == name } == true }) else {
                throw .control(.invalidAction, "no subscription has an offer code named \(name)")
            }
            _ = try buy(PurchaseRequest(productID: product.id, account: account, device: nil, offer: .code(referenceName: name)),
                        inApp: false, change: &change)
        case .cancelSubscription(let productID):
            let record = try subscription(productID: productID, account: account)
            try setAutoRenew(originalTransactionID: record.originalTransactionID, enabled: false, change: &change)
        case .changeSubscription(let productID):
            guard let group = catalog().product(id: productID)?.subscription?.groupID, ownSubscription(account: account, group: group) != nil else {
                throw .control(.noSubscriptionFound, "account \(account) has no subscription in the group of \(productID)")
            }
            _ = try buy(PurchaseRequest(productID: productID, account: account, device: nil), inApp: false, change: &change)
        case .acceptPriceIncrease:
            try changePriceIncrease(try subject(), to: .agreed, notify: .accepted, change: &change)
        case .declinePriceIncrease:
            try changePriceIncrease(try subject(), to: .declined, notify: nil, change: &change)
        case .updatePaymentMethod:
            try resolveBillingIssue(originalTransactionID: try subject(), change: &change)
        case .redeemWinBackOffer(let offerID):
            guard let record = ledger.subscription(try subject()) else { throw .control(.noSubscriptionFound, "the message's subscription is gone") }
            _ = try buy(PurchaseRequest(productID: record.productID, account: account, device: nil, offer: .winBack(id: offerID)),
                        inApp: false, change: &change)
        }
    }

    private func queuedResponses(in change: Change?) throws(AppStoreError) -> QueuedResponses {
        guard let text = change?.ledger.meta[MetaKey.customerResponses] ?? ledger.meta(MetaKey.customerResponses) else { return [:] }
        return try Self.decode(QueuedResponses.self, text)
    }
}
