import Foundation
import Synchronization

extension Product {
    /// How a purchase ended.
    public enum PurchaseResult: Sendable {
        /// The purchase completed; verify the transaction, deliver, then finish it.
        case success(VerificationResult<Transaction>)
        /// The customer cancelled.
        case userCancelled
        /// The purchase waits for approval (Ask to Buy) or for an interruption to be resolved; the
        /// transaction arrives later through `Transaction.updates`.
        case pending
        /// Stands for the cases StoreKit may add. It cannot be created, so a switch needs no case
        /// for it, and a `default:` or `@unknown default:` (as StoreKit code writes) compiles cleanly.
        @available(*, unavailable, message: "reserved for cases StoreKit may add")
        case futureCase
    }

    /// Why a purchase was refused, in StoreKit's cases.
    public enum PurchaseError: Error, Hashable, Sendable, CaseIterable {
        case invalidQuantity
        case productUnavailable
        case purchaseNotAllowed
        case ineligibleForOffer
        case invalidOfferIdentifier
        case invalidOfferPrice
        case invalidOfferSignature
        case missingOfferParameters
        /// The account's payment method must be bound to the app first (a payment method binding).
        case paymentMethodBindingConfigurationRequired

        init?(caseName name: String) {
            guard let match = Self.allCases.first(where: { "\($0)" == name }) else { return nil }
            self = match
        }
    }

    /// A choice made for one purchase.
    public struct PurchaseOption: Hashable, Sendable, CustomDebugStringConvertible {
        enum Value: Hashable, Sendable {
            case appAccountToken(UUID)
            case quantity(Int)
            case offer(TransportOffer)
            case purchaseDate(Date, SubscriptionRenewalBehavior)
            case simulatesAskToBuy(Bool)
            case onStorefrontChange(StorefrontChangeHandler)
            /// A custom key and its value in words (`true`, `2.5`, base64 for data).
            case custom(key: String, value: String)
            /// A billing plan's type (`MONTHLY`, `BILLED_UPFRONT`).
            case billingPlan(String)
        }

        /// The app's answer to a storefront change, compared by identity (a closure has no value).
        final class StorefrontChangeHandler: Hashable, Sendable {
            let shouldContinue: @Sendable (Storefront) -> Bool
            init(_ shouldContinue: @escaping @Sendable (Storefront) -> Bool) { self.shouldContinue = shouldContinue }
            static func == (lhs: StorefrontChangeHandler, rhs: StorefrontChangeHandler) -> Bool { lhs === rhs }
            func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
        }

        let value: Value

        public var debugDescription: String {
            switch value {
            case .appAccountToken(let token): return "PurchaseOption.appAccountToken(\(token.uuidString.lowercased()))"
            case .quantity(let quantity): return "PurchaseOption.quantity(\(quantity))"
            case .offer(let offer): return "PurchaseOption.offer(\(offer))"
            case .purchaseDate(let date, let behavior): return "PurchaseOption.purchaseDate(\(date.formatted(.iso8601)), \(behavior))"
            case .simulatesAskToBuy(let enabled): return "PurchaseOption.simulatesAskToBuyInSandbox(\(enabled))"
            case .onStorefrontChange: return "PurchaseOption.onStorefrontChange"
            case .custom(let key, let value): return "PurchaseOption.custom(\(key): \(value))"
            case .billingPlan(let type): return "PurchaseOption.billingPlanType(\(type))"
            }
        }

        /// The app's own identifier for the customer; it is stored in the transaction and renewal info.
        public static func appAccountToken(_ token: UUID) -> PurchaseOption { PurchaseOption(value: .appAccountToken(token)) }

        /// How many of a consumable to buy (1 to 10).
        public static func quantity(_ quantity: Int) -> PurchaseOption { PurchaseOption(value: .quantity(quantity)) }

        /// A promotional offer with a signature over the joined offer fields (StoreKit's original form).
        ///
        /// - Parameter timestamp: Milliseconds since 1970, as signed.
        public static func promotionalOffer(offerID: String, keyID: String, nonce: UUID, signature: Data, timestamp: Int) -> PurchaseOption {
            PurchaseOption(value: .offer(.promotionalLegacy(offerID: offerID, keyID: keyID, nonce: nonce, timestamp: Int64(timestamp),
                                                            signature: signature.base64EncodedString())))
        }

