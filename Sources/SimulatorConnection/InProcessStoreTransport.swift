import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import OpenStoreKit
import StoreKitCatalog
import Synchronization

/// A ``StoreTransport`` that calls a local App Store in the same process.
///
/// Each call names the device; the device's account is looked up in the store. Store failures
/// become ``StoreTransportError``s with StoreKit's case names. The test kit's `TestSession` hands one out for
/// its store, applying its pending setting changes before every call.
public struct InProcessStoreTransport: StoreTransport {
    public let store: SimulatedAppStore
    /// Runs before every call (a test session flushes its property changes here).
    let prepare: @Sendable () async throws -> Void
    /// The accounts of the devices seen so far.
    private let deviceAccounts = DeviceAccounts()

    /// A transport to `store`.
    public init(store: SimulatedAppStore) {
        self.init(store: store, prepare: {})
    }

    package init(store: SimulatedAppStore, prepare: @escaping @Sendable () async throws -> Void) {
        self.store = store
        self.prepare = prepare
    }

    /// Runs a store call, mapping its failures.
    private func call<Result: Sendable>(_ body: () async throws(AppStoreError) -> Result) async throws -> Result {
        try await prepare()
        do {
            return try await body()
        } catch {
            throw Self.transportError(error)
        }
    }

    static func transportError(_ error: AppStoreError) -> StoreTransportError {
        switch error {
        case .storeKit(let code, let message): return .storeKit(code.rawValue, message: message)
        case .purchase(let code, let message): return .purchase(code.rawValue, message: message)
        case .refundRequest(let code, let message): return .refundRequest(code.rawValue, message: message)
        case .storage(let failure): return .storage(failure)
        case .verification, .control: return .other(error.description)
        }
    }

    private func account(of device: String) async throws(AppStoreError) -> String {
        guard let account = try await accountOfDevice(device) else {
            throw .storeKit(.unknown, "no device \(device) in the store; connect through TestSession.client(device:account:)")
        }
        return account
    }

    /// The account a device is signed in to, or `nil` when the store has no such device.
    ///
    /// A device, once in a store, stays signed in to its account for good (the store refuses to sign
    /// it in to another and never removes it, in any process): the answer is kept, and later calls
    /// for the device cost no unit of work.
    public func accountOfDevice(_ device: String) async throws(AppStoreError) -> String? {
        if let known = deviceAccounts.account(of: device) { return known }
        guard let record = try await store.device(named: device) else { return nil }
        deviceAccounts.remember(record.account, of: device)
        return record.account
    }

    /// The verification failure the store's session simulates, as the client names it.
    private func simulatedFailure() async -> String? {
        if case .verification(let code)? = try? await store.simulatedError(forAPI: .verification) { return code.rawValue }
        return nil
    }

    private func item(_ signed: SignedTransaction) -> SignedItem {
        SignedItem(jws: signed.jws, simulatedVerificationFailure: signed.simulatedVerificationFailure?.rawValue)
    }

    public func verificationContext(device: String) async throws -> VerificationContext {
        try await call { () throws(AppStoreError) in
            guard let record = try await store.device(named: device) else {
                throw AppStoreError.storeKit(.unknown, "no device \(device) in the store")
            }
            return VerificationContext(rootCertificates: [store.rootCertificate.derRepresentation], bundleId: store.identity.bundleId,
                                       environment: store.identity.environment.rawValue, deviceVerificationID: record.deviceVerificationID)
        }
    }

    public func products(for identifiers: [String], device: String) async throws -> [CatalogProduct] {
        try await call { () throws(AppStoreError) in
            let account = try await account(of: device)
            return try await store.products(for: identifiers, account: account)
        }
    }

    public func purchase(_ request: TransportPurchaseRequest) async throws -> TransportPurchaseOutcome {
        try await call { () throws(AppStoreError) in
            let account = try await account(of: request.device)
            var purchase = PurchaseRequest(
                productID: request.productID, account: account, device: request.device, quantity: request.quantity,
                appAccountToken: request.appAccountToken, offer: request.offer.map(PurchaseOffer.init), purchaseDate: request.purchaseDate,
                renewalBehavior: request.cancelsAfterFirstPeriod ? .cancelImmediately : .renewUntilNow,
                simulatesAskToBuyInSandbox: request.simulatesAskToBuyInSandbox, deliversThroughUpdates: request.deliversThroughUpdates)
            purchase.customOptions = request.customOptions
            purchase.billingPlanType = request.billingPlanType
            let outcome = try await store.purchase(purchase)
            switch outcome {
            case .success(let signed): return .success(item(signed))
            case .pending: return .pending
            case .userCancelled: return .userCancelled
            }
        }
    }

