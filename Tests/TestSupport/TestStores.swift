import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQL
import BlockingWork
import Foundation
import StoreKitCatalog

/// Stores for tests, made one way everywhere: a `.storekit` file (the example shop unless given) on a
/// manual clock that starts at 2026-01-01T00:00:00Z.
public enum TestStores {
    /// 2026-01-01T00:00:00Z, where every test store's manual clock starts unless told otherwise.
    public static let start = Date(timeIntervalSince1970: 1_767_225_600)

    /// The example shop's configuration, read once.
    public static let shop: StoreKitConfiguration = {
        do { return try StoreKitConfiguration.load(contentsOf: ExampleShop.file).configuration } catch {
            preconditionFailure("Examples/Shop.storekit cannot be read: \(error)")
        }
    }()

    /// A store kept in a folder, as `storekit store create` makes one, created (and its database
    /// written) off the cooperative pool.
    ///
    /// - Returns: The folder and the open store.
    @discardableResult
    public static func directory(in scratch: Scratch, name: String = "store", file: URL? = nil, bundleID: String = "com.example.shop",
                                 environment: AppStoreModels.Environment = .xcode, clockMode: StoreDirectory.ClockMode = .manual,
                                 start: Date = start, ocspURL: String? = nil,
                                 realTime: any StoreClock = SystemStoreClock()) async throws -> (url: URL, store: SimulatedAppStore) {
        let configuration = try file.map { try StoreKitConfiguration.load(contentsOf: $0).configuration } ?? shop
        let directory = scratch.url.appendingPathComponent(name)
        let store = try await BlockingWork.run("TestStores.directory") { () throws(AppStoreError) -> SimulatedAppStore in
            try StoreDirectory.create(at: directory, configuration: configuration, identity: StoreIdentity(bundleId: bundleID, environment: environment),
                                      clockMode: clockMode, start: start, ocspURL: ocspURL, realTime: realTime)
        }
        return (directory, store)
    }

    /// A store kept in a PostgreSQL database (`storekit store create --database URL`), made off the
    /// cooperative pool.
    @discardableResult
    public static func database(_ url: String, file: URL? = nil, bundleID: String = "com.example.shop",
                                environment: AppStoreModels.Environment = .xcode, clockMode: StoreDirectory.ClockMode = .manual,
                                start: Date = start) async throws -> SimulatedAppStore {
        let configuration = try file.map { try StoreKitConfiguration.load(contentsOf: $0).configuration } ?? shop
        return try await StoreLocation.database(url).create(configuration: configuration, identity: StoreIdentity(bundleId: bundleID, environment: environment),
                                                            clockMode: clockMode, start: start)
    }

    /// Where a test's store is kept: the two engines every served scenario runs on.
    public enum Engine: String, CaseIterable, Sendable {
        case sqlite, postgresql
    }

    /// Runs `body` with a new store (from `file`) on `engine`, named as `storekit` commands take it: a
    /// folder's path, or a database URL (in a throwaway cluster, stopped after). On a machine without
    /// PostgreSQL's server the PostgreSQL case says so and does nothing.
    public static func withStore(_ engine: Engine, in scratch: Scratch, file: URL? = nil, bundleID: String = "com.example.shop",
                                 _ body: (_ store: String) async throws -> Void) async throws {
        switch engine {
        case .sqlite:
            try await body(try await directory(in: scratch, file: file, bundleID: bundleID).url.path)
        case .postgresql:
            guard PostgresCluster.isAvailable else {
                print("skipped on PostgreSQL: \(PostgresCluster.skipReason)")
                return
            }
            try await PostgresCluster.with { cluster in
                try await database(cluster.url, file: file, bundleID: bundleID)
                try await body(cluster.url)
            }
        }
    }

    /// Opens a store folder again (as another process, or a restart, would), off the cooperative pool.
    public static func open(_ directory: URL) async throws -> SimulatedAppStore {
        try await BlockingWork.run("TestStores.open") { () throws(AppStoreError) -> SimulatedAppStore in try StoreDirectory.open(at: directory) }
    }
}
