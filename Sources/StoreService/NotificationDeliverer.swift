import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPClient
import OpenStoreKit

/// Posts the store's App Store Server Notifications V2 to its notification URL as Apple does:
/// `{"signedPayload": "…"}`, 200–206 is success, anything else is a failed attempt (with Apple's
/// `sendAttemptResult`) retried 1, 12, 24, 48 and 72 hours later on the store's clock.
///
/// It runs beside the server, never in a purchase's way: notifications are claimed in a short unit
/// of work, posted outside any lock, and their attempts recorded in another.
final class NotificationDeliverer: Sendable {
    let store: SimulatedAppStore
    /// How long a receiver has to answer.
    static let timeout: Duration = .seconds(10)

    init(store: SimulatedAppStore) {
        self.store = store
    }

    /// Delivers until cancelled, looking for due notifications a few times a second.
    func run() async {
        while !Task.isCancelled {
            let delivered = await deliverDue()
            if delivered == 0 { try? await Task.sleep(for: .milliseconds(200)) }
        }
    }

    /// Posts what is due now; returns how many were attempted.
    func deliverDue() async -> Int {
        guard let tasks = try? await store.claimDueNotifications() else { return 0 }
        // One after another, oldest first, so a receiver gets them in the order they happened.
        for task in tasks.sorted(by: { $0.notification.sequence < $1.notification.sequence }) {
            let result = await post(task)
            // A server that stops cuts its posts short: such an attempt is not the receiver's doing.
            // Left unrecorded, its claim lapses and it is tried again.
            if Task.isCancelled { return tasks.count }
            try? await store.recordDeliveryAttempt(sequence: task.notification.sequence, result: result)
        }
        return tasks.count
    }

    /// One attempt, as Apple's `sendAttemptResult`.
    private func post(_ task: NotificationDeliveryTask) async -> String {
        let body = (try? JSONSerialization.data(withJSONObject: ["signedPayload": task.notification.signedPayload])) ?? Data()
        do {
            let answer = try await HTTPClient.shared.send(.json("POST", task.url, body: body, timeout: Self.timeout))
            return (200...206).contains(answer.status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        } catch HTTPClient.Failure.timedOut {
            return "TIMED_OUT"
        } catch HTTPClient.Failure.unreachable(_, _, let cause) {
            switch cause {
            case .noConnection: return "NO_RESPONSE"
            case .connectionLost: return "PREMATURE_CLOSE"
            case .tls: return "TLS_ISSUE"
            case .redirects: return "CIRCULAR_REDIRECT"
            case .badResponse: return "INVALID_RESPONSE"
            case .other: return "SOCKET_ISSUE"
            }
        } catch {
            return "OTHER"
        }
    }
}
