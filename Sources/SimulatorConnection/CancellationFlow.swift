import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPClient

/// A customer cancelling a subscription, as on the App Store's subscription page: the store asks the
/// developer's Get Retention Message endpoint (when one is configured) what to show, waiting at most
/// ``answerLimit`` (Apple's 700 ms), falls back to the default message for the product and the customer's locale, and
/// records what was shown; the customer's answer follows (``answer(_:outcome:)``).
///
/// The storefront's pages, the admin API, `storekit cancel-subscription` and `TestSession` all go
/// through it.
public struct CancellationFlow: Sendable {
    public let store: SimulatedAppStore
    /// How long the developer's endpoint has to answer.
    public let answerLimit: Duration

    /// Apple's limit for real-time answers: 700 ms.
    public static let appleAnswerLimit: Duration = .milliseconds(700)

    /// - Parameter answerLimit: Apple's 700 ms unless a test on a loaded machine needs the endpoint's
    ///   answers whatever their time.
    public init(store: SimulatedAppStore, answerLimit: Duration = Self.appleAnswerLimit) {
        self.store = store
        self.answerLimit = answerLimit
    }

    /// Opens the cancellation page of the subscription `originalTransactionID` (any of its
    /// transactions) in `locale`, and returns what it shows.
    public func start(originalTransactionID: UInt64, locale: String = "en-US") async throws -> RetentionOfferAttempt {
        let context = try await store.retentionCancellationContext(originalTransactionID: originalTransactionID, locale: locale)
        var answer: RealtimeResponseBody?
        var failure: String?
        if let text = context.realtimeURL, !SimulatedAppStore.isAcceptableRealtimeURL(text) {
            // A stored URL the API would refuse (a store folder written by hand) is never asked.
            failure = "the stored real-time URL is not one Set Realtime URL accepts (https, or http on this machine); it was not asked"
        } else if let text = context.realtimeURL, let url = URL(string: text) {
            let asked = await RealtimeRequest.ask(url, store: store, originalTransactionId: String(context.originalTransactionID),
                                                  productID: context.productID, userLocale: locale, limit: answerLimit)
            (answer, failure) = (asked.answer, asked.failure)
        }
        return try await store.recordCancellationAttempt(context, answer: answer, realtimeFailure: failure)
    }

    /// The customer's answer: keep, switch plans, redeem the offer, or cancel.
    public func answer(_ attemptID: String, outcome: RetentionOfferAttempt.Outcome) async throws -> RetentionOfferAttempt {
        try await store.answerCancellationAttempt(attemptID, outcome: outcome)
    }
}

/// What a cancellation page shows, as the admin API answers it: the attempt, the message's content,
/// and the answers the customer can give.
public struct CancellationPageBody: Codable, Sendable {
    public var attempt: RetentionOfferAttempt
    /// The shown message's header, body, image and bullet points, if a message is shown.
    public var message: UploadMessageRequestBody?
    /// `kept`, `cancelled`, and `switched` or `redeemed` when the message offers them.
    public var answers: [RetentionOfferAttempt.Outcome]

    public static func make(_ attempt: RetentionOfferAttempt, store: SimulatedAppStore) async throws -> CancellationPageBody {
        let message = if let identifier = attempt.messageIdentifier { try await store.retentionMessage(identifier)?.content } else { UploadMessageRequestBody?.none }
        return CancellationPageBody(attempt: attempt, message: message, answers: attempt.outcome == nil ? attempt.answers : [])
    }
}

/// A real-time request as the App Store posts it: `{"signedPayload": JWS}`, a fresh request
/// identifier each time.
package struct RealtimeRequest: Sendable {
    package let requestIdentifier: String
    package let body: Data

    package static func make(store: SimulatedAppStore, originalTransactionId: String, productID: String, userLocale: String) async throws -> RealtimeRequest {
        let now = try await store.currentTime()
        let signed = try store.signedRealtimeRequest(originalTransactionId: originalTransactionId, productId: productID, userLocale: userLocale, at: now)
        return RealtimeRequest(requestIdentifier: signed.requestIdentifier,
                               body: try JSONEncoder().encode(RealtimeRequestBody(signedPayload: signed.signedPayload)))
    }
}

extension RealtimeRequest {
    /// What a developer's Get Retention Message endpoint answered: its `RealtimeResponseBody`, or the
    /// `sendAttemptResult` name of why there is none, and how long it took. An answer later than
    /// `limit` is not waited for (`TIMED_OUT`), so the customer's page never waits longer.
    package static func ask(_ url: URL, store: SimulatedAppStore, originalTransactionId: String, productID: String, userLocale: String,
                    limit: Duration) async -> (answer: RealtimeResponseBody?, failure: String?, milliseconds: Int64) {
        let started = ContinuousClock.now
        func elapsed() -> Int64 { Int64((ContinuousClock.now - started) / .milliseconds(1)) }
        let outcome = await withTaskGroup(of: (RealtimeResponseBody?, String?).self) { group in
            group.addTask {
                do {
                    let request = try await make(store: store, originalTransactionId: originalTransactionId, productID: productID, userLocale: userLocale)
                    // Foundation's client on Linux keeps whole seconds of a timeout; the race below keeps the limit.
                    let answer = try await HTTPClient.shared.send(.json("POST", url, body: request.body, timeout: max(limit, .seconds(1))))
                    guard answer.status == 200 else { return (nil, "UNSUCCESSFUL_HTTP_RESPONSE_CODE") }
                    guard let body = try? JSONDecoder().decode(RealtimeResponseBody.self, from: answer.body) else { return (nil, "INVALID_RESPONSE") }
                    return (body, nil)
                } catch HTTPClient.Failure.timedOut {
                    return (nil, "TIMED_OUT")
                } catch HTTPClient.Failure.unreachable {
                    return (nil, "NO_RESPONSE")
                } catch {
                    return (nil, Task.isCancelled ? "TIMED_OUT" : "OTHER")
                }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return (nil, "TIMED_OUT")
            }
            let first = await group.next() ?? (nil, "OTHER")
            group.cancelAll()
            return first
        }
        guard elapsed() <= Int64(limit / .milliseconds(1)) || outcome.1 != nil else { return (nil, "TIMED_OUT", elapsed()) }
        return (outcome.0, outcome.1, elapsed())
    }
}