    public func transactions(_ view: TransactionView, device: String) async throws -> [SignedItem] {
        try await call { () throws(AppStoreError) in
            let ledgerView: LedgerView
            switch view {
            case .all: ledgerView = .all
            case .currentEntitlements: ledgerView = .currentEntitlements
            case .unfinished: ledgerView = .unfinished
            case .latest(let productID): ledgerView = .latest(productID: productID)
            case .transaction(let id): ledgerView = .transaction(id: id)
            }
            // One unit of work on the store's executor; the signing happens here, on this task's.
            let pending = try await store.transactionsToSign(ledgerView, device: device)
            return try store.sign(pending).map(item)
        }
    }

    public func finish(transactionID: UInt64, device: String) async throws {
        try await call { () throws(AppStoreError) in
            let account = try await account(of: device)
            guard try await store.ledgerTransaction(transactionID)?.account == account else {
                throw AppStoreError.storeKit(.notEntitled, "transaction \(transactionID) does not belong to account \(account)")
            }
            try await store.finish(transactionID)
        }
    }

    public func launch(device: String) async throws {
        try await call { () throws(AppStoreError) in _ = try await store.launch(device: device) }
    }

    public func nextUpdates(device: String, channel: TransportUpdate.Channel) async throws -> [TransportUpdate] {
        let ledgerChannel = LedgerUpdate.Channel(channel)
        while !Task.isCancelled {
            let batch = try await call { () throws(AppStoreError) in try await store.takeUpdates(device: device, channel: ledgerChannel) }
            if !batch.isEmpty {
                let failure = await simulatedFailure()
                return batch.map { TransportUpdate($0, simulatedVerificationFailure: failure) }
            }
            await store.waitForUpdates(device: device, channel: ledgerChannel)
        }
        throw CancellationError()
    }

    public func subscriptionStatuses(groupID: String, device: String) async throws -> [TransportStatus] {
        try await call { () throws(AppStoreError) in
            let statuses = try await store.subscriptionStatuses(groupID: groupID, device: device)
            let failure = await simulatedFailure()
            return statuses.map {
                TransportStatus(state: Int($0.state.status.rawValue), transaction: item($0.transaction),
                                renewalInfo: SignedItem(jws: $0.signedRenewalInfo, simulatedVerificationFailure: failure))
            }
        }
    }

    public func isEligibleForIntroOffer(groupID: String, device: String) async throws -> Bool {
        try await call { () throws(AppStoreError) in
            let account = try await account(of: device)
            return try await store.isEligibleForIntroOffer(groupID: groupID, account: account)
        }
    }

    public func appTransaction(device: String) async throws -> SignedItem {
        try await call { () throws(AppStoreError) in
            let (_, jws) = try await store.appTransaction(device: device)
            return SignedItem(jws: jws, simulatedVerificationFailure: await simulatedFailure())
        }
    }

    public func storefront(device: String) async throws -> StoreKitCatalog.Storefront {
        try await call { () throws(AppStoreError) in
            let account = try await account(of: device)
            return try await store.storefront(forAccount: account)
        }
    }

    public func sync(device: String) async throws {
        try await call { () throws(AppStoreError) in
            _ = try await account(of: device)
            try await store.checkSimulatedFailure(.appStoreSync)
        }
    }

    public func requestRefund(transactionID: UInt64, device: String) async throws {
        try await call { () throws(AppStoreError) in
            let account = try await account(of: device)
            guard try await store.ledgerTransaction(transactionID)?.account == account else {
                throw AppStoreError.refundRequest(.failed, "transaction \(transactionID) does not belong to account \(account)")
            }
            try await store.requestRefund(transactionID)
        }
    }

    public func presentSheet(_ sheet: String, device: String, about transactionID: UInt64?) async throws {
        try await call { () throws(AppStoreError) in
            guard let kind = CustomerSheet(rawValue: sheet) else { throw AppStoreError.storeKit(.unsupported, "no sheet named \(sheet)") }
            _ = try await account(of: device)
            try await store.presentSheet(kind, device: device, about: transactionID)
        }
    }

    public func storePolicies(device: String) async throws -> StorePolicies {
        try await call { () throws(AppStoreError) in
            _ = try await account(of: device)
            let policies = await store.storeKitConfiguration.appPolicies
            let locale = try await store.currentSettings().locale
            return StorePolicies(configured: policies, locale: locale)
        }
    }

    public func canMakePayments(device: String) async throws -> Bool {
        try await call { () throws(AppStoreError) in
            _ = try await account(of: device)
            return try await store.canMakePayments(device: device)
        }
    }

