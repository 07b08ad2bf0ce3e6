// Corpus (Swift 6): an `@Observable` store as apps written for iOS 17 shape it: main-actor isolated,
// its listener task kept out of observation, the premium flag read from `Product.SubscriptionInfo.Status.all`
// (after a first `status(for:)`), and transactions from `Transaction.updates`. The file imports SwiftUI
// and StoreKit: on Apple platforms SwiftUI brings Observation.
import StoreKit
import SwiftUI

@MainActor
@Observable
final class EntitlementModel {
    private(set) var hasPremium = false
    private(set) var ownedProductIDs: Set<String> = []
    private let groupID: String
    @ObservationIgnored private var updatesTask: Task<Void, Never>?

    init(groupID: String) {
        self.groupID = groupID
    }

    func start() {
        updatesTask = Task { [weak self] in
            for await update in Transaction.updates {
                guard case .verified(let transaction) = update else { continue }
                await transaction.finish()
                await self?.refresh()
            }
        }
    }

    func stop() {
        updatesTask?.cancel()
        updatesTask = nil
    }

    func refresh() async {
        ownedProductIDs = await AccessCheck.activeProductIDs()
        if let statuses = try? await Product.SubscriptionInfo.status(for: groupID) {
            hasPremium = statuses.contains { $0.state == .subscribed || $0.state == .inGracePeriod }
        }
        for await (group, statuses) in Product.SubscriptionInfo.Status.all where group == groupID {
            hasPremium = statuses.contains { $0.state != .revoked && $0.state != .expired && $0.state != .inBillingRetryPeriod }
        }
    }
}
