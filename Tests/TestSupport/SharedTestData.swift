import Foundation
import Testing

/// The team's shared test data: real Apple vectors and real `.storekit` files.
///
/// It lives beside the checkout in `../shared` (or wherever `OPENSTOREKIT_SHARED` points) and is
/// never copied into the repository. Tests that need it are enabled only when it is present:
///
/// ```swift
/// @Test(.enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
/// ```
public enum SharedTestData {
    /// The root of the package checkout.
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// The shared folder, whether or not it exists.
    public static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment["OPENSTOREKIT_SHARED"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
    }()

    /// Whether the shared folder with the Apple vectors is present.
    public static let isAvailable: Bool = FileManager.default.fileExists(
        atPath: directory.appendingPathComponent("apple-vectors/SOURCES.md").path)

    /// Why shared-data tests are skipped.
    public static let skipReason = Comment(rawValue: "shared test data not found at \(directory.path); set OPENSTOREKIT_SHARED to its location")

    /// A file or folder inside the shared folder.
    public static func url(_ relativePath: String) -> URL {
        directory.appendingPathComponent(relativePath)
    }

    /// The bytes of a shared file.
    public static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: url(relativePath))
    }

    /// The text of a shared file, trimmed.
    public static func text(_ relativePath: String) throws -> String {
        String(decoding: try data(relativePath), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The files in a shared folder with a given extension (or all), sorted by name.
    public static func files(in relativePath: String, withExtension pathExtension: String? = nil) -> [URL] {
        let folder = url(relativePath)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.sorted()
            .filter { pathExtension == nil || ($0 as NSString).pathExtension == pathExtension }
            .map { folder.appendingPathComponent($0) }
    }
}

