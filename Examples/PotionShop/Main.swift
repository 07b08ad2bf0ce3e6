import Foundation
import OpenStoreKitTesting

@main
struct PotionShopMain {
    static func main() async {
        print("Potion shop — a scripted session against the local App Store (Examples/Shop.storekit)\n")
        do {
            let summary = try await PotionShopSession.run(store: try TestSession.storeArgument()) { print("• \($0)") }
            print("\nDone: \(summary.potions) potions, \(summary.gems) gem chest(s), wizard \(summary.hasWizard ? "unlocked" : "locked").")
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
