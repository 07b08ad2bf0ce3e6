import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import HTTPClient
import StoreKitCatalog
import StoreService
import Synchronization
import TestSupport

/// The executables of this build.
enum Built {
    static func tool(_ name: String) -> URL { SharedTestData.packageRoot.appendingPathComponent(".build/debug/\(name)") }
    static var storekit: URL { tool("storekit") }
    static var available: Bool { FileManager.default.isExecutableFile(atPath: storekit.path) }
}

/// A store directory made from a `.storekit` file on a manual clock at 2026-01-01.
func makeStoreDirectory(in scratch: Scratch, name: String = "store", file: URL = ExampleShop.file,
                        bundleID: String = "com.example.shop") async throws -> URL {
    try await TestStores.directory(in: scratch, name: name, file: file, bundleID: bundleID).url
}

/// A store folder (the example shop; with a device "phone" signed in to `phoneAccount`, unless nil),
/// served in this process (with `access`) while `body` runs; the server is stopped when `body` returns or throws.
func withServedStore<Result>(phoneAccount: String? = "alice", access: ServerAccess = ServerAccess(),
                             _ body: (SimulatedAppStore, StoreServer) async throws -> Result) async throws -> Result {
    let scratch = Scratch()
    defer { withExtendedLifetime(scratch) {} }
    let store = try await TestStores.directory(in: scratch).store
    if let phoneAccount { try await store.addDevice("phone", account: phoneAccount) }
    return try await StoreServer.serving(store, access: access) { server in try await body(store, server) }
}

extension SimulatedAppStore {
    /// Registers a new In-App Purchase key and writes it to `url` as `storekit api-key create --json`
    /// prints it (`{"keyId", "issuerId", "privateKey"}`), for a backend's `--key-file`.
    func writeNewAPIKeyFile(to url: URL) throws {
        let key = try P256PrivateKey.generate()
        let record = try registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
        try JSONSerialization.data(withJSONObject: ["keyId": record.keyId, "issuerId": record.issuerId, "privateKey": try key.pemRepresentation])
            .write(to: url)
        // A key file others can read is refused (#53).
        guard chmod(url.path, 0o600) == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }
}

/// `storekit serve DIR` (or another serving command, such as `storekit backend serve`) running as its own process.
final class ServeProcess: Sendable {
    let process: Subprocess
    let url: URL
    private let errorOutput: URL

    /// Starts `storekit serve DIR` and waits for its `listening on` line.
    static func start(directory: URL, arguments: [String] = []) async throws -> ServeProcess {
        try await start(store: directory.path, arguments: arguments)
    }

    /// Starts `storekit serve` on a store folder's path or a database URL.
    static func start(store: String, arguments: [String] = []) async throws -> ServeProcess {
        try await start(command: ["serve", store, "--port", "0"] + arguments)
    }

    /// Starts a `storekit` command that serves and waits for its `listening on` line.
    static func start(command: [String]) async throws -> ServeProcess {
        let errorOutput = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString).err")
        let process = try Subprocess(Built.storekit, command, output: .pipe, error: .file(errorOutput.path))
        // The first line names the address; the page URLs follow it.
        let text = (await process.readLine() ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening on "), let url = URL(string: String(text.dropFirst("listening on ".count))) else {
            process.signal(SIGKILL)
            throw TestFailure("storekit \(command.first ?? "") did not start: \(text) \(String(decoding: (try? Data(contentsOf: errorOutput)) ?? Data(), as: UTF8.self))")
        }
        return ServeProcess(process: process, url: url, errorOutput: errorOutput)
    }

    /// Runs `body` with `storekit serve DIR`, stopped with SIGTERM when `body` returns or throws.
    static func serving<Result>(_ directory: URL, arguments: [String] = [], _ body: (ServeProcess) async throws -> Result) async throws -> Result {
        try await serving(store: directory.path, arguments: arguments, body)
    }

    /// Runs `body` with `storekit serve` on a folder's path or a database URL, stopped with SIGTERM after.
    static func serving<Result>(store: String, arguments: [String] = [], _ body: (ServeProcess) async throws -> Result) async throws -> Result {
        let server = try await start(store: store, arguments: arguments)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    private init(process: Subprocess, url: URL, errorOutput: URL) {
        self.process = process
        self.url = url
        self.errorOutput = errorOutput
    }

    var standardError: String { String(decoding: (try? Data(contentsOf: errorOutput)) ?? Data(), as: UTF8.self) }

    /// Sends a signal and waits for the process to end.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) async -> Subprocess.Termination {
        process.signal(signal)
        let ended = await process.termination()
        try? FileManager.default.removeItem(at: errorOutput)
        return ended
    }
}

/// A plain HTTP exchange for tests of the server's answers, through the package's one HTTP client.
struct Exchange {
    var status: Int
    var body: Data
    var contentType: String?
    /// Where a 3xx points (the package's client follows no redirect).
    var location: String? = nil

    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
    var errorFamily: String? { (json?["error"] as? [String: Any])?["family"] as? String }

    /// Sends a request as a program does (with the `X-OpenStoreKit-Request` header, which a web page
    /// cannot make a browser send); `asProgram: false` sends only `headers`, as a browser's form would.
    /// The timeout is long for the same reason as `RawHTTP`'s: tests check answers, not speed.
    static func send(_ method: String, _ url: URL, body: Data? = nil, headers: [(name: String, value: String)] = [],
                     asProgram: Bool = true, timeout: Duration = .seconds(180)) async throws -> Exchange {
        let marked = asProgram ? [(name: "X-OpenStoreKit-Request", value: "1")] + headers : headers
        let answer = try await HTTPClient.shared.send(HTTPClient.Request(method, url, headers: marked, body: body, timeout: timeout))
        return Exchange(status: answer.status, body: answer.body, contentType: answer.header("Content-Type"), location: answer.header("Location"))
    }

    static func send(_ method: String, _ url: URL, json: String) async throws -> Exchange {
        try await send(method, url, body: Data(json.utf8))
    }
}
