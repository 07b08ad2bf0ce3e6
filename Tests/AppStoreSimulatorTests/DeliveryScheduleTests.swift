import AppStoreModels
import AppStoreSimulator
import Foundation
import Testing
import TestSupport

/// Delivery claims are leases in real time, and retries follow Apple's schedule on the store's clock,
/// counted from each attempt: a dead sender strands nothing however the store's clock moves, and a
/// long jump gives up what Apple would have given up.
@Suite struct DeliveryScheduleTests {
    /// A store with a notification URL and `count` subscribers' `SUBSCRIBED` notifications due.
    private static func storeWithDueNotifications(environment: AppStoreModels.Environment = .xcode, count: Int = 3) async throws -> TestStore {
        let test = try TestStore(environment: environment, appAppleId: environment == .production ? 1_234_567_890 : nil)
        try await test.store.updateSettings { $0.notificationURL = "http://127.0.0.1:9/apple/notifications" }
        for index in 0..<count { try await test.buy(ExampleShop.premiumMonthly, account: "subscriber\(index)", device: "phone\(index)") }
        return test
    }

    /// Claims what is due and records every claimed post as `result`, as a sender whose receiver is
    /// down does, until nothing is due, real time passing ten seconds whenever nothing is (a retry
    /// already due on the store's clock waits a pause in real time); answers how many rounds that took.
    private static func deliverAll(_ test: TestStore, result: String, maxRounds: Int = 100) async throws -> Int {
        var rounds = 0
        while true {
            var claimed = try await test.store.claimDueNotificationRecords(limit: 100)
            if claimed == nil {
                test.realTime.set(to: test.realTime.now().addingTimeInterval(10))
                claimed = try await test.store.claimDueNotificationRecords(limit: 100)
            }
            guard let claimed else { return rounds }
            rounds += 1
            try #require(rounds <= maxRounds, "delivery never ends")
            try await test.store.recordDeliveryAttempts(claimed.records.map { DeliveryAttemptResult(sequence: $0.sequence, result: result) })
        }
    }

    @Test("a sender that dies holding claims on a still clock: they return to the queue after the lease in real time")
    func deadSenderOnStillClock() async throws {
        let test = try await Self.storeWithDueNotifications()
        let claimed = try #require(try await test.store.claimDueNotificationRecords(limit: 100)).records.map(\.sequence)
        #expect(claimed.count == 3)
        // The sender is killed: it never records an attempt. The store's clock does not move at all.
        #expect(try await test.store.claimDueNotificationRecords(limit: 100) == nil, "held by the dead sender's lease")
        test.realTime.set(to: test.realTime.now().addingTimeInterval(SimulatedAppStore.deliveryLease - 1))
        #expect(try await test.store.claimDueNotificationRecords(limit: 100) == nil, "the lease has a second left")
        test.realTime.set(to: test.realTime.now().addingTimeInterval(2))
        let reclaimed = try #require(try await test.store.claimDueNotificationRecords(limit: 100)).records.map(\.sequence)
        #expect(reclaimed == claimed, "another sender takes them, the store's clock unmoved")
        #expect(try await test.store.currentTime() == TestStore.start)
    }

    @Test("a lease is renewed by its sender's next claim, so a slow receiver's posts are not taken by another sender")
    func heldClaimsRenewed() async throws {
        let test = try await Self.storeWithDueNotifications(count: 4)
        let first = try #require(try await test.store.claimDueNotificationRecords(limit: 2)).records.map(\.sequence)
        test.realTime.set(to: test.realTime.now().addingTimeInterval(SimulatedAppStore.deliveryLease + 1))
        // The lease lapsed; its sender claims again and renews it, answering the two it does not hold.
        let second = try #require(try await test.store.claimDueNotificationRecords(limit: 2, excluding: Set(first))).records.map(\.sequence)
        #expect(Set(second).isDisjoint(with: first))
        #expect(try await test.store.claimDueNotificationRecords(limit: 10) == nil, "all four are held again")
    }

