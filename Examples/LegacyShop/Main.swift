import Foundation
import OpenStoreKitTesting

@main
struct LegacyShopMain {
    static func main() async {
        print("Legacy shop — the original StoreKit API against the local App Store (Examples/Shop.storekit)\n")
        do {
            _ = try await LegacySession.run(store: try TestSession.storeArgument()) { print("• \($0)") }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
