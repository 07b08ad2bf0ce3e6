import AppStoreModels
import Foundation

/// A notification to POST now, claimed for one sender.
public struct NotificationDeliveryTask: Sendable {
    public let notification: StoredNotification
    public let url: URL
}

extension SimulatedAppStore {
    /// Apple's retry schedule: after a failed attempt, the next comes 1, 12, 24, 48, then 72 hours later.
    public static let notificationRetryDelays: [TimeInterval] = [1, 12, 24, 48, 72].map { $0 * 3_600 }

    /// How long a claimed delivery is left to its sender before another may try it.
    static let deliveryClaim: TimeInterval = 60

    /// Takes the notifications whose delivery attempt is due on the store's clock, signed, and claims
    /// them for a minute so that another sender (a second server) does not post them too.
    /// With nothing due (the usual case for a poll) only a read is made, not a write.
    public func claimDueNotifications(limit: Int = 16) throws(AppStoreError) -> [NotificationDeliveryTask] {
        guard try reading({ !ledger.notificationsDue(notAfter: clock.now(), limit: 1).isEmpty }) else { return [] }
        return try writing { (change) throws(AppStoreError) -> [NotificationDeliveryTask] in
            guard let text = settings.notificationURL, let url = URL(string: text) else { return [] }
            let now = clock.now()
            var tasks: [NotificationDeliveryTask] = []
            for record in ledger.notificationsDue(notAfter: now, limit: limit) {
                var delivery = record.delivery
                delivery.nextAttemptDate = now.addingTimeInterval(Self.deliveryClaim)
                change.ledger.notificationDeliveries[record.sequence] = delivery
                tasks.append(NotificationDeliveryTask(notification: try signed(record), url: url))
            }
            return tasks
        }
    }

    /// Records how an attempt to post a notification ended (Apple's `sendAttemptResult`), scheduling
    /// the next attempt after a failure.
    public func recordDeliveryAttempt(sequence: Int64, result: String) throws(AppStoreError) {
        try writing { (change) throws(AppStoreError) in
            guard let record = ledger.notification(sequence: sequence) else {
                throw .control(.invalidAction, "no notification \(sequence) in the outbox")
            }
            let now = clock.now()
            var delivery = record.delivery
            delivery.attempts.append(.init(date: now, result: result))
            let failures = delivery.attempts.count
            if result == "SUCCESS" || failures > Self.notificationRetryDelays.count {
                delivery.nextAttemptDate = nil
            } else {
                delivery.nextAttemptDate = now.addingTimeInterval(Self.notificationRetryDelays[failures - 1])
            }
            change.ledger.notificationDeliveries[sequence] = delivery
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
