import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreService
import Testing
import TestSupport

/// Apple's verifier with online checks, as production backends run it, judges the chain at the real
/// time and asks each certificate's OCSP responder. A store on a manual clock years away from today
/// still signs what it accepts, and what it refuses once `storekit ca revoke` says so.
@Suite(.timeLimit(.minutes(10)), AppleLibraryOracle.required,
       .enabled(if: Built.available, "the storekit binary is not built; run swift build first"))
struct OnlineChecksTests {
    @Test("Apple's verifier with online checks accepts a manual-clock store's data dated years from today, and refuses it once a certificate is revoked",
          arguments: [(-2, "intermediate"), (1, "intermediate"), (-2, "leaf")])
    func onlineChecks(yearsFromToday: Int, revoked: String) async throws {
        let scratch = Scratch()
        let port = try ReservedPort()
        // The real date: what online checks judge by (the test's own clock, not the store's).
        let start = Calendar(identifier: .gregorian).date(byAdding: .year, value: yearsFromToday, to: Date())!
        let (directory, store) = try await TestStores.directory(in: scratch, environment: .sandbox, start: start,
                                                                ocspURL: "http://127.0.0.1:\(port.port)/ocsp")
        let server = try StoreServer(store: store, authority: try StoreDirectory.authority(at: directory), listeningSocket: try port.listeningSocket())
        do {
            try await store.addDevice("phone", account: "alice")
            guard case .success(let pro) = try await store.purchase(PurchaseRequest(productID: ExampleShop.pro, account: "alice", device: "phone")),
                  case .success = try await store.purchase(PurchaseRequest(productID: ExampleShop.standardMonthly, account: "alice", device: "phone"))
            else { throw TestFailure("expected purchases") }
            try await store.advanceTime(by: 40 * 86_400)
            var items: [(kind: String, jws: String)] = [("transaction", pro.jws)]
            for status in try await store.subscriptionStatuses(groupID: ExampleShop.plus, device: "phone") {
                items.append(("transaction", status.transaction.jws))
                items.append(("renewal", status.signedRenewalInfo))
            }
            items += try await store.notifications().map { ("notification", $0.signedPayload) }
            #expect(items.count >= 5)
            let root = store.rootCertificate.derRepresentation
            let accepted = try await AppleLibraryOracle.verify(root: root, environment: "Sandbox", bundleId: "com.example.shop", appAppleId: nil,
                                                             items: items, onlineChecks: true)
            #expect(accepted == Array(repeating: "OK", count: items.count), "\(zip(items.map(\.kind), accepted).filter { $0.1 != "OK" })")

            let revoke = try await ChildProcess.run(Built.storekit, ["ca", "revoke", directory.path, revoked])
            #expect(revoke.status == 0, "\(revoke.standardError)")
            let refused = try await AppleLibraryOracle.verify(root: root, environment: "Sandbox", bundleId: "com.example.shop", appAppleId: nil,
                                                            items: items, onlineChecks: true)
            #expect(refused == Array(repeating: "VERIFICATION_FAILURE", count: items.count), "\(refused)")
            // Offline, the same data still verifies: only the responder knows of the revocation.
            let offline = try await AppleLibraryOracle.verify(root: root, environment: "Sandbox", bundleId: "com.example.shop", appAppleId: nil,
                                                            items: items)
            #expect(offline == Array(repeating: "OK", count: items.count))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
