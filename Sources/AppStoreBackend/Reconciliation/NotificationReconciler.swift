import AppStoreModels
import AppStoreServerAPI
import Foundation

/// Brings a backend that missed deliveries (it was down, refused, or the App Store gave up) to the
/// App Store's truth: it pages through the App Store Server API's notification history and records
/// every notification it does not have yet, verified as any delivery is, then asks the status of
/// each subscription the backend believes active though its period has ended. Recording is
/// idempotent, so running it while deliveries arrive, from several instances, or twice, changes
/// nothing that is already right; what it records counts in the figures as a delivery would.
///
/// It finds its own window: the backend remembers the App Store time up to which it holds every
/// notification (``BackendStorage/reconciledThrough()``, the end of the last reconciliation that
/// read the history to its end), and the next one starts a day before that, so an outage of any
/// length is covered however many notifications arrived since. The end is the App Store's now, as
/// its answers state it (a local store's clock may run fast or jump; see ``BackendClock``).
public struct NotificationReconciler: Sendable {
    public let client: AppStoreServerAPIClient
    public let intake: SignedDataIntake
    public let storage: any BackendStorage
    /// The backend's clock: it learns the App Store's time from what the reconciliation reads.
    public let clock: BackendClock

    /// The App Store keeps 180 days of notification history.
    public static let historyWindow: TimeInterval = 180 * 86_400
    /// How far before the recorded end a reconciliation starts again: a notification signed shortly
    /// before the end may have been written to the history after the end was read.
    public static let overlap: TimeInterval = 86_400
    /// The most subscriptions one reconciliation asks the status of.
    public static let statusChecksPerRun = 100

    public init(client: AppStoreServerAPIClient, intake: SignedDataIntake, storage: any BackendStorage, clock: BackendClock = BackendClock(.system)) {
        self.client = client
        self.intake = intake
        self.storage = storage
        self.clock = clock
    }

    /// What a reconciliation found.
    public struct Outcome: Hashable, Sendable {
        /// Notifications the history listed.
        public var listed = 0
        /// Those the backend did not have, now recorded.
        public var recorded = 0
        /// Of those, the ones the App Store had tried to deliver (an attempt in the history): lost
        /// deliveries. The others were still on their way (no attempt yet) and only came sooner.
        public var missing = 0
        /// Subscriptions past their expiry with no renewal recorded, whose status was asked (and recorded).
        public var statusChecks = 0
        /// The App Store time the history was read from and to.
        public var from: Date?
        public var through: Date?
    }

    /// Reads the history from `start` (by default a day before the time recorded as complete, or as far
    /// back as the history goes) to `end` (by default the App Store's now) and records what is missing;
    /// then checks the subscriptions that look expired without word of it. When the window began at or
    /// before what was complete and the history was read to its end, its end is recorded as complete.
    public func reconcile(from start: Date? = nil, to end: Date? = nil) async throws -> Outcome {
        var outcome = Outcome()
        let complete = try await storage.reconciledThrough()
        var resumeFrom = start ?? complete.map { $0.addingTimeInterval(-Self.overlap) }
        var appStoreNow = max(clock.now(), complete ?? .distantPast)
        var movedBack = false
        var window: (from: Date, to: Date) = (appStoreNow, appStoreNow)
        // A pass reads one window. The App Store's answers state its time: when that is not what the
        // window was drawn from (its clock is ahead of or behind what the backend had seen, or the
        // window began before what the history keeps), a further pass reads the window it states.
        for _ in 0..<4 {
            let earliest = (end ?? appStoreNow).addingTimeInterval(-Self.historyWindow + 60)
            let to = max(end ?? appStoreNow, earliest)
            window = (min(max(earliest, resumeFrom ?? earliest), to), to)
            do {
                try await read(window, into: &outcome)
            } catch let error as AppStoreServerAPIError where error.apiErrorCode == 4_000_012 {
                // Start date too far in the past: the App Store's clock moved on further than seen.
                guard let stated = client.lastServerTime, stated > appStoreNow else { throw error }
                appStoreNow = stated
                clock.observe(stated)
                continue
            }
            guard end == nil, let stated = client.lastServerTime, abs(stated.timeIntervalSince(window.to)) > 60 else { break }
            clock.follow(statedNow: stated)
            outcome.from = min(outcome.from ?? window.from, window.from)
            // Ahead: read on from what was read. Behind: what was read lies past the App Store's now
            // (the backend's guess was the machine's clock, or the App Store's clock was moved back):
            // the whole history up to the time it states is read, since notifications signed after
            // the move back carry dates before what was complete.
            // (Apple's own stores live in real time: a few seconds apart from the machine is no move.)
            if stated > window.to {
                resumeFrom = window.to.addingTimeInterval(-Self.overlap)
            } else if clock.source == .appStore {
                resumeFrom = nil
                movedBack = true
            }
            appStoreNow = stated
        }
        outcome.from = min(outcome.from ?? window.from, window.from)
        outcome.through = window.to
        let continuous = start.map { start in complete.map { start <= $0 } ?? false } ?? true
        if movedBack, start == nil, end == nil {
            // The App Store's time is behind what was complete: complete is now its time, so later runs
            // read on from there instead of from a future it left.
            try await storage.resetReconciled(to: window.to)
        } else if continuous {
            try await storage.markReconciled(through: window.to)
        }
        try await checkStatuses(into: &outcome)
        return outcome
    }

    /// Reads one window of history to its end, recording what is missing.
    private func read(_ window: (from: Date, to: Date), into outcome: inout Outcome) async throws {
        let request = NotificationHistoryRequest(startDate: AppStoreJSON.milliseconds(from: window.from), endDate: AppStoreJSON.milliseconds(from: window.to))
        var token: String?
        repeat {
            let page = try await client.getNotificationHistory(paginationToken: token, request)
            for item in page.notificationHistory ?? [] {
                guard let signedPayload = item.signedPayload else { continue }
                outcome.listed += 1
                let body = try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload])
                let change = try intake.notification(body: body)
                if let signed = change.notification?.signedDate { clock.observe(signed) }
                if try await storage.apply(change) {
                    outcome.recorded += 1
                    if !(item.sendAttempts ?? []).isEmpty { outcome.missing += 1 }
                }
            }
            token = page.hasMore == true ? page.paginationToken : nil
        } while token != nil
    }

    /// Asks the status of each subscription the backend holds as active or in grace though its latest
    /// period ended (a renewal, expiry or refund whose notification is missing), and records the answer.
    private func checkStatuses(into outcome: inout Outcome) async throws {
        let candidates = try await storage.subscriptionsPastExpiry(at: clock.now(), limit: Self.statusChecksPerRun)
        for original in candidates {
            let response: StatusResponse
            do { response = try await client.getAllSubscriptionStatuses(original) } catch let error as AppStoreServerAPIError where error.httpStatusCode == 404 {
                continue
            }
            outcome.statusChecks += 1
            if let stated = client.lastServerTime { clock.follow(statedNow: stated) }
            for item in (response.data ?? []).flatMap({ $0.lastTransactions ?? [] }) where item.originalTransactionId == original {
                _ = try await storage.apply(try intake.subscriptionStatus(item))
            }
        }
    }
}
