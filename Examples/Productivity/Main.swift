import Foundation
import LocalAppStore

@main
struct ProductivityMain {
    // Synchronous, so the app's main-actor code runs on the main thread throughout (MainThread.run), as on iOS.
    static func main() {
        print("Productivity — a lifetime premium unlock through the test session's controls (Examples/Productivity/Productivity.storekit)\n")
        do {
            _ = try MainThread.run { try await ProductivitySession.run(store: try LocalStore.storeArgument()) { print("• \($0)") } }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
