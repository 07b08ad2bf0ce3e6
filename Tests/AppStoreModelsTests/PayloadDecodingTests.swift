import AppStoreModels
import Foundation
import Testing
import TestSupport

/// Apple's model fixtures decode with every field, and re-encode to the same value.
@Suite(.timeLimit(.minutes(10)), .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
struct PayloadDecodingTests {
    static func model<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        try AppStoreJSON.decode(type, from: SharedTestData.data("apple-vectors/library-models/\(name)"))
    }

    static func roundTrips<T: Codable & Equatable>(_ value: T) throws -> Bool {
        try AppStoreJSON.decode(T.self, from: AppStoreJSON.encode(value)) == value
    }

    static func date(_ milliseconds: Int64) -> Date { AppStoreJSON.date(fromMilliseconds: milliseconds) }

    @Test("a signed transaction decodes every field")
    func transaction() throws {
        let transaction = try Self.model("signedTransaction.json", as: JWSTransactionDecodedPayload.self)
        #expect(transaction.transactionId == "23456")
        #expect(transaction.originalTransactionId == "12345")
        #expect(transaction.webOrderLineItemId == "34343")
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.productId == "com.example.product")
        #expect(transaction.subscriptionGroupIdentifier == "55555")
        #expect(transaction.purchaseDate == Self.date(1_698_148_900_000))
        #expect(transaction.originalPurchaseDate == Self.date(1_698_148_800_000))
        #expect(transaction.expiresDate == Self.date(1_698_149_000_000))
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.signedDate == Self.date(1_698_148_900_000))
        #expect(transaction.revocationReason == .refundedDueToIssue)
        #expect(transaction.revocationDate == Self.date(1_698_148_950_000))
        #expect(transaction.isUpgraded == true)
        #expect(transaction.offerType == .introductoryOffer)
        #expect(transaction.offerIdentifier == "abc.123")
        #expect(transaction.environment == .localTesting)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontId == "143441")
        #expect(transaction.price == 10_990)
        #expect(transaction.currency == "USD")
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.appTransactionId == "71134")
        #expect(transaction.offerPeriod == "P1Y")
        #expect(transaction.advancedCommerceInfo?["period"]?.stringValue == "P1M")
        #expect(transaction.billingPlanType == .monthly)
        #expect(transaction.commitmentInfo?.billingPeriodNumber == 3)
        #expect(transaction.commitmentInfo?.commitmentExpiresDate == Self.date(1_698_150_000_000))
        #expect(transaction.commitmentInfo?.commitmentPrice == 119_880)
        #expect(transaction.commitmentInfo?.totalBillingPeriods == 12)
        #expect(try Self.roundTrips(transaction))
    }

    @Test("signed renewal info decodes every field")
    func renewalInfo() throws {
        let renewal = try Self.model("signedRenewalInfo.json", as: JWSRenewalInfoDecodedPayload.self)
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.originalTransactionId == "12345")
        #expect(renewal.autoRenewProductId == "com.example.product.2")
        #expect(renewal.productId == "com.example.product")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.priceIncreaseStatus == .customerHasNotResponded)
        #expect(renewal.gracePeriodExpiresDate == Self.date(1_698_148_900_000))
        #expect(renewal.offerType == .promotionalOffer)
        #expect(renewal.offerIdentifier == "abc.123")
        #expect(renewal.signedDate == Self.date(1_698_148_800_000))
        #expect(renewal.environment == .localTesting)
        #expect(renewal.recentSubscriptionStartDate == Self.date(1_698_148_800_000))
        #expect(renewal.renewalDate == Self.date(1_698_148_850_000))
        #expect(renewal.renewalPrice == 9_990)
        #expect(renewal.currency == "USD")
        #expect(renewal.offerDiscountType == .payAsYouGo)
        #expect(renewal.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(renewal.appTransactionId == "71134")
        #expect(renewal.offerPeriod == "P1Y")
        #expect(renewal.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(renewal.commitmentInfo?.commitmentAutoRenewProductId == "com.example.product.commitment")
        #expect(renewal.commitmentInfo?.commitmentAutoRenewStatus == .on)
        #expect(renewal.commitmentInfo?.commitmentRenewalBillingPlanType == .monthly)
        #expect(renewal.commitmentInfo?.commitmentRenewalDate == Self.date(1_698_149_500_000))
        #expect(renewal.commitmentInfo?.commitmentRenewalPrice == 9_990)
        #expect(renewal.renewalBillingPlanType == .monthly)
        #expect(renewal.advancedCommerceInfo?["consistencyToken"]?.stringValue == "token-abc-123")
        #expect(try Self.roundTrips(renewal))
    }

    @Test("an app transaction decodes every field")
    func appTransaction() throws {
        let app = try Self.model("appTransaction.json", as: AppTransaction.self)
        #expect(app.receiptType == .localTesting)
        #expect(app.appAppleId == 531_412)
        #expect(app.bundleId == "com.example")
        #expect(app.applicationVersion == "1.2.3")
        #expect(app.versionExternalIdentifier == 512)
        #expect(app.receiptCreationDate == Self.date(1_698_148_900_000))
        #expect(app.originalPurchaseDate == Self.date(1_698_148_800_000))
        #expect(app.originalApplicationVersion == "1.1.2")
        #expect(app.deviceVerification == "device_verification_value")
        #expect(app.deviceVerificationNonce == UUID(uuidString: "48ccfa42-7431-4f22-9908-7e88983e105a"))
        #expect(app.preorderDate == Self.date(1_698_148_700_000))
        #expect(app.appTransactionId == "71134")
        #expect(app.originalPlatform == .iOS)
        #expect(app.validationDate == app.receiptCreationDate)
        #expect(try Self.roundTrips(app))
    }

    @Test("notifications decode data, summary, external purchase token and app data", arguments: [
        "signedNotification.json", "signedSummaryNotification.json", "signedExternalPurchaseTokenNotification.json",
        "signedConsumptionRequestNotification.json", "signedRescindConsentNotification.json",
    ])
    func notification(file: String) throws {
        let notification = try Self.model(file, as: ResponseBodyV2DecodedPayload.self)
        #expect(notification.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(notification.version == "2.0")
        #expect(notification.signedDate == Self.date(1_698_148_900_000))
        #expect(notification.notificationType?.isKnown == true)
        let parts = [notification.data != nil, notification.summary != nil, notification.externalPurchaseToken != nil, notification.appData != nil]
        #expect(parts.filter { $0 }.count == 1)
        #expect(try Self.roundTrips(notification))
    }

    @Test("notification specifics")
    func notificationSpecifics() throws {
        let subscribed = try Self.model("signedNotification.json", as: ResponseBodyV2DecodedPayload.self)
        #expect(subscribed.notificationType == .subscribed)
        #expect(subscribed.subtype == .initialBuy)
        #expect(subscribed.data?.appAppleId == 41_234)
        #expect(subscribed.data?.bundleVersion == "1.2.3")
        #expect(subscribed.data?.status == .active)
        #expect(subscribed.data?.signedTransactionInfo == "signed_transaction_info_value")
        let summary = try Self.model("signedSummaryNotification.json", as: ResponseBodyV2DecodedPayload.self)
        #expect(summary.subtype == .summary)
        #expect(summary.summary?.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(summary.summary?.succeededCount == 5)
        #expect(summary.summary?.failedCount == 2)
        let token = try Self.model("signedExternalPurchaseTokenNotification.json", as: ResponseBodyV2DecodedPayload.self)
        #expect(token.externalPurchaseToken?.tokenCreationDate == 1_698_148_950_000)
        #expect(token.subtype == .unreported)
        let consumption = try Self.model("signedConsumptionRequestNotification.json", as: ResponseBodyV2DecodedPayload.self)
        #expect(consumption.data?.consumptionRequestReason == .unintendedPurchase)
        let rescind = try Self.model("signedRescindConsentNotification.json", as: ResponseBodyV2DecodedPayload.self)
        #expect(rescind.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
    }
}

