import AppStoreModels
import AppStoreSimulator
import Foundation
import OpenStoreKit
import SimulatorConnection
import StoreKitCatalog

/// What a ``LocalStore`` drives: the `SKTestSession` controls of a local App Store, either in this
/// process (``SimulatedAppStore``) or served over HTTP (``RemoteStoreControls``, the admin API of
/// `storekit serve`). Failures are the store's own ``AppStoreError``s in both cases.
public protocol StoreControls: Sendable {
    /// Adds a device signed in to `account`, creating the account on first use.
    func addDevice(_ name: String, account: String) async throws(AppStoreError)
    /// Changes an account's storefront, Ask to Buy and app account token (`nil`: leave as is; `.some(nil)`: clear).
    func configureAccount(_ name: String, storefront: String??, askToBuy: Bool?, appAccountToken: UUID??) async throws(AppStoreError)
    /// Puts an account in a family group (`nil`: takes it out).
    func setFamilyGroup(_ group: String?, for account: String) async throws(AppStoreError)
    /// The store's clock now.
    func currentTime() async throws(AppStoreError) -> Date
    /// Moves the store's clock to `date`, playing every lifecycle event that falls due; returns how many.
    func advanceTime(to date: Date) async throws(AppStoreError) -> Int
    /// Replaces the store's `SKTestSession` settings that differ from its configuration file.
    func replaceSettingsOverrides(_ overrides: SettingsOverrides) async throws(AppStoreError)
    /// Buys a product outside the app (as the Transaction Manager does): no Ask to Buy; returns the ledger's record.
    func buyProduct(_ productID: String, account: String, quantity: Int, appAccountToken: UUID?, offer: PurchaseOffer?, purchaseDate: Date?,
                    renewalBehavior: RenewalBehavior) async throws(AppStoreError) -> LedgerTransaction
    /// A transaction as a device gets it, signed.
    func transaction(_ id: UInt64, device: String?) async throws(AppStoreError) -> SignedTransaction
    /// The ledger's record of a transaction, if there is one.
    func ledgerTransaction(_ id: UInt64) async throws(AppStoreError) -> LedgerTransaction?
    /// Transactions as `SKTestSession.allTransactions()` describes them, a page after `after`.
    func allTestTransactions(account: String?, after: UInt64?, limit: Int) async throws(AppStoreError) -> [TestTransaction]
    /// Deletes a transaction, as if it never happened.
    func deleteTransaction(_ id: UInt64) async throws(AppStoreError)
    /// Deletes every transaction.
    func clearTransactions() async throws(AppStoreError)
    /// Refunds a transaction: its entitlement is revoked and `REFUND` is sent.
    func refundTransaction(_ id: UInt64, reason: RevocationReason) async throws(AppStoreError)
    /// A parent approves a purchase waiting for Ask to Buy.
    func approveAskToBuyTransaction(_ id: UInt64) async throws(AppStoreError)
    /// A parent declines a purchase waiting for Ask to Buy.
    func declineAskToBuyTransaction(_ id: UInt64) async throws(AppStoreError)
    /// Completes an interrupted purchase.
    func resolveIssueForTransaction(_ id: UInt64) async throws(AppStoreError)
    /// Ends an account's subscription to a product now.
    func expireSubscription(productID: String, account: String) async throws(AppStoreError)
    /// Renews an account's subscription to a product now.
    func forceRenewalOfSubscription(productID: String, account: String) async throws(AppStoreError)
    /// Turns a subscription's auto-renewal on or off, as the customer does in Settings.
    func setAutoRenew(originalTransactionID: UInt64, enabled: Bool) async throws(AppStoreError)
    /// Asks the customer to consent to a price increase at the next renewal.
    func requestPriceIncreaseConsent(transactionID: UInt64) async throws(AppStoreError)
    /// The customer consents to the pending price increase.
    func consentToPriceIncrease(transactionID: UInt64) async throws(AppStoreError)
    /// The customer declines the pending price increase: the subscription ends at its period's end.
    func declinePriceIncrease(transactionID: UInt64) async throws(AppStoreError)
    /// App Store Server Notifications the store sent, a page after `sequence`.
    func notifications(after sequence: Int64, limit: Int) async throws(AppStoreError) -> [StoredNotification]
    /// Allows or forbids purchases on an account (`AppStore.canMakePayments`).
    func setPurchasesAllowed(_ allowed: Bool, account: String) async throws(AppStoreError)
    /// Sends a device a purchase intent, as a promoted purchase in the App Store does.
    func sendPurchaseIntent(productID: String, offerID: String?, device: String) async throws(AppStoreError)
    /// The app's review requests on a device, oldest first, with whether each prompt showed.
    func reviewRequests(device: String) async throws(AppStoreError) -> [ReviewRequest]
    /// What the customer answers the next time a device shows `sheet`.
    func queueCustomerResponse(_ response: CustomerResponse, in sheet: CustomerSheet, device: String) async throws(AppStoreError)
    /// A customer taps Cancel Subscription: what the page shows (see ``CancellationFlow``).
    func openCancellationPage(originalTransactionID: UInt64, locale: String) async throws(AppStoreError) -> RetentionOfferAttempt
    /// The customer's answer to a cancellation page.
    func answerCancellationPage(_ attemptID: String, outcome: RetentionOfferAttempt.Outcome) async throws(AppStoreError) -> RetentionOfferAttempt
}

