import AppStoreModels
import Foundation
import Testing
import TestSupport

/// The one-pass transaction reader agrees with `JSONDecoder` on every input it accepts, and leaves
/// every input it does not fully understand to `JSONDecoder`.
@Suite(.timeLimit(.minutes(10)))
struct FlatJSONReadingTests {
    /// A transaction with every flat field set, as the App Store JSON encoder writes it.
    static let fullTransaction: String = {
        var transaction = JWSTransactionDecodedPayload()
        transaction.originalTransactionId = "2000000000000001"
        transaction.transactionId = "2000000000000002"
        transaction.webOrderLineItemId = "2000000000000003"
        transaction.bundleId = "com.example.shop"
        transaction.productId = "com.example.shop.plus.premium.monthly"
        transaction.subscriptionGroupIdentifier = "21000001"
        transaction.purchaseDate = Date(timeIntervalSince1970: 1_767_225_600.123)
        transaction.originalPurchaseDate = Date(timeIntervalSince1970: 1_767_225_600)
        transaction.expiresDate = Date(timeIntervalSince1970: 1_769_904_000)
        transaction.quantity = 1
        transaction.type = .autoRenewableSubscription
        transaction.appAccountToken = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")
        transaction.inAppOwnershipType = .purchased
        transaction.signedDate = Date(timeIntervalSince1970: 1_767_225_601)
        transaction.revocationReason = .refundedDueToIssue
        transaction.revocationDate = Date(timeIntervalSince1970: 1_767_300_000)
        transaction.isUpgraded = true
        transaction.offerType = .introductoryOffer
        transaction.offerIdentifier = "intro.1"
        transaction.environment = .sandbox
        transaction.storefront = "USA"
        transaction.storefrontId = "143441"
        transaction.transactionReason = .purchase
        transaction.currency = "USD"
        transaction.price = 9_990
        transaction.offerDiscountType = .freeTrial
        transaction.appTransactionId = "704289572311513"
        transaction.offerPeriod = "P1W"
        transaction.revocationType = .refundFull
        transaction.revocationPercentage = 100_000
        transaction.billingPlanType = .billedUpfront
        transaction.deviceVerification = "c2hhMzg0"
        transaction.deviceVerificationNonce = UUID(uuidString: "9E3FB20B-4CDB-47CC-936D-99D65F608139")
        return String(decoding: (try? AppStoreJSON.encode(transaction)) ?? Data(), as: UTF8.self)
    }()

    /// Renewal info with every field the flat reader reads set.
    static let fullRenewalInfo: String = {
        var info = JWSRenewalInfoDecodedPayload()
        info.expirationIntent = .billingError
        info.originalTransactionId = "2000000000000001"
        info.autoRenewProductId = "com.example.shop.plus.premium.yearly"
        info.productId = "com.example.shop.plus.premium.monthly"
        info.autoRenewStatus = .on
        info.isInBillingRetryPeriod = true
        info.priceIncreaseStatus = .customerConsentedOrWasNotifiedWithoutClaimingConsent
        info.gracePeriodExpiresDate = Date(timeIntervalSince1970: 1_769_990_400)
        info.offerType = .promotionalOffer
        info.offerIdentifier = "promo.1"
        info.signedDate = Date(timeIntervalSince1970: 1_767_225_601.5)
        info.environment = .xcode
        info.recentSubscriptionStartDate = Date(timeIntervalSince1970: 1_767_225_600)
        info.renewalDate = Date(timeIntervalSince1970: 1_769_904_000)
        info.currency = "GBP"
        info.renewalPrice = 4_990
        info.offerDiscountType = .payAsYouGo
        info.appAccountToken = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")
        info.appTransactionId = "704289572311513"
        info.offerPeriod = "P3M"
        info.renewalBillingPlanType = .billedUpfront
        info.deviceVerification = "c2hhMzg0"
        info.deviceVerificationNonce = UUID(uuidString: "9E3FB20B-4CDB-47CC-936D-99D65F608139")
        return String(decoding: (try? AppStoreJSON.encode(info)) ?? Data(), as: UTF8.self)
    }()

    /// A notification's `data` with every field set.
    static let fullNotificationData: String = {
        var data = NotificationData()
        data.environment = .sandbox
        data.appAppleId = 1_234_567_890
        data.bundleId = "com.example.shop"
        data.bundleVersion = "1.2"
        data.signedTransactionInfo = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2ln"
        data.signedRenewalInfo = "eyJhbGciOiJFUzI1NiJ9.eyJwcm9kdWN0SWQiOiJhIn0.c2ln"
        data.status = .billingRetry
        data.consumptionRequestReason = .unintendedPurchase
        return String(decoding: (try? AppStoreJSON.encode(data)) ?? Data(), as: UTF8.self)
    }()

