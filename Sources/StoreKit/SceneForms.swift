// StoreKit's calls that take a window scene or view controller, over UIKit's stand-in: each does what
// the scene-less form of this package does (the sheet shown "over" the scene is the test's queued
// response on the active client's device), so code written for iOS compiles and runs unchanged.
import Foundation
import OpenStoreKit
import UIKit

extension AppStore {
    /// Shows the manage-subscriptions sheet over `scene` (see ``AppStore/showManageSubscriptions()``).
    @MainActor
    public static func showManageSubscriptions(in scene: UIWindowScene) async throws {
        try await showManageSubscriptions()
    }

    /// Shows the manage-subscriptions sheet of one subscription group over `scene`.
    @MainActor
    public static func showManageSubscriptions(in scene: UIWindowScene, subscriptionGroupID: String) async throws {
        try await showManageSubscriptions()
    }

    /// Shows the offer-code redemption sheet over `scene` (see ``AppStore/presentOfferCodeRedeemSheet()``).
    @MainActor
    public static func presentOfferCodeRedeemSheet(in scene: UIWindowScene) async throws {
        try await presentOfferCodeRedeemSheet()
    }

    /// Asks for a review over `scene` (see ``AppStore/requestReview()``): recorded on the device.
    @MainActor
    public static func requestReview(in scene: UIWindowScene) {
        requestReview()
    }
}

extension SKStoreReviewController {
    /// Asks for a review over `windowScene`: recorded on the device.
    @MainActor
    public class func requestReview(in windowScene: UIWindowScene) {
        AppStore.requestReview()
    }
}

extension Product {
    /// Buys the product, confirming over `scene` (see ``Product/purchase(options:)``).
    @MainActor
    public func purchase(confirmIn scene: some UIScene, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        try await purchase(options: options)
    }

    /// Buys the product, confirming over `viewController`.
    public func purchase(confirmIn viewController: UIViewController, options: Set<Product.PurchaseOption> = []) async throws -> Product.PurchaseResult {
        try await purchase(options: options)
    }
}

extension Transaction {
    /// Asks for a refund of this transaction over `scene` (see ``Transaction/beginRefundRequest()``).
    @MainActor
    public func beginRefundRequest(in scene: UIWindowScene) async throws -> Transaction.RefundRequestStatus {
        try await beginRefundRequest()
    }

    /// Asks for a refund of a transaction over `scene`.
    @MainActor
    public static func beginRefundRequest(for transactionID: UInt64, in scene: UIWindowScene) async throws -> Transaction.RefundRequestStatus {
        try await beginRefundRequest(for: transactionID)
    }
}

extension Message {
    /// Shows the message's sheet over `scene`, as StoreKit's does: it returns at once and the sheet
    /// is handled in the background (see ``Message/display()``, which waits for it).
    @MainActor
    public func display(in scene: UIWindowScene) throws {
        let message = self
        Task {
            do { try await message.display() } catch { FileHandle.standardError.write(Data("the message's sheet failed: \(error)\n".utf8)) }
        }
    }
}
