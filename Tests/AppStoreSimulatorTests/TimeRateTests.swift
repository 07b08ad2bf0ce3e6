import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Synchronization
import Testing
import TestSupport

/// A clock a test moves by hand that the store treats as a real clock (time rates apply).
final class SteppedClock: StoreClock {
    private let current: Mutex<Date>
    init(_ start: Date) { current = Mutex(start) }
    func now() -> Date { current.withLock { $0 } }
    func move(by interval: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(interval) } }
}

@Suite(.timeLimit(.minutes(10)))
struct TimeRateTests {
    static let start = Date(timeIntervalSince1970: 1_767_225_600)

    static let intervalCases: [(TimeRate, String, TimeInterval)] = [
        (.monthlyRenewalEveryHour, "P1M", 3_600), (.monthlyRenewalEveryHour, "P1W", 900), (.monthlyRenewalEveryHour, "P1Y", 43_200),
        (.monthlyRenewalEveryThirtyMinutes, "P3M", 5_400), (.monthlyRenewalEveryFifteenMinutes, "P6M", 5_400),
        (.monthlyRenewalEveryFiveMinutes, "P2M", 600), (.monthlyRenewalEveryThirtySeconds, "P1M", 30), (.monthlyRenewalEveryThirtySeconds, "P1Y", 360),
        (.oneRenewalEveryFifteenMinutes, "P1Y", 900), (.oneRenewalEveryFiveMinutes, "P1W", 300), (.oneRenewalEveryMinute, "P1M", 60),
        (.oneRenewalEveryThirtySeconds, "P6M", 30), (.oneRenewalEveryTenSeconds, "P1M", 10), (.oneRenewalEveryTwoSeconds, "P1Y", 2),
        (.oneHourIsOneDay, "P1W", 25_200), (.oneSecondIsOneDay, "P1M", 30), (.fiveMinutesIsOneDay, "P3D", 900),
    ]

    @Test("Apple's renewal intervals for the accelerated rates", arguments: intervalCases)
    func intervals(rate: TimeRate, period: String, seconds: TimeInterval) throws {
        let schedule = RenewalSchedule(timeRate: rate)
        let parsed = try #require(SubscriptionPeriod(iso8601: period))
        #expect(schedule.end(of: parsed, from: Self.start) == Self.start.addingTimeInterval(seconds))
    }

    static let graceCases: [(TimeRate, String, TimeInterval, TimeInterval)] = [
        (.realTime, "P1M", 1_382_400, 5_184_000), (.realTime, "P1W", 518_400, 5_184_000),
        (.monthlyRenewalEveryHour, "P1M", 1_800, 7_200), (.monthlyRenewalEveryHour, "P1W", 771, 7_200),
        (.monthlyRenewalEveryFifteenMinutes, "P1M", 450, 1_800), (.monthlyRenewalEveryThirtySeconds, "P1W", 9, 60),
        (.oneRenewalEveryMinute, "P1M", 60, 120), (.oneRenewalEveryTenSeconds, "P1Y", 10, 20),
    ]

    @Test("grace and billing retry lengths", arguments: graceCases)
    func graceAndRetry(rate: TimeRate, period: String, grace: TimeInterval, retry: TimeInterval) throws {
        let schedule = RenewalSchedule(timeRate: rate)
        let parsed = try #require(SubscriptionPeriod(iso8601: period))
        #expect(schedule.gracePeriod(for: parsed) == grace)
        #expect(schedule.billingRetryPeriod(for: parsed) == retry)
    }

    @Test("every rate in the enumeration has a schedule", arguments: TimeRate.allCases)
    func everyRate(rate: TimeRate) {
        let schedule = RenewalSchedule(timeRate: rate)
        for period in [SubscriptionPeriod.weeks(1), .months(1), .years(1)] {
            #expect(schedule.end(of: period, from: Self.start) > Self.start)
            #expect(schedule.gracePeriod(for: period) > 0)
            #expect(schedule.billingRetryPeriod(for: period) >= schedule.gracePeriod(for: period))
        }
    }

    @Test("on a real clock the .storekit time rate drives renewals: every ten seconds at rate 1004")
    func realClockUsesTimeRate() async throws {
        let clock = SteppedClock(Self.start)
        var configuration = TestStore.shopConfiguration
        configuration.settings?.timeRate = TimeRate.oneRenewalEveryTenSeconds.rawValue
        let store = try await SimulatedAppStore.create(configuration: configuration, identity: StoreIdentity(bundleId: "com.example.shop"),
                                                 authority: TestStore.authority, storage: InMemoryLedgerStorage(), clock: clock,
                                                 identifiers: .sequential())
        _ = try await store.purchase(PurchaseRequest(productID: Shop.newsLite, account: "alice", device: "phone"))
        #expect(try await store.ledgerTransaction(0)?.expirationDate == Self.start.addingTimeInterval(10))
        clock.move(by: 35)
        #expect(try await store.processDueEvents() == 3)
        #expect(try await store.ledgerTransactions().map(\.purchaseDate) == [0, 10, 20, 30].map { Self.start.addingTimeInterval($0) })
        await #expect(throws: AppStoreError.self) { try await store.advanceTime(by: 60) }
    }
}