@Suite(.timeLimit(.minutes(10)))
struct PayloadEncodingTests {
    @Test("an unknown enumeration value decodes, stays unknown and encodes unchanged")
    func unknownValuesRoundTrip() throws {
        let json = Data(#"{"type":"Mystery Product","environment":"LocalTestingxxx","offerType":9,"inAppOwnershipType":"BORROWED"}"#.utf8)
        let transaction = try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(transaction.type?.rawValue == "Mystery Product")
        #expect(transaction.type?.isKnown == false)
        #expect(transaction.environment?.isKnown == false)
        #expect(transaction.offerType?.rawValue == 9)
        let object = try JSONSerialization.jsonObject(with: AppStoreJSON.encode(transaction)) as! [String: Any]
        #expect(object["type"] as? String == "Mystery Product")
        #expect(object["environment"] as? String == "LocalTestingxxx")
        #expect(object["offerType"] as? Int == 9)
        #expect(object["inAppOwnershipType"] as? String == "BORROWED")
    }

    @Test("a malformed field fails decoding and names the field")
    func malformedField() {
        let json = Data(#"{"transactionId":"1","quantity":"one"}"#.utf8)
        #expect {
            try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: json)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["quantity"]
        }
    }

    @Test("dates encode as whole milliseconds and UUIDs in lower case; absent fields are omitted")
    func encodingConventions() throws {
        var transaction = JWSTransactionDecodedPayload()
        transaction.purchaseDate = AppStoreJSON.date(fromMilliseconds: Int64(1_698_148_900_123))
        transaction.signedDate = Date(timeIntervalSince1970: 1_697_679_936.0497297)
        transaction.appAccountToken = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")
        let text = String(decoding: try AppStoreJSON.encode(transaction), as: UTF8.self)
        #expect(text == #"{"appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","purchaseDate":1698148900123,"signedDate":1697679936049}"#)
    }

