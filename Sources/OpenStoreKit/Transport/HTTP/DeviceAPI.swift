import AppStoreModels
import Foundation

/// The JSON bodies of the device API that `storekit serve` offers and ``HTTPStoreTransport`` calls:
/// one type per body, shared by both sides so they cannot drift apart. Signed payloads travel exactly
/// as the store signed them; dates are milliseconds since 1970.
public enum DeviceAPI {
    /// The path prefix of a device's calls: `/v1/devices/{device}`.
    /// The header every request of a program carries (`X-OpenStoreKit-Request: 1`): a web page cannot
    /// make a browser send it to another site without the site's leave, so the server takes changes only
    /// with it, a JSON body or an `Authorization` header.
    public static let programHeader = "X-OpenStoreKit-Request"

    public static func devicePath(_ device: String) -> String {
        "/v1/devices/" + (device.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? device)
    }

    public struct VerificationContextBody: Codable, Sendable, Hashable {
        /// Base64 DER root certificates.
        public var rootCertificates: [String]
        public var bundleId: String
        public var environment: String
        public var deviceVerificationID: UUID

        public init(_ context: VerificationContext) {
            rootCertificates = context.rootCertificates.map { $0.base64EncodedString() }
            bundleId = context.bundleId
            environment = context.environment
            deviceVerificationID = context.deviceVerificationID
        }

        public var context: VerificationContext? {
            let roots = rootCertificates.compactMap { Data(base64Encoded: $0) }
            guard roots.count == rootCertificates.count else { return nil }
            return VerificationContext(rootCertificates: roots, bundleId: bundleId, environment: environment, deviceVerificationID: deviceVerificationID)
        }
    }

    /// Which of the asked products the store sells, and how it presents them.
    public struct ProductsBody: Codable, Sendable, Hashable {
        public var productIDs: [String]
        /// The storefront's country code (`USA`).
        public var storefront: String
        public var locale: String
        /// A fingerprint of the store's configuration, so a client fetches it again only when it changed.
        public var configurationVersion: String

        public init(productIDs: [String], storefront: String, locale: String, configurationVersion: String) {
            self.productIDs = productIDs
            self.storefront = storefront
            self.locale = locale
            self.configurationVersion = configurationVersion
        }
    }

    public struct SignedItemBody: Codable, Sendable, Hashable {
        public var jws: String
        public var simulatedVerificationFailure: String?

        public init(_ item: SignedItem) {
            jws = item.jws
            simulatedVerificationFailure = item.simulatedVerificationFailure
        }

        public var item: SignedItem { SignedItem(jws: jws, simulatedVerificationFailure: simulatedVerificationFailure) }
    }

    public struct ItemsBody: Codable, Sendable, Hashable {
        public var items: [SignedItemBody]
        public init(items: [SignedItemBody]) { self.items = items }
    }

    /// A purchase request.
    public struct PurchaseBody: Codable, Sendable, Hashable {
        public var productID: String
        public var quantity: Int?
        public var appAccountToken: UUID?
        public var offer: OfferBody?
        /// Milliseconds since 1970.
        public var purchaseDate: Int64?
        public var cancelsAfterFirstPeriod: Bool?
        public var simulatesAskToBuyInSandbox: Bool?
        public var deliversThroughUpdates: Bool?
        /// `Product.PurchaseOption.custom(key:value:)` options, values in words.
        public var customOptions: [String: String]?
        /// `Product.PurchaseOption.billingPlanType(_:)`: `MONTHLY` or `BILLED_UPFRONT`.
        public var billingPlanType: String?

        public init(_ request: TransportPurchaseRequest) {
            productID = request.productID
            quantity = request.quantity
            appAccountToken = request.appAccountToken
            offer = request.offer.map(OfferBody.init)
            purchaseDate = request.purchaseDate.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
            cancelsAfterFirstPeriod = request.cancelsAfterFirstPeriod ? true : nil
            simulatesAskToBuyInSandbox = request.simulatesAskToBuyInSandbox ? true : nil
            deliversThroughUpdates = request.deliversThroughUpdates ? true : nil
            customOptions = request.customOptions.isEmpty ? nil : request.customOptions
            billingPlanType = request.billingPlanType
        }

        public func request(device: String) -> TransportPurchaseRequest? {
            var offer: TransportOffer?
            if let body = self.offer {
                guard let parsed = body.offer else { return nil }
                offer = parsed
            }
            var request = TransportPurchaseRequest(productID: productID, device: device, quantity: quantity ?? 1, appAccountToken: appAccountToken,
                                                   offer: offer, purchaseDate: purchaseDate.map { Date(timeIntervalSince1970: Double($0) / 1000) },
                                                   cancelsAfterFirstPeriod: cancelsAfterFirstPeriod ?? false,
                                                   simulatesAskToBuyInSandbox: simulatesAskToBuyInSandbox ?? false)
            request.deliversThroughUpdates = deliversThroughUpdates ?? false
            request.customOptions = customOptions ?? [:]
            request.billingPlanType = billingPlanType
            return request
        }
    }

