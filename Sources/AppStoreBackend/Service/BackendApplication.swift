import AppStoreModels
import AppStoreSigning
import Foundation
import HTTPService
import ServiceLogging

/// The entitlement backend served over HTTP: what `storekit backend serve` runs, and what tests and
/// programs that embed a backend start directly.
///
/// ```swift
/// let application = try await BackendApplication.start(.init(database: "sqlite:backend.sqlite",
///     verification: .init(bundleID: "com.example.app", environment: .xcode, rootCertificates: ["root.pem"])))
/// print(application.server.url)
/// ```
public final class BackendApplication: Sendable {
    /// How everything the backend takes in is verified.
    public struct Verification: Sendable {
        public var bundleID: String
        public var environment: AppStoreModels.Environment
        /// Required for Production data.
        public var appAppleID: Int64?
        /// Root certificates to trust, PEM or DER files: Apple Root CA G3 for Apple's data, or a local
        /// store's (`storekit ca export`).
        public var rootCertificates: [String]

        public init(bundleID: String, environment: AppStoreModels.Environment = .production, appAppleID: Int64? = nil, rootCertificates: [String]) {
            self.bundleID = bundleID
            self.environment = environment
            self.appAppleID = appAppleID
            self.rootCertificates = rootCertificates
        }

        /// The verifier of what comes in: signatures chained to the roots, for this app and environment.
        public func intake() throws -> SignedDataIntake {
            let certificates = try rootCertificates.map { path -> Certificate in
                do { return try Certificate(contentsOf: URL(fileURLWithPath: path)) } catch { throw StartFailure(description: "\(path): \(error)") }
            }
            var options = SignedDataVerifier.Options()
            options.verifiesLocalEnvironments = environment == .xcode || environment == .localTesting
            do {
                return SignedDataIntake(verifier: try SignedDataVerifier(rootCertificates: certificates, bundleId: bundleID, appAppleId: appAppleID,
                                                                         environment: environment, options: options))
            } catch {
                throw StartFailure(description: error.description)
            }
        }
    }

    /// How to serve a backend.
    public struct Configuration: Sendable {
        /// `sqlite:PATH` (one machine) or `postgres://USER@HOST:PORT/DB` (several instances).
        public var database: String
        public var verification: Verification
        public var host: String
        /// `0` picks a free port.
        public var port: UInt16
        /// Host names beyond the address, `localhost` and `127.0.0.1`.
        public var allowedHosts: [String]
        /// Whether `GET /metrics` answers Prometheus' text format (behind the backend's key).
        public var metrics: Bool

        public init(database: String, verification: Verification, host: String = "127.0.0.1", port: UInt16 = 0, allowedHosts: [String] = [],
                    metrics: Bool = false) {
            self.database = database
            self.verification = verification
            self.host = host
            self.port = port
            self.allowedHosts = allowedHosts
            self.metrics = metrics
        }
    }

    /// Why a backend could not be started.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    public let configuration: Configuration
    public let service: BackendService
    public let server: HTTPServer

    private init(configuration: Configuration, service: BackendService, server: HTTPServer) {
        self.configuration = configuration
        self.service = service
        self.server = server
    }

    /// Opens the database named `url` (`sqlite:PATH` or `postgres://…`), creating or migrating it.
    public static func openStorage(_ url: String) async throws -> any BackendStorage {
        if url.hasPrefix("sqlite:") {
            let path = String(url.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw StartFailure(description: "--database sqlite: needs a file path, such as sqlite:backend.sqlite") }
            do { return try await SQLBackendStorage.sqlite(path: path) } catch { throw StartFailure(description: error.description) }
        }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            do { return try await SQLBackendStorage.postgres(url: url) } catch { throw StartFailure(description: error.description) }
        }
        throw StartFailure(description: "--database is sqlite:PATH or postgres://USER@HOST:PORT/DB, not \(url)")
    }

    /// Opens the database and starts serving.
    ///
    /// - Parameter logger: Where refusals (notices) and failures (every `5xx`, once, with its request's
    ///   id) are logged.
    public static func start(_ configuration: Configuration, logger: Logger = .disabled) async throws -> BackendApplication {
        let storage = try await openStorage(configuration.database)
        var service = BackendService(storage: storage, intake: try configuration.verification.intake(), logger: logger)
        if configuration.metrics {
            let metrics = BackendMetrics()
            metrics.observeCommits(of: storage)
            service.metrics = metrics
        }
        let server: HTTPServer
        do {
            server = try HTTPServer(host: configuration.host, port: configuration.port, logger: logger,
                                    handler: service.router(listeningAddress: configuration.host, allowedHosts: configuration.allowedHosts).handler)
        } catch {
            throw StartFailure(description: error.description)
        }
        return BackendApplication(configuration: configuration, service: service, server: server)
    }

    /// Stops serving: requests in progress get their answers first.
    public func stop() async {
        await server.stop()
    }

    /// Serves until SIGINT or SIGTERM, then stops, and returns the signal.
    public func runUntilTerminated() async -> Int32 {
        let signal = await TerminationSignal.next()
        await stop()
        return signal
    }
}
