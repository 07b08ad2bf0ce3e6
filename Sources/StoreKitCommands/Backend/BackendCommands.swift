import AppStoreBackend
import AppStoreModels
import AppStoreServerAPI
import AppStoreSigning
import Foundation
import HTTPService
import StoreService

/// Where a backend keeps its data: `sqlite:PATH` (one machine, the default) or `postgres://…` (several instances).
enum BackendDatabase {
    /// `--database URL`, `--database-file FILE` (the URL in a file only its owner can read, so a
    /// password never enters the command line), or `STOREKIT_BACKEND_DATABASE` when neither is given.
    static func url(parsing arguments: inout ArgumentScanner) throws(ValidationError) -> String {
        if let path = try arguments.value("--database-file") {
            return try url(inFile: path)
        }
        if let database = try arguments.value("--database") {
            try refusePassword(in: database, given: "--database", environment: "STOREKIT_BACKEND_DATABASE", databaseFile: true)
            return database
        }
        guard let database = ProcessInfo.processInfo.environment["STOREKIT_BACKEND_DATABASE"] else {
            throw ValidationError("name the database with --database sqlite:PATH or postgres://…, or --database-file FILE")
        }
        return database
    }

    /// The database URL on the first line of `path`, which other users must not be able to read
    /// (it may hold a password), as ssh refuses a private key others can read.
    static func url(inFile path: String) throws(ValidationError) -> String {
        let data = try SecretFile.contents(path, option: "--database-file", holding: "a password")
        guard let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first?.trimmingCharacters(in: .whitespaces),
              !line.isEmpty else {
            throw ValidationError("--database-file \(path) holds no database URL on its first line")
        }
        return line
    }

    static func open(_ url: String, console: Console) async throws -> any BackendStorage {
        try await BackendApplication.openStorage(url)
    }

    /// Whether a database URL holds a password: in its user information (`postgres://user:secret@…`)
    /// or as libpq's `password` parameter (`?password=…`, or `password=…` in a key/value string).
    static func holdsPassword(_ url: String) -> Bool {
        if url.lowercased().contains("password=") { return true }
        guard let schemeEnd = url.range(of: "://") else { return false }
        let afterScheme = url[schemeEnd.upperBound...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return false }
        return authority[..<at].contains(":")
    }

    /// A password on the command line is in the process's command line for its whole life, which
    /// every local user can read (`/proc/PID/cmdline`, `ps`): refused, naming where it belongs.
    static func refusePassword(in url: String, given option: String, environment: String?, databaseFile: Bool) throws(ValidationError) {
        guard holdsPassword(url) else { return }
        let places = [environment.map { "in \($0)" }, databaseFile ? "in a file only you can read (--database-file FILE)" : nil].compactMap { $0 }
        throw ValidationError("""
            the \(option) URL holds a password, which every user of this machine could read in the process list: \
            \(places.isEmpty ? "" : "put the URL \(places.joined(separator: " or ")), or ")put the password in PGPASSFILE (~/.pgpass) and leave it out of the URL
            """)
    }
}

/// A file that holds a secret (a key, a token, a database URL with a password): read only when no
/// other user can read it, as ssh refuses a private key others can read.
enum SecretFile {
    /// Refuses `path` when other users can read it (before anything starts).
    static func check(_ path: String, option: String, holding secret: String) throws(ValidationError) {
        var status = stat()
        guard stat(path, &status) == 0 else { throw ValidationError("\(option) \(path): \(String(cString: strerror(errno)))") }
        guard status.st_mode & 0o077 == 0 else {
            throw ValidationError("\(option) \(path) can be read by other users; it holds \(secret): chmod 600 \(path)")
        }
    }

    /// The file's contents, when the file opened is one other users cannot read.
    static func contents(_ path: String, option: String, holding secret: String) throws(ValidationError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ValidationError("\(option) \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        // The mode of the file opened, not of whatever the path names a moment later.
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ValidationError("\(option) \(path): \(String(cString: strerror(errno)))") }
        guard status.st_mode & 0o077 == 0 else {
            throw ValidationError("\(option) \(path) can be read by other users; it holds \(secret): chmod 600 \(path)")
        }
        guard let data = try? FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readToEnd() else {
            throw ValidationError("\(option) \(path) cannot be read")
        }
        return data
    }
}

