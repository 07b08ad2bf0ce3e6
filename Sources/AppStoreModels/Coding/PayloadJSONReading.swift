import Foundation

// One-pass readers for the plain JSON the store writes and keeps (see ``FlatJSONObject``): every
// field the type has, by name; anything they do not model sends the whole value to `JSONDecoder`.

extension JWSTransactionDecodedPayload: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        var fields = FlatJSONFields(object)
        originalTransactionId = fields.string("originalTransactionId")
        transactionId = fields.string("transactionId")
        webOrderLineItemId = fields.string("webOrderLineItemId")
        bundleId = fields.string("bundleId")
        productId = fields.string("productId")
        subscriptionGroupIdentifier = fields.string("subscriptionGroupIdentifier")
        purchaseDate = fields.date("purchaseDate")
        originalPurchaseDate = fields.date("originalPurchaseDate")
        expiresDate = fields.date("expiresDate")
        quantity = fields.integer("quantity")
        type = fields.enumeration("type")
        appAccountToken = fields.uuid("appAccountToken")
        inAppOwnershipType = fields.enumeration("inAppOwnershipType")
        signedDate = fields.date("signedDate")
        revocationReason = fields.enumeration("revocationReason")
        revocationDate = fields.date("revocationDate")
        isUpgraded = fields.bool("isUpgraded")
        offerType = fields.enumeration("offerType")
        offerIdentifier = fields.string("offerIdentifier")
        environment = fields.enumeration("environment")
        storefront = fields.string("storefront")
        storefrontId = fields.string("storefrontId")
        transactionReason = fields.enumeration("transactionReason")
        currency = fields.string("currency")
        price = fields.integer("price")
        offerDiscountType = fields.enumeration("offerDiscountType")
        appTransactionId = fields.string("appTransactionId")
        offerPeriod = fields.string("offerPeriod")
        revocationType = fields.enumeration("revocationType")
        revocationPercentage = fields.integer("revocationPercentage")
        fields.requireAbsent("advancedCommerceInfo")
        billingPlanType = fields.enumeration("billingPlanType")
        fields.requireAbsent("commitmentInfo")
        deviceVerification = fields.string("deviceVerification")
        deviceVerificationNonce = fields.uuid("deviceVerificationNonce")
        if fields.needsFullDecoder { return nil }
    }
}

extension JWSRenewalInfoDecodedPayload: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        var fields = FlatJSONFields(object)
        expirationIntent = fields.enumeration("expirationIntent")
        originalTransactionId = fields.string("originalTransactionId")
        autoRenewProductId = fields.string("autoRenewProductId")
        productId = fields.string("productId")
        autoRenewStatus = fields.enumeration("autoRenewStatus")
        isInBillingRetryPeriod = fields.bool("isInBillingRetryPeriod")
        priceIncreaseStatus = fields.enumeration("priceIncreaseStatus")
        gracePeriodExpiresDate = fields.date("gracePeriodExpiresDate")
        offerType = fields.enumeration("offerType")
        offerIdentifier = fields.string("offerIdentifier")
        signedDate = fields.date("signedDate")
        environment = fields.enumeration("environment")
        recentSubscriptionStartDate = fields.date("recentSubscriptionStartDate")
        renewalDate = fields.date("renewalDate")
        currency = fields.string("currency")
        renewalPrice = fields.integer("renewalPrice")
        offerDiscountType = fields.enumeration("offerDiscountType")
        fields.requireAbsent("eligibleWinBackOfferIds")
        appAccountToken = fields.uuid("appAccountToken")
        appTransactionId = fields.string("appTransactionId")
        offerPeriod = fields.string("offerPeriod")
        fields.requireAbsent("advancedCommerceInfo")
        fields.requireAbsent("commitmentInfo")
        renewalBillingPlanType = fields.enumeration("renewalBillingPlanType")
        deviceVerification = fields.string("deviceVerification")
        deviceVerificationNonce = fields.uuid("deviceVerificationNonce")
        if fields.needsFullDecoder { return nil }
    }
}

extension NotificationData: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        var fields = FlatJSONFields(object)
        environment = fields.enumeration("environment")
        appAppleId = fields.integer("appAppleId")
        bundleId = fields.string("bundleId")
        bundleVersion = fields.string("bundleVersion")
        signedTransactionInfo = fields.string("signedTransactionInfo")
        signedRenewalInfo = fields.string("signedRenewalInfo")
        status = fields.enumeration("status")
        consumptionRequestReason = fields.enumeration("consumptionRequestReason")
        if fields.needsFullDecoder { return nil }
    }
}

extension ResponseBodyV2DecodedPayload: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        var fields = FlatJSONFields(object)
        notificationType = fields.enumeration("notificationType")
        subtype = fields.enumeration("subtype")
        notificationUUID = fields.string("notificationUUID")
        data = fields.object("data")
        version = fields.string("version")
        signedDate = fields.date("signedDate")
        // Rare kinds of notification, left to JSONDecoder.
        fields.requireAbsent("summary")
        fields.requireAbsent("externalPurchaseToken")
        fields.requireAbsent("appData")
        if fields.needsFullDecoder { return nil }
    }
}
