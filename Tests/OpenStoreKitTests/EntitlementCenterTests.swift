import Foundation
import OpenStoreKit
import OpenStoreKitTesting
import Testing
import TestSupport

@Suite("Exactly-once delivery and explained entitlements", .timeLimit(.minutes(10)))
struct EntitlementCenterTests {
    static func temporaryJournalURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString).jsonl")
    }

    @Test("the same transaction through purchase, unfinished, currentEntitlements and a relaunch is delivered once")
    func deliveredOnce() async throws {
        let session = try Shop.session()
        let url = Self.temporaryJournalURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let phone = try await session.client(device: "phone")
        let center = EntitlementCenter(journal: try DeliveryJournal(fileURL: url), client: phone)
        let wizard = try #require(try await phone.products(for: [Shop.wizard]).first)
        _ = try await center.purchase(wizard)
        let transaction = try #require(await phone.latestTransaction(for: Shop.wizard)).unsafePayloadValue
        #expect(await center.process(.verified(transaction), source: "test") == .alreadyHandled(key: "grant:\(transaction.id)"))
        await center.start()
        await center.stop()
        #expect(center.journal.entries.map(\.key) == ["grant:\(transaction.id)"])
        #expect(try await collect(phone.unfinishedTransactions).isEmpty)

        // A new launch with the journal reopened from disk delivers nothing new.
        let relaunched = try await session.client(device: "phone")
        let reopened = EntitlementCenter(journal: try DeliveryJournal(fileURL: url), client: relaunched)
        await reopened.start()
        await reopened.stop()
        #expect(reopened.journal.entries.count == 1)
        #expect(await reopened.explain(Shop.wizard, now: session.now).rule == .nonConsumablePurchased)
    }

    @Test("a refund after delivery gets through and takes the product back, with the reason")
    func refundGetsThrough() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let center = EntitlementCenter(journal: DeliveryJournal(), client: phone)
        await center.start()
        let pro = try #require(try await phone.products(for: [Shop.pro]).first)
        _ = try await center.purchase(pro)
        #expect(await center.isEntitled(to: Shop.pro, now: session.now))
        let transactionID = try #require(center.journal.entries.first?.transactionID)

        var outcomes = center.outcomes.makeAsyncIterator()
        _ = await outcomes.next()  // the purchase
        try await session.refundTransaction(identifier: transactionID)
        let outcome = await outcomes.next()
        guard case .revoked(let entry)? = outcome else { Issue.record("expected a revocation, got \(String(describing: outcome))"); return }
        #expect(entry.key == "revoke:\(transactionID)")
        let explanation = await center.explain(Shop.pro, now: session.now)
        #expect(!explanation.isEntitled)
        #expect(explanation.transactionID == transactionID)
        guard case .revoked(let date, _) = explanation.rule else { Issue.record("expected revoked, got \(explanation)"); return }
        #expect(date != nil)
        await center.stop()
    }

    @Test("unverified transactions are never recorded and never finished")
    func unverifiedNeverGrants() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let center = EntitlementCenter(journal: DeliveryJournal(), client: phone)
        try await session.setSimulatedError(.verification(.invalidSignature), forAPI: .verification)
        let pro = try #require(try await phone.products(for: [Shop.pro]).first)
        _ = try await center.purchase(pro)
        #expect(center.journal.entries.isEmpty)
        #expect(!(await center.isEntitled(to: Shop.pro, now: session.now)))
        try await session.setSimulatedError(nil, forAPI: .verification)
        #expect(try await collect(phone.unfinishedTransactions).count == 1)
    }

    @Test("consumables are counted from the journal; each consumption key is used once")
    func consumables() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let center = EntitlementCenter(journal: DeliveryJournal(), client: phone)
        let gems = try #require(try await phone.products(for: [Shop.gems]).first)
        _ = try await center.purchase(gems, options: [.quantity(3)])
        _ = try await center.purchase(gems)
        #expect(center.balance(of: Shop.gems) == 4)
        #expect(try center.consume(Shop.gems, quantity: 2, key: "level-1"))
        #expect(try !center.consume(Shop.gems, quantity: 2, key: "level-1"))
        #expect(try !center.consume(Shop.gems, quantity: 3, key: "level-2"))
        #expect(center.balance(of: Shop.gems) == 2)
    }

    @Test("subscription explanations follow the group's verified statuses")
    func subscriptionExplanations() async throws {
        let session = try Shop.session()
        let phone = try await session.client(device: "phone")
        let center = EntitlementCenter(journal: DeliveryJournal(), client: phone)
        let products = try await phone.products(for: [Shop.premiumMonthly, Shop.standardMonthly])
        let standard = try #require(products.first { $0.id == Shop.standardMonthly })
        _ = try await center.purchase(standard)
        let active = await center.explain(Shop.standardMonthly, now: session.now)
        #expect(active.isEntitled)
        #expect(active.subscriptionGroupID == Shop.plus)
        #expect(active.isConfirmedByStore)
        guard case .subscriptionActive = active.rule else { Issue.record("expected active, got \(active)"); return }
        #expect(await center.explain(Shop.premiumMonthly, now: session.now).rule == .neverDelivered)
        try await session.expireSubscription(productIdentifier: Shop.standardMonthly)
        let expired = await center.explain(Shop.standardMonthly, now: session.now)
        #expect(!expired.isEntitled)
        guard case .subscriptionExpired = expired.rule else { Issue.record("expected expired, got \(expired)"); return }
    }

    @Test("a torn last line is dropped when the journal opens; a damaged middle line is an error naming it")
    func journalRecovery() throws {
        let url = Self.temporaryJournalURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let journal = try DeliveryJournal(fileURL: url)
        let entry = DeliveryJournal.Entry(key: "grant:1", kind: .grant, productID: "p", productType: "Consumable", transactionID: 1, source: "test")
        #expect(try journal.append(entry))
        #expect(try !journal.append(entry))
        let handle = try FileHandle(forWritingTo: url)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"key\":\"grant:2\",\"ki".utf8))
        try handle.close()
        let reopened = try DeliveryJournal(fileURL: url)
        #expect(reopened.entries.map(\.key) == ["grant:1"])
        #expect(try reopened.append(DeliveryJournal.Entry(key: "grant:2", kind: .grant, productID: "p", productType: "Consumable", source: "test")))
        #expect(try DeliveryJournal(fileURL: url).entries.map(\.key) == ["grant:1", "grant:2"])

        try Data("{\"key\":\"grant:1\"}\nnot json\n".utf8).write(to: url)
        #expect {
            _ = try DeliveryJournal(fileURL: url)
        } throws: { error in
            "\(error)".contains("\(url.path):1")
        }
    }
}
