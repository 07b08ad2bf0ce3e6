import Foundation

/// A scratch folder of its own under the system's temporary directory, removed when the test ends.
public final class Scratch: Sendable {
    /// The folder, created when the scratch is made.
    public let url = FileManager.default.temporaryDirectory.appendingPathComponent("openstorekit-scratch-\(UUID().uuidString)")

    public init() { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` in the folder.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to `name` in the folder and returns its path.
    public func write(_ text: String, to name: String) throws -> String {
        try write(Data(text.utf8), to: name)
    }

    /// Writes `data` to `name` in the folder and returns its path.
    public func write(_ data: Data, to name: String) throws -> String {
        try data.write(to: url.appendingPathComponent(name))
        return path(name)
    }
}