/// What `backend serve` and `backend reconcile` share: the database, how signed data is verified,
/// and whose clock subscriptions expire by.
struct BackendOptions {
    var database: String
    var bundleID: String
    var environment: AppStoreModels.Environment
    var appAppleID: Int64?
    var roots: [String]
    /// `nil`: the environment's default (``BackendClock/defaultSource(for:)``).
    var clock: BackendClock.Source?

    static let database = ArgumentDeclaration.option("--database", "URL", "sqlite:PATH or postgres://USER@HOST:PORT/DB (or STOREKIT_BACKEND_DATABASE)", required: true)
    static let databaseFile = ArgumentDeclaration.option("--database-file", "FILE", "the database URL on the first line of a file only its owner can read, instead of --database")
    /// Where the database is: `--database URL` or `--database-file FILE`.
    static let databaseArguments = [database, databaseFile]
    static let arguments: [ArgumentDeclaration] = databaseArguments + [
        .option("--bundle-id", "ID", "the app whose data it takes (or STOREKIT_BACKEND_BUNDLE_ID)", required: true),
        .repeating("--root", "FILE", "a root certificate to trust, PEM or DER: Apple Root CA G3, or a local store's (storekit ca export)", required: true),
        .option("--environment", "Xcode|Sandbox|Production", "the environment its data comes from (default Production)"),
        .option("--app-apple-id", "N", "the app's Apple ID (Production)"),
        .option("--clock", "system|app-store", "whose time subscriptions expire by: the machine's, or the App Store's as its signed data shows it "
                + "(default app-store for Xcode data, which only local stores sign; system otherwise)"),
    ]
    static let discussion = "STOREKIT_BACKEND_DATABASE and STOREKIT_BACKEND_BUNDLE_ID stand in for --database and --bundle-id."

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        let environmentVariables = ProcessInfo.processInfo.environment
        database = try BackendDatabase.url(parsing: &arguments)
        guard let bundleID = try arguments.value("--bundle-id") ?? environmentVariables["STOREKIT_BACKEND_BUNDLE_ID"] else {
            throw ValidationError("name the app with --bundle-id")
        }
        self.bundleID = bundleID
        environment = try arguments.value("--environment", expected: "Xcode, Sandbox or Production") { text -> AppStoreModels.Environment? in
            ["Xcode", "Sandbox", "Production", "LocalTesting"].contains(text) ? AppStoreModels.Environment(rawValue: text) : nil
        } ?? .production
        appAppleID = try arguments.value("--app-apple-id", expected: "a number") { Int64($0) }
        roots = try arguments.values("--root")
        guard !roots.isEmpty else { throw ValidationError("give the root certificate to trust with --root FILE") }
        clock = try arguments.value("--clock", expected: "system or app-store") { BackendClock.Source(rawValue: $0) }
    }

    /// The backend's clock, by `--clock` or the environment's default.
    var backendClock: BackendClock { BackendClock(clock ?? BackendClock.defaultSource(for: environment)) }

    /// How the backend verifies what it takes in.
    var verification: BackendApplication.Verification {
        BackendApplication.Verification(bundleID: bundleID, environment: environment, appAppleID: appAppleID, rootCertificates: roots)
    }

    /// The verifier of everything the backend takes in.
    func intake() throws -> SignedDataIntake { try verification.intake() }
}

/// The App Store Server API a backend reconciles through: `--key-file` (an In-App Purchase key) and
/// `--api-url` (a local store's; Apple's for the environment when not given).
struct ServerAPIAccess {
    var keyFile: String
    var apiURL: URL?

    static func keyFileArgument(required: Bool) -> ArgumentDeclaration {
        .option("--key-file", "FILE", "the API key: JSON with keyId, issuerId, privateKey, as storekit api-key create --json prints", required: required)
    }
    static let apiURLArgument = ArgumentDeclaration.option("--api-url", "URL", "a local store's Server API (default: Apple's for the environment)")

