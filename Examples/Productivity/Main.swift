import Foundation
import OpenStoreKitTesting

@main
struct ProductivityMain {
    static func main() async {
        print("Productivity — a lifetime premium unlock through the test session's controls (Examples/Productivity/Productivity.storekit)\n")
        do {
            _ = try await ProductivitySession.run(store: try TestSession.storeArgument()) { print("• \($0)") }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
