import AppStoreSigning
import Foundation
import OpenStoreKit
import LocalAppStore

/// The lifetime premium unlock driven through the test session's controls.
enum ProductivitySession {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Productivity.storekit")

    /// The app's status after each step.
    struct Steps: Equatable {
        var afterPurchase: PremiumStore.Status
        var afterDelete: PremiumStore.Status
        var afterRebuy: PremiumStore.Status
        var afterRefund: PremiumStore.Status
        var whileAskingParent: PremiumStore.Status
        var afterDecline: PremiumStore.Status
        var afterApproval: PremiumStore.Status
        var afterBillingError: PremiumStore.Status
        /// Purchases the app's server verified and recorded (the first, the rebuy, the approved one).
        var recordedByServer: Int
        /// Whether the server refused a transaction whose payload was edited after signing.
        var serverRefusedForgery: Bool
    }

    @MainActor
    static func run(store server: URL? = nil, say: (String) -> Void) async throws -> Steps {
        let session = try await LocalStore.open(contentsOf: file, bundleID: "com.example.productivity", server: server)
        let laptop = try await session.client(device: "laptop")
        let server = try await PremiumServer(trusting: laptop.verificationContext)
        return try await laptop.withCurrent {
            let store = PremiumStore(server: server)
            try await store.start()
            await store.buyPremium()
            let afterPurchase = store.status
            say("Bought Premium for Life → \(afterPurchase)")

            let premiumID = try await latestID()
            try await session.deleteTransaction(identifier: premiumID)
            await store.refresh()
            let afterDelete = store.status
            say("Transaction deleted in the transaction manager → \(afterDelete)")
            await store.buyPremium()
            let afterRebuy = store.status
            say("Bought again → \(afterRebuy)")

            try await session.refundTransaction(identifier: try await latestID())
            try await waitUntil { store.status == .free }
            let afterRefund = store.status
            say("Refunded → \(afterRefund): premium goes away")

            session.askToBuyEnabled = true
            await store.buyPremium()
            let whileAsking = store.status
            say("Ask to Buy on, the child asks → \(whileAsking)")
            let firstRequest = try await pendingID(session)
            try await session.declineAskToBuyTransaction(identifier: firstRequest)
            store.approvalDeclined()
            let afterDecline = store.status
            say("The parent declines → \(afterDecline)")
            await store.buyPremium()
            try await session.approveAskToBuyTransaction(identifier: try await pendingID(session))
            try await waitUntil { if case .premium = store.status { return true } else { return false } }
            let afterApproval = store.status
            say("The child asks again, the parent approves → \(afterApproval)")
            session.askToBuyEnabled = false

            try await session.refundTransaction(identifier: try await latestID())
            try await waitUntil { store.status == .free }
            try await session.setSimulatedError(.purchase(.purchaseNotAllowed), forAPI: .purchase)
            await store.buyPremium()
            let afterBillingError = store.status
            say("Refunded again, then the payment is refused → \(afterBillingError)")
            store.stop()
            // Someone edits a signed purchase to claim premium for a different account: the server checks the signature.
            var forged = false
            for await result in Transaction.all(for: PremiumStore.premiumID) {
                let parts = result.jwsRepresentation.split(separator: ".", omittingEmptySubsequences: false)
                guard parts.count == 3, let payload = Base64URL.decode(parts[1]) else { continue }
                let edited = Data(String(decoding: payload, as: UTF8.self).replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":2").utf8)
                forged = !(await server.recordPurchase(jwsRepresentation: "\(parts[0]).\(Base64URL.encode(edited)).\(parts[2])"))
                break
            }
            let recorded = await server.recordedCount
            say("The server recorded \(recorded) purchases; an edited one was refused: \(forged)")
            return Steps(afterPurchase: afterPurchase, afterDelete: afterDelete, afterRebuy: afterRebuy, afterRefund: afterRefund,
                         whileAskingParent: whileAsking, afterDecline: afterDecline, afterApproval: afterApproval,
                         afterBillingError: afterBillingError, recordedByServer: recorded, serverRefusedForgery: forged)
        }
    }

    /// The latest premium transaction's identifier.
    static func latestID() async throws -> UInt64 {
        guard let latest = await Transaction.latest(for: PremiumStore.premiumID) else { throw ProductivityError(message: "no premium transaction") }
        return latest.unsafePayloadValue.id
    }

    /// The purchase waiting for a parent.
    static func pendingID(_ session: LocalStore) async throws -> UInt64 {
        guard let pending = await session.allTransactions().last(where: \.pendingAskToBuyConfirmation) else {
            throw ProductivityError(message: "no purchase waits for approval")
        }
        return UInt64(pending.identifier)
    }

    @MainActor
    static func waitUntil(_ condition: () -> Bool) async throws {
        // The listener's task runs when the machine lets it: a loaded machine may take a while.
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        guard condition() else { throw ProductivityError(message: "timed out") }
    }
}

struct ProductivityError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
