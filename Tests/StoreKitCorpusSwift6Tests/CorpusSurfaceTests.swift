import AppStoreModels
import AppStoreSigning
import Foundation
import OpenStoreKitTesting
import ServiceLogging
import StoreKit
import StoreKitCatalog
import Testing
import TestSupport
import os

/// Drives the corpus files written in the shapes real StoreKit code takes for the parts of Apple's
/// surface added last: offers signed in each of StoreKit's three forms and an eligibility decision,
/// an original-API observer with promoted purchases and storefront changes, test doubles that subclass
/// the original API's classes, unified logging, and review prompts. The same files compile in the
/// Swift 5 corpus (with `-warnings-as-errors`, as here).
@Suite("The corpus of StoreKit code written for Apple's newest surface compiles unchanged and behaves", .serialized, .timeLimit(.minutes(10)))
@MainActor
struct CorpusSurfaceTests {
    static let shop = ExampleShop.self
    static let offerID = "premium.monthly.firstmonth"

    /// The shop's in-app purchase key, as the developer's server holds it.
    static func offerKey() throws -> (P256PrivateKey, String) {
        let configuration = try StoreKitConfiguration.load(contentsOf: shop.file).configuration
        let pair = try #require(configuration.subscriptionOffersKeyPair)
        return (try P256PrivateKey(pemRepresentation: try #require(pair.privateKey)), try #require(pair.id))
    }

    /// What the developer's server answers: the promotional offer signed both ways at the store's now.
    static func serverSignedOffer(at now: Date, appAccountToken: UUID? = nil) throws -> ServerSignedOffer {
        let (key, keyID) = try offerKey()
        let nonce = UUID()
        let timestamp = Int(AppStoreJSON.milliseconds(from: now))
        let message = PromotionalOfferSignature(bundleId: "com.example.shop", keyId: keyID, productIdentifier: shop.premiumMonthly,
                                                subscriptionOfferID: offerID, applicationUsername: appAccountToken?.uuidString.lowercased() ?? "",
                                                nonce: nonce, timestamp: Int64(timestamp))
        let signature = try #require(Data(base64Encoded: try message.sign(with: key)))
        let creator = OfferSignatureCreator(signingKey: key, keyId: keyID, issuerId: "issuer", bundleId: "com.example.shop")
        let jws = try creator.promotionalOfferSignature(productId: shop.premiumMonthly, offerIdentifier: offerID, transactionId: nil,
                                                        nonce: nonce, issuedAt: now)
        return ServerSignedOffer(offerID: offerID, keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature, compactJWS: jws)
    }

    static func eligibility(allow: Bool, at now: Date, key: P256PrivateKey? = nil) throws -> String {
        let (shopKey, keyID) = try offerKey()
        let creator = OfferSignatureCreator(signingKey: key ?? shopKey, keyId: keyID, issuerId: "issuer", bundleId: "com.example.shop")
        return try creator.introductoryOfferEligibilitySignature(productId: shop.premiumMonthly, allowIntroductoryOffer: allow, transactionId: "0",
                                                                 nonce: UUID(), issuedAt: now)
    }

    @Test("a lapsed subscriber buys with a promotional offer in each of StoreKit's three forms", arguments: OfferPurchases.Form.allCases)
    func promotionalOfferForms(_ form: OfferPurchases.Form) async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let monthly = try #require(try await Product.products(for: [Self.shop.premiumMonthly]).first)
            _ = try await monthly.purchase()
            try await session.expireSubscription(productIdentifier: Self.shop.premiumMonthly, account: "alice")
            let token = UUID()
            let offer = try Self.serverSignedOffer(at: session.now, appAccountToken: token)
            let bought = try #require(try await OfferPurchases.buy(monthly, with: offer, form: form, appAccountToken: token))
            #expect(OfferPurchases.describe(bought) == "promotional \(Self.offerID)")
            #expect(bought.appAccountToken == token)
            // A signature is good once: the same nonce again is refused, whatever the form.
            if form == .signedFields {
                try await session.expireSubscription(productIdentifier: Self.shop.premiumMonthly, account: "alice")
                await #expect(throws: Product.PurchaseError.self) { _ = try await OfferPurchases.buy(monthly, with: offer, form: form) }
            }
        }
    }

