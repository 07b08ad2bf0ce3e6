import Foundation
import LocalAppStore

@main
struct LegacyShopMain {
    // Synchronous, so the app's main-actor code runs on the main thread throughout (MainThread.run), as on iOS.
    static func main() {
        print("Legacy shop — the original StoreKit API against the local App Store (Examples/Shop.storekit)\n")
        do {
            _ = try MainThread.run { try await LegacySession.run(store: try LocalStore.storeArgument()) { print("• \($0)") } }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
