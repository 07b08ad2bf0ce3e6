import AppStoreModels
import AppStoreSigning
@testable import AppStoreSimulator
import AppStoreSimulatorSQL
import BlockingWork
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// The storage contract, run against every kind of storage: what was committed is what a reopened
/// store sees, in memory, in an SQLite file and in PostgreSQL (a throwaway cluster).
@Suite(.timeLimit(.minutes(10)))
struct LedgerStorageTests {
    enum Backend: String, CaseIterable, Sendable { case memory, sqlite, postgresql }

    /// Runs `body` with a way to open the backend's storage (`create` the first time), and what it
    /// needs (a cluster) stopped after.
    static func withStorage(_ backend: Backend, _ body: (_ open: @Sendable (_ create: Bool) async throws -> any LedgerStorage) async throws -> Void) async throws {
        let scratch = Scratch()
        switch backend {
        case .memory:
            let storage = InMemoryLedgerStorage()
            try await body { _ in storage }
        case .sqlite:
            let path = scratch.url.appendingPathComponent("ledger.sqlite").path
            try await body { create in try await SQLLedgerStorage.open(path: path, create: create) }
        case .postgresql:
            guard PostgresCluster.isAvailable else {
                print("skipped on PostgreSQL: \(PostgresCluster.skipReason)")
                return
            }
            try await PostgresCluster.with { cluster in
                let url = cluster.url
                try await body { create in try await SQLLedgerStorage.open(postgresURL: url, create: create) }
            }
        }
    }

    /// What a notification says, without its signatures: the outbox fields, the payload and the transaction it carries.
    static func content(_ notification: StoredNotification) throws -> [String] {
        var payload = try CompactJWS(notification.signedPayload).payload(as: ResponseBodyV2DecodedPayload.self)
        let transaction = try payload.data?.signedTransactionInfo.map { try CompactJWS($0).payload(as: JWSTransactionDecodedPayload.self) }
        var data = payload.data
        data?.signedTransactionInfo = nil
        let renewalInfo = try data?.signedRenewalInfo.map { String(decoding: try CompactJWS($0).payloadData, as: UTF8.self) }
        data?.signedRenewalInfo = renewalInfo
        payload.data = data
        return ["\(notification.sequence) \(notification.notificationUUID) \(notification.type) \(String(describing: notification.subtype)) \(String(describing: notification.transactionID)) \(notification.date)",
                String(decoding: try AppStoreJSON.encode(payload), as: UTF8.self),
                String(decoding: try AppStoreJSON.encode(transaction), as: UTF8.self)]
    }

    @Test("a store reopened from its storage sees every committed change", arguments: Backend.allCases)
    func reopen(backend: Backend) async throws {
        try await Self.withStorage(backend) { open in try await Self.reopen(open) }
    }

    static func reopen(_ open: @Sendable (_ create: Bool) async throws -> any LedgerStorage) async throws {
        let storage = try await open(true)
        let clock = ManualStoreClock(startingAt: TestStore.start)
        let store = try await SimulatedAppStore.create(configuration: TestStore.shopConfiguration, identity: StoreIdentity(bundleId: "com.example.shop"),
                                                 authority: TestStore.authority, storage: storage, clock: clock, identifiers: .sequential())
        try await store.addDevice("tablet", account: "alice")
        _ = try await store.purchase(PurchaseRequest(productID: Shop.newsLite, account: "alice", device: "phone"))
        _ = try await store.purchase(PurchaseRequest(productID: PurchaseTests.pro, account: "alice", device: "phone"))
        try await store.finish(1)
        try await store.setFamilyGroup("smiths", for: "alice")
        try await store.advanceTime(by: 40 * day)
        _ = try await store.takeUpdates(device: "tablet", limit: 1)
        let before = try await (store.ledgerTransactions(), store.subscriptionRecords(), store.waitingUpdates(device: "tablet"),
                                store.notifications(), store.allAccounts(), store.allDevices())

        let reopenedClock = ManualStoreClock(startingAt: .distantPast)
        let reopenedStorage = try await open(false)
        let reopened = try await SimulatedAppStore.open(storage: reopenedStorage, authority: TestStore.authority, clock: reopenedClock)
        let after = try await (reopened.ledgerTransactions(), reopened.subscriptionRecords(), reopened.waitingUpdates(device: "tablet"),
                               reopened.notifications(), reopened.allAccounts(), reopened.allDevices())
        #expect(after.0 == before.0)
        #expect(after.1 == before.1)
        #expect(after.2 == before.2)
        // Notifications are signed as they are read (ECDSA signatures differ each time): compare content.
        #expect(try after.3.map(Self.content) == before.3.map(Self.content))
        #expect(after.4 == before.4)
        #expect(after.5 == before.5)
        #expect(reopenedClock.now() == TestStore.start.addingTimeInterval(40 * day))
        #expect(try await reopened.integrityProblems().isEmpty)
        // Identifiers continue where they stopped.
        guard case .success(let next) = try await reopened.purchase(PurchaseRequest(productID: PurchaseTests.gems, account: "alice", device: "phone")) else {
            throw TestFailure("expected success")
        }
        #expect(next.transaction.id == UInt64(before.0.count))
    }

