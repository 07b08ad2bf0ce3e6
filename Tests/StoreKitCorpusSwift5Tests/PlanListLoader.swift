// Corpus (Swift 5): fills the Foundation-only view model from StoreKit, as the store file of such an
// app does: plans by price, each with its price per period and period in words.
import StoreKit

extension PlanListModel {
    @MainActor func load(groupProductIDs: [String]) async throws {
        isLoading = true
        defer { isLoading = false }
        let plans = try await Product.products(for: groupProductIDs).sorted { $0.price < $1.price }
        rows = plans.map { Row(name: $0.displayName, price: $0.pricePerPeriodText, period: $0.billingPeriodText ?? "") }
    }
}
