import AppStoreModels
import Foundation
import StoreKitCatalog

/// How a ``StoreClient`` reaches an App Store: the one seam between the StoreKit-shaped API and a store.
///
/// Every call names the device it is made from. The in-process transport of `SimulatorConnection`
/// talks to a local App Store directly; a transport over HTTP can implement the same protocol. The
/// transport carries signed data only: the client verifies everything itself.
///
/// Implementation requirements:
/// - Signed payloads are returned exactly as the store signed them, signed for the asking device.
/// - ``nextUpdates(device:channel:)`` returns each feed entry once, marking it delivered, and waits
///   (without spinning) while the feed is empty, until the calling task is cancelled.
/// - Failures are ``StoreTransportError``s carrying StoreKit's error cases.
public protocol StoreTransport: Sendable {
    /// What the client needs to verify signed data from this store for a device.
    func verificationContext(device: String) async throws -> VerificationContext
    /// The products with these identifiers, presented in the device's storefront.
    func products(for identifiers: [String], device: String) async throws -> [CatalogProduct]
    /// Buys a product.
    func purchase(_ request: TransportPurchaseRequest) async throws -> TransportPurchaseOutcome
    /// Signed transactions of a view of the device's account.
    func transactions(_ view: TransactionView, device: String) async throws -> [SignedItem]
    /// Finishes a transaction.
    func finish(transactionID: UInt64, device: String) async throws
    /// The app launched on the device: unfinished transactions are queued in its feed again.
    func launch(device: String) async throws
    /// Takes the waiting entries of a channel of the device's feed, waiting while there are none.
    func nextUpdates(device: String, channel: TransportUpdate.Channel) async throws -> [TransportUpdate]
    /// The subscription statuses of a group for the device's account.
    func subscriptionStatuses(groupID: String, device: String) async throws -> [TransportStatus]
    /// Whether the device's account may have the group's introductory offer.
    func isEligibleForIntroOffer(groupID: String, device: String) async throws -> Bool
    /// The signed app transaction for the device.
    func appTransaction(device: String) async throws -> SignedItem
    /// The storefront the device's account buys in.
    func storefront(device: String) async throws -> StoreKitCatalog.Storefront
    /// `AppStore.sync()`: fails as the store's simulated failures say; transactions are then re-read.
    func sync(device: String) async throws
    /// A refund the customer asks for in the app.
    func requestRefund(transactionID: UInt64, device: String) async throws
    /// Shows a sheet over the app (`manageSubscriptions`, `offerCodeRedeem`, or a message's:
    /// `billingIssue`, `priceIncreaseConsent`, `winBackOffer`, `generic`) and returns when the customer
    /// closes it, having done what the store's test controls queued for it.
    ///
    /// - Parameter transactionID: For a message's sheet, the subscription the message is about.
    func presentSheet(_ sheet: String, device: String, about transactionID: UInt64?) async throws
    /// Whether the device's account may buy (`AppStore.canMakePayments`).
    func canMakePayments(device: String) async throws -> Bool
    /// The terms and privacy policy the store's `.storekit` file gives, for the device's storefront.
    func storePolicies(device: String) async throws -> StorePolicies
    /// The app asks the customer for a review: the store records it; `true` when the prompt showed.
    func requestReview(device: String) async throws -> Bool
    /// The device's promoted in-app purchases, in the order the App Store shows them.
    func promotedProducts(device: String) async throws -> [TransportPromotion]
    /// Sets the order and visibility of the device's promoted in-app purchases.
    func updatePromotedProducts(_ promotions: [TransportPromotion], device: String) async throws
}

/// A promoted in-app purchase on a device: its product and visibility (`appStoreConnectDefault`,
/// `visible`, `hidden`).
public struct TransportPromotion: Sendable, Hashable, Codable {
    public var productID: String
    public var visibility: String

    public init(productID: String, visibility: String) {
        self.productID = productID
        self.visibility = visibility
    }
}

/// What signed data from a store is checked against.
public struct VerificationContext: Sendable, Hashable {
    /// DER root certificates the store's signing chains end in.
    public var rootCertificates: [Data]
    public var bundleId: String
    /// The environment's raw value (`Xcode`, `Sandbox`, …).
    public var environment: String
    /// The device's `AppStore.deviceVerificationID`.
    public var deviceVerificationID: UUID

    public init(rootCertificates: [Data], bundleId: String, environment: String, deviceVerificationID: UUID) {
        self.rootCertificates = rootCertificates
        self.bundleId = bundleId
        self.environment = environment
        self.deviceVerificationID = deviceVerificationID
    }
}

/// A signed payload as a store hands it out.
public struct SignedItem: Sendable, Hashable {
    public var jws: String
    /// A verification failure the store's test session simulates (a `VerificationError` case name).
    public var simulatedVerificationFailure: String?

    public init(jws: String, simulatedVerificationFailure: String? = nil) {
        self.jws = jws
        self.simulatedVerificationFailure = simulatedVerificationFailure
    }
}

/// Which transactions to read.
public enum TransactionView: Sendable, Hashable {
    case all
    case currentEntitlements
    case unfinished
    case latest(productID: String)
    case transaction(id: UInt64)
}