        /// A promotional offer signed as a compact JWS with the app's in-app purchase key. As in
        /// StoreKit, it is a set of options to add to a purchase's others:
        /// `options.formUnion(.promotionalOffer(offerID, compactJWS: jws))`.
        public static func promotionalOffer(_ offerID: String, compactJWS: String) -> [PurchaseOption] {
            [PurchaseOption(value: .offer(.promotionalJWS(offerID: offerID, jws: compactJWS)))]
        }

        /// A promotional offer with its signature in the form StoreKit's offer-signing API returns it.
        public static func promotionalOffer(offerID: String, signature: SubscriptionOffer.Signature) -> PurchaseOption {
            promotionalOffer(offerID: offerID, keyID: signature.keyID, nonce: signature.nonce, signature: signature.signature,
                             timestamp: signature.timestamp)
        }

        /// Whether the customer may have the introductory offer, as the developer's server decided it:
        /// a compact JWS signed with the app's in-app purchase key (audience
        /// `introductory-offer-eligibility`, `productId`, `allowIntroductoryOffer`). It replaces the
        /// account's own eligibility for this purchase. StoreKit sends it as the custom option
        /// `introOfferEligibilityParam`, and so does this package.
        public static func introductoryOfferEligibility(compactJWS: String) -> PurchaseOption {
            custom(key: "introOfferEligibilityParam", value: compactJWS)
        }

        /// A win-back offer of the product.
        public static func winBackOffer(_ offer: SubscriptionOffer) -> PurchaseOption {
            PurchaseOption(value: .offer(.winBack(offerID: offer.id ?? "")))
        }

        /// Sandbox only: makes the purchase wait for Ask to Buy approval, as if the account had it on.
        /// A Sandbox store honours it; Xcode and Production stores ignore it, as Apple's do (in Xcode
        /// the test session's `askToBuyEnabled` decides).
        public static func simulatesAskToBuyInSandbox(_ enabled: Bool) -> PurchaseOption {
            PurchaseOption(value: .simulatesAskToBuy(enabled))
        }

        /// Whether to continue when the account's storefront changed since the app last saw it (through
        /// `Storefront.current` or `Storefront.updates`): the closure gets the new storefront; `false`
        /// ends the purchase with `StoreKitError.notAvailableInStorefront`, before anything is bought.
        /// Without this option the purchase continues in the new storefront, as StoreKit's default.
        public static func onStorefrontChange(shouldContinuePurchase: @escaping @Sendable (Storefront) -> Bool) -> PurchaseOption {
            PurchaseOption(value: .onStorefrontChange(StorefrontChangeHandler(shouldContinuePurchase)))
        }

        /// A custom key-value option. StoreKit passes these to the App Store, which never signs them
        /// into the transaction; the local store keeps them with the purchase, in words, for tests and
        /// the Transaction Manager to see (`SKTestTransaction.customPurchaseOptions`).
        public static func custom(key: String, value: String) -> PurchaseOption { PurchaseOption(value: .custom(key: key, value: value)) }
        public static func custom(key: String, value: Bool) -> PurchaseOption { PurchaseOption(value: .custom(key: key, value: value ? "true" : "false")) }
        public static func custom(key: String, value: Double) -> PurchaseOption { PurchaseOption(value: .custom(key: key, value: "\(value)")) }
        public static func custom(key: String, value: Data) -> PurchaseOption {
            PurchaseOption(value: .custom(key: key, value: value.base64EncodedString()))
        }

        // Testing options, as Xcode's `SKTestSession.buyProduct(identifier:options:)` takes them.

        /// Testing: back-dates the purchase; a subscription then renews up to now or runs one period.
        public static func purchaseDate(_ date: Date, renewalBehavior: SubscriptionRenewalBehavior = .renewUntilNow) -> PurchaseOption {
            PurchaseOption(value: .purchaseDate(date, renewalBehavior))
        }

        /// Testing: redeems the offer code with this reference name.
        public static func codeOffer(referenceName: String) -> PurchaseOption {
            PurchaseOption(value: .offer(.code(referenceName: referenceName)))
        }

