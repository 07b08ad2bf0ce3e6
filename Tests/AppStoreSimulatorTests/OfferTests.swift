import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(10)))
struct OfferTests {
    /// The shop's promotional-offer key, as the developer's server would hold it.
    static func offerKey() throws -> (P256PrivateKey, String) {
        let pair = try #require(TestStore.shopConfiguration.subscriptionOffersKeyPair)
        return (try P256PrivateKey(pemRepresentation: try #require(pair.privateKey)), try #require(pair.id))
    }

    @Test("the introductory offer applies by itself once per group: free trial, then the regular price")
    func introductoryFreeTrial() async throws {
        let test = try TestStore()
        #expect(try await test.store.isEligibleForIntroOffer(groupID: Shop.plus, account: "alice"))
        let trial = try test.verified(try await test.buy(Shop.premiumYearly))
        #expect(trial.offerType == .introductoryOffer && trial.offerDiscountType == .freeTrial && trial.offerIdentifier == nil)
        #expect(trial.offerPeriod == "P2W" && trial.price == 0)
        #expect(trial.expiresDate == TestStore.start.addingTimeInterval(14 * day))
        #expect(try await !test.store.isEligibleForIntroOffer(groupID: Shop.plus, account: "alice"))
        try await test.store.advanceTime(by: 15 * day)
        let renewal = try #require(try await test.store.ledgerTransactions(account: "alice").last)
        #expect(renewal.offer == nil && renewal.price == 99_990)
        #expect(renewal.expirationDate == date("2027-01-15T00:00:00Z"))
    }

    @Test("pay as you go keeps the offer price for its periods; pay up front covers its whole duration")
    func paidIntroductoryOffers() async throws {
        let test = try TestStore()
        let first = try test.verified(try await test.buy(Shop.premiumMonthly))
        #expect(first.offerDiscountType == .payAsYouGo && first.price == 4_990 && first.offerPeriod == "P3M")
        try await test.store.advanceTime(by: 100 * day)
        let prices = try await test.store.ledgerTransactions(account: "alice").map(\.price)
        #expect(prices == [4_990, 4_990, 4_990, 9_990])
        let upFront = try TestStore()
        let standard = try upFront.verified(try await upFront.buy(Shop.standardMonthly))
        #expect(standard.offerDiscountType == .payUpFront && standard.price == 9_990)
        #expect(standard.expiresDate == date("2026-07-01T00:00:00Z"))
    }

    @Test("after a lapse the introductory offer is gone, and asking for it is an ineligibility error")
    func introductoryOnce() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsPlus)
        try await test.store.expireSubscription(productID: Shop.newsPlus, account: "alice")
        let again = try test.verified(try await test.buy(Shop.newsPlus))
        #expect(again.offerType == nil)
        #expect(try await test.notificationKinds().last == "SUBSCRIBED/RESUBSCRIBE")
        try await test.store.expireSubscription(productID: Shop.newsPlus, account: "alice")
        await #expect(throws: AppStoreError.purchase(.ineligibleForOffer, "the account already subscribed in group 21000002")) {
            try await test.buy(Shop.newsPlus, offer: .introductory)
        }
    }

    @Test("promotional offers need a valid signature, a known identifier and a former or current subscriber")
    func promotionalOffers() async throws {
        let test = try TestStore()
        let (key, keyID) = try Self.offerKey()
        let nonce = UUID(uuidString: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")!
        func legacy(offer: String, product: String = Shop.premiumMonthly, signingKey: P256PrivateKey = key) throws -> PromotionalOfferSignatureInput {
            let message = PromotionalOfferSignature(bundleId: "com.example.shop", keyId: keyID, productIdentifier: product,
                                                    subscriptionOfferID: offer, applicationUsername: "", nonce: nonce, timestamp: 1_767_225_600_000)
            return .legacy(keyID: keyID, nonce: nonce, timestamp: 1_767_225_600_000, signature: try message.sign(with: signingKey))
        }
        await #expect(throws: AppStoreError.purchase(.ineligibleForOffer, "promotional offers are for current and former subscribers of group 21000001")) {
            try await test.buy(Shop.premiumMonthly, offer: .promotional(id: "premium.monthly.firstmonth", signature: try legacy(offer: "premium.monthly.firstmonth")))
        }
        _ = try await test.buy(Shop.premiumMonthly)
        try await test.store.expireSubscription(productID: Shop.premiumMonthly, account: "alice")
        await #expect {
            try await test.buy(Shop.premiumMonthly, offer: .promotional(id: "premium.monthly.firstmonth",
                                                                         signature: try legacy(offer: "premium.monthly.firstmonth", signingKey: .generate())))
        } throws: { ($0 as? AppStoreError).map { if case .purchase(.invalidOfferSignature, _) = $0 { return true } else { return false } } ?? false }
        await #expect {
            try await test.buy(Shop.premiumMonthly, offer: .promotional(id: "nope", signature: try legacy(offer: "nope")))
        } throws: { ($0 as? AppStoreError).map { if case .purchase(.invalidOfferIdentifier, _) = $0 { return true } else { return false } } ?? false }
        await #expect {
            try await test.buy(Shop.premiumMonthly, offer: .promotional(id: "premium.monthly.firstmonth", signature: nil))
        } throws: { ($0 as? AppStoreError).map { if case .purchase(.missingOfferParameters, _) = $0 { return true } else { return false } } ?? false }
        let promoted = try test.verified(try await test.buy(Shop.premiumMonthly, offer: .promotional(id: "premium.monthly.firstmonth",
                                                                                                    signature: try legacy(offer: "premium.monthly.firstmonth"))))
        #expect(promoted.offerType == .promotionalOffer && promoted.offerIdentifier == "premium.monthly.firstmonth" && promoted.price == 990)
    }

    @Test("a legacy promotional-offer signature is good once, and for 24 hours from its timestamp by the store's clock")
    func promotionalSignatureOnceAndFresh() async throws {
        let test = try TestStore()
        let (key, keyID) = try Self.offerKey()
        func legacy(nonce: UUID, at timestamp: Int64) throws -> PurchaseOffer {
            let message = PromotionalOfferSignature(bundleId: "com.example.shop", keyId: keyID, productIdentifier: Shop.premiumMonthly,
                                                    subscriptionOfferID: "premium.monthly.firstmonth", applicationUsername: "",
                                                    nonce: nonce, timestamp: timestamp)
            return .promotional(id: "premium.monthly.firstmonth",
                                signature: .legacy(keyID: keyID, nonce: nonce, timestamp: timestamp, signature: try message.sign(with: key)))
        }
        func isRefusedSignature(_ error: any Error) -> Bool {
            if case .purchase(.invalidOfferSignature, _)? = error as? AppStoreError { return true }
            return false
        }
        _ = try await test.buy(Shop.premiumMonthly)
        try await test.store.expireSubscription(productID: Shop.premiumMonthly, account: "alice")
        let now = AppStoreJSON.milliseconds(from: try await test.store.currentTime())
        let once = try legacy(nonce: UUID(counting: 7), at: now - 3_600_000)
        _ = try await test.buy(Shop.premiumMonthly, offer: once)
        // Coming back with a promotional offer is OFFER_REDEEMED/RESUBSCRIBE, as Apple sends it.
        #expect(try await test.notificationKinds().last == "OFFER_REDEEMED/RESUBSCRIBE")
        try await test.store.expireSubscription(productID: Shop.premiumMonthly, account: "alice")
        await #expect(performing: { try await test.buy(Shop.premiumMonthly, offer: once) }, throws: isRefusedSignature)
        let stale = try legacy(nonce: UUID(counting: 8), at: now - 25 * 3_600_000)
        await #expect(performing: { try await test.buy(Shop.premiumMonthly, offer: stale) }, throws: isRefusedSignature)
        // A fresh signature, made a day after the stale one would have had to be used, is accepted.
        let fresh = try legacy(nonce: UUID(counting: 8), at: now)
        #expect(try test.verified(try await test.buy(Shop.premiumMonthly, offer: fresh)).offerIdentifier == "premium.monthly.firstmonth")
    }

    @Test("a JWS promotional-offer signature (V2) is accepted for its product and offer only")
    func promotionalOfferV2() async throws {
        let test = try TestStore()
        let (key, keyID) = try Self.offerKey()
        _ = try await test.buy(Shop.premiumYearly)
        try await test.store.expireSubscription(productID: Shop.premiumYearly, account: "alice")
        let creator = OfferSignatureCreator(signingKey: key, keyId: keyID, issuerId: "issuer", bundleId: "com.example.shop")
        let wrong = try creator.promotionalOfferSignature(productId: Shop.premiumMonthly, offerIdentifier: "premium.yearly.loyalty",
                                                          nonce: UUID(counting: 1), issuedAt: TestStore.start)
        await #expect(throws: AppStoreError.self) {
            try await test.buy(Shop.premiumYearly, offer: .promotional(id: "premium.yearly.loyalty", signature: .jws(wrong)))
        }
        let right = try creator.promotionalOfferSignature(productId: Shop.premiumYearly, offerIdentifier: "premium.yearly.loyalty",
                                                          nonce: UUID(counting: 2), issuedAt: TestStore.start)
        let promoted = try test.verified(try await test.buy(Shop.premiumYearly, offer: .promotional(id: "premium.yearly.loyalty", signature: .jws(right))))
        #expect(promoted.offerType == .promotionalOffer && promoted.price == 79_990 && promoted.offerDiscountType == .payUpFront)
    }

    @Test("offer codes by reference name: eligibility checked, a stackable code follows the introductory offer")
    func offerCodes() async throws {
        let test = try TestStore()
        let first = try test.verified(try await test.buy(Shop.premiumYearly, offer: .code(referenceName: "FRIENDS-MONTH")))
        #expect(first.offerType == .introductoryOffer)
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.renewalInfo.offerType == .subscriptionOfferCode && status.renewalInfo.offerIdentifier == "FRIENDS-MONTH")
        try await test.store.advanceTime(by: 15 * day)
        let coded = try #require(try await test.store.ledgerTransactions(account: "alice").last)
        #expect(coded.offer?.type == .subscriptionOfferCode && coded.offer?.id == "FRIENDS-MONTH" && coded.price == 0)
        await #expect {
            try await test.buy(Shop.standardMonthly, account: "bob", device: "bob-phone", offer: .code(referenceName: "HALF-PRICE"))
        } throws: { ($0 as? AppStoreError).map { if case .purchase(.ineligibleForOffer, _) = $0 { return true } else { return false } } ?? false }
        await #expect {
            try await test.buy(Shop.standardMonthly, offer: .code(referenceName: "NO-SUCH-CODE"))
        } throws: { ($0 as? AppStoreError).map { if case .purchase(.invalidOfferIdentifier, _) = $0 { return true } else { return false } } ?? false }
    }

    @Test("an existing subscriber redeeming a code gets it at the next renewal with OFFER_REDEEMED")
    func codeForExistingSubscriber() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.standardMonthly)
        _ = try await test.buy(Shop.standardMonthly, offer: .code(referenceName: "HALF-PRICE"))
        #expect(try await test.notificationKinds().last == "OFFER_REDEEMED")
        try await test.store.advanceTime(by: 250 * day)
        let prices = try await test.store.ledgerTransactions(account: "alice").map(\.price)
        #expect(prices == [9_990, 2_990, 2_990, 4_990])
    }

    @Test("win-back offers only after expiry, listed in the renewal info")
    func winBack() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.premiumMonthly)
        await #expect(throws: AppStoreError.self) { try await test.buy(Shop.premiumMonthly, offer: .winBack(id: "premium.monthly.freemonth")) }
        try await test.store.expireSubscription(productID: Shop.premiumMonthly, account: "alice")
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "phone").first)
        #expect(status.renewalInfo.eligibleWinBackOfferIds == ["premium.monthly.freemonth"])
        let back = try test.verified(try await test.buy(Shop.premiumMonthly, offer: .winBack(id: "premium.monthly.freemonth")))
        #expect(back.offerType == .winBackOffer && back.offerIdentifier == "premium.monthly.freemonth" && back.price == 0)
        #expect(try await test.notificationKinds().last == "SUBSCRIBED/RESUBSCRIBE")
    }
}