    @Test("the server decides introductory-offer eligibility; custom options are kept for tests and never signed")
    func introductoryOfferEligibility() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let monthly = try #require(try await Product.products(for: [Self.shop.premiumMonthly]).first)
            #expect(await monthly.subscription?.isEligibleForIntroOffer == true)
            // A new subscriber the server says no to pays the full price.
            let refused = try #require(try await OfferPurchases.buy(monthly, introductoryOfferEligibility: try Self.eligibility(allow: false, at: session.now)))
            #expect(refused.offer == nil)
            #expect(refused.price == monthly.price)
            let recorded = try #require(await session.allTransactions().first { $0.identifier == Int(refused.id) })
            #expect(recorded.customPurchaseOptions["paywall"] == "onboarding")
            #expect(recorded.customPurchaseOptions["introOfferEligibilityParam"] != nil)
            #expect(!String(decoding: refused.jsonRepresentation, as: UTF8.self).contains("onboarding"))

            // A former subscriber, no longer eligible, whom the server lets have it again.
            try await session.expireSubscription(productIdentifier: Self.shop.premiumMonthly, account: "alice")
            #expect(await monthly.subscription?.isEligibleForIntroOffer == false)
            let allowed = try #require(try await OfferPurchases.buy(monthly, introductoryOfferEligibility: try Self.eligibility(allow: true, at: session.now)))
            #expect(allowed.offer?.type == .introductory)
            #expect(allowed.price == Decimal(string: "4.99"))

