// The model behind a buy button that buys through the environment's purchase action, as SwiftUI code
// written for iOS 17 does (`@Environment(\.purchase)`), instead of `product.purchase()`.
import StoreKit
import SwiftUI

@MainActor
final class BuyButtonModel: ObservableObject {
    @Environment(\.purchase) private var purchase: PurchaseAction
    @Environment(\.openURL) private var openURL: OpenURLAction
    @Published private(set) var state: State = .idle

    enum State: Equatable {
        case idle, buying, bought(String), pending, cancelled, failed
    }

    func buy(_ product: Product) async {
        state = .buying
        do {
            switch try await purchase(product) {
            case .success(.verified(let transaction)):
                await transaction.finish()
                state = .bought(transaction.productID)
            case .success(.unverified):
                state = .failed
            case .pending:
                state = .pending
            case .userCancelled:
                state = .cancelled
            @unknown default:
                state = .failed
            }
        } catch {
            state = .failed
        }
    }

    func manageSubscriptions() {
        openURL(URL(string: "https://apps.apple.com/account/subscriptions")!)
    }
}
