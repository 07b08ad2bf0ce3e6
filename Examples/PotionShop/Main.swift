import Foundation
import LocalAppStore

@main
struct PotionShopMain {
    // Synchronous, so the app's main-actor code runs on the main thread throughout (MainThread.run), as on iOS.
    static func main() {
        print("Potion shop — a scripted session against the local App Store (Examples/Shop.storekit)\n")
        do {
            let summary = try MainThread.run { try await PotionShopSession.run(store: try LocalStore.storeArgument()) { print("• \($0)") } }
            print("\nDone: \(summary.potions) potions, \(summary.gems) gem chest(s), wizard \(summary.hasWizard ? "unlocked" : "locked").")
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
