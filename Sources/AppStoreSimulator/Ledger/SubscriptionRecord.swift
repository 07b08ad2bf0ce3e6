import AppStoreModels
import Foundation
import StoreKitCatalog

/// The renewal state of one auto-renewable subscription: one account's subscription in one group.
///
/// The original transaction identifier stays the same across renewals, upgrades, downgrades and
/// resubscriptions in the group, as on the App Store. The record says what the renewal info says
/// and when the next lifecycle event (renewal, grace end, retry end, expiry) is due.
public struct SubscriptionRecord: Hashable, Sendable, Codable, Identifiable {
    /// The five renewal states of `Product.SubscriptionInfo.RenewalState`, with Apple's status numbers.
    public enum State: String, Hashable, Sendable, Codable {
        case subscribed, expired, inBillingRetryPeriod, inGracePeriod, revoked

        /// The App Store Server API status (1–5).
        public var status: Status {
            switch self {
            case .subscribed: return .active
            case .expired: return .expired
            case .inBillingRetryPeriod: return .billingRetry
            case .inGracePeriod: return .billingGracePeriod
            case .revoked: return .revoked
            }
        }

        /// Whether the customer has service: subscribed or in the grace period.
        public var isEntitled: Bool { self == .subscribed || self == .inGracePeriod }
    }

    /// Where a price increase stands.
    public enum PriceIncrease: String, Hashable, Sendable, Codable {
        /// The customer was asked and has not answered.
        case pending
        /// The customer agreed.
        case agreed
        /// The customer declined; the subscription expires at the end of the period.
        case declined
    }

    /// A commitment billed monthly (a yearly plan paid in twelve payments): which payment the current
    /// period is, the commitment's dates and prices. Payments continue to its end whatever the
    /// customer's auto-renew choice, which takes effect when the commitment ends.
    public struct Commitment: Hashable, Sendable, Codable {
        /// The current period's payment, from 1.
        public var paymentNumber: Int
        public var totalPayments: Int
        public var start: Date
        public var end: Date
        /// The commitment's whole price and one payment's, in milliunits.
        public var price: Int64
        public var paymentPrice: Int64

        public init(paymentNumber: Int, totalPayments: Int, start: Date, end: Date, price: Int64, paymentPrice: Int64) {
            self.paymentNumber = paymentNumber
            self.totalPayments = totalPayments
            self.start = start
            self.end = end
            self.price = price
            self.paymentPrice = paymentPrice
        }

        /// Whether payments are still due before the commitment ends.
        public var hasPaymentsLeft: Bool { paymentNumber < totalPayments }

        /// How many monthly payments a commitment of `period` takes.
        public static func payments(in period: SubscriptionPeriod) -> Int {
            switch period.unit {
            case .year: return 12 * period.value
            case .month: return period.value
            default: return 1
            }
        }

        /// How the period of this payment was billed.
        public var billing: LedgerTransaction.Billing {
            LedgerTransaction.Billing(planType: .monthly, paymentNumber: paymentNumber, totalPayments: totalPayments, commitmentEnd: end,
                                      commitmentPrice: price)
        }
    }

    /// An offer that applies to coming periods.
    public struct ActiveOffer: Hashable, Sendable, Codable {
        public var offer: LedgerTransaction.Offer
        /// The offer's price per period in milliunits.
        public var price: Int64
        /// The length of one offer period.
        public var period: SubscriptionPeriod
        /// Offer periods left, counting the current one.
        public var remainingPeriods: Int
    }

    public var originalTransactionID: UInt64
    public var account: String
    public var groupID: String
    /// The product of the current period.
    public var productID: String
    /// The product that renews at the end of the period (differs after a downgrade).
    public var autoRenewProductID: String
    public var autoRenewEnabled: Bool
    public var state: State
    /// The transaction of the current period.
    public var latestTransactionID: UInt64
    /// The end of the current period.
    public var expirationDate: Date
    /// The start of the run of periods that sets renewal dates, and how many periods of
    /// ``anchorPeriod`` since it end the current one.
    public var anchorDate: Date
    public var anchorPeriod: SubscriptionPeriod
    public var periodsSinceAnchor: Int
    /// When the grace period ends (in grace).
    public var gracePeriodExpirationDate: Date?
    /// When billing retry gives up (in grace or billing retry).
    public var billingRetryEndDate: Date?
    /// Why the subscription expired, or will.
    public var expirationIntent: ExpirationIntent?
    public var priceIncrease: PriceIncrease?
    /// The offer of the current period, with the periods it has left.
    public var currentOffer: ActiveOffer?
    /// An offer that starts with a coming renewal (an offer code stacked after an introductory offer,
    /// or redeemed by a subscriber).
    public var queuedOffer: ActiveOffer?
    /// The start of the current run of paid periods, ignoring lapses under 60 days.
    public var recentSubscriptionStartDate: Date
    /// When the renewal date was extended (the App Store allows two extensions in 365 days).
    public var renewalExtensions: [Date]?
    public var appAccountToken: UUID?
    /// For a family member's copy: the purchaser's subscription it follows.
    public var familySourceID: UInt64?
    /// For a subscription imported from data the App Store signed: its newest renewal info, as Apple
    /// signed it. The store hands it out (signed anew) until its own rules change the subscription
    /// (a renewal, an expiry, a control); from then on the renewal info is the store's own.
    public var importedRenewalInfo: JWSRenewalInfoDecodedPayload? {
        get { importedRenewalInfoPayload?.payload }
        set { importedRenewalInfoPayload = newValue.map(RecordBox.init) }
    }
    /// Where ``importedRenewalInfo`` is kept: behind a reference (see ``RecordBox``).
    var importedRenewalInfoPayload: RecordBox<JWSRenewalInfoDecodedPayload>?
    /// The commitment a subscription billed monthly is in (`nil` for one billed up front).
    public var commitment: Commitment? {
        get { commitmentBox?.payload }
        set { commitmentBox = newValue.map(RecordBox.init) }
    }
    /// Where ``commitment`` is kept: behind a reference (see ``RecordBox``).
    var commitmentBox: RecordBox<Commitment>?

    /// The JSON keys: the properties' names, the imported renewal info's included.
    enum CodingKeys: String, CodingKey {
        case originalTransactionID, account, groupID, productID, autoRenewProductID, autoRenewEnabled, state, latestTransactionID
        case expirationDate, anchorDate, anchorPeriod, periodsSinceAnchor, gracePeriodExpirationDate, billingRetryEndDate
        case expirationIntent, priceIncrease, currentOffer, queuedOffer, recentSubscriptionStartDate, renewalExtensions
        case appAccountToken, familySourceID
        case commitmentBox = "commitment"
        case importedRenewalInfoPayload = "importedRenewalInfo"
    }

    public var id: UInt64 { originalTransactionID }

    /// Whether a price increase waits for the customer's consent.
    public var isPendingPriceIncreaseConsent: Bool { priceIncrease == .pending }

    /// When the next lifecycle event is due, or `nil` when nothing more happens on its own.
    public var nextEventDate: Date? {
        guard familySourceID == nil else { return nil }
        switch state {
        case .subscribed: return expirationDate
        case .inGracePeriod: return gracePeriodExpirationDate
        case .inBillingRetryPeriod: return billingRetryEndDate
        case .expired, .revoked: return nil
        }
    }
}
