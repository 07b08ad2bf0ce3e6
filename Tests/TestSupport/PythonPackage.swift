import BlockingWork
import Foundation
import Synchronization

/// A package from PyPI in a virtual environment of its own under `.build/`, installed on first use
/// (off the cooperative pool) and shared by every test that asks; when it cannot be installed (no
/// network, no pip), the reason.
public final class PythonPackage: Sendable {
    /// Why a package is not available.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// The pip requirement (`app-store-server-library`).
    public let requirement: String
    /// A module whose import proves the installation works.
    public let module: String
    /// The virtual environment.
    public let directory: URL
    /// What pip is told beside the requirement (`--no-deps` for a package wanted for a file it ships).
    public let pipOptions: [String]
    private let installation = Mutex<Task<Result<URL, Unavailable>, Never>?>(nil)

    public init(_ requirement: String, module: String, environment: String, pipOptions: [String] = []) {
        self.requirement = requirement
        self.module = module
        self.pipOptions = pipOptions
        directory = SharedTestData.packageRoot.appendingPathComponent(".build/\(environment)")
    }

    /// The environment's Python interpreter, or why there is none. The first caller installs; later
    /// callers wait for the same installation.
    public func prepare() async -> Result<URL, Unavailable> {
        let task = installation.withLock { installation in
            if let installation { return installation }
            let task = Task { [self] in await BlockingWork.run("PythonPackage.install \(requirement)") { self.install() } }
            installation = task
            return task
        }
        return await task.value
    }

    private func install() -> Result<URL, Unavailable> {
        let python = directory.appendingPathComponent("bin/python")
        // Found, not imported: a package installed without its dependencies for a file it ships is there too.
        let found = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('\(module)') else 1)"
        if FileManager.default.isExecutableFile(atPath: python.path), (try? Self.run(python.path, ["-c", found]))?.status == 0 {
            return .success(python)
        }
        do {
            let created = try Self.run("/usr/bin/env", ["python3", "-m", "venv", "--clear", directory.path])
            guard created.status == 0 else { return .failure(Unavailable(description: "python3 -m venv failed: \(created.output)")) }
            let installed = try Self.run(directory.appendingPathComponent("bin/pip").path,
                                         ["install", "--quiet", "--disable-pip-version-check"] + pipOptions + [requirement])
            guard installed.status == 0 else { return .failure(Unavailable(description: "pip install \(requirement) failed: \(installed.output)")) }
            return .success(python)
        } catch {
            return .failure(Unavailable(description: "cannot run python3: \(error)"))
        }
    }

    /// Runs a program to its end, blocking: only on threads of ``BlockingWork``.
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = try Subprocess(URL(fileURLWithPath: executable), arguments, output: .pipe, error: .sameAsOutput)
        let output = process.readToEndBlocking()
        return (process.waitBlocking().exitCode, String(decoding: output, as: UTF8.self))
    }
}

/// axe-core, the accessibility checker, as PyPI's `axe-playwright-python` ships it (never copied into
/// the repository): the browser tests inject its script into each page they check.
public enum AxeCore {
    /// `axe-playwright-python` ships a current axe-core (4.x; `axe-selenium-python`'s is 3.1 from 2018);
    /// only its script is used, so Playwright itself is not installed.
    static let package = PythonPackage("axe-playwright-python", module: "axe_playwright_python", environment: "axe-current-venv",
                                       pipOptions: ["--no-deps"])

    /// The path of `axe.min.js`, or why it is not available.
    public static func script() async -> Result<URL, PythonPackage.Unavailable> {
        switch await package.prepare() {
        case .failure(let reason): return .failure(reason)
        case .success:
            let lib = package.directory.appendingPathComponent("lib")
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
            for version in versions where version.hasPrefix("python") {
                let script = lib.appendingPathComponent("\(version)/site-packages/axe_playwright_python/axe.min.js")
                if FileManager.default.fileExists(atPath: script.path) { return .success(script) }
            }
            return .failure(PythonPackage.Unavailable(description: "axe-playwright-python has no axe.min.js"))
        }
    }
}
