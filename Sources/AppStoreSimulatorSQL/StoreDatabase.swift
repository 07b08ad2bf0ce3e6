import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import BlockingWork
import Foundation
import SQLDatabase
import StoreKitCatalog

/// A local App Store kept in a PostgreSQL database, which several `storekit serve` processes on
/// several machines share: the ledger's tables, and the certificate authority (keys included) in its
/// `meta` rows, so every instance signs as the one store.
///
/// Anyone who can read the database can read the store's signing keys, as anyone who can read a
/// store folder can: give the database to the store's users only.
public enum StoreDatabase {
    /// The `meta` key of an authority file (`authority.root.pem`, …).
    static func authorityKey(_ file: String) -> String { "authority.\(file)" }

    /// Whether a store argument names a database rather than a folder.
    public static func isDatabaseURL(_ text: String) -> Bool { text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") }

    /// Makes a store in the database at `url`, which must hold none yet: the ledger's tables (made by
    /// the named migrations, once, by whichever process comes first), the store, then its authority and
    /// clock. Two makers at once: one makes the store, the other is told the database holds one.
    @available(*, noasync, message: "creating a store blocks its thread; await the async create(url:…) instead")
    public static func create(url: String, configuration: StoreKitConfiguration, identity: StoreIdentity,
                              clockMode: StoreDirectory.ClockMode, start: Date, ocspURL: String? = nil,
                              identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) throws(AppStoreError) -> SimulatedAppStore {
        let clock: any StoreClock = clockMode == .manual ? ManualStoreClock(startingAt: start) : SystemStoreClock()
        let authority: CertificateAuthority
        let files: [(name: String, contents: String)]
        do {
            let leafStart = clock.now().addingTimeInterval(-CertificateAuthority.signingCertificateBackdating)
            authority = try CertificateAuthority.make(signingCertificateValidFrom: leafStart, ocspURL: ocspURL)
            files = try authority.pemFiles()
        } catch {
            throw .storage(.failed("cannot create the certificate authority: \(error)"))
        }
        let storage = try SQLLedgerStorage(postgresURL: url, create: true)
        _ = try SimulatedAppStore.create(configuration: configuration, identity: identity, authority: authority,
                                         storage: storage, clock: clock, identifiers: identifiers)
        // The store exists from its identity on; its authority follows in the next commit. A maker
        // stopped between the two leaves a store that says so when opened (see open(url:)).
        try storage.write { _ in
            var changes = LedgerChanges()
            for file in files { changes.meta[authorityKey(file.name)] = file.contents }
            changes.meta[StoreDirectory.clockModeKey] = clockMode.rawValue
            changes.meta[StoreDirectory.rootFingerprintKey] = authority.rootCertificate.sha256Fingerprint
            return (changes, ())
        }
        return try open(url: url, identifiers: identifiers, realTime: realTime)
    }

    /// Opens the store in the database at `url`.
    ///
    /// - Parameter clockMode: Runs the store on this clock instead of the one it was created with.
    @available(*, noasync, message: "opening a store blocks its thread; await the async open(url:…) instead")
    public static func open(url: String, clockMode override: StoreDirectory.ClockMode? = nil,
                            identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) throws(AppStoreError) -> SimulatedAppStore {
        try openWithDetails(url: url, clockMode: override, identifiers: identifiers, realTime: realTime).store
    }

    /// ``open(url:clockMode:identifiers:realTime:)``, with the clock the store was created with and its
    /// certificate authority, from the one connection that opened it.
    @available(*, noasync, message: "opening a store blocks its thread")
    public static func openWithDetails(url: String, clockMode override: StoreDirectory.ClockMode? = nil, identifiers: IdentifierGenerator = .random,
                                       realTime: any StoreClock = SystemStoreClock())
        throws(AppStoreError) -> (store: SimulatedAppStore, clockMode: StoreDirectory.ClockMode, authority: CertificateAuthority) {
        let storage = try SQLLedgerStorage(postgresURL: url, create: false)
        let (mode, authority) = try details(of: storage)
        let clock: any StoreClock = (override ?? mode) == .manual ? ManualStoreClock(startingAt: Date(timeIntervalSince1970: 0)) : SystemStoreClock()
        let store = try SimulatedAppStore.open(storage: storage, authority: authority, clock: clock, identifiers: identifiers, realTime: realTime)
        return (store, mode, authority)
    }

    private static func details(of storage: SQLLedgerStorage) throws(AppStoreError) -> (clockMode: StoreDirectory.ClockMode, authority: CertificateAuthority) {
        let names = [CertificateAuthority.FileName.rootCertificate, CertificateAuthority.FileName.intermediateCertificate,
                     CertificateAuthority.FileName.signingCertificate, CertificateAuthority.FileName.rootKey,
                     CertificateAuthority.FileName.intermediateKey, CertificateAuthority.FileName.signingKey]
        let (identity, modeText, files, fingerprint) = try storage.read { (reader) throws(AppStoreError) in
            (reader.meta("identity"), reader.meta(StoreDirectory.clockModeKey),
             Dictionary(uniqueKeysWithValues: names.compactMap { name in reader.meta(authorityKey(name)).map { (name, $0) } }),
             reader.meta(StoreDirectory.rootFingerprintKey))
        }
        guard identity != nil else { throw .storage(.failed("\(storage.path) holds no store; create one with `storekit store create --database`")) }
        guard files.count == names.count else {
            throw .storage(.damaged("the store in \(storage.path) has no certificate authority: it was not completely created; drop the database's tables and create it again"))
        }
        let authority: CertificateAuthority
        do { authority = try CertificateAuthority.load(pemFiles: files, source: storage.path) } catch {
            throw .storage(.damaged("the store's certificate authority in \(storage.path) is damaged: \(error)"))
        }
        if let fingerprint, fingerprint != authority.rootCertificate.sha256Fingerprint {
            throw .storage(.damaged("the certificate authority in \(storage.path) is not the store's: its root is \(authority.rootCertificate.sha256Fingerprint), the store was created with \(fingerprint)"))
        }
        guard let mode = StoreDirectory.ClockMode(rawValue: modeText ?? StoreDirectory.ClockMode.manual.rawValue) else {
            throw .storage(.damaged("the store's clock mode \"\(modeText ?? "")\" is damaged; it is manual or real"))
        }
        return (mode, authority)
    }
}

/// Where a store is kept: a folder (`storekit store create DIR`) or a PostgreSQL database
/// (`storekit store create --database postgres://…`), opened the same way by every command and server.
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    case directory(URL)
    /// A `postgres://` URL (its password, if any, is never shown).
    case database(String)

