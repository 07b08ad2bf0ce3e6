import Foundation
import OpenStoreKitTesting
import ServiceLogging
import StoreKit
import Testing
import TestSupport
import UIKit
import os

/// The parts of Apple's StoreKit surface added for the iOS 26 SDK, used as app code uses them,
/// against the local store: billing plans and their commitment, the product's App Store JSON, the
/// transaction's and renewal info's further fields, promoted purchases, the scene-taking calls,
/// errors in words, the original API's newest pieces, Foundation's missing formatter and the
/// unified log's line format.
@Suite("Apple's newest StoreKit surface, used as app code uses it", .serialized, .timeLimit(.minutes(10)))
@MainActor
struct SurfaceAdditionsTests {
    static let shop = ExampleShop.self

    @Test("a yearly plan's pricing terms; billed monthly it is twelve payments of a commitment that auto-renew off cannot shorten")
    func monthlyBillingPlan() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop", startDate: TestSession.referenceStartDate)
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let yearly = try #require(try await Product.products(for: [Self.shop.premiumYearly]).first)
            let terms = try #require(yearly.subscription?.pricingTerms)
            #expect(terms.map(\.billingPlanType) == [.upFront, .monthly])
            let monthlyTerms = try #require(terms.last)
            #expect(monthlyTerms.billingPrice == Decimal(string: "8.99") && monthlyTerms.billingDisplayPrice == "$8.99")
            #expect(monthlyTerms.billingPeriod == Product.SubscriptionPeriod(value: 1, unit: .month))
            #expect(monthlyTerms.commitmentInfo.price == Decimal(string: "107.88") && monthlyTerms.commitmentInfo.period == .yearly)
            #expect(monthlyTerms.subscriptionOffers.isEmpty && terms[0][offers: .introductory].count == 1)
            #expect(try await Product.products(for: [Self.shop.premiumMonthly]).first?.subscription?.pricingTerms == [])

            let bought = try #require(try await yearly.purchase(options: [.billingPlanType(.monthly)]).verifiedTransaction())
            #expect(bought.price == Decimal(string: "8.99") && bought.billingPlanType == .monthly && bought.offer == nil)
            let commitment = try #require(bought.commitmentInfo)
            #expect(commitment.billingPeriodNumber == 1 && commitment.totalBillingPeriods == 12 && commitment.price == Decimal(string: "107.88"))
            #expect(bought.expirationDate == Calendar(identifier: .gregorian).date(byAdding: .month, value: 1, to: bought.purchaseDate))
            #expect(commitment.expirationDate == Calendar(identifier: .gregorian).date(byAdding: .year, value: 1, to: bought.purchaseDate))
            let status = try #require(try await Product.SubscriptionInfo.status(transactionID: bought.id))
            let info = try status.renewalInfo.payloadValue
            #expect(info.renewalBillingPlanType == .monthly && info.commitmentInfo?.renewalDate == commitment.expirationDate)
            #expect(info.commitmentInfo?.renewalPrice == Decimal(string: "107.88") && info.renewalPrice == Decimal(string: "8.99"))

            // Auto-renew off mid-commitment: the payments go on to its end, then it expires.
            try await session.disableAutoRenewForTransaction(identifier: bought.id)
            try await session.advance(byMonths: 3)
            guard case .verified(let third)? = await Transaction.latest(for: Self.shop.premiumYearly) else { throw TestFailure("no latest transaction") }
            #expect(third.commitmentInfo?.billingPeriodNumber == 4 && third.reason == .renewal && third.price == Decimal(string: "8.99"))
            #expect(try await Product.SubscriptionInfo.status(transactionID: bought.id)?.state == .subscribed)
            try await session.advance(byMonths: 9)
            #expect(try await Product.SubscriptionInfo.status(transactionID: bought.id)?.state == .expired)
            guard case .verified(let last)? = await Transaction.latest(for: Self.shop.premiumYearly) else { throw TestFailure("no latest transaction") }
            #expect(last.commitmentInfo?.billingPeriodNumber == 12)

