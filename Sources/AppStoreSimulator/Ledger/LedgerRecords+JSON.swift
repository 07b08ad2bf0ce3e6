import AppStoreModels
import Foundation
import StoreKitCatalog

// Ledger records are written on every commit; these writers give the bytes the synthesized `Codable`
// conformances read back, without `JSONEncoder`'s cost. Members in sorted key order.

extension LedgerTransaction: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("account", account)
        writer.write("appAccountToken", appAccountToken)
        writer.write("appTransactionID", appTransactionID)
        writer.write("currency", currency)
        writer.write("device", device)
        writer.write("expirationDate", expirationDate)
        writer.write("familySourceID", familySourceID)
        writer.write("finishedDate", finishedDate)
        writer.write("id", id)
        writer.write("imported", imported)
        writer.write("isUpgraded", isUpgraded)
        writer.write("offer", offer)
        writer.write("originalID", originalID)
        writer.write("originalPurchaseDate", originalPurchaseDate)
        writer.write("ownership", ownership)
        writer.write("price", price)
        writer.write("productID", productID)
        writer.write("productKind", productKind)
        writer.write("purchaseDate", purchaseDate)
        writer.write("quantity", quantity)
        writer.write("reason", reason)
        writer.write("revocation", revocation)
        writer.write("state", state)
        writer.write("storefront", storefront)
        writer.write("storefrontID", storefrontID)
        writer.write("subscriptionGroupID", subscriptionGroupID)
        writer.write("webOrderLineItemID", webOrderLineItemID)
    }
}

extension LedgerTransaction.Offer: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("discountType", discountType)
        writer.write("id", id)
        writer.write("period", period)
        writer.write("type", type)
    }
}

extension LedgerTransaction.Revocation: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("date", date)
        writer.write("reason", reason)
        writer.write("type", type)
    }
}

extension LedgerCounters: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("nextAppTransactionID", nextAppTransactionID)
        writer.write("nextNotificationSequence", nextNotificationSequence)
        writer.write("nextTransactionID", nextTransactionID)
        writer.write("nextUpdateSequence", nextUpdateSequence)
        writer.write("nextWebOrderLineItemID", nextWebOrderLineItemID)
    }
}

extension SubscriptionRecord: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("account", account)
        writer.write("anchorDate", anchorDate)
        writer.write("anchorPeriod", anchorPeriod.iso8601)
        writer.write("appAccountToken", appAccountToken)
        writer.write("autoRenewEnabled", autoRenewEnabled)
        writer.write("autoRenewProductID", autoRenewProductID)
        writer.write("billingRetryEndDate", billingRetryEndDate)
        writer.write("currentOffer", currentOffer)
        writer.write("expirationDate", expirationDate)
        writer.write("expirationIntent", expirationIntent)
        writer.write("familySourceID", familySourceID)
        writer.write("gracePeriodExpirationDate", gracePeriodExpirationDate)
        writer.write("groupID", groupID)
        writer.write("importedRenewalInfo", importedRenewalInfo)
        writer.write("latestTransactionID", latestTransactionID)
        writer.write("originalTransactionID", originalTransactionID)
        writer.write("periodsSinceAnchor", periodsSinceAnchor)
        writer.write("priceIncrease", priceIncrease)
        writer.write("productID", productID)
        writer.write("queuedOffer", queuedOffer)
        writer.write("recentSubscriptionStartDate", recentSubscriptionStartDate)
        writer.write("renewalExtensions", renewalExtensions)
        writer.write("state", state)
    }
}

extension SubscriptionRecord.ActiveOffer: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("offer", offer)
        writer.write("period", period.iso8601)
        writer.write("price", price)
        writer.write("remainingPeriods", remainingPeriods)
    }
}
