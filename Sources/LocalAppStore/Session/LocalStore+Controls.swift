import AppStoreModels
import AppStoreSimulator
import Foundation
import OpenStoreKit
import SimulatorConnection

/// A transaction as ``LocalStore/allTransactions()`` describes it, as Xcode's `SKTestTransaction`:
/// the identifiers are `Int`s, equal to StoreKit's `Transaction.id` and `originalID`.
public struct SKTestTransaction: Hashable, Sendable {
    public let identifier: Int
    public let originalTransactionIdentifier: Int
    public let productIdentifier: String
    public let state: SKPaymentTransactionState
    public let purchaseDate: Date
    /// When the transaction was refunded or revoked.
    public let cancelDate: Date?
    public let expirationDate: Date?
    public let autoRenewingEnabled: Bool
    /// An interrupted purchase waiting for ``LocalStore/resolveIssueForTransaction(identifier:)``.
    public let hasPurchaseIssue: Bool
    public let isPendingPriceIncreaseConsent: Bool
    public let pendingAskToBuyConfirmation: Bool
    /// Whether the app finished it.
    public let isFinished: Bool
    /// The account it belongs to.
    public let account: String
    /// The custom options the app bought it with (`Product.PurchaseOption.custom(key:value:)`), in
    /// words: the App Store never signs them into the transaction, so this is where a test sees them.
    public let customPurchaseOptions: [String: String]
}

extension LocalStore {
    // MARK: Transactions

    /// Buys a product outside the app, as the transaction manager does: it reaches the account's
    /// devices through `Transaction.updates`. Takes StoreKit's purchase options plus the testing
    /// ones (`purchaseDate(_:renewalBehavior:)`, `codeOffer(referenceName:)`, `promotionalOffer(id:)`).
    ///
    /// - Returns: The transaction, decoded from its server-signed form.
    @discardableResult
    public func buyProduct(identifier productID: String, options: Set<Product.PurchaseOption> = [], account: String = "default") async throws -> Transaction {
        let request = try TransportPurchaseRequest(productID: productID, device: "", options: options)
        let signed = try await control { () throws(AppStoreError) in
            let bought = try await controls.buyProduct(productID, account: stored(account), quantity: request.quantity,
                                                    appAccountToken: request.appAccountToken, offer: request.offer.map(PurchaseOffer.init),
                                                    purchaseDate: request.purchaseDate,
                                                    renewalBehavior: request.cancelsAfterFirstPeriod ? .cancelImmediately : .renewUntilNow)
            return try await controls.transaction(bought.id, device: nil)
        }
        return try Transaction(unverifiedJWS: signed.jws)
    }

    /// Every transaction in the store, of every account.
    public func allTransactions() async -> [SKTestTransaction] {
        // SKTestSession's call does not throw: a store that cannot be read shows no transactions.
        let all = (try? await controls.allTestTransactions(account: nil, after: nil, limit: .max)) ?? []
        return all.filter { $0.account.hasPrefix(namespace) }.map {
            SKTestTransaction(identifier: Int(clamping: $0.identifier), originalTransactionIdentifier: Int(clamping: $0.originalTransactionIdentifier),
                              productIdentifier: $0.productIdentifier, state: SKPaymentTransactionState(testState: $0.state),
                              purchaseDate: $0.purchaseDate, cancelDate: $0.cancelDate, expirationDate: $0.expirationDate,
                              autoRenewingEnabled: $0.autoRenewingEnabled, hasPurchaseIssue: $0.hasPurchaseIssue,
                              isPendingPriceIncreaseConsent: $0.isPendingPriceIncreaseConsent,
                              pendingAskToBuyConfirmation: $0.pendingAskToBuyConfirmation, isFinished: $0.isFinished,
                              account: String($0.account.dropFirst(namespace.count)), customPurchaseOptions: $0.customPurchaseOptions ?? [:])
        }
    }

    /// Deletes a transaction as if it never happened (with its renewals and family copies).
    public func deleteTransaction(identifier: some BinaryInteger) async throws {
        try await control { () throws(AppStoreError) in try await controls.deleteTransaction(UInt64(identifier)) }
    }

