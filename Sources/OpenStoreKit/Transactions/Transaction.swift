import AppStoreModels
import AppStoreSigning
import Foundation
import StoreKitCatalog

/// A purchase, renewal or family-shared grant, as StoreKit's `Transaction` presents it.
///
/// Transactions come wrapped in a ``VerificationResult``; read them from `.verified` only. A
/// transaction fetched through a ``StoreClient`` remembers it, so ``finish()`` tells the store of
/// the device it came from.
public struct Transaction: Identifiable, Hashable, Sendable, JWSSignedValue, RequiredPropertiesChecking {
    /// The transaction identifier; in the local App Store the first one is 0, as in Xcode.
    public let id: UInt64
    /// The identifier of the original purchase (equal to ``id`` except for renewals and restores).
    public let originalID: UInt64
    /// The identifier of a subscription purchase event, shared across devices.
    public let webOrderLineItemID: String?
    public let productID: String
    public let subscriptionGroupID: String?
    public let appBundleID: String
    /// The charge date (the renewal date for renewals).
    public let purchaseDate: Date
    public let originalPurchaseDate: Date
    /// When a subscription period ends.
    public let expirationDate: Date?
    public let purchasedQuantity: Int
    /// Whether a higher-level subscription in the group superseded this one.
    public let isUpgraded: Bool
    public let ownershipType: OwnershipType
    public let signedDate: Date
    /// When the App Store refunded or revoked the transaction.
    public let revocationDate: Date?
    public let revocationReason: RevocationReason?
    public let productType: Product.ProductType
    /// The app's own identifier for the customer, given at purchase.
    public let appAccountToken: UUID?
    public let environment: AppStore.Environment
    public let reason: Reason
    public let storefront: Storefront
    /// The price paid, in the storefront's currency.
    public let price: Decimal?
    public let currency: Locale.Currency?
    /// The subscription offer the purchase used.
    public let offer: Offer?
    public let appTransactionID: String
    public let deviceVerification: Data
    public let deviceVerificationNonce: UUID
    /// The JSON payload of the JWS.
    public let jsonRepresentation: Data
    public let jwsRepresentation: String

    /// The decoded payload as the App Store signed it.
    let payload: JWSTransactionDecodedPayload
    /// The client this transaction came through.
    let client: StoreClient?

    init(payload: JWSTransactionDecodedPayload, jws: String, payloadData: Data, client: StoreClient?) {
        self.payload = payload
        self.client = client
        self.id = payload.transactionId.flatMap { UInt64($0) } ?? 0
        self.originalID = payload.originalTransactionId.flatMap { UInt64($0) } ?? id
        self.webOrderLineItemID = payload.webOrderLineItemId
        self.productID = payload.productId ?? ""
        self.subscriptionGroupID = payload.subscriptionGroupIdentifier
        self.appBundleID = payload.bundleId ?? ""
        self.purchaseDate = payload.purchaseDate ?? Date(timeIntervalSince1970: 0)
        self.originalPurchaseDate = payload.originalPurchaseDate ?? purchaseDate
        self.expirationDate = payload.expiresDate
        self.purchasedQuantity = Int(payload.quantity ?? 1)
        self.isUpgraded = payload.isUpgraded ?? false
        self.ownershipType = OwnershipType(rawValue: payload.inAppOwnershipType?.rawValue ?? OwnershipType.purchased.rawValue)
        self.signedDate = payload.signedDate ?? purchaseDate
        self.revocationDate = payload.revocationDate
        self.revocationReason = payload.revocationReason.map { RevocationReason(rawValue: Int($0.rawValue)) }
        self.productType = Product.ProductType(transactionType: payload.type)
        self.appAccountToken = payload.appAccountToken
        self.environment = AppStore.Environment(rawValue: payload.environment?.rawValue ?? "")
        self.reason = Reason(rawValue: payload.transactionReason?.rawValue ?? Reason.purchase.rawValue)
        self.storefront = Storefront(countryCode: payload.storefront ?? "", id: payload.storefrontId ?? "", currencyCode: payload.currency)
        self.price = payload.price.map { Decimal($0) / 1000 }
        self.currency = payload.currency.map { Locale.Currency($0) }
        self.offer = payload.offerType.map {
            Offer(id: payload.offerIdentifier, type: OfferType(rawValue: Int($0.rawValue)),
                  paymentMode: payload.offerDiscountType.map { Offer.PaymentMode(rawValue: $0.rawValue) },
                  period: payload.offerPeriod.flatMap { StoreKitCatalog.SubscriptionPeriod(iso8601: $0) }.map(Product.SubscriptionPeriod.init))
        }
        self.appTransactionID = payload.appTransactionId ?? ""
        self.deviceVerification = DeviceVerificationFields.digest(payload.deviceVerification)
        self.deviceVerificationNonce = payload.deviceVerificationNonce ?? DeviceVerificationFields.missingNonce
        self.jsonRepresentation = payloadData
        self.jwsRepresentation = jws
    }