    /// A folder path, or a database URL.
    public init(_ argument: String) {
        self = StoreDatabase.isDatabaseURL(argument) ? .database(argument) : .directory(URL(fileURLWithPath: argument))
    }

    /// The folder's path, or the URL without its password.
    public var description: String {
        switch self {
        case .directory(let url): return url.path
        case .database(let url): return PostgresDatabaseConnection.withoutPassword(url)
        }
    }

    /// Opens the store, off the cooperative pool.
    public func open(clockMode: StoreDirectory.ClockMode? = nil, identifiers: IdentifierGenerator = .random,
                     realTime: any StoreClock = SystemStoreClock()) async throws(AppStoreError) -> SimulatedAppStore {
        let location = self
        return try await BlockingWork.run("StoreLocation.open") { () throws(AppStoreError) -> SimulatedAppStore in
            switch location {
            case .directory(let url): return try StoreDirectory.open(at: url, clockMode: clockMode, identifiers: identifiers, realTime: realTime)
            case .database(let url): return try StoreDatabase.open(url: url, clockMode: clockMode, identifiers: identifiers, realTime: realTime)
            }
        }
    }

    /// Opens the store, off the cooperative pool, with the clock it was created with and its
    /// certificate authority (a server needs both); a database is opened once for all three.
    public func openWithDetails(clockMode: StoreDirectory.ClockMode? = nil, identifiers: IdentifierGenerator = .random,
                                realTime: any StoreClock = SystemStoreClock()) async throws(AppStoreError)
        -> (store: SimulatedAppStore, clockMode: StoreDirectory.ClockMode, authority: CertificateAuthority) {
        let location = self
        return try await BlockingWork.run("StoreLocation.openWithDetails") { () throws(AppStoreError) in
            switch location {
            case .directory(let url):
                let created = try StoreDirectory.clockMode(at: url)
                let store = try StoreDirectory.open(at: url, clockMode: clockMode ?? created, identifiers: identifiers, realTime: realTime)
                return (store, created, try StoreDirectory.authority(at: url))
            case .database(let url):
                return try StoreDatabase.openWithDetails(url: url, clockMode: clockMode, identifiers: identifiers, realTime: realTime)
            }
        }
    }

    /// Makes a store here, off the cooperative pool.
    public func create(configuration: StoreKitConfiguration, identity: StoreIdentity, clockMode: StoreDirectory.ClockMode, start: Date,
                       ocspURL: String? = nil, identifiers: IdentifierGenerator = .random) async throws(AppStoreError) -> SimulatedAppStore {
        let location = self
        return try await BlockingWork.run("StoreLocation.create") { () throws(AppStoreError) -> SimulatedAppStore in
            switch location {
            case .directory(let url):
                return try StoreDirectory.create(at: url, configuration: configuration, identity: identity, clockMode: clockMode, start: start,
                                                 ocspURL: ocspURL, identifiers: identifiers)
            case .database(let url):
                return try StoreDatabase.create(url: url, configuration: configuration, identity: identity, clockMode: clockMode, start: start,
                                                ocspURL: ocspURL, identifiers: identifiers)
            }
        }
    }
}