    /// Deletes every transaction.
    public func clearTransactions() async throws {
        try await control { () throws(AppStoreError) in try await controls.clearTransactions() }
    }

    /// Refunds a transaction outside the app; the revoked transaction reaches devices through `Transaction.updates`.
    public func refundTransaction(identifier: some BinaryInteger) async throws {
        try await control { () throws(AppStoreError) in try await controls.refundTransaction(UInt64(identifier), reason: .refundedForOtherReason) }
    }

    /// Approves a pending Ask to Buy purchase; it arrives through `Transaction.updates`.
    public func approveAskToBuyTransaction(identifier: some BinaryInteger) async throws {
        try await control { () throws(AppStoreError) in try await controls.approveAskToBuyTransaction(UInt64(identifier)) }
    }

    /// Declines a pending Ask to Buy purchase; no transaction results.
    public func declineAskToBuyTransaction(identifier: some BinaryInteger) async throws {
        try await control { () throws(AppStoreError) in try await controls.declineAskToBuyTransaction(UInt64(identifier)) }
    }

    /// Resolves an interrupted purchase (it then arrives through `Transaction.updates`) or a billing-retry state.
    public func resolveIssueForTransaction(identifier: some BinaryInteger) async throws {
        try await control { () throws(AppStoreError) in try await controls.resolveIssueForTransaction(UInt64(identifier)) }
    }

    // MARK: Subscriptions

    /// The customer taps Cancel Subscription on the App Store's page of the subscription of a
    /// transaction: the store asks the developer's Get Retention Message endpoint (Retention Messaging
    /// API) within Apple's 700 ms, falls back to the default message for the product and `locale`, and
    /// returns what the page shows. Nothing changes until ``answerCancellationPage(_:with:)``.
    /// (`SKTestSession` has no such control; Apple's cancellation page exists only in production.)
    public func openCancellationPage(forTransaction identifier: some BinaryInteger, locale: String = "en-US") async throws -> RetentionOfferAttempt {
        try await control { () throws(AppStoreError) in
            try await controls.openCancellationPage(originalTransactionID: UInt64(identifier), locale: locale)
        }
    }

    /// The customer's answer to a cancellation page: keep the subscription, switch to the suggested
    /// plan, redeem the promotional offer, or confirm the cancellation (automatic renewal off); each
    /// with the App Store's notifications.
    public func answerCancellationPage(_ page: RetentionOfferAttempt, with outcome: RetentionOfferAttempt.Outcome) async throws -> RetentionOfferAttempt {
        try await control { () throws(AppStoreError) in try await controls.answerCancellationPage(page.id, outcome: outcome) }
    }

    /// Turns automatic renewal off and ends the current period now.
    public func expireSubscription(productIdentifier: String, account: String = "default") async throws {
        try await control { () throws(AppStoreError) in try await controls.expireSubscription(productID: productIdentifier, account: stored(account)) }
    }

    /// Ends the current period now and renews.
    public func forceRenewalOfSubscription(productIdentifier: String, account: String = "default") async throws {
        try await control { () throws(AppStoreError) in try await controls.forceRenewalOfSubscription(productID: productIdentifier, account: stored(account)) }
    }

    /// Turns automatic renewal on for the subscription of a transaction.
    public func enableAutoRenewForTransaction(identifier: some BinaryInteger) async throws {
        try await setAutoRenew(identifier: UInt64(identifier), enabled: true)
    }

    /// Turns automatic renewal off: the subscription expires at the end of the period.
    public func disableAutoRenewForTransaction(identifier: some BinaryInteger) async throws {
        try await setAutoRenew(identifier: UInt64(identifier), enabled: false)
    }

    private func setAutoRenew(identifier: UInt64, enabled: Bool) async throws {
        try await control { () throws(AppStoreError) in
            guard let transaction = try await controls.ledgerTransaction(identifier) else {
                throw AppStoreError.control(.noTransactionFound, "no transaction \(identifier)")
            }
            try await controls.setAutoRenew(originalTransactionID: transaction.originalID, enabled: enabled)
        }
    }

