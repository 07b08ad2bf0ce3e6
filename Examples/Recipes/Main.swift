import Foundation
import OpenStoreKitTesting

@main
struct RecipesMain {
    static func main() async {
        print("Recipes — a scripted session against the local App Store (Examples/Recipes/Recipes.storekit)\n")
        do {
            _ = try await RecipesSession.run(store: try TestSession.storeArgument()) { print("• \($0)") }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
