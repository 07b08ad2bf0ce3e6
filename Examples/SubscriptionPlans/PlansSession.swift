import Foundation
import OpenStoreKit
import LocalAppStore

/// A scripted year with the subscriptions app: subscribe, renew, restore on a second device,
/// cancel, and a billing issue that is fixed.
enum PlansSession {
    static let shopFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Shop.storekit")

    struct Summary: Equatable {
        var planOrder: [String]
        var extensionAfterSubscribing: String
        var renewals: Int
        var restoredOnTablet: Bool
        var extensionAfterCancellation: String
        var graceKeptPro: Bool
        var retryDroppedPro: Bool
        var proAfterFix: Bool
    }

    /// Runs the session. `readFlagInExtension` reads the flag file the way an extension would
    /// (`swift run SubscriptionPlans` starts a second process of itself for it).
    @MainActor
    static func run(store server: URL? = nil, readFlagInExtension: (URL) async throws -> String, say: (String) -> Void,
                    finally lastStep: ((StoreClient) async throws -> Void)? = nil) async throws -> Summary {
        // The demo's year starts on a fixed day, so what it prints is the same every run.
        let session = try await LocalStore.open(contentsOf: shopFile, bundleID: "com.example.shop", server: server,
                                                startDate: LocalStore.referenceStartDate)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plans-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let flagFile = directory.appendingPathComponent("has-pro.json")
        let phone = try await session.client(device: "phone")
        // An app run against a local store without an Info.plist is the store's app.
        say("Running as \(Bundle.main.bundleIdentifier ?? "an app with no bundle identifier")")

        return try await phone.withCurrent {
            let store = PlansStore(flagFile: flagFile)
            try await store.start()
            say("Plans, cheapest first: " + store.plans.map { "\($0.displayName) \($0.displayPrice)/\($0.subscription?.subscriptionPeriod.description ?? "")" }.joined(separator: " < "))

            try await store.subscribe(to: "com.example.shop.plus.premium.monthly")
            let afterSubscribing = try await readFlagInExtension(flagFile)
            say("Subscribed monthly → \(store.state); the extension process reads: \(afterSubscribing)")

            try await session.advance(byMonths: 1)
            try await session.advance(byDays: 1)
            try await waitUntil { store.renewalsSeen >= 1 }
            let renewals = store.renewalsSeen
            say("A month later → \(renewals) renewal arrived through Transaction.updates; \(store.state)")

            let tablet = try await session.client(device: "tablet")
            let restored = try await tablet.withCurrent {
                let tabletStore = PlansStore(flagFile: directory.appendingPathComponent("tablet.json"))
                try await tabletStore.start()
                try await tabletStore.restore()
                tabletStore.stop()
                return tabletStore.state.hasPro
            }
            say("New tablet, Restore Purchases (AppStore.sync) → pro: \(restored)")

            let current = try requireTransaction(await Transaction.latest(for: "com.example.shop.plus.premium.monthly"))
            try await session.disableAutoRenewForTransaction(identifier: current.id)
            await store.refresh()
            say("Cancelled in Settings → \(store.state)")
            try await session.advance(to: try requireDate(current.expirationDate).addingTimeInterval(60))
            await store.refresh()
            let afterCancellation = try await readFlagInExtension(flagFile)
            say("Period over → \(store.state); the extension reads: \(afterCancellation)")

            session.shouldEnterBillingRetryOnRenewal = true
            session.billingGracePeriodIsEnabled = true
            try await store.subscribe(to: "com.example.shop.plus.premium.yearly")
            let yearly = try requireTransaction(await Transaction.latest(for: "com.example.shop.plus.premium.yearly"))
            try await session.advance(to: try requireDate(yearly.expirationDate).addingTimeInterval(60))
            await store.refresh()
            let graceKeptPro = store.state.hasPro
            say("A year later the renewal charge is declined → \(store.state): \(store.billingMessage ?? "")")
            if case .gracePeriod(_, let until?) = store.state {
                try await session.advance(to: until.addingTimeInterval(60))
            }
            await store.refresh()
            let retryDroppedPro = !store.state.hasPro
            say("Grace period over → \(store.state): \(store.billingMessage ?? "")")
            session.shouldEnterBillingRetryOnRenewal = false
            try await session.resolveIssueForTransaction(identifier: yearly.id)
            await store.refresh()
            say("Payment method fixed → \(store.state); the extension reads: \(try await readFlagInExtension(flagFile))")
            store.stop()
            try await lastStep?(phone)
            return Summary(planOrder: store.plans.map(\.id), extensionAfterSubscribing: afterSubscribing, renewals: renewals,
                           restoredOnTablet: restored, extensionAfterCancellation: afterCancellation, graceKeptPro: graceKeptPro,
                           retryDroppedPro: retryDroppedPro, proAfterFix: store.state.hasPro)
        }
    }

    /// What the extension prints for a flag file.
    static func extensionLine(for flagFile: URL) -> String {
        guard let flag = ProFlag.read(from: flagFile) else { return "no flag yet" }
        return flag.hasPro ? "Pro" : "Free"
    }

    /// Runs `executable --extension FLAG_FILE` (the extension process) and returns what it printed.
    static func runExtension(executable: URL, flagFile: URL) async throws -> String {
        try await ExtensionProcess.output(of: executable, ["--extension", flagFile.path])
    }

    @MainActor
    static func waitUntil(_ condition: () -> Bool) async throws {
        // The listener's task runs when the machine lets it: a loaded machine may take a while.
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        guard condition() else { throw PlansError(message: "timed out") }
    }

    static func requireTransaction(_ result: VerificationResult<Transaction>?) throws -> Transaction {
        guard case .verified(let transaction)? = result else { throw PlansError(message: "no verified transaction") }
        return transaction
    }

    static func requireDate(_ date: Date?) throws -> Date {
        guard let date else { throw PlansError(message: "no expiration date") }
        return date
    }
}

struct PlansError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

extension PlansSession {
    /// Waits until a refund of the app's latest yearly plan arrives through `Transaction.updates`
    /// (made outside the app: `storekit refund DIR ID`, or the admin API), and says so.
    @MainActor
    static func awaitRefund(seconds: Double, say: (String) -> Void) async throws {
        let yearly = try requireTransaction(await Transaction.latest(for: "com.example.shop.plus.premium.yearly"))
        say("Waiting for a refund of #\(yearly.id) through Transaction.updates (refund it with `storekit refund DIR \(yearly.id)`)")
        let refunded = try await withThrowingTaskGroup(of: Transaction?.self) { group in
            group.addTask {
                for await update in Transaction.updates {
                    if case .verified(let transaction) = update, transaction.id == yearly.id, transaction.revocationDate != nil {
                        await transaction.finish()
                        return transaction
                    }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let refunded else { throw PlansError(message: "no refund arrived within \(Int(seconds)) seconds") }
        say("Refund arrived through Transaction.updates: #\(refunded.id), revoked \(refunded.revocationDate.map { $0.formatted(.iso8601) } ?? "")")
    }
}
