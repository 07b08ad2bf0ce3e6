// Corpus: asking for a review after a purchase the customer kept, the three ways apps do: StoreKit 2's
// `AppStore` (here without the window scene), the original API's `SKStoreReviewController`, and
// SwiftUI's `@Environment(\.requestReview)` in a view model.
import StoreKit
import SwiftUI

enum ReviewPrompt {
    static func afterPurchase(count: Int) {
        if count == 3 {
            AppStore.requestReview()
        } else if count == 10 {
            SKStoreReviewController.requestReview()
        }
    }
}

@MainActor
final class ReviewModel: ObservableObject {
    @Environment(\.requestReview) private var requestReview
    @Published private(set) var asked = 0

    func purchaseSucceeded() {
        asked += 1
        requestReview()
    }
}
