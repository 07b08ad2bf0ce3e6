import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog

/// `storekit store create`: a new local App Store in a directory, from a `.storekit` file.
struct StoreCreate: Command {
    static let declaration = CommandDeclaration("store create", group: .store, abstract: "Create a local App Store in DIR (or a PostgreSQL database) from a .storekit file.", arguments:
        StoreLocationOptions.arguments(folderHelp: "the folder to create") + [
        .option("--config", "FILE", "the .storekit file to sell", required: true),
        .option("--bundle-id", "ID", "the app's bundle identifier (default com.example.app)"),
        .option("--environment", "Xcode|Sandbox|Production|LocalTesting", "what the store signs as (default Xcode)"),
        .option("--app-apple-id", "N", "the app's Apple ID; required for Production"),
        .option("--clock", "manual|real", "manual (default): time moves with advance; real: the machine's clock, at the file's time rate"),
        .option("--start", "DATE", "where a manual clock starts (default: now)"),
        .option("--app-version", "V", "the app version the store reports (default 1)"),
        .option("--original-app-version", "V", "the version new customers' app transactions report as first bought"),
        .option("--ocsp-url", "URL|none", "where the certificates say the OCSP responder is (default http://127.0.0.1:8080/ocsp)"),
    ])

    /// Where the store's certificates say their OCSP responder is: `storekit serve` on `make serve`'s port.
    static let defaultOCSPURL = "http://127.0.0.1:8080/ocsp"

    var store: StoreLocation
    var configurationPath: String
    var bundleId: String
    var environment: AppStoreModels.Environment
    var clock: StoreDirectory.ClockMode
    var start: Date?
    var appVersion: String
    var originalAppVersion: String
    var appAppleId: Int64?
    var ocspURL: String?

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        configurationPath = try arguments.requiredValue("--config")
        bundleId = try arguments.value("--bundle-id") ?? "com.example.app"
        environment = try arguments.value("--environment", expected: "Xcode, Sandbox, Production or LocalTesting") { text -> AppStoreModels.Environment? in
            let environment = AppStoreModels.Environment(rawValue: text)
            return [.xcode, .sandbox, .production, .localTesting].contains(environment) ? environment : nil
        } ?? .xcode
        appAppleId = try arguments.value("--app-apple-id", expected: "the app's Apple ID, a positive number such as 1470168868") {
            Int64($0).flatMap { $0 > 0 ? $0 : nil }
        }
        guard environment != .production || appAppleId != nil else {
            throw ValidationError("a Production store needs the app's Apple ID (--app-apple-id N): Production data carries it and verifiers check it")
        }
        guard environment != .xcode || appAppleId == nil else {
            throw ValidationError("--app-apple-id: Xcode's StoreKit Testing has no app Apple ID; use --environment Sandbox or Production")
        }
        clock = try arguments.value("--clock", expected: "manual or real") { StoreDirectory.ClockMode(rawValue: $0) } ?? .manual
        start = try arguments.value("--start", expected: "a date such as 2026-01-01 or 2026-01-01T09:30:00Z") { StoreAccess.date($0) }
        appVersion = try arguments.value("--app-version") ?? "1"
        // The version customers who bought before had: apps grandfather features by it.
        originalAppVersion = try arguments.value("--original-app-version") ?? appVersion
        let ocsp = try arguments.value("--ocsp-url", expected: "an http URL or none") { text -> String? in
            text == "none" ? "" : (URL(string: text)?.scheme == "http" ? text : nil)
        } ?? Self.defaultOCSPURL
        ocspURL = ocsp.isEmpty ? nil : ocsp
        store = try StoreLocationOptions.location(parsing: &arguments)
    }

    func run(console: Console) async throws {
        let result = try StoreKitConfiguration.load(contentsOf: URL(fileURLWithPath: configurationPath))
        for warning in result.warnings {
            console.printError("warning: \(URL(fileURLWithPath: configurationPath).lastPathComponent): \(warning)")
        }
        // The command line is where real time enters: a manual clock starts now unless told otherwise.
        let start = self.start ?? Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let identity = StoreIdentity(bundleId: bundleId, environment: environment, appAppleId: appAppleId, applicationVersion: appVersion,
                                     originalApplicationVersion: originalAppVersion)
        let store = try await self.store.create(configuration: result.configuration, identity: identity, clockMode: clock, start: start, ocspURL: ocspURL)
        let catalog = await store.catalog()
        console.print("created a \(environment.rawValue) store for \(bundleId) in \(self.store)")
        console.print("\(catalog.products.count) products, storefront \(catalog.storefront.countryCode), \(clock.rawValue) clock at \(StoreAccess.iso(await store.now))")
        console.print("root certificate SHA-256: \(store.rootCertificate.sha256Fingerprint)")
    }
}
