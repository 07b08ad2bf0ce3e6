import AppStoreModels
import Foundation
import StoreKitCatalog

extension Product.SubscriptionInfo {
    /// One subscription of the customer in a group: its state, latest transaction and renewal info.
    public struct Status: Hashable, Sendable {
        public let state: RenewalState
        /// The transaction of the current (or last) period.
        public let transaction: VerificationResult<Transaction>
        public let renewalInfo: VerificationResult<RenewalInfo>

        /// Changes of the customer's subscription statuses on this device: renewals, billing
        /// problems, grace periods, expiries, refunds, price increases and plan changes. A listener
        /// started before the app sets ``StoreClient/default`` waits for it.
        public static var updates: Statuses { feed(client: StoreClient.current) }

        /// The statuses of every subscription group the customer has subscribed in, one group at a
        /// time, as `(groupID, statuses)`: the groups of the account's transaction history, in the
        /// order they first appear there. Ends after the last group (or at once without a connection);
        /// cancelling the task that iterates it stops the reads.
        public static var all: AsyncStream<(groupID: String, statuses: [Status])> {
            let bound = StoreClient.current
            return AsyncStream { continuation in
                let reading = Task {
                    let client = bound ?? StoreClient.active
                    var groups: [String] = []
                    for await result in client.allTransactions {
                        if let group = result.unsafePayloadValue.subscriptionGroupID, !groups.contains(group) { groups.append(group) }
                    }
                    for group in groups where !Task.isCancelled {
                        do {
                            continuation.yield((group, try await client.subscriptionStatuses(groupID: group)))
                        } catch {
                            StoreDiagnostics.report("reading the statuses of group \(group) failed: \(error)")
                        }
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in reading.cancel() }
            }
        }

        /// The endless sequence of status changes of a device.
        public typealias Statuses = ClientFeed<Status>

        static func feed(client: StoreClient?) -> Statuses {
            ClientFeed(client: client, channel: .statuses) { client, updates in
                updates.compactMap { update in
                    guard let info = update.renewalInfo, let state = update.renewalState else { return nil }
                    return client.status(TransportStatus(state: state, transaction: update.transaction, renewalInfo: info))
                }
            }
        }
    }

    /// The state of a subscription.
    public struct RenewalState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Active and entitled.
        public static let subscribed = RenewalState(rawValue: 1)
        /// Ended: cancelled, unpaid after billing retry, or not renewed.
        public static let expired = RenewalState(rawValue: 2)
        /// A renewal failed and the App Store keeps trying; not entitled.
        public static let inBillingRetryPeriod = RenewalState(rawValue: 3)
        /// A renewal failed but service continues while the App Store keeps trying; entitled.
        public static let inGracePeriod = RenewalState(rawValue: 4)
        /// Refunded or revoked (including family sharing ending).
        public static let revoked = RenewalState(rawValue: 5)

        /// Whether the state grants the subscription's service.
        public var isEntitled: Bool { self == .subscribed || self == .inGracePeriod }

        public var description: String {
            switch self {
            case .subscribed: return "subscribed"
            case .expired: return "expired"
            case .inBillingRetryPeriod: return "inBillingRetryPeriod"
            case .inGracePeriod: return "inGracePeriod"
            case .revoked: return "revoked"
            default: return "RenewalState(\(rawValue))"
            }
        }
    }

    /// What happens at a subscription's next renewal, as the App Store signs it.
    public struct RenewalInfo: Hashable, Sendable, JWSSignedValue, RequiredPropertiesChecking {
        /// Why a subscription expired.
        public struct ExpirationReason: RawRepresentable, Hashable, Sendable {
            public let rawValue: Int
            public init(rawValue: Int) { self.rawValue = rawValue }
            public static let autoRenewDisabled = ExpirationReason(rawValue: 1)
            public static let billingError = ExpirationReason(rawValue: 2)
            public static let didNotConsentToPriceIncrease = ExpirationReason(rawValue: 3)
            public static let productUnavailable = ExpirationReason(rawValue: 4)
            public static let unknown = ExpirationReason(rawValue: 5)
        }

        /// Where a price increase stands.
        public enum PriceIncreaseStatus: Hashable, Sendable {
            case noIncreasePending
            /// The customer has not responded yet.
            case pending
            case agreed
        }

