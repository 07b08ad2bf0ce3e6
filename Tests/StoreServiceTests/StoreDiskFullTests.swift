import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import OpenStoreKit
import Testing
import TestSupport

/// The store's own disk full under `storekit serve`: purchases are refused with 507 and nothing
/// half-written, `/health` says degraded with the reason while writes fail, and all is well again
/// once there is room.
@Suite(.timeLimit(.minutes(5)), .enabled(if: Built.available, "the storekit binary is not built"))
struct StoreDiskFullTests {
    @Test("a full disk under storekit serve: purchases get 507 with the reason, /health says degraded, and both recover once there is room")
    func storeDiskFull() async throws {
        let scratch = Scratch()
        guard let disk = await SmallDisk.make(in: scratch, megabytes: 24) else { return }
        do {
            let folder = disk.folder.appendingPathComponent("store")
            let made = (url: folder, store: try await StoreLocation.directory(folder).create(configuration: TestStores.shop, identity: StoreIdentity(bundleId: "com.example.shop"),
                                                                                             clockMode: .manual, start: TestStores.start))
            try await made.store.addDevice("phone", account: "alice")
            try await ServeProcess.serving(made.url) { server in
                let transport = HTTPStoreTransport(server: server.url)
                _ = try await transport.purchase(TransportPurchaseRequest(productID: ExampleShop.gems, device: "phone"))
                let before = try await made.store.ledgerTransactions().count
                try await disk.fill()
                let refused = try await Exchange.send("POST", server.url.appendingPathComponent("/v1/devices/phone/purchases"),
                                                      json: #"{"productID": "\#(ExampleShop.gems)"}"#)
                #expect(refused.status == 507, "\(refused.status) \(String(decoding: refused.body, as: UTF8.self))")
                #expect(refused.json.flatMap { ($0["error"] as? [String: Any])?["code"] as? String } == "full")
                let health = try await Exchange.send("GET", server.url.appendingPathComponent("/health"))
                print("store /health with its disk full: \(health.status) \(String(decoding: health.body, as: UTF8.self)); a purchase: \(refused.status) \(String(decoding: refused.body, as: UTF8.self))")
                #expect(health.status == 503 && health.json?["status"] as? String == "degraded", "\(String(decoding: health.body, as: UTF8.self))")
                #expect((health.json?["reason"] as? String)?.contains("(full)") == true)
                #expect(try await made.store.ledgerTransactions().count == before, "nothing of the refused purchase was written")
                try disk.empty()
                let bought = try await Exchange.send("POST", server.url.appendingPathComponent("/v1/devices/phone/purchases"),
                                                     json: #"{"productID": "\#(ExampleShop.gems)"}"#)
                #expect(bought.status == 200, "\(String(decoding: bought.body, as: UTF8.self))")
                #expect(try await Exchange.send("GET", server.url.appendingPathComponent("/health")).status == 200)
                #expect(try await made.store.ledgerTransactions().count == before + 1)
            }
        } catch {
            await disk.unmount()
            throw error
        }
        await disk.unmount()
    }
}