    /// Reads `--key-file` and `--api-url`; `nil` when no key file is given.
    static func parse(_ arguments: inout ArgumentScanner) throws(ValidationError) -> ServerAPIAccess? {
        // The key's tokens go to this URL: https, or plain http only to this machine (a local store).
        let apiURL = try arguments.value("--api-url", expected: "an https URL, or http://127.0.0.1:PORT (a local store on this machine)") { text -> URL? in
            guard let url = URL(string: text), let host = url.host?.lowercased(), !host.isEmpty else { return nil }
            switch url.scheme?.lowercased() {
            case "https": return url
            case "http": return ["localhost", "::1", "[::1]"].contains(host) || host.hasPrefix("127.") ? url : nil
            default: return nil
            }
        }
        guard let keyFile = try arguments.value("--key-file") else {
            if apiURL != nil { throw ValidationError("--api-url needs the API key with --key-file FILE") }
            return nil
        }
        return ServerAPIAccess(keyFile: keyFile, apiURL: apiURL)
    }

    /// A client of the API with the key in the file.
    func client(_ options: BackendOptions) throws -> AppStoreServerAPIClient {
        struct Key: Decodable { var keyId: String; var issuerId: String; var privateKey: String }
        let key: Key
        let data = try SecretFile.contents(keyFile, option: "--key-file", holding: "a private key")
        do { key = try JSONDecoder().decode(Key.self, from: data) } catch {
            throw CommandFailure("\(keyFile) is not an API key file ({\"keyId\", \"issuerId\", \"privateKey\"}): \(error.localizedDescription)")
        }
        return try AppStoreServerAPIClient(signingKey: key.privateKey, keyId: key.keyId, issuerId: key.issuerId, bundleId: options.bundleID,
                                           environment: options.environment, baseURL: apiURL)
    }
}

/// `--reconcile every 1h`: how often the backend reconciles by itself.
enum ReconcileInterval {
    /// `every 1h`, `1h`, `30m`, `90s`, `1d`.
    static func parse(_ words: [String]) throws(ValidationError) -> Duration? {
        guard !words.isEmpty else { return nil }
        let text = (words.first == "every" ? words.dropFirst() : words[...]).joined()
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()), count > 0, count <= 366 * 86_400 / unit else {
            throw ValidationError("--reconcile must be every N followed by s, m, h or d (every 1h, every 30m), not \"\(words.joined(separator: " "))\"")
        }
        return .seconds(count * unit)
    }
}

/// `storekit backend serve`: the entitlement backend as an HTTP service.
struct BackendServeCommand: Command {
    static let declaration = CommandDeclaration("backend serve", group: .backend, abstract: "Serve the entitlement backend: App Store notifications in, verified; customers' entitlements out.", arguments: [
        .option("--host", "ADDRESS", "the address to listen on (default 127.0.0.1)"),
        .option("--port", "N", "the port (default 0: a free one, printed)"),
        .repeating("--allowed-host", "NAME", "a host name clients reach it by"),
        .flag("--metrics", "answer GET /metrics in Prometheus' text format (behind the backend's key)"),
        .list("--reconcile", "every DURATION", "reconcile with the App Store's notification history by itself: at start, then every DURATION (1h, 30m), "
              + "and when the database answers again after an outage; needs --key-file"),
        ServerAPIAccess.keyFileArgument(required: false),
        ServerAPIAccess.apiURLArgument,
        .option("--store-pages", "URL", "a local store's address: the dashboard's customer page links each transaction to the store's page of it "
                + "(default: --api-url's)"),
        .option("--offer-key-file", "FILE", "the subscription offer key its retention rules sign promotional offers with: JSON with keyId, issuerId, "
                + "privateKey, as storekit offer-key prints for a local store"),
        CommissionOption.argument,
    ] + ReportingCurrencyOption.arguments + LoggingOptions.arguments + BackendOptions.arguments, discussion: BackendOptions.discussion)

