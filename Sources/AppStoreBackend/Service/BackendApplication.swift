import AppStoreModels
import AppStoreServerAPI
import AppStoreSigning
import Foundation
import HTTPService
import SQLDatabase
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
        /// Whose time subscriptions expire by; `nil` for the environment's default
        /// (``BackendClock/defaultSource(for:)``: the App Store's own for a local store's data).
        public var clock: BackendClock.Source?
        /// The reconciliation that runs by itself, when the backend has the App Store Server API's key.
        public var reconciliation: Reconciliation?
        /// Whose commission the proceeds figures take off.
        public var commission: CommissionProgram
        /// The currency every amount is also reported in, with its rates.
        public var reporting: ReportingCurrency?
        /// Signs the promotional offers retention rules make, with the developer's subscription offer key.
        public var offerSigner: OfferSignatureCreator?
        /// A local store's address, whose transaction pages the customer page links to.
        public var storePages: URL?

        public init(database: String, verification: Verification, host: String = "127.0.0.1", port: UInt16 = 0, allowedHosts: [String] = [],
                    metrics: Bool = false, clock: BackendClock.Source? = nil, reconciliation: Reconciliation? = nil,
                    commission: CommissionProgram = .standard, reporting: ReportingCurrency? = nil, offerSigner: OfferSignatureCreator? = nil,
                    storePages: URL? = nil) {
            self.offerSigner = offerSigner
            self.storePages = storePages
            self.commission = commission
            self.reporting = reporting
            self.database = database
            self.verification = verification
            self.host = host
            self.port = port
            self.allowedHosts = allowedHosts
            self.metrics = metrics
            self.clock = clock
            self.reconciliation = reconciliation
        }
    }

    /// A reconciliation with the App Store Server API's notification history, run by the backend
    /// itself: at start, every `interval`, and when its database answers again after an outage.
    public struct Reconciliation: Sendable {
        public var client: AppStoreServerAPIClient
        public var interval: Duration

        public init(client: AppStoreServerAPIClient, interval: Duration) {
            self.client = client
            self.interval = interval
        }
    }

    /// Why a backend could not be started.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
        /// The database's failure, when opening the database is what failed.
        public var databaseError: DatabaseError?

        public init(description: String, databaseError: DatabaseError? = nil) {
            self.description = description
            self.databaseError = databaseError
        }

        init(_ error: BackendError) {
            if case .database(let failure) = error { self.init(description: error.description, databaseError: failure) } else {
                self.init(description: error.description)
            }
        }
    }

    public let configuration: Configuration
    public let service: BackendService
    public let server: HTTPServer
    /// The reconciliation running beside the server, stopped with it.
    private let reconciling: Task<Void, Never>?

    private init(configuration: Configuration, service: BackendService, server: HTTPServer, reconciling: Task<Void, Never>?) {
        self.configuration = configuration
        self.service = service
        self.server = server
        self.reconciling = reconciling
    }

    /// Opens the database named `url` (`sqlite:PATH` or `postgres://…`), creating or migrating it.
    public static func openStorage(_ url: String) async throws -> any BackendStorage {
        if url.hasPrefix("sqlite:") {
            let path = String(url.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw StartFailure(description: "--database sqlite: needs a file path, such as sqlite:backend.sqlite") }
            do { return try await SQLBackendStorage.sqlite(path: path) } catch { throw StartFailure(error) }
        }
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            do { return try await SQLBackendStorage.postgres(url: url) } catch { throw StartFailure(error) }
        }
        throw StartFailure(description: "--database is sqlite:PATH or postgres://USER@HOST:PORT/DB, not \(url)")
    }

    /// Opens the database and starts serving.
    ///
    /// - Parameter logger: Where refusals (notices) and failures (every `5xx`, once, with its request's
    ///   id) are logged.
    public static func start(_ configuration: Configuration, logger: Logger = .disabled) async throws -> BackendApplication {
        let storage = try await openStorageWaiting(configuration.database, logger: logger)
        let intake = try configuration.verification.intake()
        let clock = BackendClock(configuration.clock ?? BackendClock.defaultSource(for: configuration.verification.environment))
        // The App Store time the database already knows of, until new signed data tells a later one.
        for seen in [try? await storage.latestNotificationDate(), try? await storage.reconciledThrough()] {
            if let seen = seen ?? nil { clock.observe(seen) }
        }
        var service = BackendService(storage: storage, intake: intake, clock: clock, logger: logger)
        service.commission = configuration.commission
        service.reporting = configuration.reporting
        service.offerSigner = configuration.offerSigner
        service.storePages = configuration.storePages
        if configuration.metrics {
            let metrics = BackendMetrics()
            metrics.observeCommits(of: storage)
            service.metrics = metrics
        }
        let schedule = configuration.reconciliation.map { reconciliation in
            ReconciliationSchedule(reconciler: NotificationReconciler(client: reconciliation.client, intake: intake, storage: storage, clock: clock),
                                   interval: reconciliation.interval, metrics: service.metrics?.registry, logger: logger)
        }
        service.reconciliation = schedule
        let server: HTTPServer
        do {
            server = try HTTPServer(host: configuration.host, port: configuration.port, logger: logger,
                                    handler: service.router(listeningAddress: configuration.host, allowedHosts: configuration.allowedHosts).handler)
        } catch {
            throw StartFailure(description: error.description)
        }
        let reconciling = schedule.map { schedule in Task { await schedule.run() } }
        return BackendApplication(configuration: configuration, service: service, server: server, reconciling: reconciling)
    }

    /// Opens the database; a PostgreSQL server that does not answer yet (down, starting, restarting,
    /// or refusing connections because all its slots are taken) is waited for, with a notice naming
    /// each new reason, and tried again with backoff, rather than ending the backend.
    static func openStorageWaiting(_ url: String, logger: Logger) async throws -> any BackendStorage {
        var delay = Duration.milliseconds(250)
        var waited = false
        var lastReason = ""
        while true {
            do {
                let storage = try await openStorage(url)
                if waited { logger.notice("the database answers: starting") }
                return storage
            } catch let failure as StartFailure where failure.databaseError?.isUnavailable == true {
                if failure.description != lastReason { logger.notice("waiting for the database to answer: \(failure.description)") }
                lastReason = failure.description
                waited = true
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
    }

    /// Stops serving: requests in progress get their answers first; the reconciliation stops.
    public func stop() async {
        reconciling?.cancel()
        await server.stop()
        await reconciling?.value
    }

    /// Serves until SIGINT or SIGTERM, then stops, and returns the signal.
    public func runUntilTerminated() async -> Int32 {
        let signal = await TerminationSignal.next()
        await stop()
        return signal
    }
}
