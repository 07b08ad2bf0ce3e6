import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog

/// A local App Store kept in a directory: `store.sqlite` (the ledger) and `ca/` (its certificate authority).
///
/// This is how the command line and servers keep a store between runs. The directory also records
/// whether the store runs on a manual clock (moved by `storekit advance`) or on the real clock.
public enum StoreDirectory {
    /// The kind of clock a store directory runs on.
    public enum ClockMode: String, Sendable, CaseIterable {
        /// Time stands still until advanced; it survives restarts.
        case manual
        /// The machine's clock, with the configuration's time rate for subscription periods.
        case real
    }

    static let databaseName = "store.sqlite"
    static let authorityName = "ca"
    static let clockModeKey = "directory.clockMode"

    /// The ledger file of a store directory.
    public static func databaseURL(in directory: URL) -> URL { directory.appendingPathComponent(databaseName) }

    /// The certificate authority folder of a store directory.
    public static func authorityURL(in directory: URL) -> URL { directory.appendingPathComponent(authorityName) }

    /// Creates a store directory: the ledger, a fresh certificate authority, and the configuration.
    ///
    /// Refuses a directory that already holds a store. If creation fails half way, what was created is
    /// removed again, so nothing half-made is left behind.
    ///
    /// - Parameter start: The manual clock's starting time (ignored for the real clock).
    public static func create(at directory: URL, configuration: StoreKitConfiguration, identity: StoreIdentity,
                              clockMode: ClockMode, start: Date, ocspURL: String? = nil,
                              identifiers: IdentifierGenerator = .random) throws(AppStoreError) -> SimulatedAppStore {
        let fileManager = FileManager.default
        let database = databaseURL(in: directory)
        if fileManager.fileExists(atPath: database.path) { throw .storage("\(directory.path) already holds a store") }
        let existed = fileManager.fileExists(atPath: directory.path)
        var created: [URL] = []
        do {
            if !existed {
                try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
                created.append(directory)
            }
        } catch {
            throw .storage("cannot create \(directory.path): \(error.localizedDescription)")
        }
        do throws(AppStoreError) {
            let authority: CertificateAuthority
            do {
                authority = try CertificateAuthority.make(ocspURL: ocspURL)
                created.append(authorityURL(in: directory))
                try authority.save(to: authorityURL(in: directory))
            } catch {
                throw AppStoreError.storage("cannot create the certificate authority: \(error)")
            }
            created.append(database)
            let storage = try SQLiteLedgerStorage(path: database.path, create: true)
            let clock: any StoreClock = clockMode == .manual ? ManualStoreClock(startingAt: start) : SystemStoreClock()
            let store = try SimulatedAppStore.create(configuration: configuration, identity: identity, authority: authority,
                                                     storage: storage, clock: clock, identifiers: identifiers)
            try storage.write { _ in
                var changes = LedgerChanges()
                changes.meta[clockModeKey] = clockMode.rawValue
                return (changes, ())
            }
            return store
        } catch {
            for url in created.reversed() {
                try? fileManager.removeItem(at: url)
                for suffix in ["-wal", "-shm"] { try? fileManager.removeItem(atPath: url.path + suffix) }
            }
            throw error
        }
    }

    /// Opens the store in a directory.
    ///
    /// A directory that does not exist, lacks a ledger or whose ledger is damaged is reported as
    /// ``AppStoreError/storage(_:)`` and left untouched. For a store on the real clock, call
    /// `processDueEvents()` next to play the lifecycle events that fell due while nothing ran.
    ///
    /// - Parameter clockMode: Runs the store on this clock instead of the one it was created with
    ///   (`storekit serve --clock`); time on a manual clock never runs backwards.
    public static func open(at directory: URL, clockMode override: ClockMode? = nil,
                            identifiers: IdentifierGenerator = .random) throws(AppStoreError) -> SimulatedAppStore {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .storage("\(directory.path) does not exist or is not a directory")
        }
        let database = databaseURL(in: directory)
        guard FileManager.default.fileExists(atPath: database.path) else {
            throw .storage("\(directory.path) is not a store directory (no \(databaseName)); create one with `storekit store create`")
        }
        let storage = try SQLiteLedgerStorage(path: database.path, create: false)
        let recorded = try clockMode(in: storage)
        let mode = override ?? recorded
        let authority: CertificateAuthority
        do { authority = try CertificateAuthority.load(from: authorityURL(in: directory)) } catch {
            throw .storage("the store's certificate authority is damaged: \(error)")
        }
        let clock: any StoreClock = mode == .manual ? ManualStoreClock(startingAt: Date(timeIntervalSince1970: 0)) : SystemStoreClock()
        return try SimulatedAppStore.open(storage: storage, authority: authority, clock: clock, identifiers: identifiers)
    }

    /// The certificate authority of a store directory (with its private keys: a server's OCSP responder signs with them).
    public static func authority(at directory: URL) throws(AppStoreError) -> CertificateAuthority {
        do { return try CertificateAuthority.load(from: authorityURL(in: directory)) } catch {
            throw .storage("the store's certificate authority is damaged: \(error)")
        }
    }

    /// The clock mode a store directory was created with.
    public static func clockMode(at directory: URL) throws(AppStoreError) -> ClockMode {
        try clockMode(in: SQLiteLedgerStorage(path: databaseURL(in: directory).path, create: false))
    }

    private static func clockMode(in storage: SQLiteLedgerStorage) throws(AppStoreError) -> ClockMode {
        let text = try storage.read { (reader) throws(AppStoreError) -> String? in
            guard reader.meta("identity") != nil else { throw .storage("\(storage.path) holds no store") }
            return reader.meta(clockModeKey)
        }
        guard let text else { return .manual }
        guard let mode = ClockMode(rawValue: text) else {
            throw .storage("the store's clock mode \"\(text)\" is damaged; it is manual or real")
        }
        return mode
    }
}
