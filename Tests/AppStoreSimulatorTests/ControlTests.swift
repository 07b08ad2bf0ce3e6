import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(10)))
struct SimulatedErrorTests {
    @Test("every failable API throws its simulated failure", arguments: FailableAPI.allCases)
    func eachAPIFails(api: FailableAPI) async throws {
        let test = try TestStore()
        try await test.store.addDevice("phone", account: "alice")
        let failure: SimulatedFailure
        switch api {
        case .purchase: failure = .purchase(.productUnavailable)
        case .verification: failure = .verification(.invalidSignature)
        case .refundRequest: failure = .refundRequest(.failed)
        default: failure = .generic(.networkError)
        }
        try await test.store.setSimulatedError(failure, forAPI: api)
        #expect(try await test.store.simulatedError(forAPI: api) == failure)
        let store = test.store
        let expected = failure.error(for: api)
        switch api {
        case .loadProducts:
            await #expect(throws: expected) { try await store.products(for: [PurchaseTests.gems]) }
        case .purchase:
            await #expect(throws: expected) { try await store.purchase(PurchaseRequest(productID: PurchaseTests.gems, account: "alice", device: "phone")) }
        case .verification:
            let signed = try await test.buy(PurchaseTests.gems)
            #expect(signed.simulatedVerificationFailure == .invalidSignature)
        case .subscriptionStatus:
            await #expect(throws: expected) { try await store.subscriptionStatuses(groupID: "21000001", device: "phone") }
        case .appTransaction:
            await #expect(throws: expected) { try await store.appTransaction(device: "phone") }
        case .refundRequest:
            try await store.setSimulatedError(nil, forAPI: .refundRequest)
            let signed = try await test.buy(PurchaseTests.gems)
            try await store.setSimulatedError(failure, forAPI: .refundRequest)
            await #expect(throws: expected) { try await store.requestRefund(signed.transaction.id) }
        case .appStoreSync, .manageSubscriptions, .offerCodeRedeem:
            await #expect(throws: expected) { try await store.checkSimulatedFailure(api) }
        }
        try await store.setSimulatedError(nil, forAPI: api)
        #expect(try await store.simulatedError(forAPI: api) == nil)
    }

    @Test("a simulated user cancellation is a cancelled purchase, not an error")
    func userCancelled() async throws {
        let test = try TestStore()
        try await test.store.setSimulatedError(.generic(.userCancelled), forAPI: .purchase)
        let outcome = try await test.store.purchase(PurchaseRequest(productID: PurchaseTests.gems, account: "alice", device: "phone"))
        #expect(outcome == .userCancelled)
    }

    @Test("a failure the API cannot throw is refused")
    func mismatchedFailure() async throws {
        let test = try TestStore()
        await #expect(throws: AppStoreError.self) { try await test.store.setSimulatedError(.purchase(.invalidQuantity), forAPI: .loadProducts) }
    }

    @Test("enabled failures in the .storekit file are read with Xcode's index encoding")
    func failuresFromConfiguration() async throws {
        let test = try TestStore { configuration in
            configuration.settings?.storeKitErrors = [
                .init(name: "Purchase", enabled: true, current: .object(["index": .integer(1), "type": .string("purchase")])),
                .init(name: "Load Products", enabled: false, current: .object(["index": .integer(2), "type": .string("generic")])),
            ]
        }
        #expect(try await test.store.simulatedError(forAPI: .purchase) == .purchase(.productUnavailable))
        #expect(try await test.store.simulatedError(forAPI: .loadProducts) == nil)
        try await test.store.setSimulatedError(nil, forAPI: .purchase)
        #expect(try await test.store.simulatedError(forAPI: .purchase) == nil)
        try await test.store.resetToDefaultState()
        #expect(try await test.store.simulatedError(forAPI: .purchase) == .purchase(.productUnavailable))
    }

    @Test("the legacy fail-transactions switch fails every purchase with its error")
    func failTransactions() async throws {
        let test = try TestStore()
        try await test.store.updateSettings { $0.failTransactionsEnabled = true; $0.failureError = .purchase(.invalidOfferSignature) }
        await #expect(throws: AppStoreError.self) { try await test.buy(PurchaseTests.gems) }
    }
}

@Suite(.timeLimit(.minutes(10)))
struct FamilySharingTests {
    @Test("a family-shareable non-consumable appears on the family's accounts as FAMILY_SHARED")
    func sharing() async throws {
        let test = try TestStore()
        try await test.store.setFamilyGroup("smiths", for: "alice")
        try await test.store.addDevice("bob-phone", account: "bob")
        try await test.store.setFamilyGroup("smiths", for: "bob")
        let pro = try await test.buy(PurchaseTests.pro)
        _ = try await test.buy("com.example.shop.character.wizard")
        let bobs = try await test.store.currentEntitlements(device: "bob-phone")
        #expect(bobs.count == 1)
        let payload = try await test.verifier.verifyAndDecodeTransaction(bobs[0].jws)
        #expect(payload.inAppOwnershipType == .familyShared)
        #expect(payload.productId == PurchaseTests.pro)
        #expect(bobs[0].transaction.familySourceID == pro.transaction.id)
        #expect(try await test.store.takeUpdates(device: "bob-phone").map(\.kind) == [.familyShare])
    }

