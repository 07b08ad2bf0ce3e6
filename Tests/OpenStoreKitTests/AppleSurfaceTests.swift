import AppStoreModels
import BlockingWork
import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import StoreKitCatalog
import Testing
import TestSupport

/// The pieces of Apple's StoreKit surface that code written for it reads: format styles, localized
/// descriptions, the names before iOS 17.2, `Status.all`'s type, entitlement task states; and where a
/// session's time starts and how it runs.
@Suite("Apple's StoreKit surface: format styles, descriptions, old names, task states, session time", .timeLimit(.minutes(10)))
struct AppleSurfaceTests {
    typealias Period = Product.SubscriptionPeriod

    @Test("a period in words, in each style of Date.ComponentsFormatStyle's names, numbers in the locale")
    func periodStyles() {
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let english = Locale(identifier: "en_US")
        func text(_ period: Period, _ style: Period.FormatStyle.Style, _ locale: Locale = english) -> String {
            period.formatted(Period.FormatStyle(style: style, locale: locale), referenceDate: start)
        }
        #expect(text(.monthly, .spellOut) == "one month")
        #expect(text(.everyThreeMonths, .spellOut) == "three months")
        #expect(text(.everyTwoWeeks, .wide) == "2 weeks")
        #expect(text(.everyThreeDays, .wide) == "3 days")
        #expect(text(.yearly, .abbreviated) == "1 yr")
        #expect(text(.everySixMonths, .abbreviated) == "6 mths")
        #expect(text(.weekly, .condensedAbbreviated) == "1wk")
        #expect(text(.everyTwoMonths, .narrow) == "2m")
        #expect(text(Period(value: 2, unit: .year), .spellOut, Locale(identifier: "de_DE")) == "zwei years")
        #expect(text(Period(value: 1500, unit: .year), .wide, Locale(identifier: "de_DE")) == "1.500 years")
        #expect(text(Period(value: 40, unit: .day), .wide) == "1 month, 1 week, 2 days", "the largest whole units, as a range of dates reads")
        // The range a period covers, written directly.
        let range = Period.monthly.dateRange(referenceDate: start)
        #expect(range.upperBound == Date(timeIntervalSince1970: 1_769_904_000), "2026-02-01")
        #expect(range.formatted(Period.FormatStyle(style: .wide, locale: english)) == "1 month")
        #expect(Period.FormatStyle(style: .wide).locale(english).locale == english)
        // A duration style gets the period's length.
        #expect(Period.weekly.formatted(.units(allowed: [.days], width: .wide), referenceDate: start) == "7 days")
        #expect(DateComponents(subscriptionPeriod: .everyTwoWeeks).weekOfYear == 2)
        #expect(DateComponents(subscriptionPeriod: .yearly).year == 1)
    }

