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
        for child in Mirror(reflecting: read).children {
            guard let label = child.label, !nested.contains(label) else { continue }
            let isNil = Mirror(reflecting: child.value).displayStyle == .optional && Mirror(reflecting: child.value).children.isEmpty
            #expect(!isNil, "\(label) is not set by the sample or not read by the flat reader")
        }
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
        let (readFast, disagreements) = try await onThreadOfItsOwn { () -> (Int, [String]) in
            let decoder = AppStoreJSON.makeDecoder()
            var random = SplitMix64(state: 0x15_2026)
            var readFast = 0
            var disagreements: [String] = []
            for index in 0..<10_000 {
                let base = cases[index % cases.count]
                let data = index < cases.count ? Data(base.utf8) : Self.mutate(base, &random)
                let expected = try? decoder.decode(JWSTransactionDecodedPayload.self, from: data)
                let fast = FlatJSONObject(data).flatMap(JWSTransactionDecodedPayload.init(flat:))
                if let fast {
                    readFast += 1
                    if fast != expected { disagreements.append(String(decoding: data, as: UTF8.self)) }
                }
                if (try? AppStoreJSON.decode(JWSTransactionDecodedPayload.self, from: data)) != expected {
                    disagreements.append("AppStoreJSON.decode: " + String(decoding: data, as: UTF8.self))
                }
            }
            return (readFast, disagreements)
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, first: \(disagreements.prefix(3))")
        #expect(readFast > 1_500, "the fast reader took \(readFast) of 10,000")
        #expect(FlatJSONObject(Data(Self.fullTransaction.utf8)).flatMap(JWSTransactionDecodedPayload.init(flat:)) != nil)
    }
}
