import AppStoreModels
import AppStoreSigning
import Foundation
import StoreKitCatalog

/// One transaction in the ledger: what the App Store knows about a purchase or renewal.
///
/// A ledger transaction is the single source of truth; the signed payloads the store hands out are
/// made from it (see ``payload(identity:account:signedDate:)``). Identifiers count up from 0.
public struct LedgerTransaction: Hashable, Sendable, Codable, Identifiable {
    /// Whether the account bought the product or has it through Family Sharing.
    public enum Ownership: String, Hashable, Sendable, Codable {
        case purchased, familyShared
    }

    /// Why the transaction exists.
    public enum Reason: String, Hashable, Sendable, Codable {
        case purchase, renewal
    }

    /// Whether the transaction counts yet.
    public enum State: String, Hashable, Sendable, Codable {
        /// Complete: it appears in the transaction views.
        case purchased
        /// Waiting for a parent's approval (Ask to Buy); invisible until approved.
        case pendingApproval
        /// Interrupted (for example by new terms); invisible until the issue is resolved.
        case interrupted
        /// Declined by a parent; it never counts.
        case declined
    }

    /// A refund or revocation.
    public struct Revocation: Hashable, Sendable, Codable {
        public var date: Date
        public var reason: RevocationReason
        /// `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE`.
        public var type: RevocationType?

        public init(date: Date, reason: RevocationReason, type: RevocationType?) {
            self.date = date
            self.reason = reason
            self.type = type
        }
    }

    /// How a subscription transaction was billed, for a product with billing plans: its plan, and
    /// for monthly billing over a commitment which payment it is.
    public struct Billing: Hashable, Sendable, Codable {
        public var planType: BillingPlanType
        /// The payment this transaction is, from 1 (monthly billing only).
        public var paymentNumber: Int?
        /// How many payments the commitment takes (monthly billing only).
        public var totalPayments: Int?
        /// When the commitment ends (monthly billing only).
        public var commitmentEnd: Date?
        /// The commitment's whole price in milliunits (monthly billing only).
        public var commitmentPrice: Int64?

        public init(planType: BillingPlanType, paymentNumber: Int? = nil, totalPayments: Int? = nil, commitmentEnd: Date? = nil,
                    commitmentPrice: Int64? = nil) {
            self.planType = planType
            self.paymentNumber = paymentNumber
            self.totalPayments = totalPayments
            self.commitmentEnd = commitmentEnd
            self.commitmentPrice = commitmentPrice
        }
    }

    /// The subscription offer a transaction used.
    public struct Offer: Hashable, Sendable, Codable {
        public var type: OfferType
        /// The offer identifier (the reference name for offer codes; absent for introductory offers).
        public var id: String?
        public var discountType: OfferDiscountType
        /// The offer's whole duration, such as `P1M` or `P3M`.
        public var period: String

        public init(type: OfferType, id: String?, discountType: OfferDiscountType, period: String) {
            self.type = type
            self.id = id
            self.discountType = discountType
            self.period = period
        }
    }

    public var id: UInt64
    public var originalID: UInt64
    /// The account that owns the transaction.
    public var account: String
    /// The device the purchase was made on; `nil` for renewals and purchases made outside the app.
    public var device: String?
    public var productID: String
    public var productKind: CatalogProduct.Kind
    public var subscriptionGroupID: String?
    public var purchaseDate: Date
    public var originalPurchaseDate: Date
    public var expirationDate: Date?
    public var quantity: Int
    public var ownership: Ownership
    /// For a family-shared copy, the purchaser's transaction it mirrors.
    public var familySourceID: UInt64?
    public var webOrderLineItemID: String?
    public var appAccountToken: UUID?
    /// The identifier of the account's app download (`appTransactionId`).
    public var appTransactionID: String?
    /// The storefront's three-letter code, numeric identifier and currency at purchase.
    public var storefront: String
    public var storefrontID: String
    public var currency: String
    /// The price in milliunits of the currency.
    public var price: Int64
    public var reason: Reason
    public var offer: Offer?
    public var revocation: Revocation?
    /// Whether a higher-level subscription replaced this one.
    public var isUpgraded: Bool
    public var state: State
    /// When the app finished the transaction, if it did.
    public var finishedDate: Date?
    /// The purchase's custom options (`Product.PurchaseOption.custom(key:value:)`) as the app gave
    /// them, each value in words (`true`, `2.5`, base64 for data). The App Store passes them on but never
    /// signs them into the transaction; the store keeps them so tests and the Transaction Manager can
    /// see what the app sent.
    public var customPurchaseOptions: [String: String]?
    /// How the transaction was billed, for a subscription with billing plans (`nil` otherwise).
    public var billing: Billing? {
        get { billingBox?.payload }
        set { billingBox = newValue.map(RecordBox.init) }
    }
    /// Where ``billing`` is kept: behind a reference (see ``RecordBox``).
    var billingBox: RecordBox<Billing>?
    /// For a transaction imported from data the App Store signed (``SimulatedAppStore/importSignedHistory(_:options:)``):
    /// the newest payload imported. It keeps Apple's identifiers and every field as Apple signed it, also
    /// those this record does not model; `nil` for the store's own transactions.
    public var imported: JWSTransactionDecodedPayload? {
        get { importedPayload?.payload }
        set { importedPayload = newValue.map(RecordBox.init) }
    }
    /// Where ``imported`` is kept: behind a reference (see ``RecordBox``).
    var importedPayload: RecordBox<JWSTransactionDecodedPayload>?

