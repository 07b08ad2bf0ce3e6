import AppStoreModels
import Foundation

/// How one attempt to post a notification ended: Apple's `sendAttemptResult` (`SUCCESS`,
/// `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `TIMED_OUT`, …).
public struct DeliveryAttemptResult: Sendable, Hashable {
    public let sequence: Int64
    public let result: String

    public init(sequence: Int64, result: String) {
        self.sequence = sequence
        self.result = result
    }
}

extension SimulatedAppStore {
    /// Apple's retry schedule: after a failed attempt, the next comes 1, 12, 24, 48, then 72 hours later.
    public static let notificationRetryDelays: [TimeInterval] = [1, 12, 24, 48, 72].map { $0 * 3_600 }

    /// How long a claimed delivery is left to its sender before another may try it: real time, not the
    /// store's clock, so that the claims of a sender that died (a killed server) return within seconds,
    /// whether the store's clock runs fast, jumps a year or stands still.
    public static let deliveryLease: TimeInterval = 20

    /// The pause in real time before a retry that is already due on the store's clock (it jumped, or
    /// runs faster than the posts): ¼ s after the first failure, doubling with each (about 8 s over
    /// the five retries), so that a receiver that restarts meanwhile is not given up on within
    /// milliseconds, while a year's jump still ends in seconds.
    public static func catchUpPause(afterFailures failures: Int) -> TimeInterval {
        0.25 * Double(1 << min(max(failures - 1, 0), 8))
    }

    /// Claims up to `limit` notifications whose delivery attempt is due on the store's clock, oldest
    /// first, for ``deliveryLease`` of real time, so that another sender (a second server) does not post them too, and
    /// answers them unsigned with the URL to post them to (`nil` when none is due or no URL is set;
    /// with nothing due, the usual case for a poll, only a read is made, not a write). The sender signs
    /// each with ``signedNotification(_:)`` off the store's executor, so signing never holds up
    /// purchases. One page of the outbox is read; never all of it.
    ///
    /// `held` are the sequences the caller already holds and has not yet recorded an attempt for. When
    /// their claim lapses (a receiver slower than the lease), they are unclaimed again. Those this claim
    /// reads are claimed again (the lease renewed) but not answered again, and the `limit` answered are
    /// others; those it does not read keep their lapsed claim until a later claim reads them.
    public func claimDueNotificationRecords(limit: Int, excluding held: Set<Int64> = []) throws(AppStoreError) -> (url: URL, records: [NotificationRecord])? {
        guard try reading({ !ledger.notificationsDue(notAfter: clock.now(), unclaimedAt: realTime.now(), limit: 1).isEmpty }) else { return nil }
        var refused: String?
        defer { if let refused { refusedNotificationURL = refused } }
        return try writing { (change) throws(AppStoreError) -> (url: URL, records: [NotificationRecord])? in
            // A stored URL the settings would refuse (a store folder written by hand) gets nothing.
            guard let text = settings.notificationURL, SettingsOverrides.isAcceptableNotificationURL(text), let url = URL(string: text) else {
                refused = settings.notificationURL
                return nil
            }
            let now = clock.now()
            let realNow = realTime.now()
            var records: [NotificationRecord] = []
            var due = ledger.notificationsDue(notAfter: now, unclaimedAt: realNow, limit: limit)
            if due.count == limit, due.contains(where: { held.contains($0.sequence) }) {
                // Some of those read are held: read as many more as they could be. (Read at once, a
                // page of a sender holding two would decode up to three pages' rows on every claim.)
                due = ledger.notificationsDue(notAfter: now, unclaimedAt: realNow, limit: limit + held.count)
            }
            for record in due {
                var delivery = record.delivery
                delivery.claimedUntil = realNow.addingTimeInterval(Self.deliveryLease)
                change.ledger.notificationDeliveries[record.sequence] = delivery
                if held.contains(record.sequence) { continue }
                records.append(record)
                if records.count == limit { break }
            }
            return records.isEmpty ? nil : (url, records)
        }
    }

    /// The stored notification URL a claim refused since the last call (notifications were due, and
    /// the URL is not one the settings accept), so that a sender can say why it posts nothing.
    public func takeRefusedNotificationURL() -> String? {
        defer { refusedNotificationURL = nil }
        return refusedNotificationURL
    }

