// A StoreKit app that exits while it verifies: it buys three products, starts a `Transaction.updates`
// listener and four loops over `currentEntitlements`, and calls `exit(0)` a few milliseconds later,
// as every app's listener runs until the app exits. `ExitWhileVerifyingTests` runs it many times;
// it must never crash.
//
//     ExitWhileVerifying SHOP.storekit DELAY_MS [--network-first]
//
// With `--network-first`, Foundation's HTTP client (libcurl, which initialises OpenSSL for itself)
// runs before anything is verified, as in an app that talks to a served store.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OpenStoreKit
import LocalAppStore

let arguments = CommandLine.arguments
guard arguments.count >= 3, let delay = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: ExitWhileVerifying SHOP.storekit DELAY_MS [--network-first]\n".utf8))
    exit(64)
}
if arguments.contains("--network-first") {
    // Nothing listens on port 9 (discard) here: the request fails at once, after libcurl started.
    _ = try? await URLSession(configuration: .ephemeral).data(from: URL(string: "http://127.0.0.1:9/")!)
}
let session = try LocalStore(contentsOf: URL(fileURLWithPath: arguments[1]), bundleID: "com.example.shop")
let phone = try await session.client(device: "phone")
for product in try await phone.products(for: ["com.example.shop.pro", "com.example.shop.gems.small", "com.example.shop.plus.premium.monthly"]) {
    _ = try await product.purchase()
}
Task {
    for await update in phone.transactionUpdates { _ = update.unsafePayloadValue.id }
}
for _ in 0..<4 {
    Task {
        while true {
            for await entitlement in phone.currentEntitlements { _ = entitlement.unsafePayloadValue.productID }
        }
    }
}
try await Task.sleep(for: .milliseconds(delay))
exit(0)