    /// The JSON keys: the properties' names, the imported payload's included.
    enum CodingKeys: String, CodingKey {
        case id, originalID, account, device, productID, productKind, subscriptionGroupID, purchaseDate, originalPurchaseDate
        case expirationDate, quantity, ownership, familySourceID, webOrderLineItemID, appAccountToken, appTransactionID
        case storefront, storefrontID, currency, price, reason, offer, revocation, isUpgraded, state, finishedDate
        case customPurchaseOptions
        case billingBox = "billing"
        case importedPayload = "imported"
    }

    /// Whether the transaction came from imported signed data rather than from this store.
    public var isImported: Bool { imported != nil }

    public init(id: UInt64, originalID: UInt64, account: String, device: String?, productID: String,
                productKind: CatalogProduct.Kind, subscriptionGroupID: String?, purchaseDate: Date,
                originalPurchaseDate: Date, expirationDate: Date?, quantity: Int, ownership: Ownership,
                familySourceID: UInt64?, webOrderLineItemID: String?, appAccountToken: UUID?, storefront: Storefront,
                price: Int64, reason: Reason, offer: Offer?, state: State) {
        self.id = id
        self.originalID = originalID
        self.account = account
        self.device = device
        self.productID = productID
        self.productKind = productKind
        self.subscriptionGroupID = subscriptionGroupID
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.quantity = quantity
        self.ownership = ownership
        self.familySourceID = familySourceID
        self.webOrderLineItemID = webOrderLineItemID
        self.appAccountToken = appAccountToken
        self.storefront = storefront.countryCode
        self.storefrontID = storefront.id
        self.currency = storefront.currency
        self.price = price
        self.reason = reason
        self.offer = offer
        self.revocation = nil
        self.isUpgraded = false
        self.state = state
        self.finishedDate = nil
    }

    /// Whether the transaction is complete (not pending, interrupted or declined).
    public var isPurchased: Bool { state == .purchased }
    /// Whether the transaction was refunded or revoked.
    public var isRevoked: Bool { revocation != nil }
    public var isFinished: Bool { finishedDate != nil }

    /// The payload signed for apps and servers.
    ///
    /// - Parameters:
    ///   - device: Adds `deviceVerification` and its nonce for this device; `nil` for server payloads.
    public func payload(identity: StoreIdentity, signedDate: Date,
                        device: (verificationID: UUID, nonce: UUID)? = nil) -> JWSTransactionDecodedPayload {
        var payload = imported.map { importedPayload($0, signedDate: signedDate) } ?? ownPayload(identity: identity, signedDate: signedDate)
        payload.deviceVerification = device.map { DeviceVerification.value(nonce: $0.nonce, deviceVerificationID: $0.verificationID) }
        payload.deviceVerificationNonce = device?.nonce
        return payload
    }

    /// The payload of a transaction this store made.
    private func ownPayload(identity: StoreIdentity, signedDate: Date) -> JWSTransactionDecodedPayload {
        var payload = JWSTransactionDecodedPayload()
        payload.transactionId = String(id)
        payload.originalTransactionId = String(originalID)
        payload.webOrderLineItemId = webOrderLineItemID
        payload.bundleId = identity.bundleId
        payload.productId = productID
        payload.subscriptionGroupIdentifier = subscriptionGroupID
        payload.purchaseDate = purchaseDate
        payload.originalPurchaseDate = originalPurchaseDate
        payload.expiresDate = expirationDate
        payload.quantity = Int32(clamping: quantity)
        payload.type = productKind.transactionType
        payload.appAccountToken = appAccountToken
        payload.inAppOwnershipType = ownership == .purchased ? .purchased : .familyShared
        payload.signedDate = signedDate
        payload.revocationReason = revocation?.reason
        payload.revocationDate = revocation?.date
        payload.revocationType = revocation?.type
        // Sandbox and Production write `isUpgraded` only when true; Xcode writes it on every subscription transaction.
        payload.isUpgraded = isUpgraded ? true : (productKind == .autoRenewable && identity.environment == .xcode ? false : nil)
        payload.offerType = offer?.type
        payload.offerIdentifier = offer?.id
        payload.offerDiscountType = offer?.discountType
        payload.offerPeriod = offer?.period
        payload.environment = identity.environment
        payload.storefront = storefront
        payload.storefrontId = storefrontID
        payload.transactionReason = reason == .purchase ? .purchase : .renewal
        payload.currency = currency
        payload.price = price
        payload.appTransactionId = appTransactionID
        if let billing {
            payload.billingPlanType = billing.planType
            if let number = billing.paymentNumber, let total = billing.totalPayments {
                var commitment = TransactionCommitmentInfo()
                commitment.billingPeriodNumber = Int32(clamping: number)
                commitment.totalBillingPeriods = Int32(clamping: total)
                commitment.commitmentExpiresDate = billing.commitmentEnd
                commitment.commitmentPrice = billing.commitmentPrice
                payload.commitmentInfo = commitment
            }
        }
        return payload
    }

    /// An imported transaction's payload: what Apple signed, with what this store may have changed
    /// since (a refund or its reversal, an upgrade, a renewal-date extension, the app account token),
    /// signed now by this store.
    private func importedPayload(_ imported: JWSTransactionDecodedPayload, signedDate: Date) -> JWSTransactionDecodedPayload {
        var payload = imported
        payload.signedDate = signedDate
        payload.expiresDate = expirationDate
        payload.appAccountToken = appAccountToken
        if revocation?.date != imported.revocationDate || revocation?.reason != imported.revocationReason {
            payload.revocationReason = revocation?.reason
            payload.revocationDate = revocation?.date
            payload.revocationType = revocation?.type
            if revocation == nil { payload.revocationPercentage = nil }
        }
        if isUpgraded { payload.isUpgraded = true }
        return payload
    }
}
