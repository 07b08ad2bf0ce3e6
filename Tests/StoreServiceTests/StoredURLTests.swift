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

/// The same attack on `storekit serve` as its own process, driven over HTTP (#53, item 10): a store
/// folder whose stored real-time and notification URLs the API would refuse.
@Suite(.timeLimit(.minutes(5)), .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
struct ServedStoredURLTests {
    /// A folder with the shop's default retention message for premium monthly, and the two URLs
    /// written into it as a hand-edited (or older) folder holds them, past the API's checks.
    static func plantedFolder(in scratch: Scratch, realtimeURL: String, notificationURL: String) async throws -> URL {
        let (directory, store) = try await TestStores.directory(in: scratch, environment: .xcode)
        let message = UUID().uuidString.lowercased()
        try await store.uploadRetentionMessage(message, UploadMessageRequestBody(header: "Before you go", body: "Your plans sync to every device."))
        try await store.reviewRetentionContent(message, state: .approved)
        try await store.configureDefaultRetentionMessage(productID: ExampleShop.premiumMonthly, locale: "en-US", messageIdentifier: message)
        #expect(!SimulatedAppStore.isAcceptableRealtimeURL(realtimeURL) && !SettingsOverrides.isAcceptableNotificationURL(notificationURL))
        try await store.changingRetentionSetup { setup, _ in setup.realtimeURL = realtimeURL }
        try await store.plantOverrides(notificationURL: notificationURL)
        return directory
    }

    @Test("storekit serve on a folder holding refused URLs: a purchase over HTTP posts no notification to the stored ftp: URL (the log says why), the cancellation page asks no one at the stored http URL of another host (the page says why); a URL set over HTTP then gets the notifications")
    func servedFolderUsesNoRefusedURL() async throws {
        let scratch = Scratch()
        // Another host as far as the real-time rule goes (http is for 127.0.0.1 and localhost only), and
        // a scheme the notification rule refuses; both reachable here, so a connection made is counted.
        let realtimeTrap = try ConnectionTrap(host: "127.0.0.2"), notificationTrap = try ConnectionTrap(host: "127.0.0.1")
        let directory = try await Self.plantedFolder(in: scratch, realtimeURL: "http://127.0.0.2:\(realtimeTrap.port)/retention",
                                                     notificationURL: "ftp://127.0.0.1:\(notificationTrap.port)/notifications")
        let received = Mutex(0)
        let receiver = try HTTPServer { _ in
            received.withLock { $0 += 1 }
            return HTTPResponse(status: 200)
        }
        try await ServeProcess.serving(directory) { served in
            let base = served.url.absoluteString
            let bought = try await Exchange.send("POST", URL(string: base + "/v1/admin/purchases")!,
                                                 json: #"{"productID": "\#(ExampleShop.premiumMonthly)", "account": "alice"}"#)
            #expect(bought.status == 201, "\(String(decoding: bought.body, as: UTF8.self))")
            let transaction = try #require(bought.json?["transaction"] as? [String: Any])
            let subscription = try #require((transaction["originalID"] as? NSNumber)?.uint64Value)
            // The sender found the purchase's notifications due and refused the stored URL: it says so.
            try await eventually("the server's log says why no notification is posted") {
                served.standardError.contains("the stored notification URL is not one the settings accept")
            }
            #expect(served.standardError.contains("ftp://127.0.0.1:\(notificationTrap.port)/notifications"), "\(served.standardError)")

            // The customer opens the cancellation page: the default message, and why not the real-time one.
            let page = try await Exchange.send("POST", URL(string: base + "/v1/admin/subscriptions/\(subscription)/cancellation")!, json: #"{"locale": "en-US"}"#)
            #expect(page.status == 200, "\(String(decoding: page.body, as: UTF8.self))")
            let attempt = try #require(page.json?["attempt"] as? [String: Any], "\(String(decoding: page.body, as: UTF8.self))")
            #expect(attempt["source"] as? String == "defaultMessage", "\(attempt)")
            #expect((attempt["realtimeFailure"] as? String)?.contains("not one Set Realtime URL accepts") == true, "\(attempt)")
            #expect((page.json?["message"] as? [String: Any])?["header"] as? String == "Before you go", "\(page.json ?? [:])")
            // The Transaction Manager's page of the purchase says it too.
            let manager = try await Exchange.send("GET", URL(string: base + "/transactions/\(subscription)")!, asProgram: false)
            #expect(String(decoding: manager.body, as: UTF8.self).contains("real-time answer not used"), "\(manager.status)")
            #expect(realtimeTrap.connections() == 0, "the stored real-time URL was asked")
            #expect(notificationTrap.connections() == 0, "a notification went to the stored ftp: URL")

            // A URL set through the API (which checks it) gets the notifications that waited.
            let patched = try await Exchange.send("PATCH", URL(string: base + "/v1/admin/settings")!,
                                                  json: #"{"notificationURL": "\#(receiver.url.absoluteString)/notifications"}"#)
            #expect(patched.status == 200, "\(String(decoding: patched.body, as: UTF8.self))")
            try await eventually("the purchase's notification reaches the URL set over HTTP") { received.withLock { $0 } >= 1 }
            #expect(notificationTrap.connections() == 0 && realtimeTrap.connections() == 0)
        }
        await receiver.stop()
    }
}
