import AppStoreBackend
import AppStoreModels
import AppStoreSigning
import Foundation
import HTTPService

/// Where a backend keeps its data: `sqlite:PATH` (one machine, the default) or `postgres://…` (several instances).
enum BackendDatabase {
    static func open(_ url: String) throws -> any BackendStorage {
        if url.hasPrefix("sqlite:") {
            let path = String(url.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw CommandFailure("--database sqlite: needs a file path, such as sqlite:backend.sqlite") }
            do { return try SQLBackendStorage.sqlite(path: path) } catch { throw CommandFailure(error.description) }
        }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            do { return try SQLBackendStorage.postgres(url: url) } catch { throw CommandFailure(error.description) }
        }
        throw CommandFailure("--database is sqlite:PATH or postgres://USER@HOST:PORT/DB, not \(url)")
    }
}

/// `storekit backend serve`: the entitlement backend as an HTTP service.
struct BackendServeCommand: Command {
    static let name = "backend serve"
    static let abstract = "Serve the entitlement backend: App Store notifications in, verified; customers' entitlements out."
    static let usage = """
        --database sqlite:PATH|postgres://USER@HOST:PORT/DB --bundle-id ID [--environment Xcode|Sandbox|Production] [--app-apple-id N] [--root FILE…] [--host H] [--port P]
          --root (required, repeatable): a root certificate to trust, PEM or DER: Apple Root CA G3 for Apple's data, or a local
          store's (`storekit ca export`). STOREKIT_BACKEND_DATABASE and STOREKIT_BACKEND_BUNDLE_ID stand in for the flags.
        """

    var database: String
    var bundleID: String
    var environment: AppStoreModels.Environment
    var appAppleID: Int64?
    var roots: [String]
    var host: String
    var port: UInt16

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        let environmentVariables = ProcessInfo.processInfo.environment
        guard let database = try arguments.value("--database") ?? environmentVariables["STOREKIT_BACKEND_DATABASE"] else {
            throw ValidationError("name the database with --database sqlite:PATH")
        }
        self.database = database
        guard let bundleID = try arguments.value("--bundle-id") ?? environmentVariables["STOREKIT_BACKEND_BUNDLE_ID"] else {
            throw ValidationError("name the app with --bundle-id")
        }
        self.bundleID = bundleID
        environment = try arguments.value("--environment", expected: "Xcode, Sandbox or Production") { text -> AppStoreModels.Environment? in
            ["Xcode", "Sandbox", "Production", "LocalTesting"].contains(text) ? AppStoreModels.Environment(rawValue: text) : nil
        } ?? .production
        appAppleID = try arguments.value("--app-apple-id", expected: "a number") { Int64($0) }
        roots = try arguments.values("--root")
        host = try arguments.value("--host") ?? "127.0.0.1"
        port = try arguments.value("--port", expected: "a port number from 0 to 65535") { UInt16($0) } ?? 0
    }

    func run(console: Console) async throws {
        guard !roots.isEmpty else { throw CommandFailure("give the root certificate to trust with --root FILE") }
        let certificates = try roots.map { path -> Certificate in
            do { return try Certificate(contentsOf: URL(fileURLWithPath: path)) } catch { throw CommandFailure("\(path): \(error)") }
        }
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = environment == .xcode || environment == .localTesting
        let verifier: SignedDataVerifier
        do {
            verifier = try SignedDataVerifier(rootCertificates: certificates, bundleId: bundleID, appAppleId: appAppleID,
                                              environment: environment, options: options)
        } catch { throw CommandFailure(error.description) }
        let service = BackendService(storage: try BackendDatabase.open(database), intake: SignedDataIntake(verifier: verifier),
                                     log: { line in FileHandle.standardError.write(Data("storekit backend: \(line)\n".utf8)) })
        let server: HTTPServer
        do { server = try HTTPServer(host: host, port: port) { request in await service.handle(request) } } catch {
            throw CommandFailure(error.description)
        }
        console.print("listening on \(server.url.absoluteString)")
        let signal = await ServeCommand.terminationSignal()
        server.stop()
        console.printError("stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM"))")
    }
}

/// `storekit backend key create`: a bearer key for the backend's `/v1` endpoints.
struct BackendKeyCreateCommand: Command {
    static let name = "backend key create"
    static let abstract = "Create a bearer key for the backend's /v1 endpoints; it is printed once and stored only as a digest."
    static let usage = "--database sqlite:PATH [--label TEXT]"

    var database: String
    var label: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        guard let database = try arguments.value("--database") ?? ProcessInfo.processInfo.environment["STOREKIT_BACKEND_DATABASE"] else {
            throw ValidationError("name the database with --database sqlite:PATH")
        }
        self.database = database
        label = try arguments.value("--label") ?? "service"
    }

    func run(console: Console) async throws {
        let storage = try BackendDatabase.open(database)
        var generator = SystemRandomNumberGenerator()
        let key = ServiceKeys.make(using: &generator)
        do { try storage.addKey(hash: ServiceKeys.digest(key), label: label, created: Date()) } catch { throw CommandFailure(error.description) }
        console.print(key)
    }
}
