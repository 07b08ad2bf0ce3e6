import BlockingWork
import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
#if canImport(Glibc)
import Glibc
#endif
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
    /// The store is built in a hidden sibling folder and renamed into place, so a crash at any moment
    /// leaves either no store or a whole one. The folder is private to its owner (0700), the ledger
    /// 0600 (it holds the `.storekit` file's offer-signing key), and the authority's root fingerprint is
    /// recorded so that a replaced `ca/` is noticed. Refuses a folder that is not empty.
    ///
    /// - Parameter start: The manual clock's starting time (ignored for the real clock).
    ///
    /// Creating writes and syncs files: the work runs on a thread of its own (``BlockingWork``), never
    /// on Swift's cooperative pool.
    public static func create(at directory: URL, configuration: StoreKitConfiguration, identity: StoreIdentity,
                              clockMode: ClockMode, start: Date, ocspURL: String? = nil,
                              identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) async throws(AppStoreError) -> SimulatedAppStore {
        try await BlockingWork.run("StoreDirectory.create") { () throws(AppStoreError) -> SimulatedAppStore in
            try create(at: directory, configuration: configuration, identity: identity, clockMode: clockMode, start: start,
                       ocspURL: ocspURL, identifiers: identifiers, realTime: realTime)
        }
    }

    /// ``create(at:configuration:identity:clockMode:start:ocspURL:identifiers:)`` on the calling thread,
    /// which it blocks: for code that runs on a thread of its own.
    @available(*, noasync, message: "creating a store blocks its thread; await the async create(at:…) instead")
    public static func create(at directory: URL, configuration: StoreKitConfiguration, identity: StoreIdentity,
                              clockMode: ClockMode, start: Date, ocspURL: String? = nil,
                              identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) throws(AppStoreError) -> SimulatedAppStore {
        let fileManager = FileManager.default
        if fileManager.fileExists(atPath: databaseURL(in: directory).path) { throw .storage(.failed("\(directory.path) already holds a store")) }
        if let contents = try? fileManager.contentsOfDirectory(atPath: directory.path), !contents.isEmpty {
            throw .storage(.failed("\(directory.path) is not empty; a store is created in a new or empty folder"))
        }
        let parent = directory.deletingLastPathComponent()
        do { try fileManager.createDirectory(at: parent, withIntermediateDirectories: true) } catch {
            throw .storage(.failed("cannot create \(parent.path): \(error.localizedDescription)"))
        }
        let staging = parent.appendingPathComponent(".\(directory.lastPathComponent).creating-\(getpid())")
        try? fileManager.removeItem(at: staging)
        guard mkdir(staging.path, 0o700) == 0 else {
            throw .storage(.failed("cannot create \(staging.path): \(String(cString: strerror(errno)))"))
        }
        do throws(AppStoreError) {
            try build(in: staging, configuration: configuration, identity: identity, clockMode: clockMode, start: start, ocspURL: ocspURL,
                      identifiers: identifiers)
            // rename(2) is atomic, and replaces an empty folder the user made for the store.
            guard rename(staging.path, directory.path) == 0 else {
                throw .storage(.failed("cannot move the new store into \(directory.path): \(String(cString: strerror(errno)))"))
            }
        } catch {
            try? fileManager.removeItem(at: staging)
            throw error
        }
        return try open(at: directory, identifiers: identifiers, realTime: realTime)
    }

    /// Makes the authority and the ledger in `folder` and closes them again.
    private static func build(in folder: URL, configuration: StoreKitConfiguration, identity: StoreIdentity, clockMode: ClockMode, start: Date,
                              ocspURL: String?, identifiers: IdentifierGenerator) throws(AppStoreError) {
        let clock: any StoreClock = clockMode == .manual ? ManualStoreClock(startingAt: start) : SystemStoreClock()
        let authority: CertificateAuthority
        do {
            // The first signing leaf is valid from the store's start, for as long as Apple's are; the store
            // issues the next ones as its clock moves on.
            let leafStart = clock.now().addingTimeInterval(-CertificateAuthority.signingCertificateBackdating)
            authority = try CertificateAuthority.make(signingCertificateValidFrom: leafStart, ocspURL: ocspURL)
            try authority.save(to: authorityURL(in: folder))
        } catch {
            throw AppStoreError.storage(.failed("cannot create the certificate authority: \(error)"))
        }
        // The ledger file exists, private, before SQLite opens it; its journal files take its mode.
        let database = databaseURL(in: folder).path
        let descriptor = Glibc.open(database, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .storage(.failed("cannot create \(database): \(String(cString: strerror(errno)))")) }
        close(descriptor)
        let storage = try SQLLedgerStorage(path: database, create: true)
        _ = try SimulatedAppStore.create(configuration: configuration, identity: identity, authority: authority,
                                         storage: storage, clock: clock, identifiers: identifiers)
        try storage.write { _ in
            var changes = LedgerChanges()
            changes.meta[clockModeKey] = clockMode.rawValue
            changes.meta[rootFingerprintKey] = authority.rootCertificate.sha256Fingerprint
            return (changes, ())
        }
    }

    static let rootFingerprintKey = "directory.rootFingerprint"

    /// Opens the store in a directory.
    ///
    /// A directory that does not exist, lacks a ledger or whose ledger is damaged is reported as
    /// ``AppStoreError/storage(_:)`` and left untouched. For a store on the real clock, call
    /// `processDueEvents()` next to play the lifecycle events that fell due while nothing ran.
    ///
    /// - Parameter clockMode: Runs the store on this clock instead of the one it was created with
    ///   (`storekit serve --clock`); time on a manual clock never runs backwards.
    ///
    /// Opening may convert the ledger once and waits for SQLite: the work runs on a thread of its own
    /// (``BlockingWork``), never on Swift's cooperative pool.
    public static func open(at directory: URL, clockMode override: ClockMode? = nil,
                            identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) async throws(AppStoreError) -> SimulatedAppStore {
        try await BlockingWork.run("StoreDirectory.open") { () throws(AppStoreError) -> SimulatedAppStore in
            try open(at: directory, clockMode: override, identifiers: identifiers, realTime: realTime)
        }
    }

    /// ``open(at:clockMode:identifiers:)`` on the calling thread, which it blocks: for code that runs
    /// on a thread of its own.
    @available(*, noasync, message: "opening a store blocks its thread; await the async open(at:…) instead")
    public static func open(at directory: URL, clockMode override: ClockMode? = nil,
                            identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) throws(AppStoreError) -> SimulatedAppStore {
        try checkIsStore(directory)
        let database = databaseURL(in: directory)
        try refuseIfOthersCanWrite([directory, database, authorityURL(in: directory)])
        let storage = try SQLLedgerStorage(path: database.path, create: false)
        let recordedMode = try clockMode(in: storage)
        let mode = override ?? recordedMode
        let authority = try self.authority(at: directory)
        let recorded = try storage.read { (reader) throws(AppStoreError) in reader.meta(rootFingerprintKey) }
        if let recorded, recorded != authority.rootCertificate.sha256Fingerprint {
            throw .storage(.damaged("the certificate authority in \(authorityURL(in: directory).path) is not the store's: its root is \(authority.rootCertificate.sha256Fingerprint), the store was created with \(recorded)"))
        }
        let clock: any StoreClock = mode == .manual ? ManualStoreClock(startingAt: Date(timeIntervalSince1970: 0)) : SystemStoreClock()
        return try SimulatedAppStore.open(storage: storage, authority: authority, clock: clock, identifiers: identifiers, realTime: realTime)
    }

    /// Refuses a path that is not a store folder, before anything in it is opened.
    static func checkIsStore(_ directory: URL) throws(AppStoreError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .storage(.failed("\(directory.path) does not exist or is not a directory"))
        }
        guard FileManager.default.fileExists(atPath: databaseURL(in: directory).path) else {
            throw .storage(.failed("\(directory.path) is not a store directory (no \(databaseName)); create one with `storekit store create`"))
        }
    }

    /// Refuses a store another user could change (its folder, ledger or certificate authority writable
    /// by group or others), as ssh refuses a key others can read: such a user could delete every
    /// transaction or sign as the store.
    static func refuseIfOthersCanWrite(_ urls: [URL]) throws(AppStoreError) {
        for url in urls {
            var status = stat()
            guard lstat(url.path, &status) == 0 else { continue }
            let mode = status.st_mode & 0o7777
            if mode & 0o022 != 0 {
                let fix = (status.st_mode & S_IFMT) == S_IFDIR ? "chmod 700" : "chmod 600"
                throw .storage(.failed("\(url.path) can be written by other users (mode \(String(mode, radix: 8))), so they could change the store; run \(fix) \(url.path)"))
            }
        }
    }

    /// The certificate authority of a store directory (with its private keys: a server's OCSP responder signs with them).
    public static func authority(at directory: URL) throws(AppStoreError) -> CertificateAuthority {
        do { return try CertificateAuthority.load(from: authorityURL(in: directory)) } catch {
            throw .storage(.damaged("the store's certificate authority is damaged: \(error)"))
        }
    }

    /// The clock mode a store directory was created with, read on a thread of its own.
    public static func clockMode(at directory: URL) async throws(AppStoreError) -> ClockMode {
        try await BlockingWork.run("StoreDirectory.clockMode") { () throws(AppStoreError) -> ClockMode in try clockMode(at: directory) }
    }

    /// ``clockMode(at:)`` on the calling thread, which it blocks.
    @available(*, noasync, message: "reading a store blocks its thread; await the async clockMode(at:) instead")
    public static func clockMode(at directory: URL) throws(AppStoreError) -> ClockMode {
        try checkIsStore(directory)
        return try clockMode(in: SQLLedgerStorage(path: databaseURL(in: directory).path, create: false))
    }

    private static func clockMode(in storage: SQLLedgerStorage) throws(AppStoreError) -> ClockMode {
        let text = try storage.read { (reader) throws(AppStoreError) -> String? in
            guard reader.meta("identity") != nil else { throw .storage(.damaged("\(storage.path) holds no store")) }
            return reader.meta(clockModeKey)
        }
        guard let text else { return .manual }
        guard let mode = ClockMode(rawValue: text) else {
            throw .storage(.damaged("the store's clock mode \"\(text)\" is damaged; it is manual or real"))
        }
        return mode
    }
}