    @Test("a year in one step with the receiver down: six attempts on Apple's schedule from the notification's date, then given up, without the clock moving again")
    func yearJumpWithReceiverDown() async throws {
        let test = try await Self.storeWithDueNotifications(count: 2)
        // The year passes in one step before any sender looks (a store advanced while its server is down).
        _ = try await test.store.advanceTime(by: 365 * 86_400)
        let before = try await test.store.currentTime()
        let rounds = try await Self.deliverAll(test, result: "NO_RESPONSE")
        #expect(rounds >= 6)
        #expect(try await test.store.currentTime() == before, "nothing waited for the clock")
        let records = try await test.store.notificationRecords()
        let wholeSchedule = SimulatedAppStore.notificationRetryDelays.reduce(0, +)
        let old = records.filter { $0.date.addingTimeInterval(wholeSchedule) <= before }
        #expect(old.count >= 20, "the year's renewals (\(old.count))")
        for record in records {
            let attempts = record.delivery.attempts
            #expect(attempts.first?.date == record.date, "the first attempt when the notification was made")
            for (index, delay) in SimulatedAppStore.notificationRetryDelays.enumerated() where index + 1 < attempts.count {
                #expect(attempts[index + 1].date.timeIntervalSince(attempts[index].date) == delay, "retry \(index + 1) after \(delay / 3_600) hours")
            }
            if record.date.addingTimeInterval(wholeSchedule) <= before {
                #expect(attempts.count == 6 && record.delivery.isGivenUp, "\(record.type.rawValue) of \(record.date): \(attempts.count) attempts")
            } else {
                // Made near the jump's end: its next retry waits for the store's clock, as Apple's would.
                #expect(try #require(record.delivery.nextAttemptDate) > before)
            }
        }
        let (backlog, _) = try await test.store.notificationBacklog()
        #expect(backlog == records.count - old.count, "given up, not waiting")
    }

    @Test("a retry the store's clock has already passed waits a short pause in real time, doubling with each failure")
    func catchUpRetriesPause() async throws {
        let test = try await Self.storeWithDueNotifications(count: 1)
        _ = try await test.store.advanceTime(by: 30 * 86_400)
        var pauses: [TimeInterval] = []
        for failures in 1...5 {
            let claimed = try #require(try await test.store.claimDueNotificationRecords(limit: 10))
            try await test.store.recordDeliveryAttempts(claimed.records.map { DeliveryAttemptResult(sequence: $0.sequence, result: "NO_RESPONSE") })
            let pause = SimulatedAppStore.catchUpPause(afterFailures: failures)
            pauses.append(pause)
            test.realTime.set(to: test.realTime.now().addingTimeInterval(pause - 0.01))
            #expect(try await test.store.claimDueNotificationRecords(limit: 10) == nil, "retry \(failures) waits its pause")
            test.realTime.set(to: test.realTime.now().addingTimeInterval(0.02))
        }
        #expect(pauses == [0.25, 0.5, 1, 2, 4])
        #expect(try await test.store.claimDueNotificationRecords(limit: 10) != nil, "the last retry")
    }

    @Test("a Sandbox store makes one attempt, as Apple's sandbox does; other stores retry")
    func sandboxAttemptsOnce() async throws {
        for (environment, attempts) in [(AppStoreModels.Environment.sandbox, 1), (.xcode, 6), (.production, 6)] {
            let test = try await Self.storeWithDueNotifications(environment: environment, count: 1)
            var sent = 0
            // A day at a time, as a running store would pass the retries' dates.
            for _ in 0..<10 {
                _ = try await Self.deliverAll(test, result: "UNSUCCESSFUL_HTTP_RESPONSE_CODE")
                _ = try await test.store.advanceTime(by: 86_400)
            }
            for record in try await test.store.notificationRecords() {
                sent += record.delivery.attempts.count
                #expect(record.delivery.isGivenUp)
            }
            #expect(sent == attempts, "\(environment.rawValue)")
        }
    }
}
