import Foundation

/// A scratch folder of its own under the system's temporary directory, removed when the test ends.
public final class Scratch: Sendable {
    /// The folder, created when the scratch is made.
    public let url = FileManager.default.temporaryDirectory.appendingPathComponent("openstorekit-scratch-\(UUID().uuidString)")

    public init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }

    deinit { try? FileManager.default.removeItem(at: url) }
}
