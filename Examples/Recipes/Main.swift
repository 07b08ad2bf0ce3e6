import Foundation
import LocalAppStore

@main
struct RecipesMain {
    // Synchronous, so the app's main-actor code runs on the main thread throughout (MainThread.run), as on iOS.
    static func main() {
        print("Recipes — a scripted session against the local App Store (Examples/Recipes/Recipes.storekit)\n")
        do {
            _ = try MainThread.run { try await RecipesSession.run(store: try LocalStore.storeArgument()) { print("• \($0)") } }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
