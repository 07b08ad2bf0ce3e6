import Foundation

// Members in sorted key order (byte order), as `JSONEncoder` with `.sortedKeys` writes them.

extension JWSTransactionDecodedPayload: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("advancedCommerceInfo", advancedCommerceInfo)
        writer.write("appAccountToken", appAccountToken)
        writer.write("appTransactionId", appTransactionId)
        writer.write("billingPlanType", billingPlanType)
        writer.write("bundleId", bundleId)
        writer.write("commitmentInfo", commitmentInfo)
        writer.write("currency", currency)
        writer.write("deviceVerification", deviceVerification)
        writer.write("deviceVerificationNonce", deviceVerificationNonce)
        writer.write("environment", environment)
        writer.write("expiresDate", expiresDate)
        writer.write("inAppOwnershipType", inAppOwnershipType)
        writer.write("isUpgraded", isUpgraded)
        writer.write("offerDiscountType", offerDiscountType)
        writer.write("offerIdentifier", offerIdentifier)
        writer.write("offerPeriod", offerPeriod)
        writer.write("offerType", offerType)
        writer.write("originalPurchaseDate", originalPurchaseDate)
        writer.write("originalTransactionId", originalTransactionId)
        writer.write("price", price)
        writer.write("productId", productId)
        writer.write("purchaseDate", purchaseDate)
        writer.write("quantity", quantity)
        writer.write("revocationDate", revocationDate)
        writer.write("revocationPercentage", revocationPercentage)
        writer.write("revocationReason", revocationReason)
        writer.write("revocationType", revocationType)
        writer.write("signedDate", signedDate)
        writer.write("storefront", storefront)
        writer.write("storefrontId", storefrontId)
        writer.write("subscriptionGroupIdentifier", subscriptionGroupIdentifier)
        writer.write("transactionId", transactionId)
        writer.write("transactionReason", transactionReason)
        writer.write("type", type)
        writer.write("webOrderLineItemId", webOrderLineItemId)
    }
}

extension TransactionCommitmentInfo: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("billingPeriodNumber", billingPeriodNumber)
        writer.write("commitmentExpiresDate", commitmentExpiresDate)
        writer.write("commitmentPrice", commitmentPrice)
        writer.write("totalBillingPeriods", totalBillingPeriods)
    }
}

extension JWSRenewalInfoDecodedPayload: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("advancedCommerceInfo", advancedCommerceInfo)
        writer.write("appAccountToken", appAccountToken)
        writer.write("appTransactionId", appTransactionId)
        writer.write("autoRenewProductId", autoRenewProductId)
        writer.write("autoRenewStatus", autoRenewStatus)
        writer.write("commitmentInfo", commitmentInfo)
        writer.write("currency", currency)
        writer.write("deviceVerification", deviceVerification)
        writer.write("deviceVerificationNonce", deviceVerificationNonce)
        writer.write("eligibleWinBackOfferIds", eligibleWinBackOfferIds)
        writer.write("environment", environment)
        writer.write("expirationIntent", expirationIntent)
        writer.write("gracePeriodExpiresDate", gracePeriodExpiresDate)
        writer.write("isInBillingRetryPeriod", isInBillingRetryPeriod)
        writer.write("offerDiscountType", offerDiscountType)
        writer.write("offerIdentifier", offerIdentifier)
        writer.write("offerPeriod", offerPeriod)
        writer.write("offerType", offerType)
        writer.write("originalTransactionId", originalTransactionId)
        writer.write("priceIncreaseStatus", priceIncreaseStatus)
        writer.write("productId", productId)
        writer.write("recentSubscriptionStartDate", recentSubscriptionStartDate)
        writer.write("renewalBillingPlanType", renewalBillingPlanType)
        writer.write("renewalDate", renewalDate)
        writer.write("renewalPrice", renewalPrice)
        writer.write("signedDate", signedDate)
    }
}

extension RenewalCommitmentInfo: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("commitmentAutoRenewProductId", commitmentAutoRenewProductId)
        writer.write("commitmentAutoRenewStatus", commitmentAutoRenewStatus)
        writer.write("commitmentRenewalBillingPlanType", commitmentRenewalBillingPlanType)
        writer.write("commitmentRenewalDate", commitmentRenewalDate)
        writer.write("commitmentRenewalPrice", commitmentRenewalPrice)
    }
}

extension AppTransaction: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("appAppleId", appAppleId)
        writer.write("appTransactionId", appTransactionId)
        writer.write("applicationVersion", applicationVersion)
        writer.write("bundleId", bundleId)
        writer.write("deviceVerification", deviceVerification)
        writer.write("deviceVerificationNonce", deviceVerificationNonce)
        writer.write("originalApplicationVersion", originalApplicationVersion)
        writer.write("originalPlatform", originalPlatform)
        writer.write("originalPurchaseDate", originalPurchaseDate)
        writer.write("preorderDate", preorderDate)
        writer.write("receiptCreationDate", receiptCreationDate)
        writer.write("receiptType", receiptType)
        writer.write("requestDate", requestDate)
        writer.write("versionExternalIdentifier", versionExternalIdentifier)
    }
}

extension ResponseBodyV2DecodedPayload: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("appData", appData)
        writer.write("data", data)
        writer.write("externalPurchaseToken", externalPurchaseToken)
        writer.write("notificationType", notificationType)
        writer.write("notificationUUID", notificationUUID)
        writer.write("signedDate", signedDate)
        writer.write("subtype", subtype)
        writer.write("summary", summary)
        writer.write("version", version)
    }
}

extension NotificationData: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("appAppleId", appAppleId)
        writer.write("bundleId", bundleId)
        writer.write("bundleVersion", bundleVersion)
        writer.write("consumptionRequestReason", consumptionRequestReason)
        writer.write("environment", environment)
        writer.write("signedRenewalInfo", signedRenewalInfo)
        writer.write("signedTransactionInfo", signedTransactionInfo)
        writer.write("status", status)
    }
}

extension Summary: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("appAppleId", appAppleId)
        writer.write("bundleId", bundleId)
        writer.write("environment", environment)
        writer.write("failedCount", failedCount)
        writer.write("productId", productId)
        writer.write("requestIdentifier", requestIdentifier)
        writer.write("storefrontCountryCodes", storefrontCountryCodes)
        writer.write("succeededCount", succeededCount)
    }
}

extension ExternalPurchaseToken: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("appAppleId", appAppleId)
        writer.write("bundleId", bundleId)
        writer.write("externalPurchaseId", externalPurchaseId)
        writer.write("tokenCreationDate", tokenCreationDate)
    }
}

extension AppData: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("appAppleId", appAppleId)
        writer.write("bundleId", bundleId)
        writer.write("environment", environment)
        writer.write("signedAppTransactionInfo", signedAppTransactionInfo)
    }
}