    /// An offer: `kind` is `introductory`, `promotional`, `code` or `winBack`.
    public struct OfferBody: Codable, Sendable, Hashable {
        public var kind: String
        public var offerID: String?
        public var keyID: String?
        public var nonce: UUID?
        public var timestamp: Int64?
        public var signature: String?
        public var jws: String?
        public var referenceName: String?

        public init(_ offer: TransportOffer) {
            switch offer {
            case .introductory: kind = "introductory"
            case .promotionalLegacy(let id, let keyID, let nonce, let timestamp, let signature):
                kind = "promotional"; offerID = id; self.keyID = keyID; self.nonce = nonce; self.timestamp = timestamp; self.signature = signature
            case .promotionalJWS(let id, let jws): kind = "promotional"; offerID = id; self.jws = jws
            case .promotionalUnsigned(let id): kind = "promotional"; offerID = id
            case .code(let reference): kind = "code"; referenceName = reference
            case .winBack(let id): kind = "winBack"; offerID = id
            }
        }

        public var offer: TransportOffer? {
            switch kind {
            case "introductory": return .introductory
            case "promotional":
                guard let offerID else { return nil }
                if let jws { return .promotionalJWS(offerID: offerID, jws: jws) }
                if let keyID, let nonce, let timestamp, let signature {
                    return .promotionalLegacy(offerID: offerID, keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature)
                }
                return .promotionalUnsigned(offerID: offerID)
            case "code": return referenceName.map { .code(referenceName: $0) }
            case "winBack": return offerID.map { .winBack(offerID: $0) }
            default: return nil
            }
        }
    }

    /// How a purchase ended: `outcome` is `success` (with the signed transaction), `pending` or `userCancelled`.
    public struct PurchaseOutcomeBody: Codable, Sendable, Hashable {
        public var outcome: String
        public var signedTransaction: SignedItemBody?

        public init(_ outcome: TransportPurchaseOutcome) {
            switch outcome {
            case .success(let item): self.outcome = "success"; signedTransaction = SignedItemBody(item)
            case .pending: self.outcome = "pending"
            case .userCancelled: self.outcome = "userCancelled"
            }
        }

        public var purchaseOutcome: TransportPurchaseOutcome? {
            switch outcome {
            case "success": return signedTransaction.map { .success($0.item) }
            case "pending": return .pending
            case "userCancelled": return .userCancelled
            default: return nil
            }
        }
    }

    /// A batch of a feed: entries up to `sequence`, which the next poll acknowledges.
    /// `POST …/updates`: a long poll that first acknowledges what the client received, through `ack`
    /// (a change, so not a GET).
    public struct UpdatesRequestBody: Codable, Sendable, Hashable {
        public var channel: String
        /// Seconds to wait for an entry.
        public var wait: Double?
        /// The last sequence received: it and everything before it are marked delivered.
        public var ack: Int64?
        public init(channel: String, wait: Double?, ack: Int64?) {
            self.channel = channel
            self.wait = wait
            self.ack = ack
        }
    }

    public struct UpdatesBody: Codable, Sendable, Hashable {
        public var updates: [UpdateBody]
        public init(updates: [UpdateBody]) { self.updates = updates }
    }

    public struct UpdateBody: Codable, Sendable, Hashable {
        /// The feed position; acknowledged with `ack` on the next poll.
        public var sequence: Int64
        public var transaction: SignedItemBody
        public var renewalInfo: SignedItemBody?
        public var renewalState: Int?
        /// Messages: the reason and the subscription's original transaction.
        public var messageReason: String?
        public var subjectTransactionID: UInt64?
        /// Purchase intents: the product and offer.
        public var productID: String?
        public var offerID: String?
        /// Storefront changes: the new storefront's country code.
        public var storefront: String?

        public init(sequence: Int64, _ update: TransportUpdate) {
            self.sequence = sequence
            transaction = SignedItemBody(update.transaction)
            renewalInfo = update.renewalInfo.map(SignedItemBody.init)
            renewalState = update.renewalState
            messageReason = update.messageReason
            subjectTransactionID = update.subjectTransactionID
            productID = update.productID
            offerID = update.offerID
            storefront = update.storefrontCountryCode
        }

