import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

@Suite(.timeLimit(.minutes(10)))
struct PurchaseTests {
    static let gems = Shop.gems
    static let pro = Shop.pro
    static let season = Shop.seasonPass

    @Test("a consumable purchase carries every field of Apple's payload and verifies")
    func consumablePayload() async throws {
        let test = try TestStore()
        let token = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")!
        let signed = try await test.buy(Self.gems, quantity: 3, token: token)
        let payload = try test.verified(signed)
        #expect(payload.transactionId == "0")
        #expect(payload.originalTransactionId == "0")
        #expect(payload.bundleId == "com.example.shop")
        #expect(payload.productId == Self.gems)
        #expect(payload.type == .consumable)
        #expect(payload.quantity == 3)
        #expect(payload.price == 2_970)
        #expect(payload.currency == "USD")
        #expect(payload.storefront == "USA")
        #expect(payload.storefrontId == "143441")
        #expect(payload.inAppOwnershipType == .purchased)
        #expect(payload.transactionReason == .purchase)
        #expect(payload.environment == .xcode)
        #expect(payload.appAccountToken == token)
        #expect(payload.appTransactionId == "0")
        #expect(payload.purchaseDate == TestStore.start)
        #expect(payload.originalPurchaseDate == TestStore.start)
        #expect(payload.signedDate == TestStore.start)
        #expect(payload.expiresDate == nil && payload.webOrderLineItemId == nil && payload.revocationDate == nil)
        let device = try #require(try await test.store.allDevices().first { $0.name == "phone" })
        #expect(DeviceVerification.matches(payload.deviceVerification, nonce: payload.deviceVerificationNonce, deviceVerificationID: device.deviceVerificationID))
    }

    @Test("transaction identifiers count up from 0")
    func identifiersCountUp() async throws {
        let test = try TestStore()
        var ids: [UInt64] = []
        for product in [Self.gems, Self.pro, Self.season, Self.gems] { ids.append(try await test.buy(product).transaction.id) }
        #expect(ids == [0, 1, 2, 3])
    }