    /// A notification payload with every field the flat reader reads set except `data`, which
    /// ``notificationPayload(data:rest:)`` puts in.
    static let notificationPayloadWithoutData: String = {
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationType = .didRenew
        payload.subtype = .billingRecovery
        payload.notificationUUID = "6E7AC2F4-5A0B-4C55-9B9A-64A63B0A1E11"
        payload.version = "2.0"
        payload.signedDate = Date(timeIntervalSince1970: 1_769_904_000.25)
        return String(decoding: (try? AppStoreJSON.encode(payload)) ?? Data(), as: UTF8.self)
    }()

    /// `{"data":DATA,` followed by the rest of an object's text after its `{`.
    static func notificationPayload(data: String, rest: String) -> String {
        #"{"data":"# + data + "," + rest.dropFirst()
    }

    /// Values that are plain, unusual, out of range, of the wrong type or not JSON at all.
    static let replacementValues: [String] = [
        #""x""#, #""""#, #""a\"b""#, #""\u00e9""#, #""é""#, "\"\u{01}\"", "1", "0", "-0", "01", "1.0", "1e3", "1E+2", "-1.5e-3",
        "1e400", "-", "1.", ".5", "9223372036854775807", "9223372036854775808", "2147483647", "2147483648", "-2147483649",
        "true", "false", "null", "nul", "{}", "[]", #"{"a":1}"#, "[1,2]", #""7e3fb20b-4cdb-47cc-936d-99d65f608138""#,
        #""not-a-uuid""#, #""Sandbox""#, #""Xcode""#, #""SOMETHING_NEW""#, "3", "99",
    ]

    static func mutate(_ base: String, _ random: inout SplitMix64) -> Data {
        var members = base.dropFirst().dropLast().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let pick = Int.random(in: 0..<members.count, using: &random)
        switch Int.random(in: 0..<10, using: &random) {
        case 0...4:
            let key = members[pick].split(separator: ":", maxSplits: 1)[0]
            members[pick] = key + ":" + replacementValues.randomElement(using: &random)!
        case 5: members.remove(at: pick)
        case 6: members.append(members[pick])
        case 7: members.insert(#""someFutureField":"value""#, at: pick)
        case 8: members[pick] = " \n\t" + members[pick].replacingOccurrences(of: ":", with: " : ") + "\r "
        default:
            let text = Data(("{" + members.joined(separator: ",") + "}").utf8)
            var bytes = [UInt8](text)
            let index = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.removeSubrange(index...)
            case 2: bytes.append(contentsOf: Array("x".utf8))
            default: bytes.insert(contentsOf: [0xEF, 0xBB, 0xBF], at: 0)
            }
            return Data(bytes)
        }
        return Data(("{" + members.joined(separator: ",") + "}").utf8)
    }

    @Test("the flat reader reads every field of a transaction: one added to the type but not to the reader fails here")
    func readsEveryField() throws {
        let read = try #require(FlatJSONObject(Data(Self.fullTransaction.utf8)).flatMap(JWSTransactionDecodedPayload.init(flat:)))
        // Nested values are left to JSONDecoder on purpose.
        let nested: Set<String> = ["advancedCommerceInfo", "commitmentInfo"]
        #expect(unsetOptionalProperties(of: read, ignoring: nested) == [], "not set by the sample or not read by the flat reader")
        #expect(read == (try AppStoreJSON.makeDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(Self.fullTransaction.utf8))))
    }

