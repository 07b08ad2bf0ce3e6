import AppStoreSimulator
import AppStoreSimulatorSQLite
import Dispatch
import Foundation
import HTTPService
import StoreService

/// `storekit serve`: the store in DIR as a network service for apps, browsers, scripts and backends.
///
/// The first line on standard output is `listening on http://HOST:PORT`. Every other `storekit`
/// command keeps working on DIR meanwhile (they share the ledger). On the real clock the server holds
/// the store's lifecycle lease and plays renewals as they fall due. SIGINT or SIGTERM stops it
/// cleanly (open long polls get their answers first); `kill -9` loses nothing that was acknowledged.
///
/// It answers only for its own names (`--allowed-host` adds one) and refuses changes a web page could
/// make a browser send. Off loopback it requires an access token (`--token-file`, or one it makes and
/// prints); `--token` requires one on loopback too. See docs/security.md.
///
/// Notifications go to the store's notification URL with `--notifications-in-flight N` posts at once
/// (8 unless given), in order per original transaction, with Apple's retry schedule. `--metrics`
/// turns on `GET /metrics` (Prometheus' text format), behind the access token like the rest.
struct ServeCommand: Command {
    static let name = "serve"
    static let abstract = "Serve the store in DIR over HTTP: the device API for apps and the admin API (see docs/)."
    static let usage = "DIR [--host 127.0.0.1] [--port N] [--clock manual|real] [--notifications-in-flight N] [--metrics] " + ServerAccessOptions.usage

    var directory: String
    var host: String
    var port: UInt16
    var clock: StoreDirectory.ClockMode?
    var access: ServerAccessOptions
    var notificationsInFlight: Int
    /// Whether `GET /metrics` answers Prometheus' text format.
    var metrics: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        host = try arguments.value("--host") ?? "127.0.0.1"
        port = try arguments.value("--port", expected: "a port number from 0 to 65535") { UInt16($0) } ?? 0
        clock = try arguments.value("--clock", expected: "manual or real") { StoreDirectory.ClockMode(rawValue: $0) }
        notificationsInFlight = try arguments.value("--notifications-in-flight", expected: "a number of posts from 1 to 256") {
            Int($0).flatMap { (1...256).contains($0) ? $0 : nil }
        } ?? NotificationDeliverer.Options().inFlight
        metrics = arguments.flag("--metrics")
        access = try ServerAccessOptions(parsing: &arguments)
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let url = URL(fileURLWithPath: directory)
        let mode = try clock ?? StoreDirectory.clockMode(at: url)
        let store = try StoreDirectory.open(at: url, clockMode: mode)
        let server: StoreServer
        let authority = try StoreDirectory.authority(at: url)
        let serverAccess = try access.resolve(host: host)
        do { server = try StoreServer(store: store, authority: authority, host: host, port: port, access: serverAccess,
                                      delivery: NotificationDeliverer.Options(inFlight: notificationsInFlight), metrics: metrics) } catch {
            throw CommandFailure(error.description)
        }
        var lifecycle: Task<Void, Never>?
        if mode == .real {
            // The server plays the renewals; commands and other servers leave them to it.
            guard try await store.holdLifecycleLease(wait: false) else {
                await server.stop()
                throw CommandFailure("another process plays this store's renewals (a server or an advance is running on \(directory))")
            }
            lifecycle = Task { await Self.playDueEvents(of: store) }
        }
        console.print("listening on \(server.url.absoluteString)")
        let opening = serverAccess.token.map { "?token=\($0)" } ?? ""
        console.print("Transaction Manager: \(server.url.absoluteString)/\(opening)")
        console.print("storefront: \(server.url.absoluteString)/store\(opening)")
        access.announce(serverAccess, host: host, console: console)
        let signal = await Self.terminationSignal()
        lifecycle?.cancel()
        _ = await lifecycle?.value
        // Open long polls answer before the process exits: clients see an answer, not a reset.
        await server.stop()
        await store.releaseLifecycleLease()
        console.printError("stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM"))")
    }

    /// Plays what falls due on the real clock, a few times a second.
    static func playDueEvents(of store: SimulatedAppStore) async {
        while !Task.isCancelled {
            do {
                try await store.processDueEvents()
            } catch {
                FileHandle.standardError.write(Data("storekit serve: playing renewals failed, retrying: \(error)\n".utf8))
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Waits for SIGINT or SIGTERM and returns which came.
    static func terminationSignal() async -> Int32 {
        await withCheckedContinuation { continuation in
            let once = SignalOnce(continuation)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { once.resume(number) }
                source.resume()
                once.keep(source)
            }
        }
    }
}

/// `--token`, `--token-file FILE` and `--allowed-host NAME` of the serving commands: who may use a
/// server (see `ServerAccess` and docs/security.md).
struct ServerAccessOptions {
    static let usage = "[--token | --token-file FILE] [--allowed-host NAME…]"

    /// `--token`: require a token, made now and printed, also on loopback.
    var requiresToken: Bool
    var tokenFile: String?
    var allowedHosts: [String]

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        requiresToken = arguments.flag("--token")
        tokenFile = try arguments.value("--token-file")
        allowedHosts = try arguments.values("--allowed-host")
    }

    /// The access of a server listening on `host`: a token from the file, or a new one when the server
    /// is reachable from the network or one was asked for.
    func resolve(host: String) throws -> ServerAccess {
        var token: String?
        if let tokenFile {
            let text: String
            do { text = try String(contentsOfFile: tokenFile, encoding: .utf8) } catch {
                throw CommandFailure("cannot read the token file \(tokenFile): \(error.localizedDescription)")
            }
            token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let token, token.count >= 16, token.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw CommandFailure("the token in \(tokenFile) must be at least 16 characters, with no spaces")
            }
        } else if requiresToken || !ServerAccess.isLoopback(host) {
            token = ServerAccess.makeToken()
        }
        return ServerAccess(allowedHosts: allowedHosts, token: token)
    }

    /// Says on standard error what the server exposes, and to whom.
    func announce(_ access: ServerAccess, host: String, console: Console) {
        if !ServerAccess.isLoopback(host) {
            console.printError("the server is reachable from the network at \(host): every page and API needs its access token")
        }
        if let token = access.token, tokenFile == nil {
            console.printError("access token: \(token) (programs send Authorization: Bearer TOKEN; a browser opens a page once with ?token=TOKEN)")
        }
    }
}

/// Resumes a continuation with the first signal that arrives, and keeps the signal sources alive.
final class SignalOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Int32, Never>?
    private var sources: [any DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<Int32, Never>) { self.continuation = continuation }

    func keep(_ source: any DispatchSourceSignal) {
        lock.lock()
        sources.append(source)
        lock.unlock()
    }

    func resume(_ number: Int32) {
        lock.lock()
        let pending = continuation
        continuation = nil
        lock.unlock()
        pending?.resume(returning: number)
    }
}
