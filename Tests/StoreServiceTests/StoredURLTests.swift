@testable import AppStoreSimulator
import AppStoreModels
import Foundation
import HTTPService
import SimulatorConnection
import Synchronization
import Testing
import TestSupport

/// A store folder is data (#53): a real-time URL stored in it that Set Realtime URL would refuse
/// (written by hand, or by an older version) is never asked when the cancellation page opens.
@Suite(.timeLimit(.minutes(2)))
struct StoredURLTests {
    @Test("a stored real-time URL the API would refuse (plain http to another host) is not asked; the attempt says why")
    func storedRealtimeURLIsCheckedWhenUsed() async throws {
        let scenario = try await CancellationFlowTests.Scenario()
        let asked = Mutex(0)
        // Another host as far as the rule goes (only 127.0.0.1 and localhost may be plain http), but
        // reachable here, so a request made would be seen.
        let elsewhere = try HTTPServer(host: "127.0.0.2", port: 0) { _ in
            asked.withLock { $0 += 1 }
            return .text(200, #"{"message": {"messageIdentifier": "00000000-0000-0000-0000-000000000000"}}"#)
        }
        let planted = "http://127.0.0.2:\(elsewhere.port)/retention"
        #expect(!SimulatedAppStore.isAcceptableRealtimeURL(planted))
        await #expect(throws: (any Error).self) { try await scenario.store.configureRetentionRealtimeURL(planted) }
        try await scenario.store.changingRetentionSetup { setup, _ in setup.realtimeURL = planted }
        let attempt = try await scenario.flow.start(originalTransactionID: try #require(scenario.subscriptions["alice"]))
        #expect(asked.withLock { $0 } == 0, "the planted URL was asked")
        #expect(attempt.realtimeFailure?.contains("not one Set Realtime URL accepts") == true, "\(attempt)")
        await elsewhere.stop()
        // The rule as Set Realtime URL has it: https, or http on this machine only.
        #expect(SimulatedAppStore.isAcceptableRealtimeURL("https://example.com/retention"))
        #expect(SimulatedAppStore.isAcceptableRealtimeURL("http://127.0.0.1:8080/retention"))
        #expect(!SimulatedAppStore.isAcceptableRealtimeURL("file:///etc/passwd") && !SimulatedAppStore.isAcceptableRealtimeURL("http://example.com/"))
        #expect(!SettingsOverrides.isAcceptableNotificationURL("file:///etc/passwd") && !SettingsOverrides.isAcceptableNotificationURL("gopher://x"))
        #expect(SettingsOverrides.isAcceptableNotificationURL("http://127.0.0.1:9/notifications"))
    }

    @Test("a stored notification URL the settings would refuse (file:) gets no notification posted; a good one gets them (#53)")
    func storedNotificationURLIsCheckedWhenUsed() async throws {
        let scratch = Scratch()
        let (_, store) = try await TestStores.directory(in: scratch, environment: .sandbox)
        // A store folder written by hand: the URL never went through the settings' check.
        try await store.plantOverrides(notificationURL: "file:///etc/passwd")
        _ = try await store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: "alice", device: "phone"))
        #expect(try await store.claimDueNotificationRecords(limit: 10) == nil, "nothing is posted to a URL the settings would refuse")
        try await store.updateSettings { $0.notificationURL = "http://127.0.0.1:9/notifications" }
        #expect(try await store.claimDueNotificationRecords(limit: 10)?.records.isEmpty == false)
    }
}

extension SimulatedAppStore {
    /// Writes overrides as a hand-edited store folder holds them, past the settings' check.
    func plantOverrides(notificationURL: String) throws(AppStoreError) {
        var planted = overrides
        planted.notificationURL = notificationURL
        try writing { (change) throws(AppStoreError) in change.overrides = planted }
    }
}