@Suite(.timeLimit(.minutes(10)))
struct SubscriptionControlTests {
    @Test("price increase: request, agree, and decline with its expiry reason")
    func priceIncrease() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.requestPriceIncreaseConsent(transactionID: 0)
        var status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.renewalInfo.priceIncreaseStatus == .customerHasNotResponded)
        try await test.store.consentToPriceIncrease(transactionID: 0)
        status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.renewalInfo.priceIncreaseStatus == .customerConsentedOrWasNotifiedWithoutClaimingConsent)
        try await test.store.advanceTime(by: 31 * day)
        try await test.store.requestPriceIncreaseConsent(transactionID: 0)
        try await test.store.declinePriceIncrease(transactionID: 0)
        try await test.store.advanceTime(by: 31 * day)
        status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.news, device: "phone").first)
        #expect(status.state == .expired && status.renewalInfo.expirationIntent == .customerDidNotConsentToPriceIncrease)
        #expect(try await test.notificationKinds() == [
            "SUBSCRIBED/INITIAL_BUY", "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED", "DID_RENEW", "PRICE_INCREASE/PENDING",
            "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/PRICE_INCREASE",
        ])
    }

    @Test("an unanswered price increase expires the subscription at renewal")
    func unansweredPriceIncrease() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        try await test.store.requestPriceIncreaseConsent(transactionID: 0)
        try await test.store.advanceTime(by: 31 * day)
        #expect(try await test.notificationKinds().last == "EXPIRED/PRICE_INCREASE")
    }

    @Test("a back-dated purchase renews every period up to now, all unfinished; cancelling immediately gives one period")
    func backDated() async throws {
        let test = try TestStore()
        test.clock.set(to: date("2026-04-15T00:00:00Z"))
        let outcome = try await test.store.purchase(PurchaseRequest(productID: Shop.newsLite, account: "alice", device: nil,
                                                                    purchaseDate: date("2026-01-10T00:00:00Z")))
        guard case .success(let original) = outcome else { throw TestFailure("expected success") }
        #expect(original.transaction.purchaseDate == date("2026-01-10T00:00:00Z"))
        let transactions = try await test.store.ledgerTransactions(account: "alice")
        #expect(transactions.map(\.purchaseDate) == ["2026-01-10", "2026-02-10", "2026-03-10", "2026-04-10"].map { date("\($0)T00:00:00Z") })
        #expect(transactions.allSatisfy { !$0.isFinished })
        let cancelled = try await test.store.purchase(PurchaseRequest(productID: Shop.newsPlus, account: "bob", device: nil,
                                                                      purchaseDate: date("2026-01-10T00:00:00Z"), renewalBehavior: .cancelImmediately))
        guard case .success = cancelled else { throw TestFailure("expected success") }
        #expect(try await test.store.ledgerTransactions(account: "bob").count == 1)
        #expect(try await test.store.subscriptionStatuses(groupID: Shop.news, account: "bob").first?.state == .expired)
    }

    @Test("force renewal ends the period now and renews; expire now ends it; extending moves the renewal date")
    func forceExpireExtend() async throws {
        let test = try TestStore()
        _ = try await test.buy(Shop.newsLite)
        test.clock.set(to: TestStore.start.addingTimeInterval(5 * day))
        try await test.store.forceRenewalOfSubscription(productID: Shop.newsLite, account: "alice")
        let renewed = try #require(try await test.store.ledgerTransactions(account: "alice").last)
        #expect(renewed.reason == .renewal && renewed.purchaseDate == TestStore.start.addingTimeInterval(5 * day))
        #expect(try await test.store.ledgerTransaction(0)?.expirationDate == TestStore.start.addingTimeInterval(5 * day))
        try await test.store.extendRenewalDate(originalTransactionID: 0, days: 10)
        let extended = try #require(try await test.store.ledgerTransactions(account: "alice").last)
        #expect(extended.expirationDate == date("2026-02-16T00:00:00Z"))
        await #expect(throws: AppStoreError.self) { try await test.store.extendRenewalDate(originalTransactionID: 0, days: 91) }
        try await test.store.expireSubscription(productID: Shop.newsLite, account: "alice")
        #expect(try await test.notificationKinds() == [
            "SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "RENEWAL_EXTENDED", "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY",
        ])
        await #expect(throws: AppStoreError.self) { try await test.store.forceRenewalOfSubscription(productID: Shop.newsLite, account: "alice") }
    }

    @Test("status changes reach every device through the status feed")
    func statusFeed() async throws {
        let test = try TestStore()
        try await test.store.addDevice("tablet", account: "alice")
        _ = try await test.buy(Shop.newsLite)
        try await test.store.setAutoRenew(originalTransactionID: 0, enabled: false)
        let updates = try await test.store.takeUpdates(device: "tablet", channel: .statuses)
        #expect(updates.map(\.renewalState) == [.subscribed, .subscribed])
        let renewal = try await test.verifier.verifyAndDecodeRenewalInfo(try #require(updates.last?.signedRenewalInfo))
        #expect(renewal.autoRenewStatus == .off)
        #expect(try await test.store.takeUpdates(device: "tablet", channel: .statuses).isEmpty)
    }

    @Test("a family-shared subscription gives family members a status of their own")
    func familySubscription() async throws {
        let test = try TestStore()
        try await test.makeSmithsFamily()
        _ = try await test.buy(Shop.premiumYearly)
        _ = try await test.buy(Shop.standardMonthly, account: "bob", device: "bob-phone")
        let statuses = try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "bob-phone")
        #expect(statuses.count == 2)
        #expect(statuses.map(\.transaction.transaction.ownership) == [.purchased, .familyShared])
        try await test.store.advanceTime(by: 15 * day)
        let shared = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, device: "bob-phone").last)
        #expect(shared.transaction.transaction.reason == .renewal)
        #expect(shared.state == .subscribed)
    }
}
