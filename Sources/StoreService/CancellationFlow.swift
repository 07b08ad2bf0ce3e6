import AppStoreModels
import AppStoreSimulator
import Foundation

/// A customer cancelling a subscription, as on the App Store's subscription page: the store asks the
/// developer's Get Retention Message endpoint (when one is configured) what to show, waiting at most
/// ``answerLimit`` (Apple's 700 ms), falls back to the default message for the product and the customer's locale, and
/// records what was shown; the customer's answer follows (``answer(_:outcome:)``).
///
/// Served pages, the admin API and `storekit cancel-subscription` all go through it.
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
        if let text = context.realtimeURL, let url = URL(string: text) {
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
