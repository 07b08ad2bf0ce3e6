// Corpus (Swift 5): the list-cell shape of Apple's StoreKit 2 sample, as a view model: it watches the
// store through `@ObservedObject`, buys through it, and flips its "purchased" badge inside
// `withAnimation`, telling the verification failure apart for its alert. Imports SwiftUI and StoreKit.
import StoreKit
import SwiftUI

struct CarCellModel {
    @ObservedObject var store: PurchaseHelper
    let product: Product
    private let badge = Badge()

    final class Badge {
        var isPurchased = false
        var errorTitle = ""
    }

    var isPurchased: Bool { badge.isPurchased }
    var errorTitle: String { badge.errorTitle }

    @MainActor func buy() async {
        do {
            if try await store.purchase(product) != nil {
                withAnimation {
                    badge.isPurchased = true
                }
            }
        } catch {
            badge.errorTitle = "Purchase failed: \(error)"
        }
    }
}
