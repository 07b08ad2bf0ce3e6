import AppStoreModels
import AppStoreSigning
import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import StoreKitCatalog
import Testing
import TestSupport

@Suite("Subscription offers through Product.PurchaseOption", .timeLimit(.minutes(10)))
struct OfferClientTests {
    /// The shop's promotional-offer key, as the developer's server holds it.
    static func offerKey() throws -> (P256PrivateKey, String) {
        let configuration = try StoreKitConfiguration.load(contentsOf: Shop.file).configuration
        let pair = try #require(configuration.subscriptionOffersKeyPair)
        return (try P256PrivateKey(pemRepresentation: try #require(pair.privateKey)), try #require(pair.id))
    }

    /// A legacy promotional-offer signature as StoreKit's option takes it (raw bytes).
    static func signature(offer: String, nonce: UUID, key: P256PrivateKey, keyID: String, timestamp: Int) throws -> Data {
        let message = PromotionalOfferSignature(bundleId: "com.example.shop", keyId: keyID, productIdentifier: Shop.premiumMonthly,
                                                subscriptionOfferID: offer, applicationUsername: "", nonce: nonce, timestamp: Int64(timestamp))
        return try #require(Data(base64Encoded: try message.sign(with: key)))
    }

    @Test("a signed promotional offer applies for a former subscriber; a bad signature is invalidOfferSignature")
    func promotionalOffer() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let monthly = try #require(try await phone.products(for: [Shop.premiumMonthly]).first)
        #expect(monthly.subscription?.promotionalOffers.map(\.id) == ["premium.monthly.firstmonth"])
        _ = try await monthly.purchase().verifiedTransaction()
        try await session.expireSubscription(productIdentifier: Shop.premiumMonthly)

        let (key, keyID) = try Self.offerKey()
        let nonce = UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")!
        // Signed now, by the store's clock: a signature is good for a day after its timestamp.
        let now = Int(AppStoreJSON.milliseconds(from: session.now))
        let forged = try Self.signature(offer: "premium.monthly.firstmonth", nonce: nonce, key: .generate(), keyID: keyID, timestamp: now)
        await #expect(throws: Product.PurchaseError.invalidOfferSignature) {
            _ = try await monthly.purchase(options: [.promotionalOffer(offerID: "premium.monthly.firstmonth", keyID: keyID, nonce: nonce,
                                                                       signature: forged, timestamp: now)])
        }
        let genuine = try Self.signature(offer: "premium.monthly.firstmonth", nonce: nonce, key: key, keyID: keyID, timestamp: now)
        let transaction = try await monthly.purchase(options: [.promotionalOffer(offerID: "premium.monthly.firstmonth", keyID: keyID,
                                                                                 nonce: nonce, signature: genuine, timestamp: now)])
            .verifiedTransaction()
        #expect(transaction.offer?.type == .promotional)
        #expect(transaction.offer?.id == "premium.monthly.firstmonth")
    }

    @Test("after expiry the renewal info lists the win-back offer, and buying with it applies it")
    func winBackOffer() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let monthly = try #require(try await phone.products(for: [Shop.premiumMonthly]).first)
        let winBack = try #require(monthly.subscription?.winBackOffers.first)
        _ = try await monthly.purchase().verifiedTransaction()
        try await session.expireSubscription(productIdentifier: Shop.premiumMonthly)
        let status = try #require(try await monthly.subscription?.status.first)
        #expect(status.state == .expired)
        #expect(try status.renewalInfo.verifiedValue().eligibleWinBackOfferIDs.contains(try #require(winBack.id)))
        let back = try await monthly.purchase(options: [.winBackOffer(winBack)]).verifiedTransaction()
        #expect(back.offer?.type == .winBack)
        #expect(back.price == 0)
    }

    @Test("two offers in one purchase are refused before reaching the store")
    func contradictoryOptions() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        await #expect(throws: Product.PurchaseError.invalidOfferIdentifier) {
            _ = try await phone.purchase(productID: Shop.premiumMonthly, options: [.promotionalOffer(id: "a"), .codeOffer(referenceName: "b")])
        }
    }
}