            // A product without a monthly plan refuses it.
            let monthly = try #require(try await Product.products(for: [Self.shop.premiumMonthly]).first)
            await #expect(throws: Product.PurchaseError.productUnavailable) { _ = try await monthly.purchase(options: [.billingPlanType(.monthly)]) }
        }
    }

    @Test("the product's App Store JSON, the transaction's string forms and debug descriptions, the app transaction's platform")
    func representations() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let yearly = try #require(try await Product.products(for: [Self.shop.premiumYearly]).first)
            let json = try #require(try JSONSerialization.jsonObject(with: yearly.jsonRepresentation) as? [String: Any])
            let attributes = try #require(json["attributes"] as? [String: Any])
            #expect(json["type"] as? String == "in-apps" && attributes["offerName"] as? String == Self.shop.premiumYearly)
            #expect(attributes["kind"] as? String == "Auto-Renewable Subscription" && attributes["subscriptionFamilyId"] as? String == Self.shop.plus)
            let offer = try #require((attributes["offers"] as? [[String: Any]])?.first)
            #expect(offer["priceFormatted"] as? String == "$99.99" && offer["recurringSubscriptionPeriod"] as? String == "P1Y")
            #expect(yearly.debugDescription.contains(Self.shop.premiumYearly))

            let bought = try #require(try await yearly.purchase().verifiedTransaction())
            #expect(bought.environmentStringRepresentation == "Xcode" && bought.reasonStringRepresentation == "PURCHASE")
            #expect(bought.storefrontCountryCode == "USA" && bought.currencyCode == "USD" && bought.offerPeriodStringRepresentation == "P2W")
            #expect(bought.debugDescription.hasPrefix("Transaction(id: \(bought.id)"))
            let renewal = try #require(await bought.subscriptionStatus).renewalInfo.payloadValue
            #expect(renewal.environmentStringRepresentation == "Xcode" && renewal.currencyCode == "USD" && renewal.commitmentInfo == nil)
            let pro = try #require(try await Product.products(for: [Self.shop.pro]).first)
            let one = try #require(try await pro.purchase().verifiedTransaction())
            try await session.refundTransaction(identifier: UInt(one.id))
            guard case .verified(let refunded)? = await Transaction.latest(for: Self.shop.pro) else { throw TestFailure("no refund") }
            #expect(refunded.revocationType == .fullRefund && refunded.revocationTypeStringRepresentation == "REFUND_FULL")
            let app = try await AppTransaction.shared.payloadValue
            #expect(app.originalPlatform == .iOS && app.originalPlatformStringRepresentation == "iOS")
            #expect(Bundle.main.bundleIdentifier != nil, "an app connected to a store has a bundle identifier")
        }
    }

    @Test("promoted in-app purchases: the catalog's order by default, then the app's order and visibility, per device")
    func promotions() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let initial = try await Product.PromotionInfo.currentOrder
            #expect(initial.count > 5 && initial.allSatisfy { $0.visibility == .appStoreConnectDefault })
            try await Product.PromotionInfo.updateProductOrder(byID: [Self.shop.pro, Self.shop.gems])
            try await Product.PromotionInfo.updateProductVisibility(.hidden, for: Self.shop.gems)
            var pro = try #require(try await Product.PromotionInfo.currentOrder.first)
            #expect(pro.productID == Self.shop.pro)
            pro.visibility = .visible
            try await pro.update()
            let order = try await Product.PromotionInfo.currentOrder
            #expect(order.prefix(2).map(\.productID) == [Self.shop.pro, Self.shop.gems])
            #expect(order[0].visibility == .visible && order[1].visibility == .hidden && order.count == initial.count)
            try await Product.PromotionInfo.updateAll([Product.PromotionInfo(productID: Self.shop.wizard, visibility: .visible)])
            #expect(try await Product.PromotionInfo.currentOrder == [Product.PromotionInfo(productID: Self.shop.wizard, visibility: .visible)])
            await #expect(throws: (any Error).self) {
                try await Product.PromotionInfo.updateAll([Product.PromotionInfo(productID: "no.such.product", visibility: .visible)])
            }
        }
        // Another device keeps App Store Connect's order.
        let tablet = try await session.client(device: "tablet", account: "alice")
        #expect(try await tablet.promotedProducts().allSatisfy { $0.visibility == .appStoreConnectDefault })
    }

    @Test("StoreKit's scene-taking calls over the app's window scene: a purchase, the sheets, a review, a refund request")
    func sceneCalls() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            #expect(SceneCalls.scene != nil)
            let pro = try #require(try await Product.products(for: [Self.shop.pro]).first)
            let bought = try #require(try await SceneCalls.buy(pro))
            try await session.queueCustomerResponse(.redeemOfferCode(referenceName: "FRIENDS-MONTH"), in: .offerCodeRedeem, device: "phone")
            try await SceneCalls.redeemCode()
            try await SceneCalls.manageSubscriptions()
            SceneCalls.askForReview()
            try await eventually("the review request recorded") { try await session.reviewRequests(device: "phone").count == 1 }
            #expect(try await SceneCalls.refund(bought) == .success)
            guard case .verified(let refunded)? = await Transaction.latest(for: Self.shop.pro) else { throw TestFailure("no refund") }
            #expect(refunded.revocationDate != nil)
        }
    }

    @Test("the original API's sheets: code redemption reaches the observers; price consent shows unless the delegate says not now")
    func originalAPISheets() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let queue = SKPaymentQueue.default()
            let observer = QueueObserver()
            queue.add(observer)
            queue.delegate = observer
            defer { queue.remove(observer) }
            try await session.queueCustomerResponse(.redeemOfferCode(referenceName: "FRIENDS-MONTH"), in: .offerCodeRedeem, device: "phone")
            queue.presentCodeRedemptionSheet()
            try await eventually("the redeemed code delivered") { observer.log.contains("delivered \(Self.shop.premiumYearly)") }

            let yearly = try #require(try await Transaction.latest(for: Self.shop.premiumYearly)?.payloadValue)
            try await session.requestPriceIncreaseConsentForTransaction(identifier: yearly.id)
            try await session.queueCustomerResponse(.acceptPriceIncrease, in: .priceIncreaseConsent, device: "phone")
            observer.showsPriceConsent = false
            queue.showPriceConsentIfNeeded()
            await queue.settle()
            #expect(try await Product.SubscriptionInfo.status(transactionID: yearly.id)?.renewalInfo.payloadValue.priceIncreaseStatus == .pending)
            observer.showsPriceConsent = true
            queue.showPriceConsentIfNeeded()
            await queue.settle()
            #expect(try await Product.SubscriptionInfo.status(transactionID: yearly.id)?.renewalInfo.payloadValue.priceIncreaseStatus == .agreed)
        }
    }

    @Test("a transaction's price and currency are the storefront's: dollars in the United States, pounds in the United Kingdom")
    func priceAndCurrency() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.configureAccount("bob", storefront: "GBR")
        try await session.withDefaultClient(device: "laptop", account: "bob") { _ in
            let gems = try #require(try await Product.products(for: [Self.shop.gems]).first)
            #expect(gems.priceFormatStyle.currencyCode == "GBP")
            let bought = try #require(try await gems.purchase(options: [.quantity(3)]).verifiedTransaction())
            #expect(bought.currency?.identifier == "GBP" && bought.currencyCode == "GBP" && bought.storefront.countryCode == "GBR")
            #expect(bought.price == gems.price * 3)
            // The current entitlement, read through the name StoreKit kept (not deprecated here).
            let pro = try #require(try await Product.products(for: [Self.shop.pro]).first)
            _ = try await pro.purchase()
            guard case .verified(let entitled)? = await Transaction.currentEntitlement(for: Self.shop.pro) else { throw TestFailure("no entitlement") }
            #expect(entitled.price == pro.price && entitled.currency == Locale.Currency("GBP"))
            #expect(Message.Reason(rawValue: 2) == .billingIssue && Message.Reason.priceIncreaseConsent.rawValue == 1)
        }
    }

    @Test("errors say what went wrong, why and what to do; SKError carries its user info; new codes bridge")
    func errorsInWords() {
        for error in [StoreKitError.userCancelled, .networkError(URLError(.notConnectedToInternet)), .notAvailableInStorefront, .unsupported] {
            #expect(error.errorDescription != nil && error.failureReason != nil)
        }
        #expect(StoreKitError.networkError(URLError(.timedOut)).recoverySuggestion?.contains("network") == true)
        for error in Product.PurchaseError.allCases {
            #expect(error.failureReason != nil && error.recoverySuggestion != nil, "\(error)")
        }
        #expect(Transaction.RefundRequestError.duplicateRequest.failureReason != nil)
        #expect(VerificationResult<Transaction>.VerificationError.invalidSignature.recoverySuggestion != nil)
        let error = SKError(.paymentInvalid, userInfo: ["detail": "quantity"])
        #expect(error.userInfo["detail"] as? String == "quantity" && (error.userInfo[NSLocalizedDescriptionKey] as? String)?.isEmpty == false)
        #expect((error as NSError).domain == SKErrorDomain && (error as NSError).code == SKError.paymentInvalid.rawValue)
        #expect(error.failureReason != nil && SKError(.paymentCancelled).recoverySuggestion == nil)
        #expect(SKError.paymentMethodBindingConfigurationRequired.rawValue == 21)
        let invalid = InvalidRequestError(code: 4_000_001, message: "bad request")
        #expect(invalid.code == 4_000_001)
    }

    @Test("a receipt refresh request syncs and reports to its delegate; the sandbox receipt properties are named")
    func receiptRefresh() async throws {
        let session = try TestSession(contentsOf: Self.shop.file, bundleID: "com.example.shop")
        try await session.withDefaultClient(device: "phone", account: "alice") { _ in
            let request = SKReceiptRefreshRequest(receiptProperties: [SKReceiptPropertyIsExpired: true])
            let delegate = RequestRecorder()
            request.delegate = delegate
            request.start()
            await request.waitUntilFinished()
            #expect(delegate.finished && request.receiptProperties?[SKReceiptPropertyIsExpired] as? Bool == true)
            try await session.setSimulatedError(.generic(.networkError), forAPI: .appStoreSync)
            let failing = SKReceiptRefreshRequest(receiptProperties: nil)
            let failures = RequestRecorder()
            failing.delegate = failures
            failing.start()
            await failing.waitUntilFinished()
            #expect(!failures.finished && failures.error != nil)
        }
    }

    @Test("DateComponentsFormatter writes subscription periods and time left as Foundation does, in English")
    func dateComponentsFormatter() {
        let formatter = DateComponentsFormatter()
        formatter.unitsStyle = .full
        formatter.allowedUnits = [.year, .month, .weekOfMonth, .day]
        #expect(formatter.string(from: DateComponents(month: 1)) == "1 month")
        #expect(formatter.string(from: DateComponents(day: 3)) == "3 days")
        formatter.maximumUnitCount = 1
        #expect(formatter.string(from: DateComponents(year: 1, month: 2)) == "1 year")
        let short = DateComponentsFormatter()
        short.unitsStyle = .abbreviated
        short.allowedUnits = [.hour, .minute]
        #expect(short.string(from: 3_900) == "1h 5m")
        let positional = DateComponentsFormatter()
        positional.allowedUnits = [.hour, .minute, .second]
        positional.zeroFormattingBehavior = .pad
        #expect(positional.string(from: 3_725) == "1:02:05")
        #expect(DateComponentsFormatter.localizedString(from: DateComponents(weekOfMonth: 2), unitsStyle: .spellOut) == "two weeks")
        let remaining = DateComponentsFormatter()
        remaining.unitsStyle = .full
        remaining.allowedUnits = [.day]
        remaining.includesTimeRemainingPhrase = true
        #expect(remaining.string(from: Date(timeIntervalSince1970: 0), to: Date(timeIntervalSince1970: 5 * 86_400)) == "5 days remaining")
    }

    @Test("a unified log line: time, thread, type, process, subsystem and category; privacy and printf arguments")
    func unifiedLogLine() {
        let record = LogRecord(label: "com.example.shop:Store", level: .error, message: "two\nlines",
                               metadata: ["subsystem": "com.example.shop", "category": "Store", "type": "Error"])
        let line = UnifiedLogLineHandler.line(record, time: Date(timeIntervalSince1970: 1_767_225_600.25), thread: 0x1a2b,
                                              process: ProcessInfo.processInfo)
        #expect(line.wholeMatch(of: #/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.250000[+-]\d{4} 0x1a2b +Error +0x0 +\d+ +0 +\S+: \[com\.example\.shop:Store\] two\\nlines/#) != nil, "\(line)")
        let recording = RecordingLogHandler()
        let previous = UnifiedLogOutput.handler
        UnifiedLogOutput.handler = recording
        defer { UnifiedLogOutput.handler = previous }
        let log = OSLog(subsystem: "com.example.test", category: "Printf")
        os_log("%{public}@ bought %d for %{private}@, %@", log: log, type: .info, "alice", 3, "secret", "hidden")
        os_log("100%% done", log: log)
        os_log(.fault, log: log, "an interpolated \(42) and \("text")")
        let logger = Logger(OSLog.disabled)
        logger.error("never written")
        let messages = recording.written.filter { $0.metadata["category"] == "Printf" }.map(\.message)
        #expect(messages == ["alice bought 3 for <private>, <private>", "100% done", "an interpolated 42 and <private>"])
        #expect(recording.written.filter { $0.metadata["category"] == "Printf" }.map(\.level) == [.info, .notice, .critical])
        UnifiedLogOutput.revealsPrivateValues = true
        defer { UnifiedLogOutput.revealsPrivateValues = false }
        Logger(subsystem: "com.example.test", category: "Reveal").info("\("shown") \("hashed", privacy: .private(mask: .hash)) \(Int8(-3), format: .hex(includePrefix: true))")
        let revealed = recording.written.last?.message ?? ""
        #expect(revealed.hasPrefix("shown <mask.hash: '") && revealed.hasSuffix("'> -0x3"), "\(revealed)")
        let lock = OSAllocatedUnfairLock()
        lock.lock()
        lock.precondition(.owner)
        lock.unlock()
        lock.precondition(.notOwner)
        #expect(lock.lockIfAvailable())
        lock.unlock()
        let counter = OSAllocatedUnfairLock(initialState: 0)
        #expect(counter.withLock { value -> Int in value += 2; return value } == 2)
    }
}

extension Product.PurchaseResult {
    /// The verified transaction of a successful purchase, or a test failure saying what happened.
    func verifiedTransaction() throws -> Transaction? {
        guard case .success(.verified(let transaction)) = self else { throw TestFailure("expected a verified purchase, got \(self)") }
        return transaction
    }
}

/// Hears how a request ended, as an original-API delegate does.
final class RequestRecorder: NSObject, SKRequestDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var didFinish = false
    private var failure: (any Error)?

    var finished: Bool { lock.withLock { didFinish } }
    var error: (any Error)? { lock.withLock { failure } }

    func requestDidFinish(_ request: SKRequest) { lock.withLock { didFinish = true } }
    func request(_ request: SKRequest, didFailWithError error: any Error) { lock.withLock { failure = error } }
}