    @Test("the transaction reader and JSONDecoder agree on 10,000 mutated transactions; the reader takes the plain ones itself")
    func agreesWithJSONDecoder() async throws {
        var bases = [Self.fullTransaction]
        if SharedTestData.isAvailable {
            bases.append(String(decoding: try SharedTestData.data("apple-vectors/library-models/signedTransaction.json"), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let cases = bases
        let (readFast, disagreements) = try await Self.compare(JWSTransactionDecodedPayload.self, count: 10_000) { index, random in
            index < cases.count ? Data(cases[index].utf8) : Self.mutate(cases[index % cases.count], &random)
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, first: \(disagreements.prefix(3))")
        #expect(readFast > 1_500, "the fast reader took \(readFast) of 10,000")
        #expect(FlatJSONObject(Data(Self.fullTransaction.utf8)).flatMap(JWSTransactionDecodedPayload.init(flat:)) != nil)
    }

    @Test("the readers of renewal info and of a notification payload read every field, and agree with JSONDecoder on 5,000 mutations of each")
    func renewalInfoAndNotificationPayloadAgree() async throws {
        let info = try #require(FlatJSONObject(Data(Self.fullRenewalInfo.utf8)).flatMap(JWSRenewalInfoDecodedPayload.init(flat:)))
        let leftToJSONDecoder: Set<String> = ["eligibleWinBackOfferIds", "advancedCommerceInfo", "commitmentInfo", "summary", "externalPurchaseToken", "appData"]
        let payloadText = Self.notificationPayload(data: Self.fullNotificationData, rest: Self.notificationPayloadWithoutData)
        let payload = try #require(FlatJSONObject(Data(payloadText.utf8)).flatMap(ResponseBodyV2DecodedPayload.init(flat:)))
        let decoder = AppStoreJSON.makeDecoder()
        #expect(info == (try decoder.decode(JWSRenewalInfoDecodedPayload.self, from: Data(Self.fullRenewalInfo.utf8))))
        #expect(payload == (try decoder.decode(ResponseBodyV2DecodedPayload.self, from: Data(payloadText.utf8))))
        let data = try #require(payload.data)
        for (name, value) in [("renewal info", info as Any), ("notification data", data as Any), ("notification payload", payload as Any)] {
            #expect(unsetOptionalProperties(of: value, ignoring: leftToJSONDecoder) == [], "\(name): not set by the sample or not read by the flat reader")
        }

        let renewal = try await Self.compare(JWSRenewalInfoDecodedPayload.self, count: 5_000) { index, random in
            index == 0 ? Data(Self.fullRenewalInfo.utf8) : Self.mutate(Self.fullRenewalInfo, &random)
        }
        // Half the mutations change the payload's own members, half its nested `data`.
        let notification = try await Self.compare(ResponseBodyV2DecodedPayload.self, count: 5_000) { index, random in
            if index == 0 { return Data(payloadText.utf8) }
            if index.isMultiple(of: 2) {
                let rest = String(decoding: Self.mutate(Self.notificationPayloadWithoutData, &random), as: UTF8.self)
                return Data(Self.notificationPayload(data: Self.fullNotificationData, rest: rest).utf8)
            }
            let data = String(decoding: Self.mutate(Self.fullNotificationData, &random), as: UTF8.self)
            return Data(Self.notificationPayload(data: data, rest: Self.notificationPayloadWithoutData).utf8)
        }
        for (name, result) in [("renewal info", renewal), ("notification payload", notification)] {
            #expect(result.disagreements.isEmpty, "\(name): \(result.disagreements.count) disagreements, first: \(result.disagreements.prefix(3))")
            #expect(result.readFast > 750, "\(name): the fast reader took \(result.readFast) of 5,000")
        }
    }

    @Test("objects nested deeper than the reader goes, arrays and trailing text are left to JSONDecoder")
    func nestingLimits() {
        var nested = #"{"a":1}"#
        for _ in 1..<FlatJSONObject.maximumDepth { nested = #"{"n":"# + nested + "}" }
        #expect(FlatJSONObject(Data(nested.utf8)) != nil)
        #expect(FlatJSONObject(Data((#"{"n":"# + nested + "}").utf8)) == nil)
        #expect(FlatJSONObject(Data(#"{"a":{"b":[1]}}"#.utf8)) == nil)
        #expect(FlatJSONObject(Data(#"{"a":{"b":1}} x"#.utf8)) == nil)
        #expect(FlatJSONObject(Data(#"{"a":{"b":1,"b":2}}"#.utf8)) == nil)
        #expect(FlatJSONObject(Data(#"{"a":{"b":1}"#.utf8)) == nil)
    }

    /// Decodes `count` inputs with the flat reader and with `JSONDecoder` on a thread of its own;
    /// answers how many the flat reader took itself and every input on which the two (or
    /// `AppStoreJSON.decode`) disagree.
    static func compare<Payload: Decodable & Equatable & FlatJSONReadable & Sendable>(
        _ type: Payload.Type, count: Int, input: @escaping @Sendable (Int, inout SplitMix64) -> Data
    ) async throws -> (readFast: Int, disagreements: [String]) {
        try await onThreadOfItsOwn { () -> (Int, [String]) in
            let decoder = AppStoreJSON.makeDecoder()
            var random = SplitMix64(state: 0x15_2026)
            var readFast = 0
            var disagreements: [String] = []
            for index in 0..<count {
                let data = input(index, &random)
                let expected = try? decoder.decode(Payload.self, from: data)
                let fast = FlatJSONObject(data).flatMap(Payload.init(flat:))
                if let fast {
                    readFast += 1
                    if fast != expected { disagreements.append(String(decoding: data, as: UTF8.self)) }
                }
                if (try? AppStoreJSON.decode(Payload.self, from: data)) != expected {
                    disagreements.append("AppStoreJSON.decode: " + String(decoding: data, as: UTF8.self))
                }
            }
            return (readFast, disagreements)
        }
    }
}