    /// Asks the customer to consent to a price increase of the subscription.
    public func requestPriceIncreaseConsentForTransaction(identifier: some BinaryInteger) async throws {
        try await control { () throws(AppStoreError) in try await controls.requestPriceIncreaseConsent(transactionID: UInt64(identifier)) }
    }

    /// The customer consents to a price increase.
    public func consentToPriceIncreaseForTransaction(identifier: some BinaryInteger) async throws {
        try await control { () throws(AppStoreError) in try await controls.consentToPriceIncrease(transactionID: UInt64(identifier)) }
    }

    /// The customer declines a price increase: automatic renewal turns off.
    public func declinePriceIncreaseForTransaction(identifier: some BinaryInteger) async throws {
        try await control { () throws(AppStoreError) in try await controls.declinePriceIncrease(transactionID: UInt64(identifier)) }
    }

    // MARK: Customers

    /// Restricts an account's in-app purchases, or allows them again, as Screen Time does: while
    /// restricted, its purchases fail with `purchaseNotAllowed` and `AppStore.canMakePayments` is
    /// false on its devices (from their next launch, purchase attempt or `AppStore.sync()`).
    public func setPurchasesAllowed(_ allowed: Bool, account: String) async throws {
        try await control { () throws(AppStoreError) in try await controls.setPurchasesAllowed(allowed, account: stored(account)) }
    }

    /// Sends a purchase intent to the app on a device, as when the customer taps a promoted in-app
    /// purchase on the App Store; the app hears it through `PurchaseIntent.intents`.
    public func sendPurchaseIntent(productIdentifier: String, offerID: String? = nil, device: String) async throws {
        try await control { () throws(AppStoreError) in
            try await controls.sendPurchaseIntent(productID: productIdentifier, offerID: offerID, device: stored(device))
        }
    }

    /// The app's review requests on a device (`AppStore.requestReview()`,
    /// `SKStoreReviewController.requestReview()`, `@Environment(\.requestReview)`), oldest first, with
    /// whether each prompt showed.
    public func reviewRequests(device: String) async throws -> [ReviewRequest] {
        try await control { () throws(AppStoreError) in try await controls.reviewRequests(device: stored(device)) }
    }

    /// Decides what the customer on `device` does the next time the app shows `sheet` there: redeem
    /// an offer code, cancel or change a subscription, answer a price increase, update a payment
    /// method. Without a queued response the customer closes the sheet.
    public func queueCustomerResponse(_ response: CustomerResponse, in sheet: CustomerSheet, device: String) async throws {
        try await control { () throws(AppStoreError) in try await controls.queueCustomerResponse(response, in: sheet, device: stored(device)) }
    }

    // MARK: Accounts

    /// Sets up an account: its storefront, whether a parent approves its purchases, its family group,
    /// the app account token the storefront's purchases carry for it.
    public func configureAccount(_ name: String, storefront: String? = nil, askToBuy: Bool? = nil, familyGroup: String? = nil,
                                 appAccountToken: UUID? = nil) async throws {
        try await control { () throws(AppStoreError) in
            try await controls.configureAccount(stored(name), storefront: storefront.map { .some($0) }, askToBuy: askToBuy,
                                                appAccountToken: appAccountToken.map { .some($0) })
            if let familyGroup { try await controls.setFamilyGroup(stored(familyGroup), for: stored(name)) }
        }
    }

    /// The App Store Server Notifications the store sent, oldest first.
    public func notifications() async throws -> [StoredNotification] {
        try await control { () throws(AppStoreError) in try await controls.notifications(after: 0, limit: .max) }
    }
}

extension SKPaymentTransactionState {
    init(testState: TestTransaction.State) {
        switch testState {
        case .purchasing: self = .purchasing
        case .purchased: self = .purchased
        case .failed: self = .failed
        case .restored: self = .restored
        case .deferred: self = .deferred
        }
    }
}
