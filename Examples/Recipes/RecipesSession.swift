import Foundation
import OpenStoreKit
import LocalAppStore

/// A scripted week with the recipes app: an early adopter, a child whose purchases a parent
/// approves, and a membership that is refunded.
enum RecipesSession {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recipes.storekit")

    struct Summary: Equatable {
        var earlyAdopterHasPro: Bool
        var childHasProAfterApproval: Bool
        var tokenOnTransaction: Bool
        var planAfterPurchase: Bool
        var planAfterRefund: Bool
        var journalKeys: [String]
    }

    @MainActor
    static func run(store server: URL? = nil, say: (String) -> Void) async throws -> Summary {
        // A fixed first day, so the dates it prints are the same every run.
        let session = try await LocalStore.open(contentsOf: file, bundleID: "com.example.recipes", server: server,
                                                startDate: LocalStore.referenceStartDate)
        let cutoff = session.now.addingTimeInterval(86_400)

        // The early adopter got the app on day one.
        try await session.configureAccount("early")
        let early = try await session.client(device: "early-phone", account: "early")
        let earlyHasPro = try await early.withCurrent {
            let store = RecipesStore(journal: DeliveryJournal(), userToken: UUID(), grandfatheringCutoff: cutoff)
            try await store.start()
            await store.stop()
            return store.hasPro
        }
        say("Early adopter (app bought before in-app purchases) → pro: \(earlyHasPro) (grandfathered)")

        // Days later a child installs the app; a parent approves purchases.
        try await session.advance(byDays: 3)
        try await session.configureAccount("child", askToBuy: true)
        let childToken = UUID(uuidString: "0C4B1D2E-3F40-4A5B-8C6D-7E8F9A0B1C2D")!
        let journal = DeliveryJournal()
        let child = try await session.client(device: "child-tablet", account: "child")
        return try await child.withCurrent {
            let store = RecipesStore(journal: journal, userToken: childToken, grandfatheringCutoff: cutoff)
            try await store.start()
            say("Child → pro: \(store.hasPro), plans: " + store.products.filter { $0.subscription != nil }.map { "\($0.displayName) \($0.displayPrice)" }.joined(separator: " < "))

            guard case .pending = try await store.buy(RecipesStore.proID) else { throw CancellationError() }
            say("Child asks for Recipes Pro → pending (Ask to Buy)")
            let pending = try requireValue(await session.allTransactions().first { $0.pendingAskToBuyConfirmation })
            try await session.approveAskToBuyTransaction(identifier: pending.identifier)
            try await waitForOutcome(of: store.center)
            try await store.refresh()
            say("Parent approves → the purchase arrives through Transaction.updates → pro: \(store.hasPro)")

            try await session.configureAccount("child", askToBuy: false)
            guard case .success(let result) = try await store.buy("com.example.recipes.membership.monthly"),
                  case .verified(let membership) = result else { throw CancellationError() }
            let tokenMatches = membership.appAccountToken == childToken
            say("Monthly membership bought with the app account token (\(tokenMatches ? "recorded" : "missing")) → active plan: \(store.hasActivePlan)")
            let planAfterPurchase = store.hasActivePlan

            try await session.refundTransaction(identifier: membership.id)
            try await waitForOutcome(of: store.center)
            try await store.refresh()
            say("Membership refunded → active plan: \(store.hasActivePlan); entitled: \(store.entitledProductIDs.sorted())")
            say("Why pro? " + (await store.center.explain(RecipesStore.proID, now: session.now)).description)
            say("Why membership? " + (await store.center.explain("com.example.recipes.membership.monthly", now: session.now)).description)
            say("Delivery journal: " + journal.entries.map(\.key).joined(separator: ", "))
            await store.stop()
            return Summary(earlyAdopterHasPro: earlyHasPro, childHasProAfterApproval: store.hasPro, tokenOnTransaction: tokenMatches,
                           planAfterPurchase: planAfterPurchase, planAfterRefund: store.hasActivePlan, journalKeys: journal.entries.map(\.key))
        }
    }

    /// Waits for the entitlement center to process the next transaction from `Transaction.updates`.
    static func waitForOutcome(of center: EntitlementCenter) async throws {
        var outcomes = center.outcomes.makeAsyncIterator()
        while let outcome = await outcomes.next() {
            switch outcome {
            case .delivered(let entry) where entry.source == "updates": return
            case .revoked: return
            default: continue
            }
        }
    }
}

/// Unwraps or fails the session with a message.
func requireValue<T>(_ value: T?, _ what: String = "value") throws -> T {
    guard let value else { throw SessionError(message: "missing \(what)") }
    return value
}

struct SessionError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