    @Test("two stores open on one ledger take turns: each sees the other's commits and settings, identifiers follow on without gaps or repeats",
          arguments: [Backend.sqlite, .postgresql])
    func twoStoresTakeTurns(backend: Backend) async throws {
        try await Self.withStorage(backend) { open in
            let first = try await SimulatedAppStore.create(configuration: TestStore.shopConfiguration, identity: StoreIdentity(bundleId: "com.example.shop"),
                                                           authority: TestStore.authority, storage: try await open(true),
                                                           clock: ManualStoreClock(startingAt: TestStore.start), identifiers: .sequential())
            let second = try await SimulatedAppStore.open(storage: try await open(false), authority: TestStore.authority,
                                                          clock: ManualStoreClock(startingAt: .distantPast))
            var ids: [UInt64] = []
            for round in 0..<12 {
                // Alternate, and now and then two in a row on one side: the other catches up on several commits.
                let store = round % 3 == 2 ? first : (round % 2 == 0 ? first : second)
                guard case .success(let bought) = try await store.purchase(PurchaseRequest(productID: PurchaseTests.gems, account: "buyer\(round % 4)", device: "phone\(round % 4)")) else {
                    throw TestFailure("purchase \(round) did not succeed")
                }
                ids.append(bought.transaction.id)
                if round == 5 { try await second.updateSettings { $0.notificationURL = "https://example.com/notifications" } }
            }
            #expect(ids == Array(0..<12))
            #expect(try await first.ledgerTransactions() == second.ledgerTransactions())
            #expect(try await first.currentSettings().notificationURL == "https://example.com/notifications")
            #expect(try await first.integrityProblems().isEmpty)
        }
    }

    @Test("storage that already holds a store is not overwritten")
    func refusesExistingStore() throws {
        let storage = InMemoryLedgerStorage()
        _ = try SimulatedAppStore.create(configuration: TestStore.shopConfiguration, identity: StoreIdentity(bundleId: "a"),
                                         authority: TestStore.authority, storage: storage, clock: ManualStoreClock(startingAt: TestStore.start))
        #expect(throws: AppStoreError.storage(.failed("the storage already holds a store"))) {
            try SimulatedAppStore.create(configuration: TestStore.shopConfiguration, identity: StoreIdentity(bundleId: "b"),
                                         authority: TestStore.authority, storage: storage, clock: ManualStoreClock(startingAt: TestStore.start))
        }
    }

    @Test("a file that is not a database, or missing, is reported and left untouched")
    func notADatabase() throws {
        let scratch = Scratch()
        let junk = scratch.url.appendingPathComponent("store.sqlite")
        let bytes = Data(repeating: 0x42, count: 4096)
        try bytes.write(to: junk)
        #expect { try SQLLedgerStorage(path: junk.path, create: false) } throws: { error in
            "\(error)".contains("is not a store database")
        }
        #expect(try Data(contentsOf: junk) == bytes)
        #expect(throws: AppStoreError.self) { try SQLLedgerStorage(path: scratch.url.appendingPathComponent("none.sqlite").path, create: false) }
        #expect(!FileManager.default.fileExists(atPath: scratch.url.appendingPathComponent("none.sqlite").path))
    }

    @Test("the in-memory lifecycle lease: a second holder is refused or waits, and is woken when the first lets go")
    func inMemoryLeaseWaitsForRelease() async throws {
        let storage = InMemoryLedgerStorage()
        let first = try #require(try storage.acquireLifecycleLease(wait: false))
        #expect(try storage.acquireLifecycleLease(wait: false) == nil, "a held lease is refused to a caller that does not wait")
        // A waiting caller on a thread of its own (as a store's serial executor is) gets it once it is released.
        let waiter = Task.detached { try await BlockingWork.run { () throws(AppStoreError) -> Bool in try storage.acquireLifecycleLease(wait: true) != nil } }
        first.release()
        #expect(try await waiter.value)
        // The waiter's lease ended with it: the next caller gets the lease at once.
        #expect(try storage.acquireLifecycleLease(wait: false) != nil)
    }

    @Test("a store directory holds the ledger and the authority, and opens again")
    func storeDirectory() async throws {
        let scratch = Scratch()
        let directory = scratch.url.appendingPathComponent("shop")
        let store = try await StoreDirectory.create(at: directory, configuration: TestStore.shopConfiguration,
                                              identity: StoreIdentity(bundleId: "com.example.shop", environment: .sandbox),
                                              clockMode: .manual, start: TestStore.start)
        _ = try await store.purchase(PurchaseRequest(productID: PurchaseTests.gems, account: "alice", device: "phone"))
        let reopened = try await TestStores.open(directory)
        #expect(try await reopened.ledgerTransactions().count == 1)
        #expect(reopened.rootCertificate == store.rootCertificate)
        #expect(try await StoreDirectory.clockMode(at: directory) == .manual)
        await #expect(throws: AppStoreError.self) {
            try await StoreDirectory.create(at: directory, configuration: TestStore.shopConfiguration, identity: StoreIdentity(bundleId: "x"),
                                            clockMode: .manual, start: TestStore.start)
        }
        await #expect(throws: AppStoreError.self) { try await StoreDirectory.open(at: scratch.url.appendingPathComponent("missing")) }
    }
}

