// Entitlement flags kept with `@AppStorage`, in an app group's suite so a widget or an extension reads
// them too: the shape of many small apps' "isPro" flag. Written for Apple's SwiftUI.
import StoreKit
import SwiftUI

@MainActor
final class ProFlags: ObservableObject {
    @AppStorage("isPro", store: UserDefaults(suiteName: ProFlags.suite)) var isPro = false
    @AppStorage("lastVerifiedProductID", store: UserDefaults(suiteName: ProFlags.suite)) var lastVerifiedProductID = ""
    @AppStorage("hasPlus", store: UserDefaults(suiteName: ProFlags.suite)) var hasPlus = false
    @Published var refreshCount = 0

    nonisolated static let suite = "group.com.example.shop.tests"
    nonisolated static let proID = "com.example.shop.pro"
    nonisolated static let plusGroupID = "21000001"

    func refresh() async {
        var isPro = false
        var hasPlus = false
        for await result in Transaction.currentEntitlements {
            guard case .verified(let transaction) = result, transaction.revocationDate == nil else { continue }
            if transaction.productID == ProFlags.proID {
                isPro = true
                lastVerifiedProductID = transaction.productID
            }
            if transaction.subscriptionGroupID == ProFlags.plusGroupID { hasPlus = true }
        }
        self.isPro = isPro
        self.hasPlus = hasPlus
        refreshCount += 1
    }

    func restore() async throws {
        try await AppStore.sync()
        await refresh()
    }
}
