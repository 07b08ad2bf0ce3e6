import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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
                        bundleID: String = "com.example.shop") throws -> URL {
    let directory = scratch.url.appendingPathComponent(name)
    _ = try StoreDirectory.create(at: directory, configuration: try StoreKitConfiguration.load(contentsOf: file).configuration,
                                  identity: StoreIdentity(bundleId: bundleID), clockMode: .manual,
                                  start: Date(timeIntervalSince1970: 1_767_225_600))
    return directory
}

/// `storekit serve DIR` (or another serving command, such as `storekit backend serve`) running as its own process.
final class ServeProcess: @unchecked Sendable {
    let process: Subprocess
    let url: URL
    private let errorOutput: URL

    /// Starts `storekit serve DIR` and waits for its `listening on` line.
    convenience init(directory: URL, arguments: [String] = []) throws {
        try self.init(command: ["serve", directory.path, "--port", "0"] + arguments)
    }

    /// Starts a `storekit` command that serves and waits for its `listening on` line.
    init(command: [String]) throws {
        errorOutput = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString).err")
        process = try Subprocess(Built.storekit, command, output: .pipe, error: .file(errorOutput.path))
        // The first line names the address; the page URLs follow it.
        let text = (process.readLine() ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening on "), let url = URL(string: String(text.dropFirst("listening on ".count))) else {
            process.signal(SIGKILL)
            throw ServeFailure("storekit serve did not start: \(text) \(String(decoding: (try? Data(contentsOf: errorOutput)) ?? Data(), as: UTF8.self))")
        }
        self.url = url
    }

    var standardError: String { String(decoding: (try? Data(contentsOf: errorOutput)) ?? Data(), as: UTF8.self) }

    /// Sends a signal and waits for the process to end.
    func stop(signal: Int32 = SIGTERM) {
        process.signal(signal)
        process.wait()
        try? FileManager.default.removeItem(at: errorOutput)
    }
}

struct ServeFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The tests' own HTTP client: not `URLSession.shared`, whose few connections per host (every test
/// server is on 127.0.0.1) other tests' long polls could hold, delaying unrelated requests by a minute.
enum TestHTTP {
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 256
        return URLSession(configuration: configuration)
    }()
}

/// A plain HTTP exchange for tests of the server's answers.
struct Exchange {
    var status: Int
    var body: Data
    var contentType: String?

    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    var errorCode: String? { (json?["error"] as? [String: Any])?["code"] as? String }
    var errorFamily: String? { (json?["error"] as? [String: Any])?["family"] as? String }

    static func send(_ method: String, _ url: URL, body: Data? = nil) async throws -> Exchange {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        let (data, response) = try await TestHTTP.session.detachedData(for: request)
        let http = response as? HTTPURLResponse
        return Exchange(status: http?.statusCode ?? 0, body: data, contentType: http?.value(forHTTPHeaderField: "Content-Type"))
    }

    static func send(_ method: String, _ url: URL, json: String) async throws -> Exchange {
        try await send(method, url, body: Data(json.utf8))
    }
}
