import Foundation
import OpenStoreKit
import LocalAppStore

@main
struct SubscriptionPlansMain {
    // Synchronous, so the app's main-actor code runs on the main thread throughout (MainThread.run), as on iOS.
    static func main() {
        let arguments = CommandLine.arguments
        // The extension: a second process that only reads the shared flag file.
        if arguments.count == 3, arguments[1] == "--extension" {
            show(PlansSession.extensionLine(for: URL(fileURLWithPath: arguments[2])))
            return
        }
        show("""
        Subscription plans — a guided year of a subscriptions app against the local App Store.
        The app (Examples/SubscriptionPlans/PlansStore.swift) is plain StoreKit 2 code: Product.products(for:),
        product.purchase(), Transaction.updates, Product.SubscriptionInfo.status(for:), AppStore.sync().
        The store sells Examples/Shop.storekit on a manual clock; everything it signs is verified on the device.

        """)
        do {
            // With --wait-for-refund the app stays open at the end until a refund made outside it arrives.
            let waitsForRefund = arguments.contains("--wait-for-refund")
            _ = try MainThread.run {
                try await PlansSession.run(store: try LocalStore.storeArgument(), readFlagInExtension: runExtension, say: { show("• \($0)") },
                                           finally: !waitsForRefund ? nil : { phone in
                                               try await phone.withCurrent { try await PlansSession.awaitRefund(seconds: 120) { show("• \($0)") } }
                                           })
            }
            show("""

            More examples: swift run PotionShop | Recipes | LegacyShop | Productivity
            The command-line store: make tour
            """)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Starts this executable again as the extension and returns what it printed.
    static func runExtension(flagFile: URL) async throws -> String {
        try await PlansSession.runExtension(executable: URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL, flagFile: flagFile)
    }
}

/// Writes a line to standard output at once (unbuffered), so a process reading this one sees each
/// step as it happens.
func show(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
