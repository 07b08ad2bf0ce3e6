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
    static let environmentDirectory = SharedTestData.packageRoot.appendingPathComponent(".build/apple-library-venv")
    static let script = SharedTestData.packageRoot.appendingPathComponent("Tests/Interop/verify_with_apple_library.py")
    /// The installation, started by the first caller; later callers wait for the same one.
    private static let installation = Mutex<Task<Result<URL, OracleUnavailable>, Never>?>(nil)

    /// Why the oracle cannot run.
    public struct OracleUnavailable: Error, CustomStringConvertible {
        public var description: String
    }

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
        let task = installation.withLock { installation in
            if let installation { return installation }
            let task = Task { await BlockingWork.run("AppleLibraryOracle.install") { install() } }
            installation = task
            return task
        }
        return await task.value
    }

    private static func install() -> Result<URL, OracleUnavailable> {
        let python = environmentDirectory.appendingPathComponent("bin/python")
        if FileManager.default.isExecutableFile(atPath: python.path),
           (try? run(python.path, ["-c", "import appstoreserverlibrary"]))?.status == 0 {
            return .success(python)
        }
        do {
            let created = try run("/usr/bin/env", ["python3", "-m", "venv", "--clear", environmentDirectory.path])
            guard created.status == 0 else { return .failure(OracleUnavailable(description: "python3 -m venv failed: \(created.output)")) }
            let installed = try run(environmentDirectory.appendingPathComponent("bin/pip").path,
                                    ["install", "--quiet", "--disable-pip-version-check", "app-store-server-library"])
            guard installed.status == 0 else {
                return .failure(OracleUnavailable(description: "pip install app-store-server-library failed: \(installed.output)"))
            }
            return .success(python)
        } catch {
            return .failure(OracleUnavailable(description: "cannot run python3: \(error)"))
        }
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
        let result = try await BlockingWork.run("AppleLibraryOracle.verify") { try run(python.path, all) }
        guard result.status == 0, let data = result.output.data(using: .utf8),
              let object = try JSONSerialization.jsonObject(with: Data(data.split(separator: UInt8(ascii: "\n")).last ?? [])) as? [String: String]
        else { throw OracleUnavailable(description: "the oracle script failed: \(result.output)") }
        return items.indices.map { object[folder.appendingPathComponent("\($0).jws").path] ?? "MISSING" }
    }

    /// Runs a program to its end, blocking: only on threads of ``BlockingWork``.
    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = try Subprocess(URL(fileURLWithPath: executable), arguments, output: .pipe, error: .sameAsOutput)
        let output = process.readToEndBlocking()
        return (process.waitBlocking().exitCode, String(decoding: output, as: UTF8.self))
    }
}
