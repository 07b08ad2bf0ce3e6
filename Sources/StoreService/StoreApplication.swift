import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import BlockingWork
import Foundation
import HTTPService
import ServiceLogging

/// A store (a folder, or a PostgreSQL database several servers share) served as a local App Store: what `storekit serve` runs, and what tests and
/// programs that embed a store start directly.
///
/// ```swift
/// let application = try await StoreApplication.start(.init(directory: storeFolder))
/// print(application.server.url)                  // http://127.0.0.1:PORT
/// let signal = await application.runUntilTerminated()
/// ```
///
/// Starting opens the store (off the cooperative pool), works out who may use the server, starts the
/// server and notification delivery, and on the real clock takes the store's lifecycle lease and plays
/// renewals as they fall due. Stopping ends them in the reverse order: open long polls get their
/// answers first, and nothing acknowledged is lost.
public final class StoreApplication: Sendable {
    /// Where a server's access token comes from.
    public enum TokenSource: Sendable, Hashable {
        /// A new token when the server is reachable from the network; none on loopback.
        case whenExposed
        /// A new token, on loopback too (`--token`).
        case always
        /// The token in this file (`--token-file`): at least 16 characters, no spaces.
        case file(String)
    }

    /// How to serve a store.
    public struct Configuration: Sendable {
        /// Where the store is: its folder (`storekit store create DIR`) or its PostgreSQL database
        /// (`storekit store create --database URL`).
        public var store: StoreLocation
        public var host: String
        /// `0` picks a free port.
        public var port: UInt16
        /// The clock to run the store on; `nil` for the one it was created with.
        public var clock: StoreDirectory.ClockMode?
        public var token: TokenSource
        /// Host names beyond the address, `localhost` and `127.0.0.1` (`--allowed-host`).
        public var allowedHosts: [String]
        /// How notifications are posted.
        public var delivery: NotificationDeliverer.Options
        /// Whether `GET /metrics` answers Prometheus' text format.
        public var metrics: Bool

        /// Serves the store in a folder.
        public init(directory: URL, host: String = "127.0.0.1", port: UInt16 = 0, clock: StoreDirectory.ClockMode? = nil,
                    token: TokenSource = .whenExposed, allowedHosts: [String] = [], delivery: NotificationDeliverer.Options = .init(),
                    metrics: Bool = false) {
            self.init(store: .directory(directory), host: host, port: port, clock: clock, token: token, allowedHosts: allowedHosts,
                      delivery: delivery, metrics: metrics)
        }

        public init(store: StoreLocation, host: String = "127.0.0.1", port: UInt16 = 0, clock: StoreDirectory.ClockMode? = nil,
                    token: TokenSource = .whenExposed, allowedHosts: [String] = [], delivery: NotificationDeliverer.Options = .init(),
                    metrics: Bool = false) {
            self.store = store
            self.host = host
            self.port = port
            self.clock = clock
            self.token = token
            self.allowedHosts = allowedHosts
            self.delivery = delivery
            self.metrics = metrics
        }
    }

    /// Why a store could not be served.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    public let configuration: Configuration
    public let store: SimulatedAppStore
    public let server: StoreServer
    /// The clock the store runs on.
    public let clock: StoreDirectory.ClockMode
    /// Plays renewals on the real clock; `nil` on a manual one.
    private let lifecycle: Task<Void, Never>?

    private init(configuration: Configuration, store: SimulatedAppStore, server: StoreServer, clock: StoreDirectory.ClockMode,
                 lifecycle: Task<Void, Never>?) {
        self.configuration = configuration
        self.store = store
        self.server = server
        self.clock = clock
        self.lifecycle = lifecycle
    }

