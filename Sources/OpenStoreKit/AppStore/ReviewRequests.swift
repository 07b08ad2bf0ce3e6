import Foundation

extension AppStore {
    /// Asks the customer to rate and review the app, as `AppStore.requestReview(in:)` does without the
    /// window scene this platform has no use for. It returns at once; the store records the request
    /// on the device, with whether the prompt showed (a Production app's shows at most three times in
    /// 365 days), where the Transaction Manager and tests see it.
    public static func requestReview() {
        StoreClient.active.requestReviewInBackground()
    }
}

/// The original API's review prompt, as `SKStoreReviewController`.
open class SKStoreReviewController: NSObject, @unchecked Sendable {
    /// Asks the customer for a review (Apple deprecated this form in iOS 14 for the window-scene one,
    /// which needs a scene this platform has no use for); see ``AppStore/requestReview()``.
    open class func requestReview() {
        AppStore.requestReview()
    }
}

/// `@Environment(\.requestReview)`'s type, as StoreKit's `RequestReviewAction`: calling it asks the
/// customer for a review through ``AppStore/requestReview()``.
public struct RequestReviewAction: Sendable {
    let client: StoreClient?

    /// An action asking through `client` (the active client when `nil`).
    public init(client: StoreClient? = nil) {
        self.client = client
    }

    public func callAsFunction() {
        (client ?? StoreClient.active).requestReviewInBackground()
    }
}

extension StoreClient {
    /// Asks the customer of this device for a review and waits for the store to record it.
    ///
    /// - Returns: Whether the review prompt showed.
    @discardableResult
    public func requestReview() async throws -> Bool {
        try await storeKitCall { try await transport.requestReview(device: device) }
    }

    /// Asks for a review without waiting, as StoreKit's calls do; a failure is reported on standard error.
    func requestReviewInBackground() {
        Task {
            do {
                try await self.requestReview()
            } catch {
                StoreDiagnostics.report("the review request failed: \(error)")
            }
        }
    }
}