@Suite(.timeLimit(.minutes(10)))
struct LedgerRecordCodingTests {
    /// A ledger transaction with every field set but `imported` (account with an escaped quote).
    static let fullTransaction: LedgerTransaction = {
        var transaction = LedgerTransaction(
            id: 7, originalID: 3, account: "al\"ice", device: "phone", productID: "p", productKind: .autoRenewable, subscriptionGroupID: "G",
            purchaseDate: Date(timeIntervalSince1970: 1_767_225_600.123), originalPurchaseDate: Date(timeIntervalSince1970: 1_767_225_600),
            expirationDate: Date(timeIntervalSince1970: 1_769_904_000), quantity: 1, ownership: .familyShared, familySourceID: 2,
            webOrderLineItemID: "9", appAccountToken: UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"), storefront: .unitedStates,
            price: 4_990, reason: .renewal, offer: .init(type: .promotionalOffer, id: "o", discountType: .payAsYouGo, period: "P3M"),
            state: .interrupted)
        transaction.appTransactionID = "5"
        transaction.revocation = .init(date: Date(timeIntervalSince1970: 1_768_000_000), reason: .refundedDueToIssue, type: .familyRevoke)
        transaction.isUpgraded = true
        transaction.finishedDate = Date(timeIntervalSince1970: 1_768_100_000)
        transaction.customPurchaseOptions = ["campaign": "spring \"sale\"", "fromPaywall": "true"]
        return transaction
    }()

    @Test("a ledger transaction with every field set survives its fast JSON record")
    func transactionRecordRoundTrip() throws {
        let transaction = Self.fullTransaction
        let decoded = try AppStoreJSON.decode(LedgerTransaction.self, from: AppStoreJSON.encode(transaction))
        #expect(decoded == transaction)
        let counters = LedgerCounters(nextTransactionID: 8, nextWebOrderLineItemID: 10, nextAppTransactionID: 6, nextUpdateSequence: 4, nextNotificationSequence: 11)
        #expect(try AppStoreJSON.decode(LedgerCounters.self, from: AppStoreJSON.encode(counters)) == counters)
    }

