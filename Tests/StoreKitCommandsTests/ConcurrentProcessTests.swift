import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import Testing
import TestSupport

/// Many `storekit` processes on one store at once, as a team's shell loops, servers and tests run them:
/// every acknowledged change is in the ledger exactly once, identifiers are unique, refunds stay
/// refunded, the clock never runs backwards and each update is handed out once.
@Suite(.timeLimit(.minutes(10)), .serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: BuiltTool.storekit.path), "the storekit binary is not built; run swift build first"))
struct ConcurrentProcessTests {
    static let start = TestStores.start

    /// A store directory made from the example shop on a manual clock at ``start``.
    static func makeStore(in scratch: Scratch, clock: StoreDirectory.ClockMode = .manual) async throws -> String {
        try await TestStores.directory(in: scratch, clockMode: clock).url.path
    }

    static func expectAllSucceeded(_ runs: [StoreProcess], sourceLocation: SourceLocation = #_sourceLocation) {
        for run in runs where run.status != 0 { Issue.record(Comment(rawValue: run.failureDescription), sourceLocation: sourceLocation) }
    }

    /// The acknowledged identifiers a set of `stress purchase` runs printed.
    static func acknowledged(_ runs: [StoreProcess]) -> [UInt64] {
        runs.flatMap { $0.lines.compactMap { UInt64($0) } }
    }