        /// Testing: applies a promotional offer without a signature.
        public static func promotionalOffer(id: String) -> PurchaseOption {
            PurchaseOption(value: .offer(.promotionalUnsigned(offerID: id)))
        }

        /// What a back-dated subscription purchase does between its purchase date and now.
        public enum SubscriptionRenewalBehavior: String, Hashable, Sendable {
            /// Renews every period up to now.
            case renewUntilNow
            /// Runs exactly one period with automatic renewal off.
            case cancelImmediately
        }
    }

    /// Buys the product on the device it was fetched through.
    ///
    /// - Returns: `.success` with the transaction to verify, deliver and finish; `.pending` for Ask
    ///   to Buy or an interrupted purchase; `.userCancelled`.
    /// - Throws: `Product.PurchaseError` or `StoreKitError`.
    public func purchase(options: Set<PurchaseOption> = []) async throws -> PurchaseResult {
        let client = self.client ?? StoreClient.active
        return try await client.purchase(productID: id, options: options)
    }
}

extension StoreClient {
    /// Buys a product by identifier from this device.
    public func purchase(productID: String, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        try await purchase(productID: productID, options: options, deliveringThroughUpdates: false)
    }

    /// A purchase; one made through a store view also reaches this device's `Transaction.updates`.
    func purchase(productID: String, options: Set<Product.PurchaseOption>, deliveringThroughUpdates: Bool) async throws -> Product.PurchaseResult {
        var request = try TransportPurchaseRequest(productID: productID, device: device, options: options)
        request.deliversThroughUpdates = deliveringThroughUpdates
        for option in options {
            if case .onStorefrontChange(let handler) = option.value { try await checkStorefront(handler) }
        }
        let outcome: TransportPurchaseOutcome
        do {
            outcome = try await storeKitCall { try await transport.purchase(request) }
            paymentsAllowed.withLock { $0 = true }
        } catch Product.PurchaseError.purchaseNotAllowed {
            paymentsAllowed.withLock { $0 = false }
            throw Product.PurchaseError.purchaseNotAllowed
        }
        switch outcome {
        case .success(let item):
            guard let result = verifyTransaction(item) else {
                throw StoreKitError.systemError(StoreConnectionError(message: "the store answered the purchase with data that does not decode"))
            }
            return .success(result)
        case .pending: return .pending
        case .userCancelled: return .userCancelled
        }
    }
}

extension StoreClient {
    /// Asks the app whether to go on when the account's storefront is not the one it last saw.
    private func checkStorefront(_ handler: Product.PurchaseOption.StorefrontChangeHandler) async throws {
        let current = Storefront(try await storeKitCall { try await transport.storefront(device: device) })
        let seen = observedStorefront.withLock { seen in
            defer { seen = current }
            return seen
        }
        guard let seen, seen != current else { return }
        guard handler.shouldContinue(current) else { throw StoreKitError.notAvailableInStorefront }
    }
}

extension TransportPurchaseRequest {
    /// A purchase of `productID` from `device` with StoreKit's purchase options.
    ///
    /// - Throws: `Product.PurchaseError` when options contradict each other (two quantities, two offers).
    public init(productID: String, device: String, options: Set<Product.PurchaseOption>) throws {
        var request = TransportPurchaseRequest(productID: productID, device: device)
        var offers = 0
        for option in options {
            switch option.value {
            case .appAccountToken(let token): request.appAccountToken = token
            case .quantity(let quantity): request.quantity = quantity
            case .offer(let offer): request.offer = offer; offers += 1
            case .purchaseDate(let date, let behavior):
                request.purchaseDate = date
                request.cancelsAfterFirstPeriod = behavior == .cancelImmediately
            case .simulatesAskToBuy(let enabled): request.simulatesAskToBuyInSandbox = enabled
            case .custom(let key, let value): request.customOptions[key] = value
            case .billingPlan(let type): request.billingPlanType = type
            case .onStorefrontChange: break
            }
        }
        if options.filter({ if case .quantity = $0.value { return true } else { return false } }).count > 1 {
            throw Product.PurchaseError.invalidQuantity
        }
        if offers > 1 { throw Product.PurchaseError.invalidOfferIdentifier }
        self = request
    }
}