    public func promotedProducts(device: String) async throws -> [TransportPromotion] {
        try await call { () throws(AppStoreError) in
            _ = try await account(of: device)
            return try await store.promotedProducts(device: device).map { TransportPromotion(productID: $0.productID, visibility: $0.visibility.rawValue) }
        }
    }

    public func updatePromotedProducts(_ promotions: [TransportPromotion], device: String) async throws {
        try await call { () throws(AppStoreError) in
            _ = try await account(of: device)
            var products: [PromotedProduct] = []
            for promotion in promotions {
                guard let visibility = PromotedProduct.Visibility(rawValue: promotion.visibility) else {
                    throw .control(.invalidAction, "visibility is appStoreConnectDefault, visible or hidden, not \(promotion.visibility)")
                }
                products.append(PromotedProduct(productID: promotion.productID, visibility: visibility))
            }
            try await store.updatePromotedProducts(products, device: device)
        }
    }

    public func requestReview(device: String) async throws -> Bool {
        try await call { () throws(AppStoreError) in
            _ = try await account(of: device)
            return try await store.requestReview(device: device).shown
        }
    }
}

extension PurchaseOffer {
    /// The engine's form of an offer a client asked for.
    public init(_ offer: TransportOffer) {
        switch offer {
        case .introductory: self = .introductory
        case .promotionalLegacy(let id, let keyID, let nonce, let timestamp, let signature):
            self = .promotional(id: id, signature: .legacy(keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature))
        case .promotionalJWS(let id, let jws): self = .promotional(id: id, signature: .jws(jws))
        case .promotionalUnsigned(let id): self = .promotional(id: id, signature: nil)
        case .code(let referenceName): self = .code(referenceName: referenceName)
        case .winBack(let id): self = .winBack(id: id)
        }
    }
}

extension LedgerUpdate.Channel {
    /// The store's channel behind a transport channel.
    public init(_ channel: TransportUpdate.Channel) {
        switch channel {
        case .transactions: self = .transactions
        case .statuses: self = .statuses
        case .messages: self = .messages
        case .purchaseIntents: self = .purchaseIntents
        case .storefronts: self = .storefronts
        }
    }
}

extension TransportUpdate {
    /// A feed entry as the device receives it; signed items carry the verification failure the
    /// store's test session simulates.
    public init(_ update: LedgerUpdate, simulatedVerificationFailure failure: String?) {
        switch update.channel {
        case .transactions, .statuses:
            self.init(transaction: SignedItem(jws: update.signedTransaction, simulatedVerificationFailure: failure),
                      renewalInfo: update.signedRenewalInfo.map { SignedItem(jws: $0, simulatedVerificationFailure: failure) },
                      renewalState: update.renewalState.map { Int($0.status.rawValue) })
        case .messages, .purchaseIntents, .storefronts:
            self.init(messageReason: update.detail?.messageReason?.rawValue,
                      subjectTransactionID: update.channel == .messages ? update.transactionID : nil,
                      productID: update.channel == .purchaseIntents ? update.detail?.productID : nil, offerID: update.detail?.offerID,
                      storefrontCountryCode: update.detail?.storefront)
        }
    }
}

extension StorePolicies {
    /// The policies a `.storekit` file's `appPolicies` give for a locale: the EULA's text (Apple's
    /// standard EULA when it is empty) and the privacy policy of the locale, or else the first one
    /// that says anything.
    init(configured: StoreKitConfiguration.AppPolicies?, locale: String) {
        let eula = configured?.eula.flatMap { $0.isEmpty ? nil : $0 }
        let policies = (configured?.policies ?? []).filter { !($0.policyURL ?? "").isEmpty || !($0.policyText ?? "").isEmpty }
        let policy = policies.first { $0.locale == locale } ?? policies.first
        self.init(termsOfServiceURL: eula == nil ? StorePolicies.standardEULA : nil, termsOfServiceText: eula,
                  privacyPolicyURL: policy?.policyURL.flatMap { $0.isEmpty ? nil : URL(string: $0) },
                  privacyPolicyText: policy?.policyText.flatMap { $0.isEmpty ? nil : $0 })
    }
}

/// Devices' accounts, as a store answered them (a device never changes account).
final class DeviceAccounts: Sendable {
    private let accounts = Mutex<[String: String]>([:])
    /// Past this many devices the memory starts over, so a flood of names cannot grow it without end.
    static let capacity = 100_000

    func account(of device: String) -> String? { accounts.withLock { $0[device] } }

    func remember(_ account: String, of device: String) {
        accounts.withLock { accounts in
            if accounts.count >= Self.capacity { accounts.removeAll() }
            accounts[device] = account
        }
    }
}
