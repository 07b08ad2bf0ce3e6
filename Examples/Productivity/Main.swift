import Foundation

@main
struct ProductivityMain {
    static func main() async {
        print("Productivity — a lifetime premium unlock through the test session's controls (Examples/Productivity/Productivity.storekit)\n")
        do {
            _ = try await ProductivitySession.run { print("• \($0)") }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
