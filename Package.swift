// swift-tools-version: 6.2
import PackageDescription

/// OpenStoreKit: a StoreKit 2-compatible in-app purchase stack that runs wherever Swift runs.
///
/// Each C library is wrapped by a `.systemLibrary` target and imported by exactly one Swift module:
/// `COpenSSL` by `AppStoreSigning`, `CSQLite` by `SQLiteDatabase`, `CLibPQ` by `PostgresClient`
/// (the PostgreSQL engine) and `CMicroHTTPD` by the HTTP server; the pointer code that talks to a C
/// library stays in the module that imports it. A few modules read their own buffers through unsafe
/// pointers for speed too: JSON scanners (`AppStoreModels`, `StoreKitCatalog`), `HTTPClient`'s
/// keep-alive sockets, the benchmarks' child processes and the `os` module's log formatting.
/// `CMalloc` (glibc's `malloc.h`, for `mallopt`) is imported by the `storekit` executable alone and holds no pointers.
let package = Package(
    name: "OpenStoreKit",
    products: [
        .library(name: "AppStoreModels", targets: ["AppStoreModels"]),
        .library(name: "AppStoreSigning", targets: ["AppStoreSigning"]),
        .library(name: "StoreKitCatalog", targets: ["StoreKitCatalog"]),
        .library(name: "AppStoreSimulator", targets: ["AppStoreSimulator"]),
        .library(name: "AppStoreSimulatorSQL", targets: ["AppStoreSimulatorSQL"]),
        .library(name: "HTTPService", targets: ["HTTPService"]),
        .library(name: "BlockingWork", targets: ["BlockingWork"]),
        .library(name: "HTTPClient", targets: ["HTTPClient"]),
        .library(name: "ServiceLogging", targets: ["ServiceLogging"]),
        .library(name: "AppStoreServerAPI", targets: ["AppStoreServerAPI"]),
        .library(name: "OpenStoreKit", targets: ["OpenStoreKit"]),
        .library(name: "SimulatorConnection", targets: ["SimulatorConnection"]),
        .library(name: "LocalAppStore", targets: ["LocalAppStore"]),
        .library(name: "OpenStoreKitTesting", targets: ["OpenStoreKitTesting"]),
        .library(name: "SQLDatabase", targets: ["SQLDatabase"]),
        .library(name: "AppStoreBackend", targets: ["AppStoreBackend"]),
        .executable(name: "storekit", targets: ["storekit"]),
    ],
    targets: [
        // C libraries from Debian packages (installed by scripts/bootstrap).
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMalloc"),

        // Where blocking work runs: serial executors and queues of its own, never Swift's cooperative pool.
        .target(name: "BlockingWork"),
        // Where servers say what happened: a logger with levels, metadata and request ids, written as text or JSON lines.
        .target(name: "ServiceLogging"),
        // The package's HTTP clients: `HTTPClient` on Foundation's URLSession (one pool, timeouts, cancellation) and `KeepAliveConnections` (keep-alive connections for notification delivery).
        .target(name: "HTTPClient"),
        // Codable payloads exactly as Apple sends them; Foundation only.
        .target(name: "AppStoreModels"),
        // ES256 JWS, X.509, the local certificate authority, signature creators and the verifier.
        .target(name: "AppStoreSigning", dependencies: ["AppStoreModels", "COpenSSL", "BlockingWork", "ServiceLogging"]),
        // `.storekit` configuration files, validation, storefronts, periods and the product catalog.
        .target(name: "StoreKitCatalog", dependencies: ["AppStoreModels"]),
        // The local App Store engine: ledger, purchases, subscriptions, notifications, test-session controls.
        .target(name: "AppStoreSimulator", dependencies: ["AppStoreModels", "AppStoreSigning", "StoreKitCatalog", "BlockingWork"]),
        // SQLite connections and statements; the only importer of CSQLite.
        .target(name: "SQLiteDatabase", dependencies: ["CSQLite"]),
        // PostgreSQL connections through libpq; the only importer of CLibPQ.
        .target(name: "PostgresClient", dependencies: ["CLibPQ"]),
        // The SQL layer under the ledger and the backend, on SQLite and PostgreSQL: connections, typed
        // database errors, write transactions, named migrations, lanes of their own threads.
        .target(name: "SQLDatabase", dependencies: ["SQLiteDatabase", "PostgresClient", "BlockingWork"]),
        // The default, durable ledger storage, on SQLite.
        .target(name: "AppStoreSimulatorSQL", dependencies: ["AppStoreSimulator", "AppStoreSigning", "StoreKitCatalog", "SQLDatabase", "BlockingWork"]),
        // A client of the App Store Server API (Apple's or a local store's), as Apple's libraries call it.
        .target(name: "AppStoreServerAPI", dependencies: ["AppStoreModels", "AppStoreSigning", "HTTPClient"]),
        // A small HTTP server on libmicrohttpd; the only importer of CMicroHTTPD.
        .target(name: "HTTPService", dependencies: ["CMicroHTTPD", "BlockingWork", "ServiceLogging"]),
        // The StoreKit 2-shaped client API (and the original API), verifying on the device side.
        .target(name: "OpenStoreKit", dependencies: ["AppStoreModels", "AppStoreSigning", "StoreKitCatalog", "BlockingWork", "HTTPClient"]),
        // How clients reach the local App Store: StoreKit's transport to a store in this process, and the
        // admin API's bodies (shared by its server and the test kit's client of it).
        .target(name: "SimulatorConnection", dependencies: ["OpenStoreKit", "AppStoreSimulator", "AppStoreSigning", "AppStoreModels", "StoreKitCatalog", "HTTPClient"]),
        // A local App Store an app talks to (`LocalStore`): in this process or served, clients per device, and
        // the `SKTestSession` controls with a clock that stands still or runs. The examples run on it.
        .target(name: "LocalAppStore", dependencies: ["OpenStoreKit", "SimulatorConnection", "AppStoreSimulator",
                                                     "AppStoreSigning", "AppStoreModels", "StoreKitCatalog", "HTTPClient"]),
        // The test kit, for test targets only: `LocalStore` as `TestSession`, and recording an observable object's changes.
        .target(name: "OpenStoreKitTesting", dependencies: ["LocalAppStore", "OpenStoreKit", "SimulatorConnection", "AppStoreSimulator"]),
        // A local App Store as a network service: the device API and the admin API over HTTP.
        // Its pages' HTML, CSS, script and icon are files in Web/Assets, built into the binary.
        .target(name: "StoreService", dependencies: ["AppStoreModels", "AppStoreSigning", "AppStoreSimulator", "AppStoreSimulatorSQL", "HTTPService", "ServiceLogging", "OpenStoreKit", "SimulatorConnection",
                                                    "StoreKitCatalog", "HTTPClient", "BlockingWork"],
                resources: ["page.html", "transaction-manager.html", "manager.js", "manager-page.js", "manager-transactions.js", "manager-accounts.js",
                            "manager-settings.js", "manager-notifications.js", "storefront.js", "transaction-page.js", "style.css", "favicon.svg"].map { .embedInCode("Web/Assets/\($0)") }),
        // The developer's server: verified notifications and app transactions, entitlements per customer.
        // Its dashboard's HTML and CSS are files in Dashboard/Assets, built into the binary.
        .target(name: "AppStoreBackend", dependencies: ["AppStoreModels", "AppStoreSigning", "AppStoreServerAPI", "SQLDatabase",
                                                       "HTTPService", "HTTPClient", "BlockingWork", "ServiceLogging"],
                resources: ["frame.html", "login.html", "overview.html", "dashboard.css"].map { .embedInCode("Dashboard/Assets/\($0)") }),
        // The `storekit` command tree, as a library so it can be tested without a process: parsing and output.
        .target(name: "StoreKitCommands", dependencies: ["AppStoreModels", "AppStoreSigning", "StoreKitCatalog", "AppStoreSimulator", "AppStoreSimulatorSQL",
                                                      "OpenStoreKit", "StoreService", "HTTPService", "AppStoreBackend", "AppStoreServerAPI", "HTTPClient",
                                                      "BlockingWork", "ServiceLogging", "SimulatorConnection"]),
        // `storekit bench …`: the benchmarks, reaching engine internals through `package` access.
        .target(name: "StoreKitBenchmarks", dependencies: ["StoreKitCommands", "AppStoreModels", "AppStoreSigning", "StoreKitCatalog", "AppStoreSimulator",
                                                        "AppStoreSimulatorSQL", "OpenStoreKit", "StoreService", "HTTPService", "AppStoreBackend",
                                                        "AppStoreServerAPI", "HTTPClient", "BlockingWork", "SimulatorConnection"],
                resources: [.embedInCode("wrk-report.lua")]),
        .executableTarget(name: "storekit", dependencies: ["StoreKitCommands", "StoreKitBenchmarks", "CMalloc"]),

        // Test support: the team's shared data (`../shared`, skipped with a reason when absent) and Apple's Python library as an oracle.
        .target(name: "TestSupport", dependencies: ["BlockingWork", "HTTPClient", "AppStoreModels", "AppStoreSimulator", "AppStoreSimulatorSQL", "StoreKitCatalog"],
                path: "Tests/TestSupport"),
        .testTarget(name: "AppStoreModelsTests", dependencies: ["AppStoreModels", "TestSupport"]),
        .testTarget(name: "AppStoreSigningTests", dependencies: ["AppStoreSigning", "AppStoreModels", "TestSupport"]),
        .testTarget(name: "StoreKitCatalogTests", dependencies: ["StoreKitCatalog", "AppStoreModels", "TestSupport"]),
        .testTarget(name: "AppStoreSimulatorTests", dependencies: ["AppStoreSimulator", "AppStoreSimulatorSQL", "SQLiteDatabase", "BlockingWork", "AppStoreSigning", "AppStoreModels", "StoreKitCatalog", "TestSupport"]),
        .testTarget(name: "OpenStoreKitTests", dependencies: ["OpenStoreKit", "OpenStoreKitTesting", "AppStoreSimulator", "AppStoreSigning", "AppStoreModels", "BlockingWork",
                                                           "StoreKitCatalog", "TestSupport", "ExitWhileVerifying", "MainThreadApp"]),
        // An app that exits while its listeners verify (OpenStoreKitTests runs it many times; it must never crash).
        .executableTarget(name: "ExitWhileVerifying", dependencies: ["OpenStoreKit", "LocalAppStore"], path: "Tests/Fixtures/ExitWhileVerifying"),
        // An app whose main-actor code expects the main thread (MainThreadTests runs it both ways).
        .executableTarget(name: "MainThreadApp", dependencies: ["OpenStoreKit", "LocalAppStore"], path: "Tests/Fixtures/MainThreadApp"),
        // The example apps: each a scripted session with `swift run <Name>`, each covered by ExamplesTests.
        .executableTarget(name: "PotionShop", dependencies: ["OpenStoreKit", "LocalAppStore"], path: "Examples/PotionShop"),
        .executableTarget(name: "GemStore", dependencies: ["OpenStoreKit", "LocalAppStore"], path: "Examples/GemStore"),
        .executableTarget(name: "Recipes", dependencies: ["OpenStoreKit", "LocalAppStore"], path: "Examples/Recipes",
                          exclude: ["Recipes.storekit"]),
        .executableTarget(name: "LegacyShop", dependencies: ["OpenStoreKit", "LocalAppStore"], path: "Examples/LegacyShop"),
        .executableTarget(name: "SubscriptionPlans", dependencies: ["OpenStoreKit", "LocalAppStore"], path: "Examples/SubscriptionPlans"),
        .executableTarget(name: "Productivity", dependencies: ["OpenStoreKit", "LocalAppStore", "AppStoreSigning", "AppStoreModels", "AppStoreBackend",
                                                              "HTTPService"],
                          path: "Examples/Productivity",
                          exclude: ["Productivity.storekit"]),
        .testTarget(name: "ExamplesTests", dependencies: ["PotionShop", "GemStore", "Recipes", "LegacyShop", "SubscriptionPlans", "Productivity",
                                                        "OpenStoreKit", "OpenStoreKitTesting", "TestSupport"]),
        // Store code shaped like Apple's StoreKit 2 sample, compiled as that sample is: Swift 5 mode.
        .testTarget(name: "SKDemoShapedTests", dependencies: ["OpenStoreKit", "OpenStoreKitTesting", "TestSupport"],
                    exclude: ["Garden.storekit"], swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "StoreServiceTests", dependencies: ["StoreService", "AppStoreBackend", "SQLDatabase", "HTTPService", "ServiceLogging", "HTTPClient", "BlockingWork", "AppStoreServerAPI", "OpenStoreKit", "OpenStoreKitTesting", "AppStoreSimulator",
                                                           "AppStoreSimulatorSQL", "AppStoreSigning", "AppStoreModels", "StoreKitCatalog", "SimulatorConnection", "TestSupport"]),
        .testTarget(name: "AppStoreBackendTests", dependencies: ["AppStoreBackend", "ServiceLogging", "AppStoreServerAPI", "AppStoreSimulator", "AppStoreSimulatorSQL", "StoreService", "SQLiteDatabase", "SQLDatabase",
                                                              "HTTPService", "AppStoreSigning", "AppStoreModels", "StoreKitCatalog", "TestSupport"]),
        .testTarget(name: "StoreKitCommandsTests", dependencies: ["StoreKitCommands", "StoreKitBenchmarks", "SQLiteDatabase", "SQLDatabase", "AppStoreSigning", "AppStoreModels", "AppStoreSimulator",
                                                                "OpenStoreKit", "OpenStoreKitTesting",
                                                                "AppStoreSimulatorSQL", "StoreKitCatalog", "StoreService", "AppStoreBackend", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// Where Apple's StoreKit does not exist, a `StoreKit` module re-exports OpenStoreKit and Foundation,
// so StoreKit code compiles unchanged; tutorial-shaped code (StoreKit 2 and the original API, in
// Swift 5 mode as the tutorials are) is compiled against it and run in the tests.
//
// The same for Combine and SwiftUI: the small parts store code uses outside views (`ObservableObject`,
// `@Published`, subjects, `sink`; `@AppStorage`, `@Environment(\.purchase)`), so the store managers
// most apps write compile unchanged too (StoreManagerTests drives three of them).
#if !canImport(Darwin)
package.products.append(.library(name: "StoreKit", targets: ["StoreKit"]))
package.products.append(.library(name: "Combine", targets: ["Combine"]))
package.products.append(.library(name: "SwiftUI", targets: ["SwiftUI"]))
package.products.append(.library(name: "StoreKitTest", targets: ["StoreKitTest"]))
package.targets.append(.target(name: "StoreKit", dependencies: ["OpenStoreKit", "Combine", "UIKit"]))
// The scene types StoreKit's `in:` calls take (`UIWindowScene`, `UIViewController`), and no more.
package.products.append(.library(name: "UIKit", targets: ["UIKit", "_Testing_UIKit"]))
package.targets.append(.target(name: "UIKit"))
// Swift Testing's cross-import overlay for UIKit, which a file importing both loads: empty here.
package.targets.append(.target(name: "_Testing_UIKit", dependencies: ["UIKit"]))
package.targets.append(.target(name: "Combine"))
package.targets.append(.target(name: "SwiftUI", dependencies: ["Combine", "OpenStoreKit"]))
// The unified log's API (`import os`, `import os.log`, `import OSLog`): `Logger`, `os_log`, signposts
// and `OSAllocatedUnfairLock`, written through ServiceLogging to standard error in Apple's format.
// `UnifiedLoggingHeaders` is the clang module `os` with its submodules, which the Swift module `os`
// overlays (`-import-underlying-module`), as Apple's overlay does, so `import os.log` finds both.
package.products.append(.library(name: "os", targets: ["os"]))
package.products.append(.library(name: "OSLog", targets: ["OSLog"]))
package.targets.append(.systemLibrary(name: "UnifiedLoggingHeaders"))
// CoreFoundation's main-bundle functions (inside libFoundation): `Bundle.main.bundleIdentifier` is the
// store's for an app with no Info.plist; imported by OpenStoreKit alone.
package.targets.append(.systemLibrary(name: "CMainBundle"))
package.targets.first { $0.name == "OpenStoreKit" }?.dependencies.append("CMainBundle")
// The subscriptions example logs through `Logger` (`import OSLog`), Apple's on Apple platforms.
package.targets.first { $0.name == "SubscriptionPlans" }?.dependencies.append("OSLog")
package.targets.append(.target(name: "os", dependencies: ["UnifiedLoggingHeaders", "ServiceLogging"],
                               swiftSettings: [.unsafeFlags(["-import-underlying-module"])]))
package.targets.append(.target(name: "OSLog", dependencies: ["os"]))
package.targets.append(.target(name: "StoreKitTest", dependencies: ["StoreKit", "LocalAppStore", "AppStoreSimulator", "StoreKitCatalog", "BlockingWork"]))
package.targets.first { $0.name == "OpenStoreKitTesting" }?.dependencies.append("Combine")
package.targets.append(.testTarget(name: "StoreKitTutorialTests", dependencies: ["StoreKit", "OpenStoreKitTesting", "TestSupport"],
                                   swiftSettings: [.swiftLanguageMode(.v5)]))
package.targets.append(.testTarget(name: "CombineTests", dependencies: ["Combine", "TestSupport"]))
// The compatibility corpus (Tests/StoreKitCorpus): files shaped as open-source StoreKit 2 code writes
// each pattern, compiled unchanged in the language mode of the code they stand for and driven through
// purchases, renewals, refunds and restore. Files in Tests/StoreKitCorpus are linked into both targets.
// On Apple platforms `import Foundation` makes Combine's `ObservableObject` visible; here a target whose
// files rely on that imports Combine into every file (`-import-module Combine`), as docs/storekit-surface.md says.
package.targets.append(.testTarget(name: "StoreKitCorpusSwift5Tests", dependencies: ["StoreKit", "SwiftUI", "Combine", "os", "UIKit", "OpenStoreKitTesting", "TestSupport"],
                                   swiftSettings: [.swiftLanguageMode(.v5), .unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "Combine"])]))
// An XCTest suite written for Xcode's `SKTestSession`, with its configuration file as a resource.
package.targets.append(.testTarget(name: "StoreKitTestXCTests", dependencies: ["StoreKitTest"], resources: [.copy("Notes.storekit")]))
package.targets.append(.testTarget(name: "StoreKitCorpusSwift6Tests", dependencies: ["StoreKit", "SwiftUI", "Combine", "os", "UIKit", "_Testing_UIKit", "OpenStoreKitTesting", "TestSupport",
                                                                                    "AppStoreSigning", "AppStoreModels", "StoreKitCatalog", "ServiceLogging"]))
package.targets.append(.testTarget(name: "StoreManagerTests", dependencies: ["StoreKit", "Combine", "SwiftUI", "OpenStoreKitTesting", "TestSupport"],
                                   swiftSettings: [.swiftLanguageMode(.v5)]))
#endif

// The same strictness for every Swift target: explicit existentials, imports that say what they use,
// and no warnings left behind.
// The sample- and tutorial-shaped tests and the corpus keep their sources' own spelling
// (`Task<Void, Error>`, names that come with an import elsewhere), so they opt out of the two upcoming
// features but not of the no-warnings rule.
for target in package.targets where target.type != .system {
    let upcoming: [SwiftSetting] = ["SKDemoShapedTests", "StoreKitTutorialTests", "StoreManagerTests", "StoreKitCorpusSwift5Tests",
                                    "StoreKitCorpusSwift6Tests", "StoreKitTestXCTests"].contains(target.name) ? [] : [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
    target.swiftSettings = (target.swiftSettings ?? []) + upcoming + [.unsafeFlags(["-warnings-as-errors"])]
}