    @Test("a unit alone, and units in order")
    func unitStyle() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let yearly = try #require(try await phone.products(for: [Shop.premiumYearly]).first)
        #expect(yearly.subscriptionPeriodFormatStyle.locale.identifier.hasPrefix("en_US"), "the storefront's locale")
        #expect(yearly.subscriptionPeriodFormatStyle.style == .spellOut)
        #expect(yearly.subscription?.subscriptionPeriod.formatted(yearly.subscriptionPeriodFormatStyle) == "one year")
        #expect(Period.Unit.allCases.map { $0.formatted(yearly.subscriptionPeriodUnitFormatStyle) } == ["day", "week", "month", "year"])
        #expect(yearly.subscriptionPeriodUnitFormatStyle.locale(Locale(identifier: "fr_FR")).format(.week) == "week")
        #expect(Period.Unit.allCases.sorted(by: >) == [.year, .month, .week, .day])
    }

    @Test("localizedDescription on StoreKit's enumerations, for known values and ones Apple may add")
    func localizedDescriptions() {
        #expect(Period.Unit.allCases.map(\.localizedDescription) == ["Day", "Week", "Month", "Year"])
        #expect([Product.SubscriptionOffer.PaymentMode.freeTrial, .payAsYouGo, .payUpFront].map(\.localizedDescription)
                == ["Free Trial", "Pay As You Go", "Pay Up Front"])
        #expect(Product.SubscriptionOffer.OfferType.winBack.localizedDescription == "Win-Back Offer")
        #expect([Product.SubscriptionInfo.RenewalState.subscribed, .expired, .inBillingRetryPeriod, .inGracePeriod, .revoked, .init(rawValue: 9)]
                    .map(\.localizedDescription)
                == ["Subscribed", "Expired", "In Billing Retry Period", "In Grace Period", "Revoked", "Renewal State 9"])
        typealias Reason = Product.SubscriptionInfo.RenewalInfo.ExpirationReason
        #expect([Reason.autoRenewDisabled, .billingError, .didNotConsentToPriceIncrease, .productUnavailable, .unknown].map(\.localizedDescription)
                == ["Auto-Renew Disabled", "Billing Error", "Did Not Consent to Price Increase", "Product Unavailable", "Unknown"])
        #expect(Product.SubscriptionInfo.RenewalInfo.PriceIncreaseStatus.agreed.localizedDescription == "Agreed")
        #expect([Transaction.RevocationReason.developerIssue, .other, .init(rawValue: 2)].map(\.localizedDescription)
                == ["Developer Issue", "Other", "Revocation Reason 2"])
        #expect([Transaction.OfferType.introductory, .promotional, .code, .winBack].map(\.localizedDescription)
                == ["Introductory Offer", "Promotional Offer", "Offer Code", "Win-Back Offer"])
        #expect(Transaction.OwnershipType.familyShared.localizedDescription == "Family Shared")
        #expect(Product.ProductType.nonRenewable.localizedDescription == "Non-Renewing Subscription")
        #expect(Message.Reason.billingIssue.localizedDescription == "Billing Issue")
    }

    @Test("the names before iOS 17.2 read the offer; Status.all is Apple's AsyncStream of (groupID, statuses)")
    func oldNamesAndStatusAll() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let yearly = try #require(try await phone.products(for: [Shop.premiumYearly]).first)
        let trial = try await yearly.purchase().verifiedTransaction()
        #expect(trial.offerType == .introductory)
        #expect(trial.offerID == nil)
        #expect(trial.offerPaymentModeStringRepresentation == "FREE_TRIAL")
        let status = try #require(try await yearly.subscription?.status.first)
        #expect(try status.renewalInfo.verifiedValue().offerType == nil, "the trial is not offered again at renewal")

        let all: AsyncStream<(groupID: String, statuses: [Product.SubscriptionInfo.Status])> = Product.SubscriptionInfo.Status.all
        _ = all
        let groups = await phone.withCurrent {
            var groups: [String: [Product.SubscriptionInfo.RenewalState]] = [:]
            for await (groupID, statuses) in Product.SubscriptionInfo.Status.all { groups[groupID] = statuses.map(\.state) }
            return groups
        }
        #expect(groups == [Shop.plus: [.subscribed]])
    }

    @Test("entitlement task states map and flat-map their value, synchronously and asynchronously; loading and failure pass through")
    func taskStates() async throws {
        let loaded = EntitlementTaskState<[Int]>.success([1, 2, 3])
        #expect(loaded.map(\.count).value == 3)
        #expect(await loaded.map { values in await Task { values.reduce(0, +) }.value }.value == 6)
        #expect(loaded.flatMap { $0.isEmpty ? .loading : .success($0[0]) }.value == 1)
        #expect(await loaded.flatMap { values async in EntitlementTaskState<Int>.success(values.count) }.value == 3)
        let loading = EntitlementTaskState<[Int]>.loading.map(\.count)
        guard case .loading = loading else { Issue.record("loading became \(loading)"); return }
        let failed = EntitlementTaskState<[Int]>.failure(StoreKitError.notEntitled).map(\.count)
        guard case .failure(let error) = failed, case StoreKitError.notEntitled = error else { Issue.record("failure became \(failed)"); return }
        #expect(throws: StoreKitError.self) { try loaded.map { _ -> Int in throw StoreKitError.unknown } }

        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        _ = try await phone.purchase(productID: Shop.pro, options: [])
        let state = await phone.withCurrent { () async -> EntitlementTaskState<VerificationResult<Transaction>?>? in
            var states = Transaction.currentEntitlementTask(for: Shop.pro).makeAsyncIterator()
            _ = await states.next()
            return await states.next()
        }
        #expect(try state?.transaction?.verifiedValue().productID == Shop.pro)
    }

    @Test("a session starts at the real time unless given a start; a running one keeps up with the real time and runs on after an advance")
    func sessionTime() async throws {
        let before = Date()
        let today = try Shop.session()
        #expect(today.now >= before.addingTimeInterval(-0.001) && today.now <= Date())
        #expect(today.time == .manual)

        let fixed = try TestSession(contentsOf: Shop.file, bundleID: "com.example.shop", startDate: TestSession.referenceStartDate)
        #expect(fixed.now == TestSession.referenceStartDate)

        let running = try TestSession(contentsOf: Shop.file, bundleID: "com.example.shop", startDate: TestSession.referenceStartDate, time: .running)
        try await running.applySettings()
        let first = running.now
        try await Task.sleep(for: .milliseconds(50))
        try await running.applySettings()
        #expect(running.now >= first.addingTimeInterval(0.05))
        try await running.advance(byDays: 30)
        let advanced = running.now
        #expect(advanced >= TestSession.referenceStartDate.addingTimeInterval(30 * 86_400))
        try await Task.sleep(for: .milliseconds(50))
        try await running.applySettings()
        #expect(running.now >= advanced.addingTimeInterval(0.05), "time runs on from where the advance left it")
    }

    @Test("a running session renews by itself at its time rate, and the app hears it")
    func runningRenewals() async throws {
        let session = try TestSession(contentsOf: Shop.file, bundleID: "com.example.shop", time: .running)
        session.timeRate = .oneRenewalEveryTwoSeconds
        let phone = try await session.client(device: "phone")
        let first = try await phone.purchase(productID: Shop.newsLite, options: []).verifiedTransaction()
        #expect(first.expirationDate == first.purchaseDate.addingTimeInterval(2))
        let renewal = try await firstElement(of: phone.transactionUpdates, within: .seconds(60)).verifiedValue()
        #expect(renewal.originalID == first.id && renewal.id != first.id)
        #expect(renewal.reason == .renewal)
        #expect(renewal.purchaseDate == first.expirationDate)
    }

    @Test("synchronous callers on every pool thread at once still get their asynchronous work done, none of it on the pool")
    func synchronousCallsFromThePool() async throws {
        let callers = 8
        let results = try await withThrowingTaskGroup(of: (sum: Int, threads: [String]).self) { group in
            for caller in 0..<callers {
                group.addTask {
                    // Each blocks a pool thread (there are as many as cores) while its work suspends, hops
                    // to a default actor and back: every part of it runs on the synchronous calls' own
                    // threads. (On a Dispatch queue it ran on the pool's Dispatch threads, and the whole
                    // suite once waited 49 s while Dispatch added threads for it.) Not Task.sleep: on
                    // Linux its timer wakes on the pool whatever the task's executor.
                    try BlockingWork.synchronously {
                        await Task.yield()
                        let before = Self.threadName()
                        let sum = await Tally.shared.add(caller)
                        return (sum, [before, Self.threadName()])
                    }
                }
            }
            return try await group.reduce(into: [(sum: Int, threads: [String])]()) { $0.append($1) }
        }
        #expect(results.count == callers)
        #expect(await Tally.shared.total == (0..<callers).reduce(0, +))
        let threads = results.flatMap(\.threads)
        #expect(threads.allSatisfy { $0.hasPrefix("SyncCall ") }, "the work ran on \(Set(threads))")
    }

    /// The name of the thread running now (a synchronous function: `Thread.current` is not for async code).
    static func threadName() -> String { Thread.current.name ?? "unnamed" }

    actor Tally {
        static let shared = Tally()
        var total = 0
        func add(_ value: Int) -> Int {
            total += value
            return total
        }
    }
}