extension SimulatedAppStore: StoreControls {
    public func reviewRequests(device name: String) async throws(AppStoreError) -> [ReviewRequest] {
        guard let found = try device(named: name) else { throw .control(.invalidAction, "no device \(name)") }
        return found.reviewRequests ?? []
    }

    /// Asks the developer's real-time URL within Apple's 700 ms, as the App Store does.
    public func openCancellationPage(originalTransactionID: UInt64, locale: String) async throws(AppStoreError) -> RetentionOfferAttempt {
        do { return try await CancellationFlow(store: self).start(originalTransactionID: originalTransactionID, locale: locale) } catch {
            throw AppStoreError(describing: error)
        }
    }

    public func answerCancellationPage(_ attemptID: String, outcome: RetentionOfferAttempt.Outcome) async throws(AppStoreError) -> RetentionOfferAttempt {
        do { return try await CancellationFlow(store: self).answer(attemptID, outcome: outcome) } catch {
            throw AppStoreError(describing: error)
        }
    }
}

extension AppStoreError {
    /// `error` itself when it is the store's, else a storage failure naming it.
    init(describing error: any Error) {
        self = (error as? AppStoreError) ?? .storage(.failed("\(error)", underlying: error))
    }
}

/// A ``StoreTransport`` that runs a step before every call (a test session applies its pending
/// property changes there).
struct PreparedTransport: StoreTransport {
    let base: any StoreTransport
    let prepare: @Sendable () async throws -> Void

    func verificationContext(device: String) async throws -> VerificationContext {
        try await prepare(); return try await base.verificationContext(device: device)
    }
    func products(for identifiers: [String], device: String) async throws -> [CatalogProduct] {
        try await prepare(); return try await base.products(for: identifiers, device: device)
    }
    func purchase(_ request: TransportPurchaseRequest) async throws -> TransportPurchaseOutcome {
        try await prepare(); return try await base.purchase(request)
    }
    func transactions(_ view: TransactionView, device: String) async throws -> [SignedItem] {
        try await prepare(); return try await base.transactions(view, device: device)
    }
    func finish(transactionID: UInt64, device: String) async throws {
        try await prepare(); try await base.finish(transactionID: transactionID, device: device)
    }
    func launch(device: String) async throws {
        try await prepare(); try await base.launch(device: device)
    }
    func nextUpdates(device: String, channel: TransportUpdate.Channel) async throws -> [TransportUpdate] {
        try await prepare(); return try await base.nextUpdates(device: device, channel: channel)
    }
    func subscriptionStatuses(groupID: String, device: String) async throws -> [TransportStatus] {
        try await prepare(); return try await base.subscriptionStatuses(groupID: groupID, device: device)
    }
    func isEligibleForIntroOffer(groupID: String, device: String) async throws -> Bool {
        try await prepare(); return try await base.isEligibleForIntroOffer(groupID: groupID, device: device)
    }
    func appTransaction(device: String) async throws -> SignedItem {
        try await prepare(); return try await base.appTransaction(device: device)
    }
    func storefront(device: String) async throws -> StoreKitCatalog.Storefront {
        try await prepare(); return try await base.storefront(device: device)
    }
    func sync(device: String) async throws {
        try await prepare(); try await base.sync(device: device)
    }
    func requestRefund(transactionID: UInt64, device: String) async throws {
        try await prepare(); try await base.requestRefund(transactionID: transactionID, device: device)
    }
    func presentSheet(_ sheet: String, device: String, about transactionID: UInt64?) async throws {
        try await prepare(); try await base.presentSheet(sheet, device: device, about: transactionID)
    }
    func canMakePayments(device: String) async throws -> Bool {
        try await prepare(); return try await base.canMakePayments(device: device)
    }
    func storePolicies(device: String) async throws -> StorePolicies {
        try await prepare(); return try await base.storePolicies(device: device)
    }
    func requestReview(device: String) async throws -> Bool {
        try await prepare(); return try await base.requestReview(device: device)
    }
    func promotedProducts(device: String) async throws -> [TransportPromotion] {
        try await prepare(); return try await base.promotedProducts(device: device)
    }
    func updatePromotedProducts(_ promotions: [TransportPromotion], device: String) async throws {
        try await prepare(); try await base.updatePromotedProducts(promotions, device: device)
    }
}