        public let originalTransactionID: UInt64
        /// The product the customer is subscribed to now.
        public let currentProductID: String
        public let willAutoRenew: Bool
        /// The product that renews next (differs from ``currentProductID`` after a downgrade or crossgrade).
        public let autoRenewPreference: String?
        public let expirationReason: ExpirationReason?
        public let isInBillingRetry: Bool
        public let gracePeriodExpirationDate: Date?
        public let priceIncreaseStatus: PriceIncreaseStatus
        /// The offer that applies at the next renewal.
        public let offer: Transaction.Offer?
        /// The kind of offer at the next renewal: StoreKit's name for ``offer``'s `type` before iOS 18.
        public var offerType: Transaction.OfferType? { offer?.type }
        /// The offer's identifier at the next renewal: StoreKit's name for ``offer``'s `id` before iOS 18.
        public var offerID: String? { offer?.id }
        public let eligibleWinBackOfferIDs: [String]
        public let renewalDate: Date?
        public let recentSubscriptionStartDate: Date
        public let renewalPrice: Decimal?
        public let currency: Locale.Currency?
        public let appAccountToken: UUID?
        public let appTransactionID: String
        public let environment: AppStore.Environment
        public let signedDate: Date
        public let deviceVerification: Data
        public let deviceVerificationNonce: UUID
        public let jsonRepresentation: Data
        public let jwsRepresentation: String

        let payload: JWSRenewalInfoDecodedPayload

        init(payload: JWSRenewalInfoDecodedPayload, jws: String, payloadData: Data) {
            self.payload = payload
            self.originalTransactionID = payload.originalTransactionId.flatMap { UInt64($0) } ?? 0
            self.currentProductID = payload.productId ?? ""
            self.willAutoRenew = payload.autoRenewStatus == .on
            self.autoRenewPreference = payload.autoRenewProductId
            self.expirationReason = payload.expirationIntent.map { ExpirationReason(rawValue: Int($0.rawValue)) }
            self.isInBillingRetry = payload.isInBillingRetryPeriod ?? false
            self.gracePeriodExpirationDate = payload.gracePeriodExpiresDate
            switch payload.priceIncreaseStatus {
            case .customerHasNotResponded?: self.priceIncreaseStatus = .pending
            case .customerConsentedOrWasNotifiedWithoutClaimingConsent?: self.priceIncreaseStatus = .agreed
            default: self.priceIncreaseStatus = .noIncreasePending
            }
            self.offer = payload.offerType.map {
                Transaction.Offer(id: payload.offerIdentifier, type: Transaction.OfferType(rawValue: Int($0.rawValue)),
                                  paymentMode: payload.offerDiscountType.map { Transaction.Offer.PaymentMode(rawValue: $0.rawValue) },
                                  period: payload.offerPeriod.flatMap { StoreKitCatalog.SubscriptionPeriod(iso8601: $0) }
                                      .map(Product.SubscriptionPeriod.init))
            }
            self.eligibleWinBackOfferIDs = payload.eligibleWinBackOfferIds ?? []
            self.renewalDate = payload.renewalDate
            self.recentSubscriptionStartDate = payload.recentSubscriptionStartDate ?? Date(timeIntervalSince1970: 0)
            self.renewalPrice = payload.renewalPrice.map { Decimal($0) / 1000 }
            self.currency = payload.currency.map { Locale.Currency($0) }
            self.appAccountToken = payload.appAccountToken
            self.appTransactionID = payload.appTransactionId ?? ""
            self.environment = AppStore.Environment(rawValue: payload.environment?.rawValue ?? "")
            self.signedDate = payload.signedDate ?? Date(timeIntervalSince1970: 0)
            self.deviceVerification = DeviceVerificationFields.digest(payload.deviceVerification)
            self.deviceVerificationNonce = payload.deviceVerificationNonce ?? DeviceVerificationFields.missingNonce
            self.jsonRepresentation = payloadData
            self.jwsRepresentation = jws
        }

        var hasRequiredProperties: Bool {
            payload.originalTransactionId != nil && payload.productId != nil && payload.autoRenewStatus != nil && payload.signedDate != nil
                && payload.deviceVerificationNonce != nil
        }