    @Test("every stored notification body a store writes (purchases, renewals, billing retry, refunds, family, tests) is read in one pass, equal to what JSONDecoder reads")
    func notificationBodiesReadInOnePass() async throws {
        let test = try TestStore()
        try await test.makeSmithsFamily(bobsPhone: true)
        try await test.buy(Shop.newsLite)
        try await test.buy(Shop.pro)
        try await test.buy(Shop.gems)
        try await test.store.advanceTime(by: 40 * day)
        try await test.store.refundTransaction(1)
        try await test.store.updateSettings { $0.shouldEnterBillingRetryOnRenewal = true }
        try await test.store.advanceTime(by: 40 * day)
        _ = try await test.store.requestTestNotification()
        let records = try test.storage.notifications(after: 0, limit: .max)
        #expect(records.count >= 6)
        let decoder = AppStoreJSON.makeDecoder()
        var kinds: Set<String> = []
        for record in records {
            let stored = try AppStoreJSON.encode(record.body)
            let fast = FlatJSONObject(stored).flatMap(NotificationRecord.Body.init(flat:))
            #expect(fast != nil, "\(record.type.rawValue) is left to JSONDecoder: \(String(decoding: stored, as: UTF8.self))")
            #expect(fast == (try decoder.decode(NotificationRecord.Body.self, from: stored)))
            #expect(fast == record.body)
            kinds.insert(record.type.rawValue)
        }
        #expect(kinds.isSuperset(of: ["SUBSCRIBED", "ONE_TIME_CHARGE", "DID_RENEW", "REFUND", "DID_FAIL_TO_RENEW", "TEST"]), "\(kinds)")
    }

    /// A subscription record with every field set, and one with every optional field absent.
    static let subscriptionRecords: [SubscriptionRecord] = {
        let offer = SubscriptionRecord.ActiveOffer(offer: .init(type: .introductoryOffer, id: nil, discountType: .freeTrial, period: "P1W"),
                                                   price: 0, period: .weeks(1), remainingPeriods: 2)
        var full = SubscriptionRecord(
            originalTransactionID: 3, account: "al\"ice", groupID: "G", productID: "p", autoRenewProductID: "q", autoRenewEnabled: false,
            state: .inGracePeriod, latestTransactionID: 9, expirationDate: Date(timeIntervalSince1970: 1_769_904_000.5),
            anchorDate: Date(timeIntervalSince1970: 1_767_225_600), anchorPeriod: .months(1), periodsSinceAnchor: 4,
            gracePeriodExpirationDate: Date(timeIntervalSince1970: 1_770_000_000), billingRetryEndDate: Date(timeIntervalSince1970: 1_771_000_000),
            expirationIntent: .billingError, priceIncrease: .pending, currentOffer: offer, queuedOffer: offer,
            recentSubscriptionStartDate: Date(timeIntervalSince1970: 1_767_225_600), appAccountToken: UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"),
            familySourceID: 2)
        full.renewalExtensions = [Date(timeIntervalSince1970: 1_768_000_000), Date(timeIntervalSince1970: 1_768_500_000)]
        var bare = full
        bare.gracePeriodExpirationDate = nil
        bare.billingRetryEndDate = nil
        bare.expirationIntent = nil
        bare.priceIncrease = nil
        bare.currentOffer = nil
        bare.queuedOffer = nil
        bare.renewalExtensions = nil
        bare.appAccountToken = nil
        bare.familySourceID = nil
        return [full, bare]
    }()