    @Test("StoreKit's purchase errors", arguments: [
        ("com.example.unknown", 1, PurchaseErrorCode.productUnavailable),
        (pro, 2, .invalidQuantity),
        (gems, 11, .invalidQuantity),
        (gems, 0, .invalidQuantity),
    ])
    func purchaseErrors(productID: String, quantity: Int, expected: PurchaseErrorCode) async throws {
        let test = try TestStore()
        await #expect {
            try await test.store.purchase(PurchaseRequest(productID: productID, account: "alice", device: "phone", quantity: quantity))
        } throws: { error in
            guard case .purchase(let code, _) = error as? AppStoreError else { return false }
            return code == expected
        }
        #expect(try await test.store.ledgerTransactions().isEmpty)
    }

    @Test("buying a non-consumable already owned gives it back free, with no new transaction or charge")
    func nonConsumableOwned() async throws {
        let test = try TestStore()
        let first = try await test.buy(Self.pro)
        let again = try await test.buy(Self.pro, device: "tablet")
        #expect(again.transaction.id == first.transaction.id)
        #expect(try await test.store.ledgerTransactions().count == 1)
        #expect(try await test.notificationKinds() == ["ONE_TIME_CHARGE"])
    }

    @Test("inclusion rules of all, currentEntitlements, unfinished and latest")
    func inclusionRules() async throws {
        let test = try TestStore()
        let gems = try await test.buy(Self.gems)
        let pro = try await test.buy(Self.pro)
        let season = try await test.buy(Self.season)
        let wizard = try await test.buy("com.example.shop.character.wizard")
        try await test.store.finish(gems.transaction.id)
        try await test.store.refundTransaction(wizard.transaction.id)
        let store = test.store
        #expect(TestStore.ids(try await store.allTransactions(device: "phone")) == [1, 2, 3])
        #expect(TestStore.ids(try await store.currentEntitlements(device: "phone")) == [1, 2])
        #expect(TestStore.ids(try await store.unfinishedTransactions(device: "phone")) == [1, 2, 3])
        #expect(try await store.latestTransaction(for: "com.example.shop.character.wizard", device: "phone")?.transaction.isRevoked == true)
        #expect(try await store.latestTransaction(for: "com.example.shop.potion", device: "phone") == nil)
        try await store.updateSettings { $0.includesConsumablesInHistory = true }
        #expect(TestStore.ids(try await store.allTransactions(device: "phone")) == [0, 1, 2, 3])
        _ = (pro, season)
    }

    @Test("finishing is idempotent and unknown transactions are reported")
    func finishing() async throws {
        let test = try TestStore()
        let signed = try await test.buy(Self.gems)
        try await test.store.finish(signed.transaction.id)
        try await test.store.finish(signed.transaction.id)
        #expect(try await test.store.unfinishedTransactions(account: "alice").isEmpty)
        await #expect(throws: AppStoreError.control(.noTransactionFound, "no transaction 99")) { try await test.store.finish(99) }
    }

    @Test("the update feed: other devices get the purchase, a launch re-delivers unfinished ones once")
    func updatesFeed() async throws {
        let test = try TestStore()
        try await test.store.addDevice("tablet", account: "alice")
        let bought = try await test.buy(Self.pro)
        #expect(try await test.store.takeUpdates(device: "phone").isEmpty)
        let tablet = try await test.store.takeUpdates(device: "tablet")
        #expect(tablet.map(\.transactionID) == [bought.transaction.id])
        #expect(tablet.first?.kind == .purchase)
        let payload = try await test.verifier.verifyAndDecodeTransaction(tablet[0].signedTransaction)
        let tabletDevice = try #require(try await test.store.allDevices().first { $0.name == "tablet" })
        #expect(DeviceVerification.matches(payload.deviceVerification, nonce: payload.deviceVerificationNonce, deviceVerificationID: tabletDevice.deviceVerificationID))
        #expect(try await test.store.takeUpdates(device: "tablet").isEmpty)
        #expect(try await test.store.launch(device: "phone") == 1)
        #expect(try await test.store.launch(device: "phone") == 0)
        #expect(try await test.store.takeUpdates(device: "phone").map(\.kind) == [.unfinished])
        #expect(try await test.store.launch(device: "phone") == 1)
        try await test.store.finish(bought.transaction.id)
        _ = try await test.store.takeUpdates(device: "phone")
        #expect(try await test.store.launch(device: "phone") == 0)
    }

    @Test("the update stream wakes a waiting listener")
    func updateStream() async throws {
        let test = try TestStore()
        try await test.store.addDevice("tablet", account: "alice")
        let listener = Task { () -> UInt64? in
            for try await update in test.store.updates(device: "tablet") { return update.transactionID }
            return nil
        }
        // The listener waits in the store before the purchase, so the purchase is what wakes it.
        try await eventually("the listener waiting") { await test.store.updateWaiterCount(device: "tablet") == 1 }
        let bought = try await test.buy(Self.gems)
        #expect(try await listener.value == bought.transaction.id)
    }

    @Test("Ask to Buy: pending and invisible, then delivered on approval or never on decline")
    func askToBuy() async throws {
        let test = try TestStore()
        try await test.store.configureAccount("kid", askToBuy: true)
        let outcome = try await test.store.purchase(PurchaseRequest(productID: Self.pro, account: "kid", device: "ipad"))
        guard case .pending(let id, .askToBuy) = outcome else { throw TestFailure("expected pending, got \(outcome)") }
        #expect(try await test.store.allTransactions(device: "ipad").isEmpty)
        #expect(try await test.notificationKinds().isEmpty)
        #expect(try await test.store.allTestTransactions().first?.pendingAskToBuyConfirmation == true)
        try await test.store.approveAskToBuyTransaction(id)
        let delivered = try await test.store.takeUpdates(device: "ipad")
        #expect(delivered.map(\.kind) == [.approval])
        #expect(TestStore.ids(try await test.store.currentEntitlements(device: "ipad")) == [id])
        #expect(try await test.notificationKinds() == ["ONE_TIME_CHARGE"])

        let second = try await test.store.purchase(PurchaseRequest(productID: Self.gems, account: "kid", device: "ipad"))
        guard case .pending(let declined, _) = second else { throw TestFailure("expected pending") }
        try await test.store.declineAskToBuyTransaction(declined)
        #expect(try await test.store.takeUpdates(device: "ipad").isEmpty)
        #expect(TestStore.ids(try await test.store.allTransactions(device: "ipad")) == [id])
        await #expect(throws: AppStoreError.self) { try await test.store.approveAskToBuyTransaction(declined) }
    }

    @Test("Ask to Buy for a consumable: asking again while the request waits answers the same request; approving it completes one purchase")
    func consumableAskedOnce() async throws {
        let test = try TestStore()
        try await test.store.configureAccount("kid", askToBuy: true)
        var asked: [UInt64] = []
        for _ in 0..<3 {
            let outcome = try await test.store.purchase(PurchaseRequest(productID: Self.gems, account: "kid", device: "ipad"))
            guard case .pending(let id, .askToBuy) = outcome else { throw TestFailure("expected pending, got \(outcome)") }
            asked.append(id)
        }
        #expect(Set(asked).count == 1, "one request, consolidated: \(asked)")
        #expect(try await test.store.ledgerTransactions(account: "kid").count == 1)
        try await test.store.approveAskToBuyTransaction(asked[0])
        #expect(try await test.notificationKinds() == ["ONE_TIME_CHARGE"], "one purchase")
        // Answered, the consumable may be asked for again: a new request.
        let again = try await test.store.purchase(PurchaseRequest(productID: Self.gems, account: "kid", device: "ipad"))
        guard case .pending(let next, .askToBuy) = again else { throw TestFailure("expected pending, got \(again)") }
        #expect(next != asked[0])
    }

    @Test("interrupted purchases are pending until their issue is resolved")
    func interruptedPurchase() async throws {
        let test = try TestStore()
        try await test.store.updateSettings { $0.interruptedPurchasesEnabled = true }
        let outcome = try await test.store.purchase(PurchaseRequest(productID: Self.gems, account: "alice", device: "phone"))
        guard case .pending(let id, .interrupted) = outcome else { throw TestFailure("expected interrupted, got \(outcome)") }
        #expect(try await test.store.allTestTransactions().first?.hasPurchaseIssue == true)
        try await test.store.resolveIssueForTransaction(id)
        #expect(try await test.store.takeUpdates(device: "phone").map(\.kind) == [.resolution])
        #expect(TestStore.ids(try await test.store.allTransactions(device: "phone")) == [id])
    }

    @Test("a refund revokes at once, re-delivers the transaction and sends REFUND")
    func refund() async throws {
        let test = try TestStore()
        let signed = try await test.buy(Self.pro)
        try await test.store.refundTransaction(signed.transaction.id, reason: .refundedDueToIssue)
        let update = try #require(try await test.store.takeUpdates(device: "phone").first)
        #expect(update.kind == .revocation)
        let payload = try await test.verifier.verifyAndDecodeTransaction(update.signedTransaction)
        #expect(payload.revocationReason == .refundedDueToIssue)
        #expect(payload.revocationDate == TestStore.start)
        #expect(payload.revocationType == .refundFull)
        #expect(try await test.store.currentEntitlements(device: "phone").isEmpty)
        #expect(try await test.notificationKinds() == ["ONE_TIME_CHARGE", "REFUND"])
        await #expect(throws: AppStoreError.refundRequest(.duplicateRequest, "transaction 0 is already refunded")) {
            try await test.store.refundTransaction(signed.transaction.id)
        }
    }

    @Test("a refund the customer asks for in the app sends CONSUMPTION_REQUEST for a consumable first")
    func refundRequest() async throws {
        let test = try TestStore()
        let gems = try await test.buy(Self.gems)
        try await test.store.requestRefund(gems.transaction.id, reason: .fulfillmentIssue)
        let notifications = try await test.store.notifications()
        #expect(notifications.map(\.type) == [.oneTimeCharge, .consumptionRequest, .refund])
        let request = try await test.verifier.verifyAndDecodeNotification(notifications[1].signedPayload)
        #expect(request.data?.consumptionRequestReason == .fulfillmentIssue)
        #expect(try await test.store.ledgerTransaction(gems.transaction.id)?.revocation?.reason == .refundedDueToIssue)
    }

    @Test("deleting a transaction removes it everywhere and re-enables the purchase; clearing removes all")
    func deletion() async throws {
        let test = try TestStore()
        let pro = try await test.buy(Self.pro)
        try await test.store.deleteTransaction(pro.transaction.id)
        #expect(try await test.store.allTransactions(device: "phone").isEmpty)
        let again = try await test.buy(Self.pro)
        #expect(again.transaction.id == 1)
        _ = try await test.buy(Self.gems)
        try await test.store.clearTransactions()
        #expect(try await test.store.ledgerTransactions().isEmpty)
        await #expect(throws: AppStoreError.self) { try await test.store.deleteTransaction(1) }
    }

    @Test("the storefront setting and account storefronts set price, currency and storefront")
    func storefronts() async throws {
        let test = try TestStore()
        try await test.store.updateSettings { $0.storefront = "ESP"; $0.locale = "es_ES" }
        let spanish = try test.verified(try await test.buy(Self.pro))
        #expect(spanish.storefront == "ESP" && spanish.storefrontId == "143454" && spanish.currency == "EUR" && spanish.price == 9_990)
        #expect(try await test.store.products(for: [Self.pro]).first?.displayName == "Desbloqueo Pro")
        try await test.store.configureAccount("taro", storefront: "JPN")
        let japanese = try test.verified(try await test.buy(Self.gems, account: "taro", device: "iphone"))
        #expect(japanese.storefront == "JPN" && japanese.currency == "JPY")
        try await test.store.resetToDefaultState()
        #expect(try await test.store.currentSettings().storefront == "USA")
        #expect(try await test.store.products(for: [Self.pro]).first?.displayPrice == "$9.99")
    }

    @Test("a device belongs to one account")
    func deviceBelongsToOneAccount() async throws {
        let test = try TestStore()
        _ = try await test.buy(Self.gems, account: "alice", device: "phone")
        await #expect(throws: AppStoreError.self) { try await test.buy(Self.gems, account: "bob", device: "phone") }
    }

    @Test("the app transaction carries the environment, versions and device verification, and verifies")
    func appTransaction() async throws {
        let test = try TestStore()
        try await test.store.addDevice("phone", account: "alice")
        test.clock.set(to: TestStore.start.addingTimeInterval(3_600))
        let (payload, jws) = try await test.store.appTransaction(device: "phone")
        let verified = try await test.verifier.verifyAndDecodeAppTransaction(jws)
        #expect(verified == payload)
        #expect(payload.receiptType == .xcode)
        #expect(payload.originalPurchaseDate == TestStore.start)
        #expect(payload.receiptCreationDate == TestStore.start.addingTimeInterval(3_600))
        #expect(payload.applicationVersion == "1" && payload.originalApplicationVersion == "1")
        #expect(payload.appAppleId == nil)
    }

    @Test("a failed commit changes nothing")
    func failedCommit() async throws {
        let test = try TestStore()
        test.storage.failNextCommits(1)
        await #expect(throws: AppStoreError.storage(.failed("simulated commit failure"))) { try await test.buy(Self.gems) }
        #expect(try await test.store.ledgerTransactions().isEmpty)
        #expect(try await test.store.notifications().isEmpty)
        let bought = try await test.buy(Self.gems)
        #expect(bought.transaction.id == 0)
    }

    @Test("a store reopened from its storage has the same ledger, settings and time")
    func reopening() async throws {
        let test = try TestStore()
        _ = try await test.buy(Self.pro)
        try await test.store.updateSettings { $0.askToBuyEnabled = true }
        test.clock.set(to: TestStore.start.addingTimeInterval(86_400))
        try await test.store.finish(0)
        let clock = ManualStoreClock(startingAt: .distantPast)
        let reopened = try await SimulatedAppStore.open(storage: test.storage, authority: TestStore.authority, clock: clock)
        #expect(try await reopened.ledgerTransactions().map(\.id) == [0])
        #expect(try await reopened.currentSettings().askToBuyEnabled)
        #expect(clock.now() == TestStore.start.addingTimeInterval(86_400))
        #expect(try await reopened.ledgerTransaction(0)?.isFinished == true)
    }
}
