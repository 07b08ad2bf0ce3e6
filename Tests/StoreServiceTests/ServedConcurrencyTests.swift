import AppStoreSigning
import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import OpenStoreKit
import Synchronization
import Testing
import TestSupport

/// A served store shared by HTTP clients and command-line processes: nothing acknowledged is lost
/// or duplicated, also when the server is killed with `kill -9` in the middle of purchases.
@Suite(.timeLimit(.minutes(10)), .serialized, .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
struct ServedConcurrencyTests {
    /// Buys over HTTP until told to stop or the server goes away; returns the acknowledged transaction IDs
    /// (and counts each in `progress`).
    static func purchaseLoop(_ transport: HTTPStoreTransport, device: String, count: Int, stop: StopFlag? = nil,
                             progress: Counter? = nil) async -> [UInt64] {
        var acknowledged: [UInt64] = []
        for _ in 0..<count {
            if stop?.isSet == true { break }
            do {
                let outcome = try await transport.purchase(TransportPurchaseRequest(productID: ExampleShop.gems, device: device))
                guard case .success(let item) = outcome,
                      let payload = try? CompactJWS(item.jws).payload(as: JWSTransactionDecodedPayload.self),
                      let id = payload.transactionId.flatMap({ UInt64($0) }) else { continue }
                acknowledged.append(id)
                progress?.increment()
            } catch {
                break
            }
        }
        return acknowledged
    }

    @Test("CLI purchasers and HTTP clients on one served store: acknowledged == ledger, no duplicates, integrity ok")
    func cliBesideHTTP() async throws {
        let scratch = Scratch()
        let directory = try await makeStoreDirectory(in: scratch)
        try await ServeProcess.serving(directory) { server in
            let transport = HTTPStoreTransport(server: server.url)
            for device in 0..<4 { try await transport.register(device: "web\(device)", account: "web\(device)") }
            let cli = (0..<4).map { index in
                Task { () throws -> [UInt64] in
                    let run = try await ChildProcess.run(Built.storekit, ["stress", "purchase", directory.path, ExampleShop.gems, "--count", "40",
                                                                         "--account", "cli\(index)", "--device", "cli\(index)"])
                    return run.standardOutput.split(separator: "\n").compactMap { UInt64($0) }
                }
            }
            let http = (0..<4).map { index in Task { await Self.purchaseLoop(transport, device: "web\(index)", count: 40) } }
            var acknowledged: [UInt64] = []
            for task in cli { acknowledged += try await task.value }
            for task in http { acknowledged += await task.value }
            #expect(acknowledged.count == 320)
            #expect(Set(acknowledged).count == acknowledged.count, "a transaction ID was handed out twice")
            let store = try await TestStores.open(directory)
            let ledger = try await store.ledgerTransactions()
            #expect(Set(ledger.map(\.id)) == Set(acknowledged))
            #expect(try await store.notifications().count == ledger.count)
            #expect(try await store.integrityProblems().isEmpty)
        }
    }

    @Test("kill -9 of storekit serve while 8 clients purchase over HTTP, 20 times: every acknowledged purchase is in the ledger once")
    func killNineServe() async throws {
        let scratch = Scratch()
        let directory = try await makeStoreDirectory(in: scratch)
        var random = SystemRandomNumberGenerator()
        var acknowledged: [UInt64] = []
        let progress = Counter()
        for round in 0..<20 {
            let server = try await ServeProcess.start(directory: directory)
            let transport = HTTPStoreTransport(server: server.url)
            for device in 0..<8 { try await transport.register(device: "client\(device)", account: "buyer\(device)") }
            let stop = StopFlag()
            let before = progress.value
            let clients = (0..<8).map { index in
                Task { await Self.purchaseLoop(transport, device: "client\(index)", count: 10_000, stop: stop, progress: progress) }
            }
            // Purchases are under way (eight acknowledged this round); the kill then comes at a random moment.
            try await eventually("eight purchases acknowledged in round \(round)") { progress.value >= before + 8 }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...200, using: &random)))
            let ended = await server.stop(signal: SIGKILL)
            stop.set()
            for client in clients { acknowledged += await client.value }
            #expect(ended.wasSignaled, "round \(round)")
        }
        #expect(acknowledged.count >= 160)
        #expect(Set(acknowledged).count == acknowledged.count, "an identifier was acknowledged twice")
        let store = try await TestStores.open(directory)
        let ids = try await store.ledgerTransactions().map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(Set(acknowledged).isSubset(of: Set(ids)), "acknowledged purchases are missing")
        #expect(ids == Array(0..<UInt64(ids.count)))
        #expect(try await store.integrityProblems().isEmpty)
        print("kill -9 of storekit serve: \(acknowledged.count) acknowledged purchases over 20 kills, \(ids.count) in the ledger")
    }
}

/// A count several tasks add to and others read.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func increment() { count.add(1, ordering: .releasing) }
}

/// A flag one task sets and others read.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}

/// On the real clock `storekit serve` plays renewals in the background as the `.storekit` time rate
/// makes them fall due, and the app hears of them through `Transaction.updates`.
@Suite(.timeLimit(.minutes(10)), .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
struct RealClockServeTests {
    @Test("serve --clock real renews a subscription every two seconds (time rate 1005) and the app's updates see it")
    func renewsInTheBackground() async throws {
        let scratch = Scratch()
        let directory = try await makeStoreDirectory(in: scratch)
        #expect(try await ChildProcess.run(Built.storekit, ["settings", directory.path, "timeRate", "1005"]).status == 0)
        try await ServeProcess.serving(directory, arguments: ["--clock", "real"]) { server in
            let phone = try await StoreClient.connect(server: server.url, device: "phone", account: "alice")
            let weekly = try #require(try await phone.products(for: [ExampleShop.basicWeekly]).first)
            guard case .success(.verified(let bought)) = try await weekly.purchase() else { throw TestFailure("expected a verified purchase") }
            let renewal = try await firstElement(of: phone.transactionUpdates)
            guard case .verified(let renewed) = renewal else { throw TestFailure("the renewal did not verify") }
            #expect(renewed.originalID == bought.id)
            #expect(renewed.id != bought.id)
            #expect(renewed.purchaseDate >= bought.expirationDate ?? .distantFuture)
            // A command beside the server reads without playing renewals itself, and does not fail.
            #expect(try await ChildProcess.run(Built.storekit, ["transactions", directory.path, "--account", "alice"]).status == 0)
        }
    }
}