    var hasRequiredProperties: Bool {
        payload.transactionId.flatMap { UInt64($0) } != nil && payload.originalTransactionId != nil && payload.productId != nil
            && payload.bundleId != nil && payload.purchaseDate != nil && payload.type != nil && payload.signedDate != nil
            && payload.deviceVerificationNonce != nil
    }

    public static func == (lhs: Transaction, rhs: Transaction) -> Bool { lhs.jwsRepresentation == rhs.jwsRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(jwsRepresentation) }

    // MARK: Finishing

    /// Tells the App Store the app delivered the purchase; until then the transaction is unfinished
    /// and comes back at every launch.
    public func finish() async {
        let client = self.client ?? StoreClient.active
        let id = self.id
        do {
            // Not cancelled with the caller: an app that stops its updates loop still finishes what it delivered.
            try await Task { try await client.transport.finish(transactionID: id, device: client.device) }.value
        } catch {
            StoreDiagnostics.report("finishing transaction \(id) failed: \(error)")
        }
    }

    /// The status of the subscription this transaction belongs to.
    public var subscriptionStatus: Product.SubscriptionInfo.Status? {
        get async {
            guard let group = subscriptionGroupID else { return nil }
            let client = self.client ?? StoreClient.active
            let statuses = (try? await client.subscriptionStatuses(groupID: group)) ?? []
            return statuses.first { $0.transaction.unsafePayloadValue.originalID == originalID }
        }
    }
}

extension Transaction {
    /// Whether the customer bought the product or a family member shares it.
    public struct OwnershipType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let purchased = OwnershipType(rawValue: "PURCHASED")
        public static let familyShared = OwnershipType(rawValue: "FAMILY_SHARED")
    }

    /// Why the App Store revoked a transaction.
    public struct RevocationReason: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Refunded because of an issue in the app.
        public static let developerIssue = RevocationReason(rawValue: 1)
        /// Refunded or revoked for another reason.
        public static let other = RevocationReason(rawValue: 0)
    }

    /// Why a transaction exists: a purchase, or a subscription renewal.
    public struct Reason: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let purchase = Reason(rawValue: "PURCHASE")
        public static let renewal = Reason(rawValue: "RENEWAL")
    }

    /// The kind of a subscription offer.
    public struct OfferType: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let introductory = OfferType(rawValue: 1)
        public static let promotional = OfferType(rawValue: 2)
        public static let code = OfferType(rawValue: 3)
        public static let winBack = OfferType(rawValue: 4)
    }

    /// The kind of subscription offer the purchase used: StoreKit's name for ``offer``'s `type`
    /// before iOS 17.2, which code written for older systems still reads.
    public var offerType: OfferType? { offer?.type }

    /// The offer's identifier: StoreKit's name for ``offer``'s `id` before iOS 17.2.
    public var offerID: String? { offer?.id }

    /// The offer's payment mode as its raw string (`FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`):
    /// StoreKit's name for ``offer``'s `paymentMode` before iOS 17.2.
    public var offerPaymentModeStringRepresentation: String? { offer?.paymentMode?.rawValue }

    /// The subscription offer a transaction used.
    public struct Offer: Hashable, Sendable {
        /// The offer identifier (the reference name for offer codes); `nil` for introductory offers.
        public let id: String?
        public let type: OfferType
        public let paymentMode: PaymentMode?
        /// The offer's duration.
        public let period: Product.SubscriptionPeriod?

        /// How the customer pays during an offer.
        public struct PaymentMode: RawRepresentable, Hashable, Sendable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let freeTrial = PaymentMode(rawValue: "FREE_TRIAL")
            public static let payAsYouGo = PaymentMode(rawValue: "PAY_AS_YOU_GO")
            public static let payUpFront = PaymentMode(rawValue: "PAY_UP_FRONT")
            public static let oneTime = PaymentMode(rawValue: "ONE_TIME")
        }
    }
}

extension Transaction {
    /// Decodes a signed transaction without verifying it.
    ///
    /// For tools and test controls that got the JWS from a local store they trust, as Xcode's
    /// `SKTestSession.buyProduct` hands back a `Transaction`. Never grant anything from a
    /// transaction decoded this way; app code gets transactions through ``VerificationResult``.
    ///
    /// - Throws: ``VerificationResult/VerificationError/invalidEncoding`` when the JWS does not decode.
    public init(unverifiedJWS jws: String) throws(VerificationResult<Transaction>.VerificationError) {
        do {
            let compact = try CompactJWS(jws)
            self.init(payload: try compact.payload(as: JWSTransactionDecodedPayload.self), jws: jws, payloadData: compact.payloadData, client: nil)
        } catch {
            throw .invalidEncoding
        }
    }
}
