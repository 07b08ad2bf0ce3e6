import AppStoreModels
import Foundation

// The rest of what a signed transaction says, as StoreKit presents it: how it was revoked, how its
// subscription is billed and committed, Advanced Commerce data, and the older string forms of
// fields that code written for earlier systems still reads. Each is read from the signed payload.

extension Transaction {
    /// How the App Store revoked a transaction.
    public struct RevocationType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Family Sharing ended for the member.
        public static let familyRevocation = RevocationType(rawValue: "FAMILY_REVOKE")
        /// A full refund.
        public static let fullRefund = RevocationType(rawValue: "REFUND_FULL")
        /// A refund of part of the price.
        public static let proratedRefund = RevocationType(rawValue: "REFUND_PRORATED")
    }

    /// Where a subscription billed monthly over a commitment stands: which payment this is, of how
    /// many, when the commitment ends and what it costs in all.
    public struct CommitmentInfo: Hashable, Sendable {
        /// The payment this transaction is, counting from 1.
        public let billingPeriodNumber: UInt64
        /// How many payments the commitment takes.
        public let totalBillingPeriods: UInt64
        /// When the commitment ends.
        public let expirationDate: Date
        /// The commitment's whole price.
        public let price: Decimal

        init?(_ info: TransactionCommitmentInfo?) {
            guard let info, let number = info.billingPeriodNumber, let total = info.totalBillingPeriods,
                  let end = info.commitmentExpiresDate else { return nil }
            self.billingPeriodNumber = UInt64(max(0, number))
            self.totalBillingPeriods = UInt64(max(0, total))
            self.expirationDate = end
            self.price = Decimal(info.commitmentPrice ?? 0) / 1000
        }
    }

    /// Data of an Advanced Commerce API purchase, as the App Store signed it.
    public struct AdvancedCommerceInfo: Hashable, Sendable {
        /// The `advancedCommerceInfo` object of the signed transaction, as JSON.
        public let jsonRepresentation: Data

        init?(_ value: JSONValue?) {
            guard let value, let data = try? AppStoreJSON.makeEncoder().encode(value) else { return nil }
            self.jsonRepresentation = data
        }
    }

    /// How the App Store revoked this transaction, when it did.
    public var revocationType: RevocationType? { payload.revocationType.map { RevocationType(rawValue: $0.rawValue) } }
    /// How much of the price the App Store refunded, as a percentage (`50` for half), when it refunded part.
    public var revocationPercentage: Decimal? { payload.revocationPercentage.map { Decimal(Int($0)) / 1000 } }
    /// ``revocationType``'s raw string.
    public var revocationTypeStringRepresentation: String? { payload.revocationType?.rawValue }
    /// How the subscription is billed (`.monthly` over a commitment, `.upFront`), when the App Store says.
    public var billingPlanType: SubscriptionInfo.BillingPlanType? { payload.billingPlanType.map(SubscriptionInfo.BillingPlanType.init) }
    /// The commitment this payment belongs to, for a subscription billed monthly over one.
    public var commitmentInfo: CommitmentInfo? { CommitmentInfo(payload.commitmentInfo) }
    /// Advanced Commerce data, for purchases made through the Advanced Commerce API.
    public var advancedCommerceInfo: AdvancedCommerceInfo? { AdvancedCommerceInfo(payload.advancedCommerceInfo) }

    /// ``environment``'s raw string (`Sandbox`).
    public var environmentStringRepresentation: String { environment.rawValue }
    /// ``reason``'s raw string (`PURCHASE`, `RENEWAL`).
    public var reasonStringRepresentation: String { reason.rawValue }
    /// The storefront's country code (StoreKit's name before ``storefront``).
    public var storefrontCountryCode: String { storefront.countryCode }
    /// The ISO 4217 code of ``currency``.
    public var currencyCode: String? { currency?.identifier }
    /// The offer's period as its ISO 8601 string (`P1M`).
    public var offerPeriodStringRepresentation: String? { payload.offerPeriod }
}

extension Transaction: CustomDebugStringConvertible {
    public var debugDescription: String {
        "Transaction(id: \(id), originalID: \(originalID), productID: \(productID), purchaseDate: \(purchaseDate.formatted(.iso8601)), "
            + "reason: \(reason.rawValue)\(revocationDate.map { ", revoked: \($0.formatted(.iso8601))" } ?? ""))"
    }
}