        public static func == (lhs: RenewalInfo, rhs: RenewalInfo) -> Bool { lhs.jwsRepresentation == rhs.jwsRepresentation }
        public func hash(into hasher: inout Hasher) { hasher.combine(jwsRepresentation) }

        /// What renews when a commitment ends, for a subscription billed monthly over one.
        public struct CommitmentInfo: Hashable, Sendable {
            public let renewalDate: Date
            public let renewalPrice: Decimal
            public let willAutoRenew: Bool
            /// The product the commitment renews to.
            public let autoRenewPreference: String
            public let renewalBillingPlanType: SubscriptionInfo.BillingPlanType

            init?(_ info: RenewalCommitmentInfo?) {
                guard let info, let date = info.commitmentRenewalDate, let product = info.commitmentAutoRenewProductId,
                      let plan = info.commitmentRenewalBillingPlanType else { return nil }
                self.renewalDate = date
                self.renewalPrice = Decimal(info.commitmentRenewalPrice ?? 0) / 1000
                self.willAutoRenew = info.commitmentAutoRenewStatus == .on
                self.autoRenewPreference = product
                self.renewalBillingPlanType = SubscriptionInfo.BillingPlanType(plan)
            }
        }

        /// Advanced Commerce data of the subscription, as the App Store signed it.
        public struct AdvancedCommerceInfo: Hashable, Sendable {
            /// The `advancedCommerceInfo` object of the signed renewal info, as JSON.
            public let jsonRepresentation: Data

            init?(_ value: JSONValue?) {
                guard let value, let data = try? AppStoreJSON.makeEncoder().encode(value) else { return nil }
                self.jsonRepresentation = data
            }
        }

        /// Advanced Commerce data, for subscriptions bought through the Advanced Commerce API.
        public var advancedCommerceInfo: AdvancedCommerceInfo? { AdvancedCommerceInfo(payload.advancedCommerceInfo) }
        /// What renews when the commitment ends, for a subscription billed monthly over one.
        public var commitmentInfo: CommitmentInfo? { CommitmentInfo(payload.commitmentInfo) }
        /// How the next renewal is billed, when the App Store says.
        public var renewalBillingPlanType: SubscriptionInfo.BillingPlanType? {
            payload.renewalBillingPlanType.map(SubscriptionInfo.BillingPlanType.init)
        }
        /// ``environment``'s raw string (`Sandbox`).
        public var environmentStringRepresentation: String { environment.rawValue }
        /// The ISO 4217 code of ``currency``.
        public var currencyCode: String? { currency?.identifier }
        /// The next renewal's offer payment mode as its raw string (`FREE_TRIAL`).
        public var offerPaymentModeStringRepresentation: String? { payload.offerDiscountType?.rawValue }
        /// The next renewal's offer period as its ISO 8601 string (`P1M`).
        public var offerPeriodStringRepresentation: String? { payload.offerPeriod }
    }
}

extension Product.SubscriptionInfo.RenewalInfo: CustomDebugStringConvertible {
    public var debugDescription: String {
        "RenewalInfo(originalTransactionID: \(originalTransactionID), currentProductID: \(currentProductID), willAutoRenew: \(willAutoRenew)"
            + "\(renewalDate.map { ", renewalDate: \($0.formatted(.iso8601))" } ?? ""))"
    }
}

extension StoreClient {
    /// `Product.SubscriptionInfo.status(for:)` for this device's account.
    public func subscriptionStatuses(groupID: String) async throws -> [Product.SubscriptionInfo.Status] {
        let statuses = try await storeKitCall { try await transport.subscriptionStatuses(groupID: groupID, device: device) }
        return statuses.compactMap { status($0) }
    }

    /// `Product.SubscriptionInfo.Status.updates` for this device.
    public var statusUpdates: Product.SubscriptionInfo.Status.Statuses { Product.SubscriptionInfo.Status.feed(client: self) }

    func status(_ status: TransportStatus) -> Product.SubscriptionInfo.Status? {
        guard let transaction = verifyTransaction(status.transaction), let info = verifyRenewalInfo(status.renewalInfo) else { return nil }
        return Product.SubscriptionInfo.Status(state: .init(rawValue: status.state), transaction: transaction, renewalInfo: info)
    }
}
