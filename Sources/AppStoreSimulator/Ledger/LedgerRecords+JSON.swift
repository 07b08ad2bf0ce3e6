import AppStoreModels
import Foundation
import StoreKitCatalog

// Ledger records are written on every commit; these writers give the bytes the synthesized `Codable`
// conformances read back, without `JSONEncoder`'s cost. Members in sorted key order.
//
// They are read on every renewal and every claimed notification; the readers at the end take the
// plain form of those bytes in one pass (``FlatJSONObject``) and leave anything else (an array, an
// escaped string, a value out of range) to `JSONDecoder`, which has the last word.

extension LedgerTransaction: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("account", account)
        writer.write("appAccountToken", appAccountToken)
        writer.write("appTransactionID", appTransactionID)
        writer.write("billing", billing)
        writer.write("currency", currency)
        writer.write("customPurchaseOptions", customPurchaseOptions.map { JSONValue.object($0.mapValues(JSONValue.string)) })
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

extension LedgerTransaction.Billing: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("commitmentEnd", commitmentEnd)
        writer.write("commitmentPrice", commitmentPrice)
        writer.write("paymentNumber", paymentNumber)
        writer.write("planType", planType)
        writer.write("totalPayments", totalPayments)
    }
}

extension SubscriptionRecord.Commitment: AppStoreJSONWritable {
    public func writeJSON(to writer: inout JSONObjectWriter) {
        writer.write("end", end)
        writer.write("paymentNumber", paymentNumber)
        writer.write("paymentPrice", paymentPrice)
        writer.write("price", price)
        writer.write("start", start)
        writer.write("totalPayments", totalPayments)
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
        writer.write("commitment", commitment)
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

// MARK: Reading

extension LedgerTransaction: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        // Custom purchase options (a map) and billing commitments are rare: `JSONDecoder` reads them.
        guard object.members["customPurchaseOptions"] == nil, object.members["billing"] == nil else { return nil }
        var fields = FlatJSONFields(object)
        guard let id = fields.integer("id", as: UInt64.self), let originalID = fields.integer("originalID", as: UInt64.self),
              let account = fields.string("account"), let productID = fields.string("productID"),
              let productKind = fields.rawValue("productKind", as: CatalogProduct.Kind.self),
              let purchaseDate = fields.date("purchaseDate"), let originalPurchaseDate = fields.date("originalPurchaseDate"),
              let quantity = fields.integer("quantity", as: Int.self), let ownership = fields.rawValue("ownership", as: Ownership.self),
              let storefront = fields.string("storefront"), let storefrontID = fields.string("storefrontID"),
              let currency = fields.string("currency"), let price = fields.integer("price", as: Int64.self),
              let reason = fields.rawValue("reason", as: Reason.self), let isUpgraded = fields.bool("isUpgraded"),
              let state = fields.rawValue("state", as: State.self)
        else { return nil }
        self.id = id
        self.originalID = originalID
        self.account = account
        device = fields.string("device")
        self.productID = productID
        self.productKind = productKind
        subscriptionGroupID = fields.string("subscriptionGroupID")
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        expirationDate = fields.date("expirationDate")
        self.quantity = quantity
        self.ownership = ownership
        familySourceID = fields.integer("familySourceID")
        webOrderLineItemID = fields.string("webOrderLineItemID")
        appAccountToken = fields.uuid("appAccountToken")
        appTransactionID = fields.string("appTransactionID")
        self.storefront = storefront
        self.storefrontID = storefrontID
        self.currency = currency
        self.price = price
        self.reason = reason
        offer = fields.object("offer")
        revocation = fields.object("revocation")
        self.isUpgraded = isUpgraded
        self.state = state
        finishedDate = fields.date("finishedDate")
        imported = fields.object("imported")
        if fields.needsFullDecoder { return nil }
    }
}

extension LedgerTransaction.Offer: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        var fields = FlatJSONFields(object)
        guard let type = fields.enumeration("type", as: OfferType.self),
              let discountType = fields.enumeration("discountType", as: OfferDiscountType.self),
              let period = fields.string("period")
        else { return nil }
        self.init(type: type, id: fields.string("id"), discountType: discountType, period: period)
        if fields.needsFullDecoder { return nil }
    }
}