    @Test("8 processes × 50 purchases: every acknowledged purchase is in the ledger once, with its notification")
    func parallelPurchases() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(in: scratch)
        let runs = try await StoreProcess.parallel((0..<8).map {
            ["stress", "purchase", store, ExampleShop.gems, "--count", "50", "--account", "buyer\($0)", "--device", "phone\($0)"]
        })
        Self.expectAllSucceeded(runs)
        let acknowledged = Self.acknowledged(runs)
        #expect(acknowledged.count == 400)
        #expect(Set(acknowledged).count == acknowledged.count, "a transaction ID was handed to two buyers")
        let opened = try await TestStores.open(URL(fileURLWithPath: store))
        let ledger = try await opened.ledgerTransactions()
        #expect(ledger.map(\.id) == Array(0..<400))
        #expect(Set(acknowledged) == Set(ledger.map(\.id)))
        let notifications = try await opened.notifications()
        #expect(notifications.count == 400)
        #expect(notifications.map(\.sequence) == Array(1...400))
        #expect(try await opened.integrityProblems().isEmpty)
    }

    // Interrupted purchases: each is a pending transaction of its own (an Ask to Buy request for an item
    // already asked for answers the request waiting, so it would make one per buyer).
    @Test("8 purchasers × 30 interrupted consumables: every pending purchase is in the ledger once, none overwrites another")
    func parallelPendingPurchases() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(in: scratch)
        #expect(try await StoreProcess.run(["settings", store, "interruptedPurchasesEnabled", "true"]).status == 0)
        let runs = try await StoreProcess.parallel((0..<8).map {
            ["stress", "purchase", store, ExampleShop.gems, "--count", "30", "--account", "kid\($0)", "--device", "tablet\($0)"]
        })
        Self.expectAllSucceeded(runs)
        let acknowledged = Self.acknowledged(runs)
        #expect(acknowledged.count == 240)
        #expect(Set(acknowledged).count == 240, "a transaction ID was handed to two buyers")
        let ledger = try await TestStores.open(URL(fileURLWithPath: store)).ledgerTransactions()
        #expect(ledger.count == 240)
        #expect(Set(ledger.map(\.id)) == Set(acknowledged))
        #expect(ledger.allSatisfy { $0.state == .interrupted })
        for kid in 0..<8 { #expect(ledger.filter { $0.account == "kid\(kid)" }.count == 30) }
    }

    @Test("refund and finish of the same transaction at the same instant, 40 times: both stay")
    func refundBesideFinish() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(in: scratch)
        let opened = try await TestStores.open(URL(fileURLWithPath: store))
        var ids: [UInt64] = []
        for buyer in 0..<40 {
            guard case .success(let signed) = try await opened.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "buyer\(buyer)",
                                                                                          device: "phone\(buyer)")) else {
                throw TestFailure("expected a completed purchase")
            }
            ids.append(signed.transaction.id)
        }
        for batch in stride(from: 0, to: ids.count, by: 8) {
            let commands = ids[batch..<min(batch + 8, ids.count)].flatMap { id in [["refund", store, String(id)], ["finish", store, String(id)]] }
            Self.expectAllSucceeded(try await StoreProcess.parallel(commands))
        }
        let ledger = try await opened.ledgerTransactions()
        let unrefunded = ledger.filter { !$0.isRevoked }.map(\.id)
        let unfinished = ledger.filter { !$0.isFinished }.map(\.id)
        #expect(unrefunded.isEmpty, "refunds were undone")
        #expect(unfinished.isEmpty, "finishes were lost")
        for buyer in 0..<40 { #expect(try await opened.entitledTransactions(of: "buyer\(buyer)").isEmpty) }
        let refunds = try await opened.notifications().filter { $0.type == .refund }
        #expect(refunds.count == 40)
        #expect(Set(refunds.compactMap(\.transactionID)) == Set(ids))
    }

    @Test("new accounts in a loop beside purchases and an Ask to Buy buyer: counters only go forward, nothing is overwritten, the asks are one request")
    func accountsBesidePurchases() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(in: scratch)
        #expect(try await StoreProcess.run(["account", store, "kid", "--ask-to-buy", "on", "--device", "tablet"]).status == 0)
        async let accounts = StoreProcess.sequence((0..<25).map { ["account", store, "new\($0)", "--device", "device\($0)"] })
        async let purchases = StoreProcess.parallel((0..<3).map {
            ["stress", "purchase", store, ExampleShop.gems, "--count", "40", "--account", "buyer\($0)", "--device", "phone\($0)"]
        } + [["stress", "purchase", store, ExampleShop.potion, "--count", "40", "--account", "kid", "--device", "tablet"]])
        let (accountRuns, purchaseRuns) = try await (accounts, purchases)
        Self.expectAllSucceeded(accountRuns + purchaseRuns)
        let acknowledged = Self.acknowledged(purchaseRuns)
        let opened = try await TestStores.open(URL(fileURLWithPath: store))
        let ledger = try await opened.ledgerTransactions()
        // 120 purchases, and the kid's 40 asks for one item: one request, which every ask answered.
        #expect(ledger.map(\.id) == Array(0..<121))
        #expect(Set(acknowledged) == Set(ledger.map(\.id)))
        #expect(ledger.filter { $0.account == "kid" }.count == 1)
        #expect(ledger.filter { $0.account == "kid" }.allSatisfy { $0.state == .pendingApproval })
        #expect(ledger.filter { $0.account != "kid" }.allSatisfy { $0.state == .purchased })
        let all = try await opened.allAccounts()
        #expect(all.count == 25 + 3 + 1)
        #expect(Set(all.map(\.appTransactionID)).count == all.count, "two accounts share an app transaction ID")
        #expect(try await opened.allDevices().count == 25 + 3 + 1)
    }

    @Test("two settings changes at once: both are kept", arguments: [
        ("askToBuyEnabled", "billingGracePeriodIsEnabled"), ("shouldEnterBillingRetryOnRenewal", "interruptedPurchasesEnabled"),
        ("includesConsumablesInHistory", "failTransactionsEnabled"),
    ])
    func parallelSettings(first: String, second: String) async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(in: scratch)
        for _ in 0..<3 {
            Self.expectAllSucceeded(try await StoreProcess.parallel([["settings", store, first, "true"], ["settings", store, second, "true"]]))
            let shown = try await StoreProcess.run(["settings", store])
            for key in [first, second] {
                #expect(shown.lines.contains { $0.hasPrefix(key + " ") && $0.hasSuffix("true") }, "\(key) was lost:\n\(shown.standardOutput)")
            }
            Self.expectAllSucceeded(try await StoreProcess.parallel([["settings", store, first, "false"], ["settings", store, second, "false"]]))
            let reset = try await StoreProcess.run(["settings", store])
            for key in [first, second] { #expect(reset.lines.contains { $0.hasPrefix(key + " ") && $0.hasSuffix("false") }) }
        }
    }

    @Test("two advances at once add up; each renewal is played once; the clock never moves back")
    func parallelAdvances() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(in: scratch)
        #expect(try await StoreProcess.run(["purchase", store, ExampleShop.basicWeekly, "--account", "alice", "--device", "phone"]).status == 0)
        var previous = Self.start
        for _ in 0..<5 {
            let runs = try await StoreProcess.parallel([["advance", store, "P1M"], ["advance", store, "P1M"], ["now", store]])
            Self.expectAllSucceeded(runs)
            let now = try #require(ISO8601DateFormatter().date(from: try await StoreProcess.run(["now", store]).standardOutput
                .trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(now > previous)
            previous = now
        }
        // Ten calendar months, with the renewals one advance of P10M plays on a store of its own.
        #expect(ISO8601DateFormatter().string(from: previous) == "2026-11-01T00:00:00Z")
        let control = Scratch()
        let controlStore = try await Self.makeStore(in: control)
        #expect(try await StoreProcess.run(["purchase", controlStore, ExampleShop.basicWeekly, "--account", "alice", "--device", "phone"]).status == 0)
        #expect(try await StoreProcess.run(["advance", controlStore, "P10M"]).status == 0)
        let expected = try await TestStores.open(URL(fileURLWithPath: controlStore)).ledgerTransactions(account: "alice")
        let opened = try await TestStores.open(URL(fileURLWithPath: store))
        let chain = try await opened.ledgerTransactions(account: "alice")
        #expect(chain.count > 40)
        #expect(chain.map(\.expirationDate) == expected.map(\.expirationDate), "a period was renewed twice or skipped")
        #expect(chain.map(\.purchaseDate) == expected.map(\.purchaseDate))
        #expect(try await opened.notifications().filter { $0.type == .didRenew }.count == chain.count - 1)
    }

    @Test("several takers of one device's updates: each update is handed out once")
    func parallelUpdateTakers() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(in: scratch)
        let opened = try await TestStores.open(URL(fileURLWithPath: store))
        try await opened.addDevice("tablet", account: "alice")
        for _ in 0..<40 { _ = try await opened.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone")) }
        var handedOut: [String] = []
        for _ in 0..<3 {
            let runs = try await StoreProcess.parallel(Array(repeating: ["updates", store, "--device", "tablet"], count: 4))
            Self.expectAllSucceeded(runs)
            handedOut += runs.flatMap { $0.lines.filter { $0.hasPrefix("purchase: #") } }
            _ = try await opened.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone"))
        }
        handedOut += try await StoreProcess.run(["updates", store, "--device", "tablet"]).lines.filter { $0.hasPrefix("purchase: #") }
        #expect(handedOut.count == 43)
        #expect(Set(handedOut).count == handedOut.count, "an update was handed out twice")
    }

    @Test("a real-clock store with renewals falling due: parallel reads never fail and each renewal is played once")
    func realClockReads() async throws {
        let scratch = Scratch()
        let store = try await Self.makeStore(in: scratch, clock: .real)
        #expect(try await StoreProcess.run(["settings", store, "timeRate", "1005"]).status == 0)
        for subscriber in 0..<6 {
            let bought = try await StoreProcess.run(["purchase", store, ExampleShop.basicWeekly, "--account", "sub\(subscriber)", "--device", "phone\(subscriber)"])
            #expect(bought.status == 0, "\(bought.standardError)")
        }
        // Each reader reads at least three times, and on until the renewals have had six seconds: a
        // loaded machine can start a reader late, and a read that never ran proves nothing.
        let deadline = ContinuousClock.now + .seconds(6)
        let readers = (0..<6).map { reader in
            Task { () throws -> [StoreProcess] in
                var runs: [StoreProcess] = []
                repeat {
                    runs.append(try await StoreProcess.run(reader.isMultiple(of: 2) ? ["transactions", store] : ["entitlements", store, "--account", "sub\(reader)"]))
                } while runs.count < 3 || ContinuousClock.now < deadline
                return runs
            }
        }
        var reads: [StoreProcess] = []
        for reader in readers { reads += try await reader.value }
        #expect(reads.count > 12)
        Self.expectAllSucceeded(reads)
        let opened = try await TestStores.open(URL(fileURLWithPath: store))
        _ = try await opened.processDueEvents()
        for subscriber in 0..<6 {
            let chain = try await opened.ledgerTransactions(account: "sub\(subscriber)")
            let expirations = chain.compactMap(\.expirationDate)
            #expect(chain.filter { $0.reason == .renewal }.count >= 2, "renewals fell due while the readers ran")
            #expect(Set(expirations).count == expirations.count && expirations == expirations.sorted(), "a renewal was played twice")
        }
        #expect(try await opened.integrityProblems().isEmpty)
    }

    @Test("two processes appending the same keys to one delivery journal: each key recorded once, every line intact")
    func parallelJournal() async throws {
        let scratch = Scratch()
        let journal = scratch.path("deliveries.jsonl")
        let keys = (0..<60).map { "order-\($0)" }
        var recorded: [String] = []
        for round in 0..<3 {
            let slice = keys.map { "\($0)-\(round)" }
            let runs = try await StoreProcess.parallel([
                ["journal", "consume", journal, ExampleShop.gems] + slice,
                ["journal", "consume", journal, ExampleShop.gems] + slice.reversed(),
                ["journal", "consume", journal, ExampleShop.gems] + slice.shuffled(),
            ])
            Self.expectAllSucceeded(runs)
            recorded += runs.flatMap(\.lines)
        }
        #expect(recorded.count == 180)
        #expect(Set(recorded).count == recorded.count, "a key was delivered twice")
        let shown = try await StoreProcess.run(["journal", "show", journal])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(shown.lines.count == 180)
        let text = try String(contentsOfFile: journal, encoding: .utf8)
        for line in text.split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "a garbled line: \(line)")
        }
    }
}
