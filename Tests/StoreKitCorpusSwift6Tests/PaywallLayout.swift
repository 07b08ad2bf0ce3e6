// Corpus (Swift 6): a paywall's view model with the SwiftUI values such models carry: its title as a
// `LocalizedStringKey`, a column count that follows the `DynamicTypeSize`, the store owned through
// `@StateObject` and watched through `@ObservedObject`, and a selection changed inside `withAnimation`.
import StoreKit
import SwiftUI

@MainActor
struct PaywallLayout {
    @StateObject var store = ProStore()
    var selection = Selection()

    final class Selection {
        var productID: String?
    }

    let title: LocalizedStringKey = "Go Pro"

    func subtitle(count: Int) -> LocalizedStringKey {
        "\(count) plans"
    }

    func columns(for size: DynamicTypeSize) -> Int {
        size.isAccessibilitySize ? 1 : (size >= .xLarge ? 2 : 3)
    }

    func select(_ product: Product) {
        withAnimation(.easeInOut) {
            selection.productID = product.id
        }
    }
}

@MainActor
struct PaywallRow {
    @ObservedObject var store: ProStore
    let product: Product

    var isOwned: Bool { store.purchasedIDs.contains(product.id) }
}
