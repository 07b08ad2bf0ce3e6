import Foundation
import LocalAppStore

/// Finds a `.storekit` file by name in the test's resources, as `SKTestSession(configurationFileNamed:)`
/// finds it in the test bundle on Apple platforms.
///
/// SwiftPM on Linux copies each target's resources into a folder beside the built binaries, named
/// `<package>_<target>.resources`. The calling target's folder is searched first (its name ends in the
/// module name of the caller's `#fileID`), then every other resource folder there, a few levels deep
/// for resources copied as folders.
enum ConfigurationFileLocator {
    /// How deep inside a resource folder a file is looked for.
    static let depth = 3

    static func locate(_ name: String, callerFileID: String) throws -> URL {
        let fileName = name.hasSuffix(".storekit") ? name : "\(name).storekit"
        let module = callerFileID.split(separator: "/").first.map(String.init) ?? ""
        let folders = resourceFolders()
        let own = folders.filter { $0.deletingPathExtension().lastPathComponent.hasSuffix("_\(module)") }
        for group in [own, folders.filter { !own.contains($0) }] {
            let found = group.flatMap { find(fileName, in: $0, depth: depth) }
            if found.count == 1 { return found[0] }
            if found.count > 1 {
                throw SKTestError(code: .fileNotFound, message: "several configuration files are named \(fileName): "
                                  + found.map(\.path).joined(separator: ", ") + "; pass one with SKTestSession(contentsOf:)")
            }
        }
        let searched = folders.isEmpty ? "no resource folders beside \(binaryFolders().map(\.path).joined(separator: ", "))"
                                       : folders.map(\.path).joined(separator: ", ")
        throw SKTestError(code: .fileNotFound, message: "no configuration file named \(fileName) in the test's resources (\(searched)); "
                          + "add it to the test target with resources: [.copy(\"\(fileName)\")] in Package.swift")
    }

    /// The folders the running binary may sit in: the main bundle's, and the executable's own.
    static func binaryFolders() -> [URL] {
        var folders = [Bundle.main.bundleURL.standardizedFileURL]
        if let executable = Bundle.main.executableURL?.deletingLastPathComponent().standardizedFileURL, !folders.contains(executable) {
            folders.append(executable)
        }
        return folders
    }

    /// Every resource folder beside the binary, and every loaded bundle's resources, sorted by path.
    static func resourceFolders() -> [URL] {
        var folders = Set<URL>()
        for folder in binaryFolders() {
            let entries = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
            for entry in entries where ["resources", "bundle"].contains(entry.pathExtension) { folders.insert(entry.standardizedFileURL) }
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "resources" {
            folders.insert(bundle.bundleURL.standardizedFileURL)
        }
        return folders.sorted { $0.path < $1.path }
    }

    /// The files named `fileName` in `folder` and its subfolders, down to `depth` levels.
    static func find(_ fileName: String, in folder: URL, depth: Int) -> [URL] {
        let candidate = folder.appendingPathComponent(fileName)
        var found = FileManager.default.fileExists(atPath: candidate.path) ? [candidate] : []
        guard depth > 0 else { return found }
        let entries = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.isDirectoryKey])) ?? []
        for entry in entries.sorted(by: { $0.path < $1.path })
        where (try? entry.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
            found += find(fileName, in: entry, depth: depth - 1)
        }
        return found
    }
}