        public var update: TransportUpdate {
            var update = TransportUpdate(transaction: transaction.item, renewalInfo: renewalInfo?.item, renewalState: renewalState)
            update.messageReason = messageReason
            update.subjectTransactionID = subjectTransactionID
            update.productID = productID
            update.offerID = offerID
            update.storefrontCountryCode = storefront
            return update
        }
    }

    /// `GET …/policies`: the store's terms and privacy policy.
    public struct PoliciesBody: Codable, Sendable, Hashable {
        public var termsOfServiceURL: String?
        public var termsOfServiceText: String?
        public var privacyPolicyURL: String?
        public var privacyPolicyText: String?

        public init(_ policies: StorePolicies) {
            termsOfServiceURL = policies.termsOfServiceURL?.absoluteString
            termsOfServiceText = policies.termsOfServiceText
            privacyPolicyURL = policies.privacyPolicyURL?.absoluteString
            privacyPolicyText = policies.privacyPolicyText
        }

        public var policies: StorePolicies {
            StorePolicies(termsOfServiceURL: termsOfServiceURL.flatMap(URL.init(string:)), termsOfServiceText: termsOfServiceText,
                          privacyPolicyURL: privacyPolicyURL.flatMap(URL.init(string:)), privacyPolicyText: privacyPolicyText)
        }
    }

    /// `GET …/payments`: whether the device's account may buy.
    /// A device's promoted in-app purchases, in order.
    public struct PromotionsBody: Codable, Sendable, Hashable {
        public var promotions: [TransportPromotion]
        public init(promotions: [TransportPromotion]) { self.promotions = promotions }
    }

    /// The answer to a review request: whether the prompt showed.
    public struct ReviewRequestBody: Codable, Sendable, Hashable {
        public var shown: Bool
        public init(shown: Bool) { self.shown = shown }
    }

    public struct PaymentsBody: Codable, Sendable, Hashable {
        public var canMakePayments: Bool
        public init(canMakePayments: Bool) { self.canMakePayments = canMakePayments }
    }

    public struct StatusesBody: Codable, Sendable, Hashable {
        public var statuses: [StatusBody]
        public init(statuses: [StatusBody]) { self.statuses = statuses }
    }

    public struct StatusBody: Codable, Sendable, Hashable {
        public var state: Int
        public var transaction: SignedItemBody
        public var renewalInfo: SignedItemBody

        public init(_ status: TransportStatus) {
            state = status.state
            transaction = SignedItemBody(status.transaction)
            renewalInfo = SignedItemBody(status.renewalInfo)
        }

        public var status: TransportStatus { TransportStatus(state: state, transaction: transaction.item, renewalInfo: renewalInfo.item) }
    }

    public struct EligibilityBody: Codable, Sendable, Hashable {
        public var eligible: Bool
        public init(eligible: Bool) { self.eligible = eligible }
    }

    public struct StorefrontBody: Codable, Sendable, Hashable {
        public var countryCode: String
        public init(countryCode: String) { self.countryCode = countryCode }
    }

    /// Registers a device to an account (`POST /v1/devices/{device}` with `{"account": …}`).
    public struct RegistrationBody: Codable, Sendable, Hashable {
        public var account: String
        public init(account: String) { self.account = account }
    }

    /// Every failure: HTTP 4xx or 5xx with `{"error": {"family", "code", "message"}}`; `family` is
    /// `storeKit`, `purchase`, `refundRequest` or `other` (StoreKit's error families).
    public struct ErrorBody: Codable, Sendable, Hashable {
        public struct Detail: Codable, Sendable, Hashable {
            public var family: String
            public var code: String
            public var message: String
        }

        public var error: Detail

        public init(family: String, code: String, message: String) {
            error = Detail(family: family, code: code, message: message)
        }

        public init(_ error: StoreTransportError) {
            switch error {
            case .storeKit(let code, let message): self.init(family: "storeKit", code: code, message: message)
            case .purchase(let code, let message): self.init(family: "purchase", code: code, message: message)
            case .refundRequest(let code, let message): self.init(family: "refundRequest", code: code, message: message)
            case .storage(let failure): self.init(family: "storage", code: failure.reason.rawValue, message: failure.message)
            case .other(let message): self.init(family: "other", code: "failed", message: message)
            }
        }

        public var transportError: StoreTransportError {
            switch error.family {
            case "storeKit": return .storeKit(error.code, message: error.message)
            case "purchase": return .purchase(error.code, message: error.message)
            case "refundRequest": return .refundRequest(error.code, message: error.message)
            case "storage": return .storage(StorageFailure(StorageFailure.Reason(rawValue: error.code) ?? .failed, error.message))
            default: return .other(error.message)
            }
        }
    }
}
