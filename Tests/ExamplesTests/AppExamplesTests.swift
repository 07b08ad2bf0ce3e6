import Foundation
import OpenStoreKit
import OpenStoreKitTesting
@testable import LegacyShop
@testable import Productivity
@testable import Recipes
@testable import SubscriptionPlans
import Testing
import TestSupport

@Suite("Examples: recipes, legacy shop, subscription plans, productivity", .timeLimit(.minutes(10)))
@MainActor
struct AppExamplesTests {
    @Test("recipes: grandfathering, Ask to Buy through updates, app account token, verified plan status, journal before finish")
    func recipes() async throws {
        let summary = try await RecipesSession.run { _ in }
        #expect(summary == RecipesSession.Summary(earlyAdopterHasPro: true, childHasProAfterApproval: true, tokenOnTransaction: true,
                                                  planAfterPurchase: true, planAfterRefund: false,
                                                  journalKeys: ["grant:0", "grant:1", "revoke:1"]))
    }

    @Test("recipes: a plan counts only when both the transaction and the renewal info verify")
    func recipesPlanNeedsVerification() async throws {
        let session = try TestSession(contentsOf: RecipesSession.file, bundleID: "com.example.recipes")
        let phone = try await session.client(device: "phone")
        try await phone.withCurrent {
            let store = RecipesStore(journal: DeliveryJournal(), userToken: UUID(), grandfatheringCutoff: .distantPast)
            try await store.start()
            _ = try await store.buy("com.example.recipes.membership.yearly")
            #expect(store.hasActivePlan)
            try await session.setSimulatedError(.verification(.invalidSignature), forAPI: .verification)
            try await store.refresh()
            #expect(!store.hasActivePlan)
            #expect(!store.hasPro)
            await store.stop()
        }
    }

    @Test("legacy shop: purchased ids persisted, a cancelled payment fails, restore on a new device")
    func legacyShop() async throws {
        let summary = try await LegacySession.run { _ in }
        let both = [LegacySession.wizard, LegacySession.pro]
        #expect(summary == LegacySession.Summary(oldPhone: both, savedOnOldPhone: both, cancelled: true, newPhoneBeforeRestore: [],
                                                 newPhoneAfterRestore: both))
    }

    @Test("subscription plans: sorted by price, flag read by a second process, renewal, restore, cancellation, billing issue")
    func subscriptionPlans() async throws {
        // `swift build --build-tests` (what `make test` runs) builds the example executable too.
        let executable = SharedTestData.packageRoot.appendingPathComponent(".build/debug/SubscriptionPlans")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the example first: swift build --build-tests")
        let readByProcess: (URL) async throws -> String = { try await PlansSession.runExtension(executable: executable, flagFile: $0) }
        let summary = try await PlansSession.run(readFlagInExtension: readByProcess) { _ in }
        #expect(summary == PlansSession.Summary(planOrder: PlansStore.planIDs, extensionAfterSubscribing: "Pro", renewals: 1,
                                                restoredOnTablet: true, extensionAfterCancellation: "Free", graceKeptPro: true,
                                                retryDroppedPro: true, proAfterFix: true))
    }

    @Test("productivity: delete, refund, Ask to Buy decline and approve, and a refused payment")
    func productivity() async throws {
        let steps = try await ProductivitySession.run { _ in }
        guard case .premium = steps.afterPurchase, case .premium = steps.afterRebuy, case .premium = steps.afterApproval else {
            Issue.record("premium expected after buying and after approval: \(steps)")
            return
        }
        #expect(steps.afterDelete == .free)
        #expect(steps.afterRefund == .free)
        #expect(steps.whileAskingParent == .waitingForApproval)
        #expect(steps.afterDecline == .free)
        #expect(steps.afterBillingError == .purchaseFailed("purchaseNotAllowed"))
        #expect(steps.recordedByServer == 3)
        #expect(steps.serverRefusedForgery)
    }
}