            // A decision signed with another key is refused.
            try await session.expireSubscription(productIdentifier: Self.shop.premiumMonthly, account: "alice")
            let forged = try Self.eligibility(allow: true, at: session.now, key: .generate())
            await #expect(throws: Product.PurchaseError.invalidOfferSignature) {
                _ = try await OfferPurchases.buy(monthly, introductoryOfferEligibility: forged)
            }
        }
    }

    @Test("an original-API observer: a promoted purchase bought at once and one deferred, a storefront change, a purchase its delegate stops, a signed payment discount")
    func queueObserver() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let queue = SKPaymentQueue.default()
            let observer = QueueObserver()
            queue.add(observer)
            queue.delegate = observer
            defer { queue.remove(observer) }
            try await eventually("the queue's storefront read") { queue.storefront?.countryCode == "USA" }
            #expect(queue.transactionObservers.count == 1)

            try await session.sendPurchaseIntent(productIdentifier: Self.shop.pro, device: "phone")
            try await eventually("the promoted purchase delivered") { observer.log.contains("delivered \(Self.shop.pro)") }
            #expect(observer.log.prefix(2) == ["promoted \(Self.shop.pro)", "delivered \(Self.shop.pro)"])

            observer.acceptsPromotedPurchases = false
            try await session.sendPurchaseIntent(productIdentifier: Self.shop.wizard, device: "phone")
            try await eventually("the promoted purchase offered") { observer.log.contains("promoted \(Self.shop.wizard)") }
            await queue.settle()
            #expect(!observer.log.contains("delivered \(Self.shop.wizard)"))
            observer.buyDeferredPayments(on: queue)
            try await eventually("the deferred purchase delivered") { observer.log.contains("delivered \(Self.shop.wizard)") }

            try await session.configureAccount("alice", storefront: "GBR")
            try await eventually("the storefront change heard") { observer.log.contains("storefront GBR") }
            #expect(queue.storefront?.countryCode == "GBR")

            // The customer moves again while the queue is not listening (it still reports GBR): the
            // delegate stops the purchase in the new storefront.
            queue.stop()
            try await session.configureAccount("alice", storefront: "FRA")
            observer.continuesInNewStorefront = false
            queue.add(SKPayment(product: try await Self.originalProduct(Self.shop.gems)))
            try await eventually("the stopped purchase failed") { observer.log.contains("failed \(Self.shop.gems) \(SKError.Code.storeProductNotAvailable.rawValue)") }
            #expect(observer.log.contains("continue in FRA? false"))

            // A promotional offer through the original API: a payment discount the server signed (the
            // delegate now lets purchases go on in the new storefront).
            observer.continuesInNewStorefront = true
            let monthly = try #require(try await Product.products(for: [Self.shop.premiumMonthly]).first)
            _ = try await monthly.purchase()
            try await session.expireSubscription(productIdentifier: Self.shop.premiumMonthly, account: "alice")
            let offer = try Self.serverSignedOffer(at: session.now)
            queue.add(QueueObserver.discountedPayment(for: try await Self.originalProduct(Self.shop.premiumMonthly), offerID: offer.offerID, keyID: offer.keyID,
                                                      nonce: offer.nonce, signature: offer.signature, timestamp: offer.timestamp))
            try await eventually("the discounted purchase delivered") { observer.log.contains("delivered \(Self.shop.premiumMonthly)") }
            guard case .verified(let latest)? = await Transaction.latest(for: Self.shop.premiumMonthly) else {
                Issue.record("no verified latest transaction")
                return
            }
            #expect(latest.offer?.id == Self.offerID)
        }
    }

    /// A product as the original API hands it out, through the active client.
    static func originalProduct(_ id: String) async throws -> SKProduct {
        let request = SKProductsRequest(productIdentifiers: [id])
        let collector = ProductsCollector()
        request.delegate = collector
        request.start()
        await request.waitUntilFinished()
        return try #require(collector.products?.first)
    }

    @Test("original-API products describe their subscription period, introductory price and promotional offers")
    func productDiscounts() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        let phone = try await session.client(device: "phone")
        let request = SKProductsRequest(productIdentifiers: [Self.shop.premiumMonthly, Self.shop.premiumYearly], client: phone)
        let delegate = ProductsCollector()
        request.delegate = delegate
        request.start()
        await request.waitUntilFinished()
        let products = try #require(delegate.products)
        let monthly = try #require(products.first { $0.productIdentifier == Self.shop.premiumMonthly })
        let yearly = try #require(products.first { $0.productIdentifier == Self.shop.premiumYearly })
        #expect(QueueObserver.offerText(for: yearly) == "2 week free, then $99.99 / year")
        #expect(QueueObserver.offerText(for: monthly) == "$4.99 for 3 month, then $9.99 / month")
        #expect(monthly.subscriptionPeriod?.unit == .month && monthly.subscriptionPeriod?.numberOfUnits == 1)
        #expect(monthly.introductoryPrice?.type == .introductory && monthly.introductoryPrice?.numberOfPeriods == 3)
        #expect(monthly.discounts.map(\.identifier) == [Self.offerID])
        #expect(monthly.discounts.first?.type == .subscription)
        #expect(monthly.subscriptionGroupIdentifier == Self.shop.plus)
    }

    @Test("test doubles subclass SKProduct, SKPaymentTransaction and SKPaymentQueue and drive an observer without a store")
    func testDoubles() {
        let product = StubProduct(identifier: "stub.monthly", price: Decimal(string: "2.99")!)
        #expect(QueueObserver.offerText(for: product) == "$2.99 / month")
        #expect(product.localizedTitle == "Stub stub.monthly")
        let queue = RecordingQueue()
        let observer = QueueObserver()
        observer.paymentQueue(queue, updatedTransactions: [StubTransaction(productIdentifier: "stub.monthly", state: .purchased),
                                                           StubTransaction(productIdentifier: "stub.failed", state: .failed),
                                                           StubTransaction(productIdentifier: "stub.waiting", state: .deferred)])
        #expect(queue.finished == ["stub.monthly", "stub.failed"])
        #expect(observer.log == ["delivered stub.monthly", "failed stub.failed \(SKError.Code.paymentCancelled.rawValue)"])
        #expect((StubTransaction(productIdentifier: "x", state: .failed).error as? SKError)?.code == .paymentCancelled)
    }

    @Test("a store's Logger, os_log and signpost lines reach the log with their level, category and privacy")
    func unifiedLogging() async throws {
        let recording = RecordingLogHandler()
        let previous = UnifiedLogOutput.handler
        UnifiedLogOutput.handler = recording
        defer { UnifiedLogOutput.handler = previous }
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let pro = try #require(try await Product.products(for: [Self.shop.pro]).first)
            let account = UUID()
            LoggedStore.logPrice(pro)
            let bought = try #require(await LoggedStore.buy(pro, account: account))
            #expect(LoggedStore.purchases.withLock { $0 } .contains(Self.shop.pro))
            try await session.configureAccount("alice", askToBuy: true)
            let gems = try #require(try await Product.products(for: [Self.shop.gems]).first)
            #expect(await LoggedStore.buy(gems, account: account) == nil)

            let lines = recording.written.filter { $0.metadata["subsystem"] == "com.example.shop" }
            let store = lines.filter { $0.metadata["category"] == "Store" }
            #expect(store.first?.message == "\(Self.shop.pro) costs 9.99 false")
            #expect(store.first?.level == .debug)
            let buying = try #require(store.first { $0.message.hasPrefix("buying \(Self.shop.pro)") })
            #expect(buying.level == .info && buying.label == "com.example.shop:Store")
            #expect(buying.message.contains("account <mask.hash: '") && !buying.message.contains(account.uuidString))
            let boughtLine = try #require(store.first { $0.message.hasPrefix("bought") })
            #expect(boughtLine.message == "bought \(Self.shop.pro): transaction \(bought.id), quantity 01")
            #expect(boughtLine.level == .notice && boughtLine.metadata["type"] == "Default")
            let legacy = lines.filter { $0.metadata["category"] == "Legacy" }
            #expect(legacy.map(\.message) == ["purchase of \(Self.shop.gems) is pending"])
            #expect(legacy.first?.level == .info)
            let signposts = lines.filter { $0.metadata["category"] == "PointsOfInterest" }.map(\.message)
            #expect(signposts.count == 4 && signposts.allSatisfy { $0.contains("purchase") })
            #expect(signposts.first?.contains("begin] purchase \(Self.shop.pro)") == true)
            #expect(signposts[1].contains("end] purchase (") && signposts[1].contains(" ms)"))
        }
    }

    @Test("review prompts from AppStore, SKStoreReviewController and @Environment(\\.requestReview) are recorded on the device")
    func reviewPrompts() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            ReviewPrompt.afterPurchase(count: 3)
            try await eventually("the first request recorded") { try await session.reviewRequests(device: "phone").count == 1 }
            ReviewPrompt.afterPurchase(count: 10)
            try await eventually("the second request recorded") { try await session.reviewRequests(device: "phone").count == 2 }
            ReviewPrompt.afterPurchase(count: 4)
            let model = ReviewModel()
            model.purchaseSucceeded()
            try await eventually("the third request recorded") { try await session.reviewRequests(device: "phone").count == 3 }
            let requests = try await session.reviewRequests(device: "phone")
            // Xcode's environment is a development build: every prompt shows.
            #expect(requests.allSatisfy { $0.shown })
            #expect(requests.allSatisfy { $0.date == session.now })
        }
    }
}

/// Collects a products request's answer, as an original-API helper's delegate does.
final class ProductsCollector: NSObject, SKProductsRequestDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [SKProduct]?

    var products: [SKProduct]? { lock.withLock { received } }

    func productsRequest(_ request: SKProductsRequest, didReceive response: SKProductsResponse) {
        lock.withLock { received = response.products }
    }
}