extension LedgerTransaction.Revocation: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        var fields = FlatJSONFields(object)
        guard let date = fields.date("date"), let reason = fields.enumeration("reason", as: RevocationReason.self) else { return nil }
        self.init(date: date, reason: reason, type: fields.enumeration("type"))
        if fields.needsFullDecoder { return nil }
    }
}

extension SubscriptionRecord: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        // A commitment (monthly billing) is rare: `JSONDecoder` reads records that have one.
        guard object.members["commitment"] == nil else { return nil }
        var fields = FlatJSONFields(object)
        guard let originalTransactionID = fields.integer("originalTransactionID", as: UInt64.self),
              let account = fields.string("account"), let groupID = fields.string("groupID"), let productID = fields.string("productID"),
              let autoRenewProductID = fields.string("autoRenewProductID"), let autoRenewEnabled = fields.bool("autoRenewEnabled"),
              let state = fields.rawValue("state", as: State.self),
              let latestTransactionID = fields.integer("latestTransactionID", as: UInt64.self),
              let expirationDate = fields.date("expirationDate"), let anchorDate = fields.date("anchorDate"),
              let anchorPeriod = fields.string("anchorPeriod", parsedBy: SubscriptionPeriod.init(iso8601:)),
              let periodsSinceAnchor = fields.integer("periodsSinceAnchor", as: Int.self),
              let recentSubscriptionStartDate = fields.date("recentSubscriptionStartDate")
        else { return nil }
        self.originalTransactionID = originalTransactionID
        self.account = account
        self.groupID = groupID
        self.productID = productID
        self.autoRenewProductID = autoRenewProductID
        self.autoRenewEnabled = autoRenewEnabled
        self.state = state
        self.latestTransactionID = latestTransactionID
        self.expirationDate = expirationDate
        self.anchorDate = anchorDate
        self.anchorPeriod = anchorPeriod
        self.periodsSinceAnchor = periodsSinceAnchor
        gracePeriodExpirationDate = fields.date("gracePeriodExpirationDate")
        billingRetryEndDate = fields.date("billingRetryEndDate")
        expirationIntent = fields.enumeration("expirationIntent")
        priceIncrease = fields.rawValue("priceIncrease")
        currentOffer = fields.object("currentOffer")
        queuedOffer = fields.object("queuedOffer")
        self.recentSubscriptionStartDate = recentSubscriptionStartDate
        // An array: present, the record goes to JSONDecoder (the reader gives up on arrays before this).
        fields.requireAbsent("renewalExtensions")
        appAccountToken = fields.uuid("appAccountToken")
        familySourceID = fields.integer("familySourceID")
        importedRenewalInfo = fields.object("importedRenewalInfo")
        if fields.needsFullDecoder { return nil }
    }
}

extension SubscriptionRecord.ActiveOffer: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        var fields = FlatJSONFields(object)
        guard let offer = fields.object("offer", as: LedgerTransaction.Offer.self), let price = fields.integer("price", as: Int64.self),
              let period = fields.string("period", parsedBy: SubscriptionPeriod.init(iso8601:)),
              let remainingPeriods = fields.integer("remainingPeriods", as: Int.self)
        else { return nil }
        self.init(offer: offer, price: price, period: period, remainingPeriods: remainingPeriods)
        if fields.needsFullDecoder { return nil }
    }
}

/// The stored body read in one pass: the sender claims notifications a page at a time, and
/// `JSONDecoder` would cost it more than one of the three signatures each one needs.
extension NotificationRecord.Body: FlatJSONReadable {
    package init?(flat object: FlatJSONObject) {
        var fields = FlatJSONFields(object)
        guard let payload = fields.object("payload", as: ResponseBodyV2DecodedPayload.self) else { return nil }
        self.payload = payload
        transaction = fields.object("transaction")
        renewalInfo = fields.object("renewalInfo")
        if fields.needsFullDecoder { return nil }
    }
}
