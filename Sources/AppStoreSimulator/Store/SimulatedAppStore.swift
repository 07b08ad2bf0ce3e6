import AppStoreModels
import AppStoreSigning
import BlockingWork
import Foundation
import StoreKitCatalog

/// The local App Store: sells a `.storekit` catalog, keeps a durable ledger and signs everything it hands out.
///
/// A store keeps no copy of its ledger: every operation is a unit of work on its ``LedgerStorage``,
/// which other processes may share, and a change is acknowledged only once it is committed: when a
/// call returns, the change is durable; when it throws, nothing changed.
///
/// The store runs on an executor of its own (``executor``), a serial queue outside Swift's
/// cooperative pool: its units of work block (SQLite waits for other processes' write locks and
/// `fsync`s every commit, an advance waits for the lifecycle lease), and blocking there never takes a
/// thread from the tasks that call it.
/// Time comes from the injected ``StoreClock`` and identifiers from the injected
/// ``IdentifierGenerator``; transaction identifiers count up from 0 as in Xcode.
///
/// ```swift
/// let store = try SimulatedAppStore.create(configuration: shop, identity: StoreIdentity(bundleId: "com.example.shop"),
///                                          authority: try .make(), storage: InMemoryLedgerStorage(),
///                                          clock: ManualStoreClock(startingAt: start))
/// let outcome = try await store.purchase(PurchaseRequest(productID: "com.example.shop.pro", account: "alice", device: "phone"))
/// ```
public actor SimulatedAppStore {
    /// The app and environment the store signs for.
    public nonisolated let identity: StoreIdentity
    /// The root every signed payload chains to; servers and clients trust it.
    public nonisolated let rootCertificate: Certificate
    nonisolated let storage: any LedgerStorage

    /// While the store's writes fail (a full disk, a database away): the latest failure and when the
    /// run of them began, in real time; `nil` once a write commits again.
    public nonisolated var writeFailure: (failure: StorageFailure, since: Date)? { storage.writeFailure }
    nonisolated let clock: any StoreClock
    /// Real time, apart from the store's clock: signing certificates' validity and senders' claims.
    nonisolated let realTime: any StoreClock
    nonisolated let identifiers: IdentifierGenerator
    /// The signing leaves, issued as the store's clock moves.
    nonisolated let signingCertificates: SigningCertificates
    /// Where the store's methods run: a serial queue of its own, never the cooperative pool.
    public nonisolated let executor: SerialQueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    let configuration: StoreKitConfiguration
    let defaults: StoreSettings
    /// The runtime settings and the settings in force, as of the ledger version last read
    /// (``knownVersion``); refreshed at the start of every unit of work that finds a newer version.
    var overrides: SettingsOverrides
    var settings: StoreSettings
    /// The identifier counters as of ``knownVersion``; a write takes identifiers from them and commits
    /// the advanced counters with the rows that use them.
    var counters = LedgerCounters()
    /// The ledger version the cached meta values (settings, counters, clock) were read at.
    var knownVersion: Int64 = -1
    var catalogCache: [String: Catalog] = [:]
    /// The manual clock time the ledger holds, so unchanged time is not rewritten.
    var recordedClockTime: Int64?
    /// The reader of the unit of work in progress (see ``reading(_:)`` and ``writing(_:)``).
    var currentReader: (any LedgerReader)?
    /// Tasks waiting for a device's feed, by device and waiter (see ``waitForUpdates(device:channel:)``).
    var updateWaiters: [String: [UInt64: CheckedContinuation<Void, Never>]] = [:]
    /// Tasks waiting for any change to the ledger (see ``waitForChange(from:)``).
    var changeWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    var waiterCount: UInt64 = 0
    /// Whether the change watcher runs (see ``waitForChange(from:)``).
    var isWatchingForChanges = false
    /// The lifecycle lease this store holds for good, if any (see ``holdLifecycleLease(wait:)``).
    var heldLease: (any LifecycleLease)?
    /// The stored notification URL the last claim of due notifications refused (a store folder
    /// written by hand), until a sender takes it to say why nothing is posted
    /// (``takeRefusedNotificationURL()``).
    var refusedNotificationURL: String?
    /// Purchases committed together, a group at a time (see ``purchase(_:)``).
    nonisolated let purchaseCommits = GroupCommit<PurchaseRequest, Result<CommittedPurchase, AppStoreError>>(gatheringRounds: 8)

    /// The meta keys of the ledger.
    enum MetaKey {
        static let identity = "identity"
        static let configuration = "configuration"
        static let overrides = "overrides"
        static let counters = "counters"
        static let clock = "clock"
        static let schema = "schema"
        /// The nonces of legacy promotional-offer signatures already used, with their timestamps.
        static let offerNonces = "offerNonces"
        /// What customers will do in the sheets their devices show next, by device (see ``queueCustomerResponse(_:device:)``).
        static let customerResponses = "customerResponses"
    }

    /// The ledger format this code writes.
    public static let schemaVersion = 2

    // MARK: Opening

    /// Creates a new store in empty storage, writing to it on a thread of its own (``BlockingWork``):
    /// durable storage waits for its disk and its locks, never on Swift's cooperative pool.
    ///
    /// - Throws: ``AppStoreError/storage(_:)`` when the storage already holds a store or cannot be written.
    public static func create(configuration: StoreKitConfiguration, identity: StoreIdentity, authority: CertificateAuthority,
                              storage: any LedgerStorage, clock: any StoreClock,
                              identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) async throws(AppStoreError) -> SimulatedAppStore {
        try await BlockingWork.run("SimulatedAppStore.create") { () throws(AppStoreError) -> SimulatedAppStore in
            try create(configuration: configuration, identity: identity, authority: authority, storage: storage, clock: clock,
                       identifiers: identifiers, realTime: realTime)
        }
    }

    /// ``create(configuration:identity:authority:storage:clock:identifiers:realTime:)`` on the calling
    /// thread, which durable storage blocks: for code on a thread of its own (a test session's
    /// synchronous initializer on in-memory storage).
    @available(*, noasync, message: "creating a store writes its storage on this thread; await the async create(…) instead")
    public static func create(configuration: StoreKitConfiguration, identity: StoreIdentity, authority: CertificateAuthority,
                              storage: any LedgerStorage, clock: any StoreClock,
                              identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) throws(AppStoreError) -> SimulatedAppStore {
        try StoreTimeRange.check(clock.now(), "the start time")
        let configurationText = String(decoding: configuration.jsonData(), as: UTF8.self)
        let meta: [String: String] = [
            MetaKey.schema: String(schemaVersion),
            MetaKey.identity: try encode(identity),
            MetaKey.configuration: configurationText,
            MetaKey.overrides: try encode(SettingsOverrides()),
            MetaKey.counters: try encode(LedgerCounters(for: identity.environment)),
            MetaKey.clock: String(AppStoreJSON.milliseconds(from: clock.now())),
        ]
        try storage.write { (reader) throws(AppStoreError) -> (LedgerChanges, Void) in
            guard reader.meta(MetaKey.identity) == nil else { throw .storage(.failed("the storage already holds a store")) }
            var changes = LedgerChanges()
            changes.meta = meta
            return (changes, ())
        }
        return try open(storage: storage, authority: authority, clock: clock, identifiers: identifiers, realTime: realTime)
    }

    /// Opens the store in `storage`.
    ///
    /// Opening reads the store's identity, configuration and settings, nothing else: the ledger stays
    /// in the storage and each operation reads the rows it concerns. A ``ManualStoreClock`` is moved to
    /// the time the store last recorded, so simulated time survives restarts.
    ///
    /// `realTime` is the time in the real world, which only the signing certificates follow: each is
    /// valid at the store's time and at the real time, so verifiers with online checks (which judge
    /// certificates by the real time) accept what a store signs whatever its clock shows.
    ///
    /// Reading runs on a thread of its own (``BlockingWork``), never on Swift's cooperative pool.
    public static func open(storage: any LedgerStorage, authority: CertificateAuthority, clock: any StoreClock,
                            identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) async throws(AppStoreError) -> SimulatedAppStore {
        try await BlockingWork.run("SimulatedAppStore.open") { () throws(AppStoreError) -> SimulatedAppStore in
            try open(storage: storage, authority: authority, clock: clock, identifiers: identifiers, realTime: realTime)
        }
    }

    /// ``open(storage:authority:clock:identifiers:realTime:)`` on the calling thread, which durable
    /// storage blocks: for code on a thread of its own.
    @available(*, noasync, message: "opening a store reads its storage on this thread; await the async open(…) instead")
    public static func open(storage: any LedgerStorage, authority: CertificateAuthority, clock: any StoreClock,
                            identifiers: IdentifierGenerator = .random, realTime: any StoreClock = SystemStoreClock()) throws(AppStoreError) -> SimulatedAppStore {
        let (identityText, configurationText, meta) = try storage.read { (reader) throws(AppStoreError) -> (String, String, LedgerMeta) in
            guard let identity = reader.meta(MetaKey.identity) else { throw .storage(.damaged("the storage holds no store")) }
            guard let schema = reader.meta(MetaKey.schema).flatMap({ Int($0) }), schema <= Self.schemaVersion else {
                throw .storage(.failed("the ledger was written by a newer version of OpenStoreKit"))
            }
            guard let configuration = reader.meta(MetaKey.configuration) else {
                throw .storage(.damaged("the ledger has no configuration record; it is not a store or it is damaged"))
            }
            return (identity, configuration, try LedgerMeta(reader))
        }
        let identity = try decode(StoreIdentity.self, identityText)
        let configuration: StoreKitConfiguration
        do {
            configuration = try StoreKitConfiguration.read(Data(configurationText.utf8), fileName: "stored configuration").configuration
        } catch {
            throw .storage(.damaged("the stored configuration is damaged: \(error)"))
        }
        return try SimulatedAppStore(identity: identity, configuration: configuration, meta: meta, storage: storage, authority: authority,
                                     clock: clock, identifiers: identifiers, realTime: realTime)
    }

    private init(identity: StoreIdentity, configuration: StoreKitConfiguration, meta: LedgerMeta, storage: any LedgerStorage,
                 authority: CertificateAuthority, clock: any StoreClock, identifiers: IdentifierGenerator, realTime: any StoreClock) throws(AppStoreError) {
        self.identity = identity
        self.executor = SerialQueueExecutor(label: "SimulatedAppStore \(identity.bundleId)")
        self.rootCertificate = authority.rootCertificate
        self.storage = storage
        self.clock = clock
        self.realTime = realTime
        self.identifiers = identifiers
        do { self.signingCertificates = try SigningCertificates(authority: authority, realTime: { realTime.now() }) } catch {
            throw .storage(.failed("cannot sign with the store's authority: \(error)"))
        }
        self.configuration = configuration
        self.defaults = StoreSettings(configuration: configuration)
        self.overrides = meta.overrides
        self.settings = meta.overrides.applied(to: defaults)
        self.counters = meta.counters
        self.knownVersion = meta.version
        if let manual = clock as? ManualStoreClock {
            manual.set(to: AppStoreJSON.date(fromMilliseconds: meta.clockTime))
            self.recordedClockTime = AppStoreJSON.milliseconds(from: manual.now())
        }
    }

    // MARK: Settings and catalog

    /// The `.storekit` configuration the store sells.
    public var storeKitConfiguration: StoreKitConfiguration { configuration }

    /// The catalog as presented in a storefront (the settings' storefront by default).
    public func catalog(storefront code: String? = nil) -> Catalog {
        let settings = self.settings
        let storefront = code.flatMap { Storefront(code: $0) } ?? Storefront(code: settings.storefront) ?? .unitedStates
        let key = "\(storefront.countryCode)|\(settings.locale)"
        if let cached = catalogCache[key] { return cached }
        let catalog = Catalog(configuration: configuration, locale: settings.locale, storefront: storefront)
        catalogCache[key] = catalog
        return catalog
    }

    /// The storefront an account buys in.
    func storefront(of account: StoreAccount) -> Storefront {
        account.storefront.flatMap { Storefront(code: $0) } ?? Storefront(code: settings.storefront) ?? .unitedStates
    }

    /// The current time of the store's clock, as of the last unit of work (see ``currentTime()``).
    public var now: Date { clock.now() }

    /// The store's current time as the ledger has it now: another process may have advanced a manual clock.
    public func currentTime() throws(AppStoreError) -> Date {
        try reading { clock.now() }
    }

    /// The settings in force now: the file's defaults with the runtime overrides the ledger holds.
    public func currentSettings() throws(AppStoreError) -> StoreSettings {
        try reading { settings }
    }

    // MARK: Units of work

    /// The meta values every unit of work needs, as of one ledger version.
    struct LedgerMeta {
        var version: Int64
        var overrides: SettingsOverrides
        var counters: LedgerCounters
        var clockTime: Int64

        init(_ reader: any LedgerReader) throws(AppStoreError) {
            func value(_ key: String) throws(AppStoreError) -> String {
                guard let value = reader.meta(key) else {
                    throw reader.failure ?? .storage(.damaged("the ledger has no \(key) record; it is not a store or it is damaged"))
                }
                return value
            }
            version = reader.version
            overrides = try SimulatedAppStore.decode(SettingsOverrides.self, try value(MetaKey.overrides))
            counters = try SimulatedAppStore.decode(LedgerCounters.self, try value(MetaKey.counters))
            let clockText = try value(MetaKey.clock)
            guard let clockTime = Int64(clockText), StoreTimeRange.contains(AppStoreJSON.date(fromMilliseconds: clockTime)) else {
                throw .storage(.damaged("the ledger's clock record is damaged: \"\(clockText)\" is not a time from 1970 to 9999 in milliseconds"))
            }
            self.clockTime = clockTime
        }
    }

    /// The ledger of the unit of work in progress.
    var ledger: any LedgerReader {
        guard let currentReader else { preconditionFailure("the ledger is read inside reading(_:) or writing(_:)") }
        return currentReader
    }

    /// Brings the cached meta values (settings, counters, the manual clock) to the reader's version.
    ///
    /// A version this store did not commit is another process's change: every waiter wakes to look.
    private func refresh(from reader: any LedgerReader) throws(AppStoreError) {
        guard reader.version != knownVersion else { return }
        if knownVersion >= 0 { wakeEveryWaiter() }
        let meta = try LedgerMeta(reader)
        if meta.overrides != overrides {
            overrides = meta.overrides
            settings = overrides.applied(to: defaults)
            catalogCache = [:]
        }
        counters = meta.counters
        if let manual = clock as? ManualStoreClock {
            manual.set(to: AppStoreJSON.date(fromMilliseconds: meta.clockTime))
            recordedClockTime = meta.clockTime
        }
        knownVersion = meta.version
    }

    /// Runs a view on one consistent snapshot of the ledger (or inside the unit of work in progress).
    func reading<Result>(_ body: () throws(AppStoreError) -> Result) throws(AppStoreError) -> Result {
        if currentReader != nil { return try body() }
        return try storage.read { (reader) throws(AppStoreError) -> Result in
            currentReader = reader
            defer { currentReader = nil }
            try refresh(from: reader)
            do throws(AppStoreError) { return try body() } catch { throw reader.failure ?? error }
        }
    }

    /// Runs an operation as one unit of work: under the storage's write lock it reads what it needs,
    /// prepares a ``Change`` and commits it; only then does the store acknowledge it (wake listeners,
    /// remember the new counters). When the body or the commit throws, nothing changed.
    func writing<Result>(_ body: (inout Change) throws(AppStoreError) -> Result) throws(AppStoreError) -> Result {
        precondition(currentReader == nil, "units of work do not nest")
        var committed: (change: Change, ledger: LedgerChanges, version: Int64)?
        let result = try storage.write { (reader) throws(AppStoreError) -> (LedgerChanges, Result) in
            currentReader = reader
            defer { currentReader = nil }
            try refresh(from: reader)
            var change = Change(counters: counters)
            let result: Result
            do throws(AppStoreError) { result = try body(&change) } catch { throw reader.failure ?? error }
            if let failure = reader.failure { throw failure }
            let ledger = try finalize(change)
            committed = (change, ledger, reader.version)
            return (ledger, result)
        }
        if let committed, !committed.ledger.isEmpty { didCommit(committed.change, committed.ledger, version: committed.version + 1) }
        return result
    }

    /// Runs an operation for each input as one unit of work with one durable commit (group commit).
    ///
    /// Each run sees the ledger with the runs before it laid over it, as if they had committed one
    /// after the other. A run that throws contributes nothing and gets its error back; the others still
    /// commit. A run may return `nil` to step aside: it changed nothing and is run again in a later
    /// unit. A storage failure or a failed commit fails every run. Nothing is acknowledged before the
    /// commit.
    func writingTogether<Input, Result>(_ inputs: [Input], body: (Input, inout Change) throws(AppStoreError) -> Result?)
        throws(AppStoreError) -> [Swift.Result<Result, AppStoreError>?] {
        precondition(currentReader == nil, "units of work do not nest")
        var committed: (change: Change, ledger: LedgerChanges, version: Int64)?
        let results = try storage.write { (reader) throws(AppStoreError) -> (LedgerChanges, [Swift.Result<Result, AppStoreError>?]) in
            currentReader = reader
            defer { currentReader = nil }
            try refresh(from: reader)
            var change = Change(counters: counters)
            var results: [Swift.Result<Result, AppStoreError>?] = []
            results.reserveCapacity(inputs.count)
            for input in inputs {
                let before = change
                do throws(AppStoreError) {
                    let result = try body(input, &change)
                    if result == nil { change = before }
                    results.append(result.map { .success($0) })
                } catch {
                    if let failure = reader.failure { throw failure }
                    change = before
                    results.append(.failure(error))
                }
            }
            if let failure = reader.failure { throw failure }
            let ledger = try finalize(change)
            committed = (change, ledger, reader.version)
            return (ledger, results)
        }
        if let committed, !committed.ledger.isEmpty { didCommit(committed.change, committed.ledger, version: committed.version + 1) }
        return results
    }

    /// A change being prepared: ledger changes plus the counters it consumed.
    struct Change {
        var ledger = LedgerChanges()
        var counters: LedgerCounters
        /// Set when the change touches settings.
        var overrides: SettingsOverrides?
        /// Set by an import: subscriptions it writes keep the renewal info Apple signed. Any other change
        /// to an imported subscription makes its renewal info the store's own (see ``SubscriptionRecord/importedRenewalInfo``).
        var keepsImportedRenewalInfo = false

        mutating func takeTransactionID() -> UInt64 {
            defer { counters.nextTransactionID += 1 }
            return counters.nextTransactionID
        }

        mutating func takeWebOrderLineItemID() -> String {
            defer { counters.nextWebOrderLineItemID += 1 }
            return String(counters.nextWebOrderLineItemID)
        }

        mutating func takeAppTransactionID() -> String {
            defer { counters.nextAppTransactionID += 1 }
            return String(counters.nextAppTransactionID)
        }

        mutating func record(_ transaction: LedgerTransaction) {
            ledger.transactions[transaction.id] = transaction
        }

        mutating func record(_ subscription: SubscriptionRecord) {
            ledger.subscriptions[subscription.originalTransactionID] = subscription
        }
    }

    /// The ledger changes of a prepared change, with the meta values it moved.
    private func finalize(_ change: Change) throws(AppStoreError) -> LedgerChanges {
        var ledger = change.ledger
        // Apple's payload belongs to the transaction it was imported with, never to one the store derives from it (a renewal).
        for (id, transaction) in ledger.transactions where transaction.imported.map({ $0.transactionId != String(id) }) == true {
            ledger.transactions[id]?.imported = nil
        }
        if !change.keepsImportedRenewalInfo {
            for (id, record) in ledger.subscriptions where record.importedRenewalInfo != nil && record != self.ledger.subscription(id) {
                ledger.subscriptions[id]?.importedRenewalInfo = nil
            }
        }
        if change.counters != counters { ledger.meta[MetaKey.counters] = try Self.encode(change.counters) }
        if let overrides = change.overrides { ledger.meta[MetaKey.overrides] = try Self.encode(overrides) }
        if clock is ManualStoreClock {
            let clockTime = AppStoreJSON.milliseconds(from: clock.now())
            // The clock only moves forward and was brought to the ledger's time when the unit began.
            if clockTime != recordedClockTime { ledger.meta[MetaKey.clock] = String(clockTime) }
        }
        return ledger
    }

    /// What the store remembers once a change is committed: the counters and settings it wrote, and
    /// the listeners of the devices whose feeds grew.
    private func didCommit(_ change: Change, _ ledger: LedgerChanges, version: Int64) {
        counters = change.counters
        knownVersion = version
        if let clockTime = ledger.meta[MetaKey.clock].flatMap({ Int64($0) }) { recordedClockTime = clockTime }
        if let overrides = change.overrides, overrides != self.overrides {
            self.overrides = overrides
            settings = overrides.applied(to: defaults)
            catalogCache = [:]
        }
        for device in Set(ledger.appendedUpdates.map(\.device)) { wakeWaiters(device: device) }
        let changes = changeWaiters
        changeWaiters = [:]
        for waiter in changes.values { waiter.resume() }
    }

    // MARK: Reading rows, with the change in progress laid over the ledger

    func storedTransaction(_ id: UInt64, in change: Change? = nil) -> LedgerTransaction? {
        if let change {
            if let pending = change.ledger.transactions[id] { return pending }
            if change.ledger.deletedTransactions.contains(id) { return nil }
        }
        return ledger.transaction(id)
    }

    func storedSubscription(_ id: UInt64, in change: Change? = nil) -> SubscriptionRecord? {
        if let change {
            if let pending = change.ledger.subscriptions[id] { return pending }
            if change.ledger.deletedSubscriptions.contains(id) { return nil }
        }
        return ledger.subscription(id)
    }

    func storedAccount(_ name: String, in change: Change? = nil) -> StoreAccount? {
        change?.ledger.accounts[name] ?? ledger.account(name)
    }

    func storedDevice(_ name: String, in change: Change? = nil) -> StoreDevice? {
        change?.ledger.devices[name] ?? ledger.device(name)
    }

    // MARK: Signing

    /// Signs a transaction for a device (with `deviceVerification`) or, with `nil`, in server form.
    nonisolated func sign(_ transaction: LedgerTransaction, for device: StoreDevice?, at date: Date) throws(AppStoreError) -> String {
        try storeSigner.sign(transaction, for: device, at: date)
    }

    /// What signs what the store hands out, usable off the store's executor.
    nonisolated var storeSigner: StoreSigner {
        StoreSigner(identity: identity, identifiers: identifiers, certificates: signingCertificates)
    }

    /// Signs any App Store payload dated `date` (its `signedDate`) with a leaf valid then.
    nonisolated func sign<Payload: Encodable>(_ payload: Payload, at date: Date) throws(AppStoreError) -> String {
        try storeSigner.sign(payload, at: date)
    }

    static func encode<Value: Encodable>(_ value: Value) throws(AppStoreError) -> String {
        do { return String(decoding: try AppStoreJSON.encode(value), as: UTF8.self) } catch {
            throw .storage(.failed("cannot encode \(Value.self): \(error)"))
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws(AppStoreError) -> Value {
        do { return try AppStoreJSON.decode(type, from: Data(text.utf8)) } catch {
            throw .storage(.damaged("the ledger's \(type) record is damaged: \(error)"))
        }
    }
}

/// The views of an account's transactions that a device asks for (see
/// ``SimulatedAppStore/transactionsToSign(_:device:account:)``).
public enum LedgerView: Hashable, Sendable {
    /// `Transaction.all`.
    case all
    /// `Transaction.currentEntitlements`.
    case currentEntitlements
    /// `Transaction.unfinished`.
    case unfinished
    /// `Transaction.latest(for:)`.
    case latest(productID: String)
    /// One transaction, when it is the account's (none otherwise).
    case transaction(id: UInt64)
}

/// Transactions read for a device and not yet signed (see ``SimulatedAppStore/sign(_:)``).
public struct TransactionsToSign: Sendable {
    public let transactions: [LedgerTransaction]
    /// The device they are signed for (its `deviceVerification`); none for the server form.
    let device: StoreDevice?
    /// The signed date: the store's time when they were read.
    let date: Date
    let verificationFailure: VerificationErrorCode?
}

/// Signs what a store hands out (transactions, notifications, renewal info), holding only what signing
/// needs (no store), so signing can run on any executor: purchases committed together are signed by a
/// task of the caller's executor while the store writes the commit.
struct StoreSigner: Sendable {
    let identity: StoreIdentity
    let identifiers: IdentifierGenerator
    let certificates: SigningCertificates

    /// Signs a transaction for a device (with `deviceVerification`) or, with `nil`, in server form.
    func sign(_ transaction: LedgerTransaction, for device: StoreDevice?, at date: Date) throws(AppStoreError) -> String {
        let verification = device.map { (verificationID: $0.deviceVerificationID, nonce: identifiers()) }
        return try sign(transaction.payload(identity: identity, signedDate: date, device: verification), at: date)
    }

    /// Signs any App Store payload (a notification, renewal info) dated `date` with a leaf valid then.
    func sign<Payload: Encodable>(_ payload: Payload, at date: Date) throws(AppStoreError) -> String {
        do { return try certificates.signer(at: date).sign(payload) } catch { throw .storage(.failed("signing failed: \(error)")) }
    }
}
