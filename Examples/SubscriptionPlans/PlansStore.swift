import Foundation
import OSLog
import OpenStoreKit

/// The subscriptions app's store: two plans of one group, the subscription state derived from
/// verified statuses, and a shared flag file for extensions.
@MainActor
final class PlansStore {
    static let groupID = "21000001"
    static let planIDs = ["com.example.shop.plus.premium.monthly", "com.example.shop.plus.premium.yearly"]

    /// Where the customer stands, as the app shows it.
    enum PlanState: Equatable, CustomStringConvertible {
        case none
        case active(productID: String, willRenew: Bool)
        /// A renewal failed; the service continues until the date while the App Store retries.
        case gracePeriod(productID: String, until: Date?)
        /// A renewal failed and the grace period is over; no service until the payment is fixed.
        case billingRetry(productID: String)
        case expired(productID: String, reason: String)
        case revoked(productID: String)

        var hasPro: Bool {
            switch self {
            case .active, .gracePeriod: return true
            default: return false
            }
        }

        var description: String {
            func plan(_ id: String) -> String { id.hasSuffix(".yearly") ? "yearly" : "monthly" }
            switch self {
            case .none: return "no plan"
            case .active(let id, let willRenew): return "Pro (\(plan(id))), \(willRenew ? "renews" : "ends at the end of the period")"
            case .gracePeriod(let id, let until):
                return "Pro (\(plan(id))) in its billing grace period" + (until.map { " until \($0.formatted(.iso8601.year().month().day()))" } ?? "")
            case .billingRetry(let id): return "no Pro: \(plan(id)) plan in billing retry"
            case .expired(let id, let reason): return "no Pro: \(plan(id)) plan expired (\(reason))"
            case .revoked(let id): return "no Pro: \(plan(id)) plan refunded"
            }
        }
    }

    private(set) var plans: [Product] = []
    private(set) var state: PlanState = .none
    private(set) var renewalsSeen = 0
    private let flagFile: URL
    private var listeners: [Task<Void, Never>] = []
    /// What the app logs, as apps do through the unified log (on Linux: standard error, in its format).
    private let logger = Logger(subsystem: "com.example.shop", category: "Plans")

    init(flagFile: URL) {
        self.flagFile = flagFile
    }

    /// Loads the plans cheapest first and starts following transactions and statuses.
    func start() async throws {
        plans = try await Product.products(for: Self.planIDs).sorted { $0.price < $1.price }
        listeners.append(Task { [weak self] in
            for await result in Transaction.updates {
                guard case .verified(let transaction) = result else { continue }
                if transaction.reason == .renewal { self?.renewalsSeen += 1 }
                await transaction.finish()
                await self?.refresh()
            }
        })
        listeners.append(Task { [weak self] in
            for await _ in Product.SubscriptionInfo.Status.updates {
                await self?.refresh()
            }
        })
        await refresh()
    }

    func stop() {
        listeners.forEach { $0.cancel() }
    }

    func subscribe(to productID: String) async throws {
        guard let plan = plans.first(where: { $0.id == productID }) else { return }
        if case .success(.verified(let transaction)) = try await plan.purchase() {
            logger.notice("subscribed to \(productID, privacy: .public): transaction \(transaction.id)")
            await transaction.finish()
        }
        await refresh()
    }

    /// "Restore Purchases": asks the App Store to sync, then reads the state again.
    func restore() async throws {
        try await AppStore.sync()
        await refresh()
    }

    /// The message the app shows about billing, if any.
    var billingMessage: String? {
        switch state {
        case .gracePeriod: return "There is a problem with your payment method; update it to keep Pro."
        case .billingRetry: return "Pro is paused until your payment method is updated."
        default: return nil
        }
    }

    /// Reads the group's verified statuses and writes the shared flag.
    func refresh() async {
        let statuses = (try? await Product.SubscriptionInfo.status(for: Self.groupID)) ?? []
        var best: PlanState = .none
        for status in statuses {
            guard case .verified(let transaction) = status.transaction, case .verified(let renewal) = status.renewalInfo,
                  Self.planIDs.contains(transaction.productID) else { continue }
            let candidate: PlanState
            switch status.state {
            case .subscribed: candidate = .active(productID: transaction.productID, willRenew: renewal.willAutoRenew)
            case .inGracePeriod: candidate = .gracePeriod(productID: transaction.productID, until: renewal.gracePeriodExpirationDate)
            case .inBillingRetryPeriod: candidate = .billingRetry(productID: transaction.productID)
            case .revoked: candidate = .revoked(productID: transaction.productID)
            default:
                let reason: String
                switch renewal.expirationReason {
                case .autoRenewDisabled?: reason = "cancelled"
                case .billingError?: reason = "billing error"
                case .didNotConsentToPriceIncrease?: reason = "price increase declined"
                default: reason = "ended"
                }
                candidate = .expired(productID: transaction.productID, reason: reason)
            }
            if best == .none || (candidate.hasPro && !best.hasPro) { best = candidate }
        }
        state = best
        try? ProFlag(hasPro: best.hasPro, reason: "\(best)").write(to: flagFile)
    }
}
