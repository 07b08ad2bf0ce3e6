import AppStoreModels
import AppStoreSimulator
import AppStoreSimulatorSQLite
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

    /// Opens a store folder again (as another process, or a restart, would), off the cooperative pool.
    public static func open(_ directory: URL) async throws -> SimulatedAppStore {
        try await BlockingWork.run("TestStores.open") { () throws(AppStoreError) -> SimulatedAppStore in try StoreDirectory.open(at: directory) }
    }
}