    var options: BackendOptions
    var host: String
    var port: UInt16
    var allowedHosts: [String]
    /// Whether `GET /metrics` answers Prometheus' text format (behind the backend's key).
    var metrics: Bool
    var logging: LoggingOptions
    /// How often it reconciles by itself, with `serverAPI`.
    var reconcileInterval: Duration?
    var serverAPI: ServerAPIAccess?
    var commission: CommissionProgram
    var reporting: ReportingCurrencyOption?
    var offerKeyFile: String?
    var storePages: URL?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        offerKeyFile = try arguments.value("--offer-key-file")
        storePages = try arguments.value("--store-pages", expected: "an http or https URL") { text -> URL? in
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else { return nil }
            return url
        }
        commission = try CommissionOption.parse(&arguments)
        reporting = try ReportingCurrencyOption.parse(&arguments)
        host = try arguments.value("--host") ?? "127.0.0.1"
        port = try arguments.value("--port", expected: "a port number from 0 to 65535") { UInt16($0) } ?? 0
        allowedHosts = try arguments.values("--allowed-host")
        metrics = arguments.flag("--metrics")
        reconcileInterval = try ReconcileInterval.parse(try arguments.values("--reconcile"))
        serverAPI = try ServerAPIAccess.parse(&arguments)
        if reconcileInterval != nil, serverAPI == nil { throw ValidationError("--reconcile needs the App Store Server API's key with --key-file FILE") }
        logging = try LoggingOptions(parsing: &arguments)
        options = try BackendOptions(parsing: &arguments)
    }

    func run(console: Console) async throws {
        var reconciliation: BackendApplication.Reconciliation?
        if let serverAPI {
            reconciliation = BackendApplication.Reconciliation(client: try serverAPI.client(options), interval: reconcileInterval ?? .seconds(3_600))
        }
        let application = try await BackendApplication.start(
            BackendApplication.Configuration(database: options.database, verification: options.verification, host: host, port: port,
                                             allowedHosts: allowedHosts, metrics: metrics, clock: options.clock, reconciliation: reconciliation,
                                             commission: commission, reporting: try await reporting?.resolved(),
                                             offerSigner: try offerKeyFile.map { try OfferKeyFile.signer(reading: $0, bundleID: options.bundleID) },
                                             storePages: storePages ?? serverAPI?.apiURL),
            logger: logging.logger(label: "storekit.backend"))
        console.print("listening on \(application.server.url.absoluteString)")
        if !ServerAccess.isLoopback(host) {
            // Apple's notifications are verified by their signatures; every other endpoint needs a key.
            console.printError("the backend is reachable from the network at \(host): /v1 needs a key (storekit backend key create); notifications are verified")
        }
        let signal = await application.runUntilTerminated()
        console.printError("stopped (\(TerminationSignal.name(signal)))")
    }
}

/// `storekit backend reconcile`: records what the backend missed from the notification history.
struct BackendReconcileCommand: Command {
    static let declaration = CommandDeclaration("backend reconcile", group: .backend, abstract: "Record the notifications the backend missed, from the App Store Server API's notification history.", arguments: BackendOptions.arguments + [
        ServerAPIAccess.keyFileArgument(required: true),
        ServerAPIAccess.apiURLArgument,
        .option("--since", "DATE", "look from this ISO 8601 date (default: a day before the time the backend last knew itself complete)"),
        .option("--until", "DATE", "look up to this ISO 8601 date (default: the App Store's now)"),
    ], discussion: BackendOptions.discussion)

    var options: BackendOptions
    var serverAPI: ServerAPIAccess
    var since: Date?
    var until: Date?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        guard let serverAPI = try ServerAPIAccess.parse(&arguments) else { throw ValidationError("give the API key with --key-file FILE") }
        self.serverAPI = serverAPI
        since = try arguments.value("--since", expected: "an ISO 8601 date") { try? Date($0, strategy: .iso8601) }
        until = try arguments.value("--until", expected: "an ISO 8601 date") { try? Date($0, strategy: .iso8601) }
        options = try BackendOptions(parsing: &arguments)
    }

    func run(console: Console) async throws {
        let client = try serverAPI.client(options)
        let storage = try await BackendDatabase.open(options.database, console: console)
        let clock = options.backendClock
        if let seen = try await storage.latestNotificationDate() { clock.observe(seen) }
        let reconciler = NotificationReconciler(client: client, intake: try options.intake(), storage: storage, clock: clock)
        let outcome = try await reconciler.reconcile(from: since, to: until)
        let window = [outcome.from, outcome.through].compactMap { $0?.formatted(.iso8601) }.joined(separator: " to ")
        console.print("listed \(outcome.listed) notifications; recorded \(outcome.recorded) the backend did not have" + (window.isEmpty ? "" : " (\(window))")
                      + (outcome.statusChecks > 0 ? "; asked the status of \(outcome.statusChecks) subscriptions past their expiry" : ""))
    }
}

