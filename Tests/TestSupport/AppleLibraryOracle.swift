import BlockingWork
import Foundation
import Synchronization
import Testing

/// Apple's own App Store Server Library for Python, used as the judge of interoperability.
///
/// On first use it creates a virtual environment under `.build/apple-library-venv` and installs
/// PyPI's `app-store-server-library` into it. Where that is impossible (no network, no pip) tests
/// that need it are skipped and the reason is printed.
public enum AppleLibraryOracle {
    static let package = PythonPackage("app-store-server-library", module: "appstoreserverlibrary", environment: "apple-library-venv")
    static let script = SharedTestData.packageRoot.appendingPathComponent("Tests/Interop/verify_with_apple_library.py")

    /// Why the oracle cannot run.
    public typealias OracleUnavailable = PythonPackage.Unavailable

    /// The skip reason for tests that need the oracle.
    public static let skipReason = Comment(rawValue: "Apple's Python library (pip install app-store-server-library) is not available here; the reason is printed above")

    /// The trait of tests that need the oracle: enabled when the library is installed (installing it
    /// on first use), skipped with ``skipReason`` otherwise.
    public static var required: ConditionTrait { .enabled(skipReason) { await isAvailable } }

    /// Whether the library is installed, installing it on first call.
    public static var isAvailable: Bool {
        get async {
            switch await prepare() {
            case .success: return true
            case .failure(let reason):
                print("AppleLibraryOracle: \(reason)")
                return false
            }
        }
    }

    /// The Python interpreter of the prepared environment, or why there is none. The installation
    /// (a virtual environment and pip) runs off the cooperative pool.
    public static func prepare() async -> Result<URL, OracleUnavailable> {
        await package.prepare()
    }

    /// What the library says about each signed item: `"OK"` or its `VerificationStatus` name.
    ///
    /// - Parameters:
    ///   - root: The DER root certificate the library trusts.
    ///   - items: Pairs of kind (`transaction`, `renewal`, `notification`, `app-transaction`) and JWS.
    ///   - onlineChecks: Verify as production backends do: at the real time, asking each
    ///     certificate's OCSP responder.
    public static func verify(root: Data, environment: String, bundleId: String, appAppleId: Int64?,
                              items: [(kind: String, jws: String)], onlineChecks: Bool = false) async throws -> [String] {
        let python = try await prepare().get()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("oracle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let rootFile = folder.appendingPathComponent("root.der")
        try root.write(to: rootFile)
        var arguments = [script.path] + (onlineChecks ? ["--online-checks"] : []) + [rootFile.path, environment, bundleId, appAppleId.map(String.init) ?? "-"]
        for (index, item) in items.enumerated() {
            let file = folder.appendingPathComponent("\(index).jws")
            try Data(item.jws.utf8).write(to: file)
            arguments.append("\(item.kind)=\(file.path)")
        }
        let all = arguments
        let result = try await BlockingWork.run("AppleLibraryOracle.verify") { try PythonPackage.run(python.path, all) }
        guard result.status == 0, let data = result.output.data(using: .utf8),
              let object = try JSONSerialization.jsonObject(with: Data(data.split(separator: UInt8(ascii: "\n")).last ?? [])) as? [String: String]
        else { throw OracleUnavailable(description: "the oracle script failed: \(result.output)") }
        return items.indices.map { object[folder.appendingPathComponent("\($0).jws").path] ?? "MISSING" }
    }

}