    @Test("fractional milliseconds from Xcode decode")
    func fractionalMilliseconds() throws {
        let json = Data(#"{"purchaseDate":1697679936049.7297,"originalPurchaseDate":-62135769600000}"#.utf8)
        let transaction = try AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(abs(transaction.purchaseDate!.timeIntervalSince1970 - 1_697_679_936.0497297) < 0.000_001)
        #expect(transaction.originalPurchaseDate == Date(timeIntervalSince1970: -62_135_769_600))
    }

    @Test("whole milliseconds survive the trip through Date", arguments: [Int64(0), 1, 999, 1_698_148_899_999, 1_698_148_900_000, 253_402_300_799_999])
    func millisecondPrecision(milliseconds: Int64) {
        #expect(AppStoreJSON.milliseconds(from: AppStoreJSON.date(fromMilliseconds: milliseconds)) == milliseconds)
    }
}

/// The fast JSON writers give exactly the bytes Foundation's encoder gives.
@Suite(.timeLimit(.minutes(10)), .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
struct FastJSONWriterTests {
    static func foundation<T: Encodable>(_ value: T) throws -> Data { try AppStoreJSON.makeEncoder().encode(value) }

    static func check<T: Codable & AppStoreJSONWritable>(_ file: String, as type: T.Type) throws -> Bool {
        var value = try AppStoreJSON.decode(type, from: SharedTestData.data("apple-vectors/library-models/\(file)"))
        if var transaction = value as? JWSTransactionDecodedPayload {
            transaction.deviceVerification = "a/b+c\"d\\e\n"
            transaction.deviceVerificationNonce = UUID(uuidString: "0B7C9A3E-1D2F-4A5B-8C6D-7E8F9A0B1C2D")
            transaction.purchaseDate = Date(timeIntervalSince1970: 1_697_679_936.0497297)
            value = transaction as! T
        }
        return value.appStoreJSONData() == (try foundation(value))
    }

    @Test("every payload model writes Foundation's bytes", arguments: [
        "signedTransaction.json", "signedTransactionWithRevocation.json", "signedRenewalInfo.json", "appTransaction.json",
        "signedNotification.json", "signedSummaryNotification.json", "signedExternalPurchaseTokenNotification.json",
        "signedConsumptionRequestNotification.json", "signedRescindConsentNotification.json",
    ])
    func sameBytes(file: String) throws {
        switch file {
        case "signedRenewalInfo.json": #expect(try Self.check(file, as: JWSRenewalInfoDecodedPayload.self))
        case "appTransaction.json": #expect(try Self.check(file, as: AppTransaction.self))
        case _ where file.hasPrefix("signedTransaction"): #expect(try Self.check(file, as: JWSTransactionDecodedPayload.self))
        default: #expect(try Self.check(file, as: ResponseBodyV2DecodedPayload.self))
        }
    }

    @Test("control characters and non-ASCII text are escaped as Foundation escapes them")
    func escaping() throws {
        var payload = JWSTransactionDecodedPayload()
        payload.productId = "tab\there \u{01} é ✨ \"q\" back\\slash / end"
        #expect(payload.appStoreJSONData() == (try Self.foundation(payload)))
    }
}