    /// Opens the store and starts serving it.
    ///
    /// - Parameter logger: Where the server logs failures (every `5xx`, delivery failures) and the
    ///   renewals it could not play.
    /// - Throws: The store's error when it cannot be opened, ``StartFailure`` when the token file is
    ///   unusable, the port is taken, or another process already plays the store's renewals.
    public static func start(_ configuration: Configuration, logger: Logger = .disabled) async throws -> StoreApplication {
        let location = configuration.store
        let (store, createdMode, authority) = try await location.openWithDetails(clockMode: configuration.clock)
        let mode = configuration.clock ?? createdMode
        let access = try await access(for: configuration)
        let server: StoreServer
        do {
            server = try StoreServer(store: store, authority: authority, host: configuration.host, port: configuration.port, access: access,
                                     delivery: configuration.delivery, metrics: configuration.metrics, logger: logger)
        } catch {
            throw StartFailure(description: error.description)
        }
        var lifecycle: Task<Void, Never>?
        if mode == .real {
            // The server plays the renewals; commands and other servers leave them to it. Servers that
            // share a store in a database take turns: one holds the lease and plays, the others serve
            // and take it over when its holder stops or dies.
            if try await store.holdLifecycleLease(wait: false) {
                lifecycle = Task { await playDueEvents(of: store, logger: logger) }
            } else if case .database = location {
                lifecycle = Task { await playDueEventsWhenLeased(of: store, logger: logger) }
            } else {
                await server.stop()
                throw StartFailure(description: "another process plays this store's renewals (a server or an advance is running on \(location))")
            }
        }
        return StoreApplication(configuration: configuration, store: store, server: server, clock: mode, lifecycle: lifecycle)
    }

    /// Who may use the server: the allowed hosts, and the token from where the configuration says.
    static func access(for configuration: Configuration) async throws -> ServerAccess {
        var token: String?
        switch configuration.token {
        case .file(let path):
            let text: String
            do { text = try await BlockingWork.run("token file") { try Self.readOwnerOnly(path) } } catch {
                throw StartFailure(description: "cannot read the token file \(path): \(error)")
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.count >= 16, trimmed.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw StartFailure(description: "the token in \(path) must be at least 16 characters, with no spaces")
            }
            token = trimmed
        case .always:
            token = ServerAccess.makeToken()
        case .whenExposed:
            token = ServerAccess.isLoopback(configuration.host) ? nil : ServerAccess.makeToken()
        }
        return ServerAccess(allowedHosts: configuration.allowedHosts, token: token)
    }

    /// The text of a file that holds a secret, when no other user can read the file opened (as ssh
    /// refuses a private key others can read): the mode of the file read, not of the path a moment before.
    static func readOwnerOnly(_ path: String) throws -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StartFailure(description: String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw StartFailure(description: String(cString: strerror(errno))) }
        guard status.st_mode & 0o077 == 0 else {
            throw StartFailure(description: "other users can read it, and it holds the access token: chmod 600 \(path)")
        }
        return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    }

    /// Plays what falls due on the real clock, a few times a second, until cancelled.
    private static func playDueEvents(of store: SimulatedAppStore, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await store.processDueEvents()
            } catch {
                logger.error("playing renewals failed; trying again: \(error)")
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Waits for the lifecycle lease another server holds (trying every second), then plays renewals.
    private static func playDueEventsWhenLeased(of store: SimulatedAppStore, logger: Logger) async {
        while !Task.isCancelled {
            if (try? await store.holdLifecycleLease(wait: false)) == true {
                logger.notice("this server now plays the store's renewals")
                await playDueEvents(of: store, logger: logger)
                return
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Stops serving: renewals stop being played, open long polls answer, the lease is given back.
    public func stop() async {
        lifecycle?.cancel()
        _ = await lifecycle?.value
        await server.stop()
        await store.releaseLifecycleLease()
    }

    /// Serves until SIGINT or SIGTERM, then stops, and returns the signal.
    public func runUntilTerminated() async -> Int32 {
        let signal = await TerminationSignal.next()
        await stop()
        return signal
    }
}
