import AppStoreModels
import AppStoreServerAPI
import Foundation

/// Brings a backend that missed deliveries (it was down, the network dropped them) to the App Store's
/// truth: it pages through the App Store Server API's notification history and records every
/// notification it does not have yet, verified as any delivery is. Recording is idempotent, so running
/// it while deliveries arrive, or twice, changes nothing that is already right.
public struct NotificationReconciler: Sendable {
    public let client: AppStoreServerAPIClient
    public let intake: SignedDataIntake
    public let storage: any BackendStorage

    /// The App Store keeps 180 days of notification history.
    public static let historyWindow: TimeInterval = 180 * 86_400

    public init(client: AppStoreServerAPIClient, intake: SignedDataIntake, storage: any BackendStorage) {
        self.client = client
        self.intake = intake
        self.storage = storage
    }

    /// What a reconciliation found.
    public struct Outcome: Hashable, Sendable {
        /// Notifications the history listed.
        public var listed: Int
        /// Those the backend did not have, now recorded.
        public var recorded: Int
    }

    /// Reads the history from `start` (by default a day before the newest notification the backend has,
    /// or as far back as the history goes) to `end` (the App Store's now) and records what is missing.
    public func reconcile(from start: Date? = nil, to end: Date) async throws -> Outcome {
        let earliest = end.addingTimeInterval(-Self.historyWindow + 60)
        let newest = try await storage.latestNotificationDate()
        let from = max(earliest, start ?? newest?.addingTimeInterval(-86_400) ?? earliest)
        let request = NotificationHistoryRequest(startDate: AppStoreJSON.milliseconds(from: from), endDate: AppStoreJSON.milliseconds(from: end))
        var outcome = Outcome(listed: 0, recorded: 0)
        var token: String?
        repeat {
            let page = try await client.getNotificationHistory(paginationToken: token, request)
            for item in page.notificationHistory ?? [] {
                guard let signedPayload = item.signedPayload else { continue }
                outcome.listed += 1
                let body = try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload])
                if try await storage.apply(try intake.notification(body: body)) { outcome.recorded += 1 }
            }
            token = page.hasMore == true ? page.paginationToken : nil
        } while token != nil
        return outcome
    }
}