/// `storekit backend key create`: a bearer key for the backend's `/v1` endpoints.
struct BackendKeyCreateCommand: Command {
    static let declaration = CommandDeclaration("backend key create", group: .backend, abstract: "Create a bearer key for the backend's /v1 endpoints; it is printed once and stored only as a digest.", arguments: BackendOptions.databaseArguments + [
        .option("--label", "TEXT", "what the key is for (default service)"),
    ])

    var database: String
    var label: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        database = try BackendDatabase.url(parsing: &arguments)
        label = try arguments.value("--label") ?? "service"
    }

    func run(console: Console) async throws {
        let storage = try await BackendDatabase.open(database, console: console)
        var generator = SystemRandomNumberGenerator()
        let key = ServiceKeys.make(using: &generator)
        do { try await storage.addKey(hash: ServiceKeys.digest(key), label: label, created: Date()) } catch { throw CommandFailure(error.description) }
        console.print(key)
    }
}

/// A backend command whose one argument is the database.
protocol BackendDatabaseCommand: Command {
    init(database: String)
    var database: String { get }
    /// Runs the command on the opened database.
    func run(storage: any BackendStorage, console: Console) async throws
}

extension BackendDatabaseCommand {
    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        self.init(database: try BackendDatabase.url(parsing: &arguments))
    }

    func run(console: Console) async throws {
        try await run(storage: try await BackendDatabase.open(database, console: console), console: console)
    }
}

struct BackendKeyListCommand: BackendDatabaseCommand {
    static let declaration = CommandDeclaration("backend key list", group: .backend, abstract: "List the backend's keys: the id that names each (the start of its digest), its label and when it was made; never the key.", arguments: BackendOptions.databaseArguments)

    var database: String

    func run(storage: any BackendStorage, console: Console) async throws {
        let keys: [ServiceKeyRecord]
        do { keys = try await storage.keys() } catch { throw CommandFailure(error.description) }
        if keys.isEmpty { console.print("no keys; make one with storekit backend key create") }
        for key in keys {
            console.print("\(key.id)  \(key.created.formatted(.iso8601))  \(key.label)")
        }
    }
}

struct BackendKeyRevokeCommand: Command {
    static let declaration = CommandDeclaration("backend key revoke", group: .backend, abstract: "Revoke a backend key by the id backend key list shows: its requests are refused from now on and its dashboard sessions end.", arguments: BackendOptions.databaseArguments + [
        .positional("ID", "the key's id (the start of its digest, as backend key list shows it)"),
    ])

    var database: String
    var id: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        database = try BackendDatabase.url(parsing: &arguments)
        id = try arguments.positional("ID")
        guard id.count >= 8, id.allSatisfy(\.isHexDigit) else { throw ValidationError("ID: at least 8 hexadecimal digits of a key's digest, as backend key list shows, not \"\(id.prefix(40))\"") }
    }

    func run(console: Console) async throws {
        let storage = try await BackendDatabase.open(database, console: console)
        let matching: [ServiceKeyRecord]
        do { matching = try await storage.keys().filter { $0.digest.hasPrefix(id.lowercased()) } } catch { throw CommandFailure(error.description) }
        guard !matching.isEmpty else { throw CommandFailure("no key has the id \(id); backend key list shows them") }
        guard matching.count == 1 else { throw CommandFailure("\(matching.count) keys start with \(id); give more of the id") }
        do { _ = try await storage.revokeKeys(digestPrefix: matching[0].digest) } catch { throw CommandFailure(error.description) }
        console.print("revoked \(matching[0].id) (\(matching[0].label))")
    }
}
