// An app whose store code expects the main thread, as code written for iOS does: its purchase observer
// captures `OperationQueue.current!` when made, after the app has awaited the store. Run through
// `MainThread.run` from a synchronous main, its main-actor code stays on the main thread; run from an
// async main (`--async-main`), Linux moves the main actor off the main thread after the first
// suspension and the observer would trap, so that run only reports what it finds.
// `MainThreadTests` runs both and reads the lines it prints.
//
//     MainThreadApp SHOP.storekit [--async-main]
import Foundation
import OpenStoreKit
import LocalAppStore

/// A purchase observer that keeps the queue it was made on, to call back on it.
final class QueueBoundObserver {
    let queue: OperationQueue

    init(queue: OperationQueue) {
        self.queue = queue
    }
}

@MainActor
func runApp(shop: URL) async throws -> String {
    let session = try LocalStore(contentsOf: shop, bundleID: "com.example.shop")
    try await session.connectDefault(device: "phone")
    let products = try await Product.products(for: ["com.example.shop.pro"])
    guard let current = OperationQueue.current else {
        return "main thread: \(Thread.isMainThread), current queue: none"
    }
    let observer = QueueBoundObserver(queue: current)
    _ = try await products[0].purchase()
    return "main thread: \(Thread.isMainThread), current queue: \(observer.queue === OperationQueue.main ? "main" : "other")"
}

let arguments = CommandLine.arguments
let shop = URL(fileURLWithPath: arguments[1])
if arguments.contains("--async-main") {
    // What an async main does: the main thread goes to Dispatch, which drains the main actor.
    Task { @MainActor in
        print((try? await runApp(shop: shop)) ?? "failed")
        exit(0)
    }
    dispatchMain()
} else {
    print(try MainThread.run { try await runApp(shop: shop) })
}