    /// How many notifications wait for a delivery attempt, and how long the oldest of them has waited
    /// on the store's clock (a server's metrics).
    public func notificationBacklog() throws(AppStoreError) -> (count: Int, oldestAge: TimeInterval?) {
        try reading {
            let backlog = ledger.notificationBacklog()
            return (backlog.count, backlog.oldest.map { max(0, clock.now().timeIntervalSince($0)) })
        }
    }

    /// A claimed notification signed as its receiver gets it (as of the notification's own date).
    public nonisolated func signedNotification(_ record: NotificationRecord) throws(AppStoreError) -> StoredNotification {
        try signed(record)
    }

    /// Records how attempts to post notifications ended (Apple's `sendAttemptResult`), in one commit,
    /// as a sender with many posts in flight does. Each failure schedules its next attempt by Apple's
    /// schedule (1, 12, 24, 48, 72 hours); a success or the last failure ends the delivery. A Sandbox
    /// store makes one attempt only, as Apple's sandbox does.
    ///
    /// An attempt is dated when it was due, on the store's clock, when the clock has passed that (it
    /// jumped, or it runs faster than the posts): the App Store lived through that time and tried then.
    /// So after a long jump the retries fall due at once, each counted from the one before, and what
    /// Apple would have given up by now is given up within moments rather than delivered a year late
    /// (the notification history and the Transaction Manager show the six failed attempts), each after
    /// a ``catchUpPause(afterFailures:)`` in real time.
    ///
    /// - Returns: The sequences no longer in the outbox (deleted since they were claimed), which are skipped.
    @discardableResult
    public func recordDeliveryAttempts(_ attempts: [DeliveryAttemptResult]) throws(AppStoreError) -> [Int64] {
        guard !attempts.isEmpty else { return [] }
        return try writing { (change) throws(AppStoreError) -> [Int64] in
            let now = clock.now()
            let realNow = realTime.now()
            let retries = identity.environment == .sandbox ? 0 : Self.notificationRetryDelays.count
            var missing: [Int64] = []
            for attempt in attempts {
                guard var delivery = change.ledger.notificationDeliveries[attempt.sequence] ?? ledger.notificationDelivery(sequence: attempt.sequence) else {
                    missing.append(attempt.sequence)
                    continue
                }
                let attemptDate = min(now, delivery.nextAttemptDate ?? now)
                delivery.attempts.append(.init(date: attemptDate, result: attempt.result))
                delivery.claimedUntil = nil
                let failures = delivery.attempts.count
                if attempt.result == "SUCCESS" || failures > retries {
                    delivery.nextAttemptDate = nil
                } else {
                    delivery.nextAttemptDate = attemptDate.addingTimeInterval(Self.notificationRetryDelays[failures - 1])
                    delivery.claimedUntil = realNow.addingTimeInterval(Self.catchUpPause(afterFailures: failures))
                }
                change.ledger.notificationDeliveries[attempt.sequence] = delivery
            }
            return missing
        }
    }

    /// One outbox notification by its sequence number, signed, with its delivery state.
    public func notification(sequence: Int64) throws(AppStoreError) -> (StoredNotification, NotificationDelivery)? {
        try reading { () throws(AppStoreError) -> (StoredNotification, NotificationDelivery)? in
            guard let record = ledger.notification(sequence: sequence) else { return nil }
            return (try signed(record), record.delivery)
        }
    }

    /// A `TEST` notification from the outbox by its UUID (the test notification token), signed, with its delivery state.
    public func testNotification(uuid: String) throws(AppStoreError) -> (StoredNotification, NotificationDelivery)? {
        try reading { () throws(AppStoreError) -> (StoredNotification, NotificationDelivery)? in
            guard let record = ledger.testNotification(uuid: uuid) else { return nil }
            return (try signed(record), record.delivery)
        }
    }

    /// Outbox notifications signed from `start` to `end`, after sequence `after`, with their delivery states.
    public func notificationHistory(from start: Date, to end: Date, after sequence: Int64,
                                    limit: Int) throws(AppStoreError) -> [(record: NotificationRecord, signed: StoredNotification)] {
        try reading { () throws(AppStoreError) in
            try ledger.notifications(from: start, to: end, after: sequence, limit: limit).map { (record) throws(AppStoreError) in (record, try signed(record)) }
        }
    }
}