/// A purchase as sent to a store.
public struct TransportPurchaseRequest: Sendable, Hashable {
    public var productID: String
    public var device: String
    public var quantity: Int
    public var appAccountToken: UUID?
    public var offer: TransportOffer?
    /// Testing: a purchase date in the past.
    public var purchaseDate: Date?
    /// Testing: a back-dated subscription runs one period instead of renewing up to now.
    public var cancelsAfterFirstPeriod: Bool
    /// `simulatesAskToBuyInSandbox(true)`: in a Sandbox store the purchase waits for a parent's approval.
    public var simulatesAskToBuyInSandbox: Bool
    /// Bought through a store view: the transaction also reaches this device's `Transaction.updates`.
    public var deliversThroughUpdates = false
    /// `Product.PurchaseOption.custom(key:value:)` options, values in words; StoreKit's
    /// `introductoryOfferEligibility(compactJWS:)` is the key `introOfferEligibilityParam`.
    public var customOptions: [String: String] = [:]
    /// `Product.PurchaseOption.billingPlanType(_:)`: `MONTHLY` or `BILLED_UPFRONT`.
    public var billingPlanType: String?

    public init(productID: String, device: String, quantity: Int = 1, appAccountToken: UUID? = nil, offer: TransportOffer? = nil,
                purchaseDate: Date? = nil, cancelsAfterFirstPeriod: Bool = false, simulatesAskToBuyInSandbox: Bool = false) {
        self.productID = productID
        self.device = device
        self.quantity = quantity
        self.appAccountToken = appAccountToken
        self.offer = offer
        self.purchaseDate = purchaseDate
        self.cancelsAfterFirstPeriod = cancelsAfterFirstPeriod
        self.simulatesAskToBuyInSandbox = simulatesAskToBuyInSandbox
    }
}

/// A subscription offer in a purchase.
public enum TransportOffer: Sendable, Hashable {
    case introductory
    case promotionalLegacy(offerID: String, keyID: String, nonce: UUID, timestamp: Int64, signature: String)
    case promotionalJWS(offerID: String, jws: String)
    case promotionalUnsigned(offerID: String)
    case code(referenceName: String)
    case winBack(offerID: String)
}

/// How a purchase ended at the store.
public enum TransportPurchaseOutcome: Sendable, Hashable {
    case success(SignedItem)
    case pending
    case userCancelled
}

/// An entry of a device's feed.
public struct TransportUpdate: Sendable, Hashable {
    /// The sequence an entry belongs to.
    public enum Channel: String, Sendable, Hashable, CaseIterable {
        /// `Transaction.updates`.
        case transactions
        /// `Product.SubscriptionInfo.Status.updates`.
        case statuses
        /// `Message.messages`.
        case messages
        /// `PurchaseIntent.intents`.
        case purchaseIntents
        /// `Storefront.updates`.
        case storefronts
    }

    /// For transaction and status entries (empty for the others).
    public var transaction: SignedItem
    /// For status entries.
    public var renewalInfo: SignedItem?
    /// For status entries: the state's raw value (1 subscribed … 5 revoked).
    public var renewalState: Int?
    /// For messages: the reason (`billingIssue`, `priceIncreaseConsent`, `winBackOffer`, `generic`).
    public var messageReason: String?
    /// For messages: the original transaction of the subscription the message is about.
    public var subjectTransactionID: UInt64?
    /// For purchase intents: the product, and the offer to buy it with.
    public var productID: String?
    public var offerID: String?
    /// For storefront changes: the new storefront's country code.
    public var storefrontCountryCode: String?

    public init(transaction: SignedItem, renewalInfo: SignedItem? = nil, renewalState: Int? = nil) {
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.renewalState = renewalState
    }

    /// An entry that carries no transaction (a message, purchase intent or storefront change).
    public init(messageReason: String? = nil, subjectTransactionID: UInt64? = nil, productID: String? = nil, offerID: String? = nil,
                storefrontCountryCode: String? = nil) {
        self.init(transaction: SignedItem(jws: ""))
        self.messageReason = messageReason
        self.subjectTransactionID = subjectTransactionID
        self.productID = productID
        self.offerID = offerID
        self.storefrontCountryCode = storefrontCountryCode
    }
}

/// A subscription status as a store reports it.
public struct TransportStatus: Sendable, Hashable {
    /// The state's raw value (1 subscribed, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    public var state: Int
    public var transaction: SignedItem
    public var renewalInfo: SignedItem

    public init(state: Int, transaction: SignedItem, renewalInfo: SignedItem) {
        self.state = state
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }
}

/// A failure at the store, in StoreKit's error families.
public enum StoreTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A `StoreKitError` case, by name.
    case storeKit(String, message: String)
    /// A `Product.PurchaseError` case, by name.
    case purchase(String, message: String)
    /// A `Transaction.RefundRequestError` case, by name.
    case refundRequest(String, message: String)
    /// The store could not read or write its data; nothing was changed (the reason says whether
    /// trying again may work).
    case storage(StorageFailure)
    /// Anything else (the store's own controls).
    case other(String)

    public var description: String {
        switch self {
        case .storeKit(let code, let message): return "StoreKitError.\(code): \(message)"
        case .purchase(let code, let message): return "Product.PurchaseError.\(code): \(message)"
        case .refundRequest(let code, let message): return "RefundRequestError.\(code): \(message)"
        case .storage(let failure): return "storage: \(failure.message)"
        case .other(let message): return message
        }
    }
}
