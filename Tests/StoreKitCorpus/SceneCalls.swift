// Corpus: StoreKit's calls that take the app's window scene, as iOS apps make them from a settings
// screen or a paywall: the scene found among the application's connected scenes, then the manage-
// subscriptions sheet, the offer-code sheet, a review prompt, a refund request and a purchase
// confirmed over it.
import StoreKit
import UIKit

@MainActor
enum SceneCalls {
    static var scene: UIWindowScene? {
        UIApplication.shared.connectedScenes.first { $0.activationState == .foregroundActive } as? UIWindowScene
    }

    static func manageSubscriptions() async throws {
        guard let scene else { return }
        try await AppStore.showManageSubscriptions(in: scene)
    }

    static func redeemCode() async throws {
        guard let scene else { return }
        try await AppStore.presentOfferCodeRedeemSheet(in: scene)
    }

    static func askForReview() {
        guard let scene else { return }
        AppStore.requestReview(in: scene)
    }

    static func refund(_ transaction: Transaction) async throws -> Transaction.RefundRequestStatus {
        guard let scene else { return .userCancelled }
        return try await transaction.beginRefundRequest(in: scene)
    }

    static func buy(_ product: Product) async throws -> Transaction? {
        guard let scene else { return nil }
        guard case .success(.verified(let transaction)) = try await product.purchase(confirmIn: scene) else { return nil }
        await transaction.finish()
        return transaction
    }
}
