// Corpus (Swift 6): a subscription tier worked out from statuses, in the shape of Apple's sample apps
// for iOS 17: an actor maps the statuses an entitlement task reports to the app's own pass status with
// `EntitlementTaskState.map`, and the model keeps the resulting state. The statuses come from
// `.subscriptionStatusTask(for:)` in a view; here whoever drives the model hands them in.
import StoreKit

enum PassStatus: Comparable, Sendable {
    case notSubscribed
    case basic
    case premium
}

actor PassTiers {
    private let tiers: [String: PassStatus]

    init(tiers: [String: PassStatus]) {
        self.tiers = tiers
    }

    func status(for statuses: [Product.SubscriptionInfo.Status]) -> PassStatus {
        let effective = statuses.filter { $0.state == .subscribed || $0.state == .inGracePeriod }
        return effective.compactMap { status -> PassStatus? in
            guard case .verified(let transaction) = status.transaction else { return nil }
            return tiers[transaction.productID]
        }.max() ?? .notSubscribed
    }
}

@MainActor
final class PassModel {
    private(set) var state: EntitlementTaskState<PassStatus> = .loading
    private let tiers: PassTiers

    init(tiers: PassTiers) {
        self.tiers = tiers
    }

    var passStatus: PassStatus { state.value ?? .notSubscribed }

    func update(with statuses: EntitlementTaskState<[Product.SubscriptionInfo.Status]>) async {
        state = await statuses.map { statuses in await tiers.status(for: statuses) }
        switch state {
        case .failure(let error): print("failed to read the pass status: \(error)")
        case .success, .loading: break
        @unknown default: break
        }
    }
}
