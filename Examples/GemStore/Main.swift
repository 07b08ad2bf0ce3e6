import Foundation
import LocalAppStore

@main
struct GemStoreMain {
    // Synchronous, so the app's main-actor code runs on the main thread throughout (MainThread.run), as on iOS.
    static func main() {
        print("Gem store — buying through the store views, counting in Transaction.updates (Examples/Shop.storekit)\n")
        do {
            let summary = try MainThread.run { try await GemStoreSession.run(store: try LocalStore.storeArgument()) { print("• \($0)") } }
            print("\nDone: \(summary.gems) gems, plan \(summary.currentPlan ?? "none").")
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