    @Test("refunding the purchaser's transaction revokes the family copies with REVOKE")
    func refundRevokesFamily() async throws {
        let test = try TestStore()
        try await test.makeSmithsFamily(bobsPhone: true)
        let pro = try await test.buy(PurchaseTests.pro)
        try await test.store.refundTransaction(pro.transaction.id)
        #expect(try await test.store.currentEntitlements(device: "bob-phone").isEmpty)
        #expect(try await test.notificationKinds() == ["ONE_TIME_CHARGE", "REFUND", "REVOKE"])
        let revoke = try #require(try await test.store.notifications().last)
        let notification = try await test.verifier.verifyAndDecodeNotification(revoke.signedPayload)
        let copy = try await test.verifier.verifyAndDecodeTransaction(try #require(notification.data?.signedTransactionInfo))
        #expect(copy.revocationType == .familyRevoke)
        #expect(copy.inAppOwnershipType == .familyShared)
    }

    @Test("joining a family shares earlier purchases; leaving it revokes them")
    func joiningAndLeaving() async throws {
        let test = try TestStore()
        _ = try await test.buy(PurchaseTests.pro)
        try await test.store.setFamilyGroup("smiths", for: "alice")
        try await test.store.setFamilyGroup("smiths", for: "carol")
        #expect(try await test.store.currentEntitlements(account: "carol").count == 1)
        try await test.store.setFamilyGroup(nil, for: "carol")
        #expect(try await test.store.currentEntitlements(account: "carol").isEmpty)
        #expect(try await test.store.currentEntitlements(account: "alice").count == 1)
        #expect(try await test.notificationKinds() == ["ONE_TIME_CHARGE", "REVOKE"])
    }

    @Test("a shared subscription: the member's periods have their own web order line items, and the server hears SUBSCRIBED and DID_RENEW for the member")
    func sharedSubscriptionNotifications() async throws {
        let test = try TestStore()
        try await test.makeSmithsFamily()
        let yearly = try await test.buy(Shop.premiumYearly)
        try await test.store.advanceTime(by: 400 * 86_400)
        let all = try await test.store.ledgerTransactions()
        let lineItems = all.compactMap(\.webOrderLineItemID)
        #expect(lineItems.count == all.count)
        #expect(Set(lineItems).count == lineItems.count, "\(all.map { "\($0.account) \($0.webOrderLineItemID ?? "-")" })")
        let notifications = try await test.store.notifications()
        var byAccount: [String: [String]] = [:]
        for notification in notifications {
            let transaction = try #require(all.first { $0.id == notification.transactionID })
            byAccount[transaction.account, default: []].append([notification.type.rawValue, notification.subtype?.rawValue].compactMap { $0 }.joined(separator: "/"))
            let payload = try await test.verifier.verifyAndDecodeNotification(notification.signedPayload)
            let signed = try await test.verifier.verifyAndDecodeTransaction(try #require(payload.data?.signedTransactionInfo))
            #expect(signed.inAppOwnershipType == (transaction.account == "bob" ? .familyShared : .purchased))
            #expect(payload.data?.status != nil && payload.data?.signedRenewalInfo != nil)
        }
        #expect(byAccount["alice"]?.first == "SUBSCRIBED/INITIAL_BUY")
        #expect(byAccount["bob"] == byAccount["alice"], "the member hears what the purchaser does: \(byAccount)")
        #expect(yearly.transaction.account == "alice")
    }

    @Test("stopping sharing of one purchase revokes its copies only")
    func stopSharing() async throws {
        let test = try TestStore()
        try await test.makeSmithsFamily()
        let pro = try await test.buy(PurchaseTests.pro)
        try await test.store.stopFamilySharing(transactionID: pro.transaction.id)
        #expect(try await test.store.currentEntitlements(account: "bob").isEmpty)
        #expect(try await test.store.currentEntitlements(account: "alice").count == 1)
    }
}

@Suite(.timeLimit(.minutes(10)))
struct RefundOutcomeTests {
    @Test("a declined refund request: CONSUMPTION_REQUEST, then REFUND_DECLINED, and the purchase stands")
    func declinedRefund() async throws {
        let test = try TestStore()
        let gems = try await test.buy(PurchaseTests.gems)
        try await test.store.requestRefund(gems.transaction.id, declined: true)
        #expect(try await test.notificationKinds() == ["ONE_TIME_CHARGE", "CONSUMPTION_REQUEST", "REFUND_DECLINED"])
        #expect(try await test.store.ledgerTransactions().first?.revocation == nil)
        let declined = try #require(try await test.store.notifications().last)
        let payload = try await test.verifier.verifyAndDecodeNotification(declined.signedPayload)
        #expect(try await test.verifier.verifyAndDecodeTransaction(try #require(payload.data?.signedTransactionInfo)).revocationDate == nil)
    }

    @Test("a reversed refund: REFUND_REVERSED, the purchase and its family copies entitled again and re-delivered")
    func reversedRefund() async throws {
        let test = try TestStore()
        try await test.makeSmithsFamily(bobsPhone: true)
        let pro = try await test.buy(PurchaseTests.pro)
        try await test.store.refundTransaction(pro.transaction.id)
        #expect(try await test.store.currentEntitlements(account: "bob").isEmpty)
        _ = try await test.store.takeUpdates(device: "bob-phone")
        try await test.store.reverseRefund(pro.transaction.id)
        #expect(try await test.store.currentEntitlements(account: "alice").map(\.transaction.id) == [pro.transaction.id])
        #expect(try await test.store.currentEntitlements(account: "bob").count == 1)
        #expect(try await test.store.takeUpdates(device: "bob-phone").map(\.kind) == [.familyShare])
        #expect(try await test.notificationKinds().suffix(3) == ["REFUND", "REVOKE", "REFUND_REVERSED"])
        await #expect(throws: AppStoreError.control(.invalidAction, "transaction \(pro.transaction.id) was not refunded")) {
            try await test.store.reverseRefund(pro.transaction.id)
        }
    }

    @Test("a reversed subscription refund reinstates the running period without automatic renewal; it expires at the period's end")
    func reversedSubscriptionRefund() async throws {
        let test = try TestStore()
        let monthly = try await test.buy(Shop.premiumMonthly)
        try await test.store.refundTransaction(monthly.transaction.id)
        #expect(try await test.store.subscriptionStatuses(groupID: Shop.plus, account: "alice").map(\.state) == [.revoked])
        try await test.store.reverseRefund(monthly.transaction.id)
        let status = try #require(try await test.store.subscriptionStatuses(groupID: Shop.plus, account: "alice").first)
        #expect(status.state == .subscribed)
        #expect(status.renewalInfo.autoRenewStatus == .off)
        #expect(try await test.store.currentEntitlements(account: "alice").map(\.transaction.id) == [monthly.transaction.id])
        let reversed = try #require(try await test.store.notifications().last)
        let payload = try await test.verifier.verifyAndDecodeNotification(reversed.signedPayload)
        #expect(payload.notificationType == .refundReversed)
        #expect(payload.data?.status == .active)
        #expect(payload.data?.signedRenewalInfo != nil)
        try await test.store.advanceTime(to: try #require(monthly.transaction.expirationDate).addingTimeInterval(60))
        #expect(try await test.store.subscriptionStatuses(groupID: Shop.plus, account: "alice").map(\.state) == [.expired])
    }

    @Test("a mass extension: RENEWAL_EXTENDED for each subscriber, then RENEWAL_EXTENSION/SUMMARY with the counts")
    func massExtensionSummary() async throws {
        let test = try TestStore()
        for account in ["alice", "bob", "carol"] {
            _ = try await test.buy(Shop.standardMonthly, account: account, device: "\(account)-phone")
        }
        let result = try await test.store.extendAllActiveSubscribers(productID: Shop.standardMonthly, days: 10, storefronts: nil,
                                                                     requestIdentifier: "goodwill-1")
        #expect(result.succeededCount == 3)
        let kinds = try await test.notificationKinds()
        #expect(kinds.filter { $0 == "RENEWAL_EXTENDED" }.count == 3)
        #expect(kinds.last == "RENEWAL_EXTENSION/SUMMARY")
        let summary = try await test.verifier.verifyAndDecodeNotification(try #require(try await test.store.notifications().last).signedPayload)
        #expect(summary.data == nil)
        #expect(summary.summary?.requestIdentifier == "goodwill-1")
        #expect(summary.summary?.productId == Shop.standardMonthly)
        #expect(summary.summary?.succeededCount == 3 && summary.summary?.failedCount == 0)
    }
}

@Suite(.timeLimit(.minutes(10)))
struct NotificationTests {
    @Test("ONE_TIME_CHARGE carries the signed transaction and verifies, in the outbox in commit order")
    func oneTimeCharge() async throws {
        let test = try TestStore()
        let signed = try await test.buy(PurchaseTests.season)
        let stored = try #require(try await test.store.notifications().first)
        #expect(stored.sequence == 1)
        let notification = try await test.verifier.verifyAndDecodeNotification(stored.signedPayload)
        #expect(notification.notificationType == .oneTimeCharge)
        #expect(notification.version == "2.0")
        #expect(notification.notificationUUID == stored.notificationUUID)
        #expect(notification.data?.bundleId == "com.example.shop")
        #expect(notification.data?.environment == .xcode)
        let transaction = try await test.verifier.verifyAndDecodeTransaction(try #require(notification.data?.signedTransactionInfo))
        #expect(transaction.transactionId == String(signed.transaction.id))
        #expect(transaction.deviceVerification == nil)
    }

    @Test("TEST notifications carry only the app and environment")
    func testNotification() async throws {
        let test = try TestStore()
        let uuid = try await test.store.requestTestNotification()
        let stored = try #require(try await test.store.notifications().first)
        #expect(stored.notificationUUID == uuid)
        let notification = try await test.verifier.verifyAndDecodeNotification(stored.signedPayload)
        #expect(notification.notificationType == .test)
        #expect(notification.data?.signedTransactionInfo == nil)
    }
}

/// Family Sharing by Apple's rules: the purchaser's subscription is the one that renews, fails,
/// recovers or is cancelled; a control addressed to a member's shared copy acts on it, and the
/// copies follow with the notifications Apple sends.
@Suite(.timeLimit(.minutes(10)))
struct FamilyCopyControlTests {
    /// alice subscribes to a shareable plan in the smiths family; bob gets the shared copy.
    private static func sharedPlan() async throws -> (test: TestStore, alices: SubscriptionRecord, bobs: SubscriptionRecord) {
        let test = try TestStore()
        try await test.makeSmithsFamily(bobsPhone: true)
        try await test.buy(Shop.premiumMonthly)
        let alices = try #require(try await test.store.subscriptionRecords(account: "alice").first)
        let bobs = try #require(try await test.store.subscriptionRecords(account: "bob").first)
        #expect(bobs.familySourceID == alices.originalTransactionID)
        return (test, alices, bobs)
    }

    @Test("resolving the billing issue of a member's copy recovers the purchaser's subscription: alice's DID_RENEW BILLING_RECOVERY, both entitled")
    func resolveBillingOnCopy() async throws {
        let (test, alices, bobs) = try await Self.sharedPlan()
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true }
        _ = try await test.store.advanceTime(by: 32 * 86_400)
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = false }
        #expect(try await test.store.subscriptionRecord(originalTransactionID: alices.originalTransactionID)?.state == .inBillingRetryPeriod)
        #expect(try await test.store.subscriptionRecord(originalTransactionID: bobs.originalTransactionID)?.state == .inBillingRetryPeriod)
        let before = try await test.store.notificationRecords().count

        try await test.store.resolveBillingIssue(originalTransactionID: bobs.originalTransactionID)

        #expect(try await test.store.subscriptionRecord(originalTransactionID: alices.originalTransactionID)?.state == .subscribed, "the purchaser pays")
        #expect(try await test.store.subscriptionRecord(originalTransactionID: bobs.originalTransactionID)?.state == .subscribed, "the copy follows")
        let recovery = try await test.store.notificationRecords().dropFirst(before)
        let recovered = recovery.filter { $0.type == .didRenew && $0.subtype == .billingRecovery }
        let recoveredOriginals: [String] = recovered.compactMap { $0.transaction?.originalTransactionId }
        #expect(recoveredOriginals.contains(String(alices.originalTransactionID)),
                "the developer hears of the purchaser's recovery: \(recovery.map { "\($0.type.rawValue)/\($0.subtype?.rawValue ?? "") \($0.transaction?.originalTransactionId ?? "")" })")
        #expect(try await test.store.currentEntitlements(account: "alice").count == 1)
        #expect(try await test.store.currentEntitlements(account: "bob").count == 1)
    }

    @Test("turning renewal off on a member's copy turns off the purchaser's, and the copy follows")
    func autoRenewOnCopy() async throws {
        let (test, alices, bobs) = try await Self.sharedPlan()
        try await test.store.setAutoRenew(originalTransactionID: bobs.originalTransactionID, enabled: false)
        #expect(try await test.store.subscriptionRecord(originalTransactionID: alices.originalTransactionID)?.autoRenewEnabled == false)
        #expect(try await test.store.subscriptionRecord(originalTransactionID: bobs.originalTransactionID)?.autoRenewEnabled == false)
        let changed = try await test.store.notificationRecords().filter { $0.type == .didChangeRenewalStatus }
        #expect(changed.contains { $0.transaction?.originalTransactionId == String(alices.originalTransactionID) })
    }
}