    @Test("ledger records with every field set are read in one pass, as JSONDecoder reads them; an escaped string, an array or a value outside an enumeration is left to JSONDecoder")
    func ledgerRecordsReadInOnePass() throws {
        var transaction = Self.fullTransaction
        transaction.account = "alice"
        // Custom purchase options (a map, and rare) are left to JSONDecoder: checked below.
        transaction.customPurchaseOptions = nil
        var imported = JWSTransactionDecodedPayload()
        imported.transactionId = "2000000000000002"
        imported.purchaseDate = Date(timeIntervalSince1970: 1_767_225_600)
        transaction.imported = imported
        var subscription = Self.subscriptionRecords[0]
        subscription.account = "alice"
        subscription.renewalExtensions = nil
        var renewalInfo = JWSRenewalInfoDecodedPayload()
        renewalInfo.autoRenewStatus = .on
        renewalInfo.renewalDate = Date(timeIntervalSince1970: 1_769_904_000)
        subscription.importedRenewalInfo = renewalInfo
        let decoder = AppStoreJSON.makeDecoder()

        let transactionJSON = try AppStoreJSON.encode(transaction)
        let readTransaction = FlatJSONObject(transactionJSON).flatMap(LedgerTransaction.init(flat:))
        #expect(readTransaction == transaction)
        #expect(readTransaction == (try decoder.decode(LedgerTransaction.self, from: transactionJSON)))
        let subscriptionJSON = try AppStoreJSON.encode(subscription)
        let readSubscription = FlatJSONObject(subscriptionJSON).flatMap(SubscriptionRecord.init(flat:))
        #expect(readSubscription == subscription)
        #expect(readSubscription == (try decoder.decode(SubscriptionRecord.self, from: subscriptionJSON)))
        // The samples set every optional field the reader reads: one it forgets reads as nil and fails above.
        #expect(unsetOptionalProperties(of: transaction, ignoring: ["customPurchaseOptions", "billingBox"]) == [], "the transaction sample leaves these unset")
        // Rare parts (custom options, a billing commitment) are left to JSONDecoder, and read back whole.
        var withOptions = transaction
        withOptions.customPurchaseOptions = ["campaign": "spring", "fromPaywall": "true"]
        withOptions.billing = LedgerTransaction.Billing(planType: .monthly, paymentNumber: 2, totalPayments: 12,
                                                        commitmentEnd: Date(timeIntervalSince1970: 1_798_761_600), commitmentPrice: 107_880)
        let optionsJSON = try AppStoreJSON.encode(withOptions)
        #expect(FlatJSONObject(optionsJSON).flatMap(LedgerTransaction.init(flat:)) == nil)
        #expect(try decoder.decode(LedgerTransaction.self, from: optionsJSON) == withOptions)
        let encoded = try AppStoreJSON.makeEncoder().encode(withOptions)
        // JSONEncoder writes UUIDs in upper case; AppStoreJSON in lower: the rest is byte for byte the same.
        #expect(String(decoding: optionsJSON, as: UTF8.self).lowercased() == String(decoding: encoded, as: UTF8.self).lowercased(),
                "the fast writer writes what JSONEncoder does")
        var committed = subscription
        committed.commitment = SubscriptionRecord.Commitment(paymentNumber: 2, totalPayments: 12, start: Date(timeIntervalSince1970: 1_767_225_600),
                                                             end: Date(timeIntervalSince1970: 1_798_761_600), price: 107_880, paymentPrice: 8_990)
        let committedJSON = try AppStoreJSON.encode(committed)
        #expect(FlatJSONObject(committedJSON).flatMap(SubscriptionRecord.init(flat:)) == nil)
        #expect(try decoder.decode(SubscriptionRecord.self, from: committedJSON) == committed)
        #expect(unsetOptionalProperties(of: subscription, ignoring: ["renewalExtensions", "commitmentBox"]) == [], "the subscription sample leaves these unset")

        let escaped = try AppStoreJSON.encode(Self.fullTransaction)
        #expect(FlatJSONObject(escaped) == nil)
        #expect(try AppStoreJSON.decode(LedgerTransaction.self, from: escaped) == Self.fullTransaction)
        let withExtensions = try AppStoreJSON.encode(Self.subscriptionRecords[0])
        #expect(FlatJSONObject(withExtensions).flatMap(SubscriptionRecord.init(flat:)) == nil)
        #expect(try AppStoreJSON.decode(SubscriptionRecord.self, from: withExtensions) == Self.subscriptionRecords[0])
        let unknownState = Data(String(decoding: subscriptionJSON, as: UTF8.self).replacingOccurrences(of: #""state":"inGracePeriod""#, with: #""state":"paused""#).utf8)
        #expect(FlatJSONObject(unknownState).flatMap(SubscriptionRecord.init(flat:)) == nil)
        #expect(throws: (any Error).self) { try AppStoreJSON.decode(SubscriptionRecord.self, from: unknownState) }
        let badPeriod = Data(String(decoding: subscriptionJSON, as: UTF8.self).replacingOccurrences(of: #""anchorPeriod":"P1M""#, with: #""anchorPeriod":"monthly""#).utf8)
        #expect(FlatJSONObject(badPeriod).flatMap(SubscriptionRecord.init(flat:)) == nil)
        #expect(throws: (any Error).self) { try AppStoreJSON.decode(SubscriptionRecord.self, from: badPeriod) }
    }

    @Test("a subscription record's fast JSON reads back equal, and says what JSONEncoder's says (UUIDs in lower case)", arguments: subscriptionRecords)
    func subscriptionRecordRoundTrip(_ record: SubscriptionRecord) throws {
        let fast = String(decoding: record.appStoreJSONData(), as: UTF8.self)
        #expect(try AppStoreJSON.decode(SubscriptionRecord.self, from: Data(fast.utf8)) == record)
        var foundation = String(decoding: try AppStoreJSON.makeEncoder().encode(record), as: UTF8.self)
        if let token = record.appAccountToken {
            foundation = foundation.replacingOccurrences(of: token.uuidString, with: token.uuidString.lowercased())
        }
        #expect(fast == foundation)
    }
}
