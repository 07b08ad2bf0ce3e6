import AppStoreModels
import AppStoreSigning
import Foundation
import StoreKitCatalog

/// The local App Store: sells a `.storekit` catalog, keeps a durable ledger and signs everything it hands out.
///
/// A store holds its ledger in memory and persists every change through its ``LedgerStorage`` before
/// it acknowledges it: when a call returns, the change is durable; when it throws, nothing changed.
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
    nonisolated let clock: any StoreClock
    nonisolated let identifiers: IdentifierGenerator
    nonisolated let signer: JWSSigner

    var configuration: StoreKitConfiguration
    let defaults: StoreSettings
    var overrides: SettingsOverrides
    /// The settings in force: the file's defaults with the runtime overrides applied; kept with
    /// ``overrides`` so purchases do not rebuild it on every check.
    public private(set) var settings: StoreSettings
    var counters: LedgerCounters
    var accounts: [String: StoreAccount] = [:]
    var devices: [String: StoreDevice] = [:]
    var transactions: [UInt64: LedgerTransaction] = [:]
    /// Transaction identifiers per account, ascending.
    var transactionIDsByAccount: [String: [UInt64]] = [:]
    /// The identifiers of an account's transactions that can be entitlements (all but consumables),
    /// ascending, so `currentEntitlements` does not scan a long consumable history.
    var entitlementCandidatesByAccount: [String: [UInt64]] = [:]
    var subscriptions: [UInt64: SubscriptionRecord] = [:]
    /// Undelivered feed entries per device, in sequence order.
    var pendingUpdates: [String: [LedgerUpdate]] = [:]
    var catalogCache: [String: Catalog] = [:]
    /// The subscriptions' next lifecycle events.
    var eventQueue = EventQueue()
    /// The manual clock time last written to the ledger, so unchanged time is not rewritten.
    var recordedClockTime: Int64?
    var updateWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// The meta keys of the ledger.
    enum MetaKey {
        static let identity = "identity"
        static let configuration = "configuration"
        static let overrides = "overrides"
        static let counters = "counters"
        static let clock = "clock"
        static let schema = "schema"
    }

    /// The ledger format this code writes.
    public static let schemaVersion = 1

    // MARK: Opening

    /// Creates a new store in empty storage.
    ///
    /// - Throws: ``AppStoreError/storage(_:)`` when the storage already holds a store or cannot be written.
    public static func create(configuration: StoreKitConfiguration, identity: StoreIdentity, authority: CertificateAuthority,
                              storage: any LedgerStorage, clock: any StoreClock,
                              identifiers: IdentifierGenerator = .random) throws(AppStoreError) -> SimulatedAppStore {
        guard try storage.load() == nil else { throw .storage("the storage already holds a store") }
        var changes = LedgerChanges()
        changes.meta[MetaKey.schema] = String(schemaVersion)
        changes.meta[MetaKey.identity] = try encode(identity)
        changes.meta[MetaKey.configuration] = String(decoding: configuration.jsonData(), as: UTF8.self)
        changes.meta[MetaKey.overrides] = try encode(SettingsOverrides())
        changes.meta[MetaKey.counters] = try encode(LedgerCounters())
        changes.meta[MetaKey.clock] = String(AppStoreJSON.milliseconds(from: clock.now()))
        try storage.commit(changes)
        return try open(storage: storage, authority: authority, clock: clock, identifiers: identifiers)
    }

    /// Opens the store in `storage`.
    ///
    /// A ``ManualStoreClock`` is moved to the time the store last recorded, so simulated time
    /// survives restarts.
    public static func open(storage: any LedgerStorage, authority: CertificateAuthority, clock: any StoreClock,
                            identifiers: IdentifierGenerator = .random) throws(AppStoreError) -> SimulatedAppStore {
        guard let snapshot = try storage.load() else { throw .storage("the storage holds no store") }
        return try SimulatedAppStore(snapshot: snapshot, storage: storage, authority: authority, clock: clock, identifiers: identifiers)
    }

    private init(snapshot: LedgerSnapshot, storage: any LedgerStorage, authority: CertificateAuthority,
                 clock: any StoreClock, identifiers: IdentifierGenerator) throws(AppStoreError) {
        func meta(_ key: String) throws(AppStoreError) -> String {
            guard let value = snapshot.meta[key] else { throw .storage("the ledger has no \(key) record; it is not a store or it is damaged") }
            return value
        }
        guard let schema = Int(try meta(MetaKey.schema)), schema <= Self.schemaVersion else {
            throw .storage("the ledger was written by a newer version of OpenStoreKit")
        }
        let identity = try Self.decode(StoreIdentity.self, try meta(MetaKey.identity))
        let configuration: StoreKitConfiguration
        do {
            configuration = try StoreKitConfiguration.read(Data(try meta(MetaKey.configuration).utf8), fileName: "stored configuration").configuration
        } catch {
            throw .storage("the stored configuration is damaged: \(error)")
        }
        self.identity = identity
        self.rootCertificate = authority.rootCertificate
        self.storage = storage
        self.clock = clock
        self.identifiers = identifiers
        do { self.signer = try authority.makeSigner() } catch { throw .storage("cannot sign with the store's authority: \(error)") }
        self.configuration = configuration
        self.defaults = StoreSettings(configuration: configuration)
        self.overrides = try Self.decode(SettingsOverrides.self, try meta(MetaKey.overrides))
        self.settings = overrides.applied(to: defaults)
        self.counters = try Self.decode(LedgerCounters.self, try meta(MetaKey.counters))
        if let manual = clock as? ManualStoreClock, let milliseconds = Int64(try meta(MetaKey.clock)) {
            manual.set(to: AppStoreJSON.date(fromMilliseconds: milliseconds))
            self.recordedClockTime = AppStoreJSON.milliseconds(from: manual.now())
        }
        self.accounts = Dictionary(snapshot.accounts.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        self.devices = Dictionary(snapshot.devices.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        self.transactions = Dictionary(snapshot.transactions.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        var byAccount: [String: [UInt64]] = [:]
        var candidates: [String: [UInt64]] = [:]
        for transaction in snapshot.transactions.sorted(by: { $0.id < $1.id }) {
            byAccount[transaction.account, default: []].append(transaction.id)
            if transaction.productKind != .consumable { candidates[transaction.account, default: []].append(transaction.id) }
        }
        self.transactionIDsByAccount = byAccount
        self.entitlementCandidatesByAccount = candidates
        self.subscriptions = Dictionary(snapshot.subscriptions.map { ($0.originalTransactionID, $0) }, uniquingKeysWith: { $1 })
        self.eventQueue = Self.eventQueue(for: self.subscriptions)
        self.pendingUpdates = Dictionary(grouping: snapshot.pendingUpdates.sorted { $0.sequence < $1.sequence }, by: \.device)
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

    /// The current time of the store's clock.
    public var now: Date { clock.now() }

    // MARK: Committing

    /// A change being prepared: ledger changes plus the counters it consumed.
    struct Change {
        var ledger = LedgerChanges()
        var counters: LedgerCounters
        /// Set when the change touches settings.
        var overrides: SettingsOverrides?

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
    }

    func beginChange() -> Change {
        Change(counters: counters)
    }

    /// Persists a change durably, then makes it the store's state; on failure nothing changes.
    func commit(_ change: Change) throws(AppStoreError) {
        var ledger = change.ledger
        if change.counters != counters { ledger.meta[MetaKey.counters] = try Self.encode(change.counters) }
        if let overrides = change.overrides { ledger.meta[MetaKey.overrides] = try Self.encode(overrides) }
        let clockTime = clock is ManualStoreClock ? AppStoreJSON.milliseconds(from: clock.now()) : nil
        if let clockTime, clockTime != recordedClockTime { ledger.meta[MetaKey.clock] = String(clockTime) }
        guard !ledger.isEmpty else { return }
        do {
            try storage.commit(ledger)
        } catch {
            // Events taken off the queue for this change must be found again.
            rebuildEventQueue()
            throw error
        }
        counters = change.counters
        if let clockTime { recordedClockTime = clockTime }
        if let overrides = change.overrides {
            self.overrides = overrides
            settings = overrides.applied(to: defaults)
            catalogCache = [:]
        }
        apply(ledger)
    }

    /// Makes committed changes the in-memory state.
    private func apply(_ ledger: LedgerChanges) {
        for (name, account) in ledger.accounts { accounts[name] = account }
        for (name, device) in ledger.devices { devices[name] = device }
        for id in ledger.deletedTransactions {
            guard let removed = transactions.removeValue(forKey: id) else { continue }
            transactionIDsByAccount[removed.account]?.removeAll { $0 == id }
            entitlementCandidatesByAccount[removed.account]?.removeAll { $0 == id }
        }
        for transaction in ledger.transactions.values.sorted(by: { $0.id < $1.id }) { index(transaction) }
        for id in ledger.deletedSubscriptions { subscriptions[id] = nil }
        for (id, subscription) in ledger.subscriptions {
            subscriptions[id] = subscription
            if let date = subscription.nextEventDate { eventQueue.push(date, id) }
        }
        if !ledger.deliveredUpdates.isEmpty || !ledger.deletedTransactions.isEmpty {
            let delivered = Set(ledger.deliveredUpdates)
            for device in pendingUpdates.keys {
                pendingUpdates[device]?.removeAll { delivered.contains($0.sequence) || ledger.deletedTransactions.contains($0.transactionID) }
            }
        }
        for update in ledger.appendedUpdates {
            pendingUpdates[update.device, default: []].append(update)
        }
        let touchedDevices = Set(ledger.appendedUpdates.map(\.device))
        for device in touchedDevices {
            for waiter in updateWaiters.removeValue(forKey: device) ?? [] { waiter.resume() }
        }
    }

    func rebuildEventQueue() {
        eventQueue = Self.eventQueue(for: subscriptions)
    }

    private static func eventQueue(for subscriptions: [UInt64: SubscriptionRecord]) -> EventQueue {
        var queue = EventQueue()
        for (id, subscription) in subscriptions {
            if let date = subscription.nextEventDate { queue.push(date, id) }
        }
        return queue
    }

    private func index(_ transaction: LedgerTransaction) {
        guard transactions.updateValue(transaction, forKey: transaction.id) == nil else { return }
        Self.insertSorted(transaction.id, into: &transactionIDsByAccount[transaction.account, default: []])
        if transaction.productKind != .consumable {
            Self.insertSorted(transaction.id, into: &entitlementCandidatesByAccount[transaction.account, default: []])
        }
    }

    private static func insertSorted(_ id: UInt64, into ids: inout [UInt64]) {
        if let last = ids.last, last > id {
            ids.insert(id, at: ids.firstIndex { $0 > id } ?? ids.endIndex)
        } else {
            ids.append(id)
        }
    }

    // MARK: Signing

    /// Signs a transaction for a device (with `deviceVerification`) or, with `nil`, in server form.
    func sign(_ transaction: LedgerTransaction, for device: StoreDevice?, at date: Date) throws(AppStoreError) -> String {
        let verification = device.map { (verificationID: $0.deviceVerificationID, nonce: identifiers()) }
        let payload = transaction.payload(identity: identity, signedDate: date, device: verification)
        return try sign(payload)
    }

    func sign<Payload: Encodable>(_ payload: Payload) throws(AppStoreError) -> String {
        do { return try signer.sign(payload) } catch { throw .storage("signing failed: \(error)") }
    }

    static func encode<Value: Encodable>(_ value: Value) throws(AppStoreError) -> String {
        do { return String(decoding: try AppStoreJSON.encode(value), as: UTF8.self) } catch {
            throw .storage("cannot encode \(Value.self): \(error)")
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws(AppStoreError) -> Value {
        do { return try AppStoreJSON.decode(type, from: Data(text.utf8)) } catch {
            throw .storage("the ledger's \(type) record is damaged: \(error)")
        }
    }
}
