import AppStoreSimulator
import AppStoreSimulatorSQL
import Dispatch
import Foundation
import HTTPService
import StoreService

/// `storekit serve`: the store in DIR as a network service for apps, browsers, scripts and backends.
///
/// The first line on standard output is `listening on http://HOST:PORT`. Every other `storekit`
/// command keeps working on DIR meanwhile (they share the ledger). A store in PostgreSQL
/// (`--database`) may be served by several servers on several machines at once. On the real clock the server holds
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
    static let declaration = CommandDeclaration("serve", group: .server, abstract: "Serve the store in DIR (or a database) over HTTP: the device API for apps and the admin API (see docs/).", arguments:
        StoreLocationOptions.arguments(folderHelp: "the store's folder") + [
        .option("--host", "ADDRESS", "the address to listen on (default 127.0.0.1; any other needs the token)"),
        .option("--port", "N", "the port (default 0: a free one, printed)"),
        .option("--clock", "manual|real", "the clock to run on (default: the store's own)"),
        .option("--notifications-in-flight", "N", "notification posts at once, 1 to 256 (default 8)"),
        .option("--notification-timeout", "SECONDS", "how long the receiver has to answer a post, 1 to 600 (default 10); a post left unanswered is a TIMED_OUT attempt"),
        .flag("--metrics", "answer GET /metrics in Prometheus' text format"),
    ] + ServerAccessOptions.arguments + LoggingOptions.arguments)

    var store: StoreLocation
    var host: String
    var port: UInt16
    var clock: StoreDirectory.ClockMode?
    var access: ServerAccessOptions
    var notificationsInFlight: Int
    var notificationTimeout: Duration
    /// Whether `GET /metrics` answers Prometheus' text format.
    var metrics: Bool
    var logging: LoggingOptions

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        host = try arguments.value("--host") ?? "127.0.0.1"
        port = try arguments.value("--port", expected: "a port number from 0 to 65535") { UInt16($0) } ?? 0
        clock = try arguments.value("--clock", expected: "manual or real") { StoreDirectory.ClockMode(rawValue: $0) }
        notificationsInFlight = try arguments.value("--notifications-in-flight", expected: "a number of posts from 1 to 256") {
            Int($0).flatMap { (1...256).contains($0) ? $0 : nil }
        } ?? NotificationDeliverer.Options().inFlight
        notificationTimeout = try arguments.value("--notification-timeout", expected: "a number of seconds from 1 to 600") {
            Int($0).flatMap { (1...600).contains($0) ? Duration.seconds($0) : nil }
        } ?? NotificationDeliverer.Options().timeout
        metrics = arguments.flag("--metrics")
        access = try ServerAccessOptions(parsing: &arguments)
        logging = try LoggingOptions(parsing: &arguments)
        store = try StoreLocationOptions.location(parsing: &arguments)
    }

    func run(console: Console) async throws {
        // Checked before anything starts (and again on the file read, by the server).
        if let tokenFile = access.tokenFile { try SecretFile.check(tokenFile, option: "--token-file", holding: "the access token") }
        let application = try await StoreApplication.start(StoreApplication.Configuration(
            store: store, host: host, port: port, clock: clock, token: access.tokenSource,
            allowedHosts: access.allowedHosts, delivery: NotificationDeliverer.Options(inFlight: notificationsInFlight, timeout: notificationTimeout), metrics: metrics),
            logger: logging.logger(label: "storekit.serve"))
        let server = application.server
        console.print("listening on \(server.url.absoluteString)")
        let opening = server.access.token.map { "?token=\($0)" } ?? ""
        console.print("Transaction Manager: \(server.url.absoluteString)/\(opening)")
        console.print("storefront: \(server.url.absoluteString)/store\(opening)")
        access.announce(server.access, host: host, console: console)
        // Open long polls answer before the process exits: clients see an answer, not a reset.
        let signal = await application.runUntilTerminated()
        console.printError("stopped (\(TerminationSignal.name(signal)))")
    }
}

/// `--token`, `--token-file FILE` and `--allowed-host NAME` of the serving commands: who may use a
/// server (see `ServerAccess` and docs/security.md).
struct ServerAccessOptions {
    static let arguments: [ArgumentDeclaration] = [
        .flag("--token", "require an access token on loopback too (made now and printed)"),
        .option("--token-file", "FILE", "the access token, from a file (16 characters or more)"),
        .repeating("--allowed-host", "NAME", "a host name clients reach the server by"),
    ]

    /// `--token`: require a token, made now and printed, also on loopback.
    var requiresToken: Bool
    var tokenFile: String?
    var allowedHosts: [String]

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        requiresToken = arguments.flag("--token")
        tokenFile = try arguments.value("--token-file")
        allowedHosts = try arguments.values("--allowed-host")
    }

    /// Where the server's token comes from.
    var tokenSource: StoreApplication.TokenSource {
        if let tokenFile { return .file(tokenFile) }
        return requiresToken ? .always : .whenExposed
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
