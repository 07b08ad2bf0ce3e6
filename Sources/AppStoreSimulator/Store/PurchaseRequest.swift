import Foundation

/// What a customer asks the store for: a product, on a device, for an account.
public struct PurchaseRequest: Hashable, Sendable {
    public var productID: String
    /// The buying account; created on first use.
    public var account: String
    /// The device the app runs on; created on first use. `nil` buys outside the app (the transaction
    /// manager, `SKTestSession.buyProduct`), and the transaction arrives through every device's updates.
    public var device: String?
    /// How many of a consumable; other kinds take 1.
    public var quantity: Int
    /// The app's own identifier for the customer (`Product.PurchaseOption.appAccountToken`).
    public var appAccountToken: UUID?
    /// A subscription offer; the introductory offer applies by itself when the customer is eligible.
    public var offer: PurchaseOffer?
    /// A purchase date in the past (the transaction manager's back-dated purchases).
    public var purchaseDate: Date?
    /// What a back-dated subscription does between its purchase date and now.
    public var renewalBehavior: RenewalBehavior
    /// `simulatesAskToBuyInSandbox`: in a Sandbox store the purchase waits for a parent's approval.
    public var simulatesAskToBuyInSandbox: Bool
    /// Bought through a store view (or the web storefront): the purchasing device also hears the
    /// transaction through its `Transaction.updates`, as an app counting purchases in its listener expects.
    public var deliversThroughUpdates = false
    /// The app's custom options (`Product.PurchaseOption.custom(key:value:)`), values in words. One key
    /// the store reads: ``introductoryOfferEligibilityKey``, StoreKit's carrier of
    /// `introductoryOfferEligibility(compactJWS:)`; all are kept on the transaction, never signed.
    public var customOptions: [String: String] = [:]

    /// The custom option StoreKit sends `Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)` as.
    public static let introductoryOfferEligibilityKey = "introOfferEligibilityParam"

    /// `Product.PurchaseOption.billingPlanType(_:)`: `MONTHLY` pays a monthly billing plan of the
    /// subscription (a commitment paid in monthly payments), `BILLED_UPFRONT` the usual way.
    public var billingPlanType: String?

    /// The custom options as a transaction keeps them: `nil` when there are none.
    var recordedCustomOptions: [String: String]? { customOptions.isEmpty ? nil : customOptions }

    public init(productID: String, account: String = "default", device: String? = "default", quantity: Int = 1,
                appAccountToken: UUID? = nil, offer: PurchaseOffer? = nil, purchaseDate: Date? = nil,
                renewalBehavior: RenewalBehavior = .renewUntilNow, simulatesAskToBuyInSandbox: Bool = false,
                deliversThroughUpdates: Bool = false) {
        self.deliversThroughUpdates = deliversThroughUpdates
        self.productID = productID
        // Names in Unicode's composed form (NFC), as the ledger keeps them.
        self.account = account.ledgerName
        self.device = device?.ledgerName
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.offer = offer
        self.purchaseDate = purchaseDate
        self.renewalBehavior = renewalBehavior
        self.simulatesAskToBuyInSandbox = simulatesAskToBuyInSandbox
    }
}

/// A subscription offer asked for in a purchase.
public enum PurchaseOffer: Hashable, Sendable {
    /// The product's introductory offer (it also applies by itself when the customer is eligible).
    case introductory
    /// A promotional offer, signed by the developer's server. Purchases outside the app (the
    /// transaction manager) may leave the signature out, as Xcode's `promotionalOffer(id:)` does.
    case promotional(id: String, signature: PromotionalOfferSignatureInput?)
    /// An offer code, by its reference name.
    case code(referenceName: String)
    /// A win-back offer, by its identifier.
    case winBack(id: String)
}

/// The signature of a promotional offer, in either of StoreKit's forms.
public enum PromotionalOfferSignatureInput: Hashable, Sendable {
    /// `promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`: base64 DER over the joined fields.
    case legacy(keyID: String, nonce: UUID, timestamp: Int64, signature: String)
    /// `promotionalOffer(_:compactJWS:)`: a JWS signed with the in-app purchase key.
    case jws(String)
}

/// What a back-dated auto-renewable purchase does between its purchase date and now.
public enum RenewalBehavior: String, Hashable, Sendable, Codable {
    /// Renews every period up to now, one transaction each.
    case renewUntilNow
    /// Runs exactly one period, with automatic renewal off.
    case cancelImmediately
}

/// A transaction as the store hands it out: the ledger record and its signed form.
public struct SignedTransaction: Hashable, Sendable {
    public let transaction: LedgerTransaction
    /// The JWS, signed for the device that asked (or in server form).
    public let jws: String
    /// Set when the test session simulates a verification failure: clients must treat the
    /// transaction as unverified with this error.
    public let simulatedVerificationFailure: VerificationErrorCode?

    public init(transaction: LedgerTransaction, jws: String, simulatedVerificationFailure: VerificationErrorCode?) {
        self.transaction = transaction
        self.jws = jws
        self.simulatedVerificationFailure = simulatedVerificationFailure
    }
}

/// How a purchase ended.
public enum PurchaseOutcome: Hashable, Sendable {
    /// Bought (or, for a non-consumable already owned, restored free of charge).
    case success(SignedTransaction)
    /// Waiting: for a parent's approval (Ask to Buy) or for an interrupted purchase to be resolved.
    /// The transaction arrives later through `Transaction.updates`.
    case pending(transactionID: UInt64, reason: PendingReason)
    /// The customer cancelled.
    case userCancelled

    /// Why a purchase is pending.
    public enum PendingReason: String, Hashable, Sendable, Codable {
        case askToBuy, interrupted
    }
}

/// A purchase as committed, before the transaction handed back is signed (see
/// ``SimulatedAppStore/purchase(_:)``): signing happens after the commit, off the store's executor.
enum CommittedPurchase: Sendable {
    /// Bought: the transaction, to be signed for the device that asked (server form without one) at `date`.
    case completed(LedgerTransaction, for: StoreDevice?, at: Date, verificationFailure: VerificationErrorCode?)
    case pending(transactionID: UInt64, reason: PurchaseOutcome.PendingReason)
    case userCancelled

    /// The outcome with its transaction signed by `signer`.
    func signed(with signer: StoreSigner) throws(AppStoreError) -> PurchaseOutcome {
        switch self {
        case .completed(let transaction, let device, let date, let failure):
            return .success(SignedTransaction(transaction: transaction, jws: try signer.sign(transaction, for: device, at: date),
                                              simulatedVerificationFailure: failure))
        case .pending(let id, let reason): return .pending(transactionID: id, reason: reason)
        case .userCancelled: return .userCancelled
        }
    }
}
