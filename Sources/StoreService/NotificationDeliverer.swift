import AppStoreModels
import AppStoreSimulator
import Foundation
import OpenStoreKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Posts the store's App Store Server Notifications V2 to its notification URL as Apple does:
/// `{"signedPayload": "…"}`, 200–206 is success, anything else is a failed attempt (with Apple's
/// `sendAttemptResult`) retried 1, 12, 24, 48 and 72 hours later on the store's clock.
///
/// It runs beside the server, never in a purchase's way: notifications are claimed in a short unit
/// of work, posted outside any lock, and their attempts recorded in another.
final class NotificationDeliverer: Sendable {
    let store: SimulatedAppStore
    private let session: URLSession
    /// How long a receiver has to answer.
    static let timeout: TimeInterval = 10

    init(store: SimulatedAppStore) {
        self.store = store
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.timeout
        configuration.timeoutIntervalForResource = Self.timeout
        session = URLSession(configuration: configuration)
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
            try? await store.recordDeliveryAttempt(sequence: task.notification.sequence, result: result)
        }
        return tasks.count
    }

    /// One attempt, as Apple's `sendAttemptResult`.
    private func post(_ task: NotificationDeliveryTask) async -> String {
        var request = URLRequest(url: task.url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try? JSONSerialization.data(withJSONObject: ["signedPayload": task.notification.signedPayload])
        do {
            let (_, response) = try await session.detachedData(for: request)
            guard let status = (response as? HTTPURLResponse)?.statusCode else { return "INVALID_RESPONSE" }
            return (200...206).contains(status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        } catch let error as URLError {
            switch error.code {
            case .timedOut: return "TIMED_OUT"
            case .cannotConnectToHost, .cannotFindHost, .notConnectedToInternet, .dnsLookupFailed: return "NO_RESPONSE"
            case .networkConnectionLost: return "PREMATURE_CLOSE"
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
                 .serverCertificateHasUnknownRoot, .clientCertificateRejected: return "TLS_ISSUE"
            case .httpTooManyRedirects, .redirectToNonExistentLocation: return "CIRCULAR_REDIRECT"
            case .badServerResponse, .cannotParseResponse: return "INVALID_RESPONSE"
            default: return "SOCKET_ISSUE"
            }
        } catch {
            return "OTHER"
        }
    }
}
