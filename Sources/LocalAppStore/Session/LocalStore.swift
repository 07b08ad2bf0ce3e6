import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import OpenStoreKit
import SimulatorConnection
import StoreKitCatalog
import Synchronization

/// A local App Store an app talks to, and the App Store's side of the story: a store in this process
/// selling a `.storekit` file, or one served by `storekit serve`; StoreKit clients for each device;
/// and the controls Xcode's `SKTestSession` and the Transaction Manager offer (time, refunds, Ask to
/// Buy, interrupted purchases, simulated errors, settings).
///
/// ```swift
/// let store = try LocalStore(contentsOf: shopFile)
/// let phone = try await store.client(device: "phone")
/// let monthly = try await phone.products(for: ["com.example.monthly"]).first!
/// _ = try await monthly.purchase()
/// try await store.advance(byMonths: 1)              // the subscription renews
/// try await store.refundTransaction(identifier: 1)
/// ```
///
/// The example apps script a customer's sessions with it; the test kit (`OpenStoreKitTesting`) calls
/// it `TestSession`, and `StoreKitTest`'s `SKTestSession` runs on it.
///
/// A local store in this process is a fresh store: in memory unless given storage, on a manual
/// clock that stands at its start until advanced, with sequential identifiers. It starts at the real time, as
/// Xcode's StoreKit testing does, so code that compares expiry dates with `Date()` sees live
/// subscriptions as live; give a `startDate` (``referenceStartDate``, say) for runs whose dates must
/// be the same every time. Properties mirror `SKTestSession`'s; a change takes effect at the next
/// call to the store (from a client or a control), in order. Controls are `async` because the store is
/// an actor.
public final class LocalStore: Sendable {
    /// The store the session drives: in this process, or served over HTTP (``init(server:namespace:)``).
    public let controls: any StoreControls
    /// The local App Store behind the session, when it runs in this process.
    public var store: SimulatedAppStore? { controls as? SimulatedAppStore }
    /// The session's clock; move it with ``advance(by:)`` so subscriptions follow. For a served
    /// store it mirrors the server's clock as of the last control.
    public let clock: ManualStoreClock
    /// The certificate authority the store signs with, when the store runs in this process.
    public let authority: CertificateAuthority?
    /// The connection clients of this session use.
    public let transport: any StoreTransport
    /// What device and account names are prefixed with at the store: empty for a session's own
    /// store, a run's own prefix on a shared, served one.
    public let namespace: String

    /// How the session's time moves: standing still until advanced, or running with the real time.
    public let time: Time
    /// The real time a session that runs keeps up with; `nil` for one that stands still.
    let running: RunningTime?

    private let defaults: StoreSettings
    private let state: PendingSettings

    /// The session's setting overrides, changed synchronously and applied at the next store call.
    final class PendingSettings: Sendable {
        struct Contents {
            var overrides = SettingsOverrides()
            var changed = false
        }

        private let contents = Mutex(Contents())

        func withLock<Result>(_ body: (inout Contents) -> Result) -> Result {
            contents.withLock { body(&$0) }
        }
    }

    /// A fixed date to start at, for runs whose output must be the same every time (examples,
    /// documentation, tests that compare dates): 2026-01-01T00:00:00Z.
    public static let referenceStartDate = Date(timeIntervalSince1970: 1_767_225_600)

    /// Where a session's clock starts: `startDate`, or the real time now to the millisecond (the store
    /// keeps milliseconds, as Apple's payloads do).
    static func start(at startDate: Date?) -> Date {
        startDate ?? AppStoreJSON.date(fromMilliseconds: AppStoreJSON.milliseconds(from: SystemStoreClock().now()))
    }

    /// Loads a `.storekit` file and opens a fresh store selling it.
    ///
    /// - Parameter startDate: Where the session's clock starts; the real time now when `nil`.
    /// - Throws: `ConfigurationError` naming every problem of the file, or a store error.
    public convenience init(contentsOf url: URL, bundleID: String = "com.example.app", environment: AppStoreModels.Environment = .xcode,
                            appAppleID: Int64? = nil, appVersion: String = "1", originalAppVersion: String? = nil,
                            startDate: Date? = nil, time: Time = .manual, storage: any LedgerStorage = InMemoryLedgerStorage()) throws {
        let configuration = try StoreKitConfiguration.load(contentsOf: url).configuration
        try self.init(configuration: configuration, bundleID: bundleID, environment: environment, appAppleID: appAppleID,
                      appVersion: appVersion, originalAppVersion: originalAppVersion, startDate: startDate, time: time, storage: storage)
    }

    /// Opens a fresh store selling `configuration`.
    ///
    /// - Parameters:
    ///   - environment: What the store signs as: `.xcode` (the default, as StoreKit Testing in Xcode),
    ///     `.sandbox` or `.production` (which needs `appAppleID`, as Production data carries it).
    ///   - appVersion: The app version the store reports now (`CFBundleVersion`).
    ///   - originalAppVersion: The version new customers' app transactions report as first bought
    ///     (`AppTransaction.originalAppVersion`); by default `appVersion`. Set an older one to test
    ///     grandfathering of customers who bought a paid version.
    ///   - startDate: Where the session's clock starts; the real time now when `nil`.
    ///   - time: ``Time/manual`` (the default): time stands still until ``advance(by:)``;
    ///     ``Time/running``: it runs with the real time from `startDate`, as in Xcode.
    public init(configuration: StoreKitConfiguration, bundleID: String = "com.example.app", environment: AppStoreModels.Environment = .xcode,
                appAppleID: Int64? = nil, appVersion: String = "1", originalAppVersion: String? = nil,
                startDate: Date? = nil, time: Time = .manual, storage: any LedgerStorage = InMemoryLedgerStorage()) throws {
        let start = Self.start(at: startDate)
        let clock = ManualStoreClock(startingAt: start, followsTimeRate: time == .running)
        let authority = try CertificateAuthority.make()
        let identity = StoreIdentity(bundleId: bundleID, environment: environment, appAppleId: appAppleID, applicationVersion: appVersion,
                                     originalApplicationVersion: originalAppVersion ?? appVersion)
        let store = try SimulatedAppStore.create(configuration: configuration, identity: identity,
                                                 authority: authority, storage: storage, clock: clock,
                                                 identifiers: .sequential())
        self.controls = store
        self.clock = clock
        self.authority = authority
        self.namespace = ""
        self.defaults = StoreSettings(configuration: configuration)
        let state = PendingSettings()
        self.state = state
        self.time = time
        let running = time == .running ? RunningTime(store: store, clock: clock, start: start, settings: state) : nil
        self.running = running
        self.transport = InProcessStoreTransport(store: store, prepare: {
            try await LocalStore.flush(state, to: store)
            try await running?.catchUp()
        })
        running?.keepTime(for: self)
    }

    /// A session on a store served by `storekit serve` at `server`: clients connect over HTTP
    /// (``HTTPStoreTransport``) and controls go through the admin API.
    ///
    /// A served store is shared, so the session keeps to its own devices and accounts: their names
    /// get `namespace` in front at the store (a fresh one per session unless given). Settings and the
    /// clock are the store's own and change for everyone.
    /// - Parameter token: The server's access token, when it needs one (`storekit serve --token`).
    public init(server: URL, namespace: String? = nil, cacheDirectory: URL? = nil, token: String? = nil) async throws {
        let controls = RemoteStoreControls(server: server, token: token)
        self.controls = controls
        self.authority = nil
        self.namespace = namespace ?? "run-\(UUID().uuidString.prefix(8).lowercased())."
        do {
            self.clock = ManualStoreClock(startingAt: try await controls.currentTime())
            let configurationData = try await controls.storeConfigurationData()
            self.defaults = StoreSettings(configuration: try StoreKitConfiguration.read(configurationData, fileName: "\(server)").configuration)
        } catch let error as AppStoreError {
            throw SKTestError(error)
        }
        let state = PendingSettings()
        self.state = state
        self.time = .manual
        self.running = nil
        self.transport = PreparedTransport(base: HTTPStoreTransport(server: server, cacheDirectory: cacheDirectory, token: token),
                                           prepare: { try await LocalStore.flush(state, to: controls) })
    }

    /// A device or account name as the store knows it.
    func stored(_ name: String) -> String { namespace + name }

    /// Applies property changes made since the last store call.
    static func flush(_ state: PendingSettings, to controls: any StoreControls) async throws {
        guard let overrides = state.withLock({ pending -> SettingsOverrides? in
            guard pending.changed else { return nil }
            pending.changed = false
            return pending.overrides
        }) else { return }
        do {
            try await controls.replaceSettingsOverrides(overrides)
        } catch {
            state.withLock { $0.changed = true }
            throw SKTestError(error)
        }
    }

    /// Applies pending property changes now (and, for a session that runs, brings its time to now).
    public func applySettings() async throws {
        try await Self.flush(state, to: controls)
        try await running?.catchUp()
    }

    // MARK: Clients

    /// Connects the app on `device`, signed in to `account` (both created on first use): a new launch.
    public func client(device: String = "device", account: String = "default") async throws -> StoreClient {
        try await applySettings()
        do {
            try await controls.addDevice(stored(device), account: stored(account))
        } catch {
            throw SKTestError(error)
        }
        return try await StoreClient.connect(to: transport, device: stored(device))
    }

    /// Connects the app on `device` and makes it the process-wide ``StoreClient/default``, so
    /// StoreKit's static calls (`Product.products(for:)`, `Transaction.updates`, …) reach this session.
    @discardableResult
    public func connectDefault(device: String = "device", account: String = "default") async throws -> StoreClient {
        let client = try await client(device: device, account: account)
        StoreClient.default = client
        return client
    }

    // MARK: Properties

    private func read<Value>(_ key: KeyPath<StoreSettings, Value>) -> Value {
        state.withLock { $0.overrides.applied(to: defaults)[keyPath: key] }
    }

    private func write(_ body: (inout SettingsOverrides) -> Void) {
        state.withLock {
            body(&$0.overrides)
            $0.changed = true
        }
    }

    /// Every purchase waits for a parent's approval.
    public var askToBuyEnabled: Bool {
        get { read(\.askToBuyEnabled) }
        set { write { $0.askToBuyEnabled = newValue } }
    }

    /// No purchase sheets (there are none here; kept for `SKTestSession` code).
    public var disableDialogs: Bool {
        get { read(\.disableDialogs) }
        set { write { $0.disableDialogs = newValue } }
    }

    /// Every purchase is interrupted until resolved with ``resolveIssueForTransaction(identifier:)``.
    public var interruptedPurchasesEnabled: Bool {
        get { read(\.interruptedPurchasesEnabled) }
        set { write { $0.interruptedPurchasesEnabled = newValue } }
    }

    /// Every renewal fails and enters billing retry.
    public var shouldEnterBillingRetryOnRenewal: Bool {
        get { read(\.shouldEnterBillingRetryOnRenewal) }
        set { write { $0.shouldEnterBillingRetryOnRenewal = newValue } }
    }

    /// Failed renewals get a grace period before billing retry.
    public var billingGracePeriodIsEnabled: Bool {
        get { read(\.billingGracePeriodIsEnabled) }
        set { write { $0.billingGracePeriodIsEnabled = newValue } }
    }

    /// Every purchase fails with ``failureError`` (deprecated in StoreKit; prefer ``setSimulatedError(_:forAPI:)``).
    public var failTransactionsEnabled: Bool {
        get { read(\.failTransactionsEnabled) }
        set { write { $0.failTransactionsEnabled = newValue } }
    }

    /// The error purchases fail with while ``failTransactionsEnabled`` is on.
    public var failureError: SKError.Code {
        get { SKError.Code(simulatedFailure: read(\.failureError)) }
        set { write { $0.failureError = newValue.simulatedFailure } }
    }

    /// The storefront (ISO 3166-1 alpha-3) accounts without their own buy in.
    public var storefront: String {
        get { read(\.storefront) }
        set { write { $0.storefront = newValue } }
    }

    /// The locale product metadata is presented in.
    public var locale: Locale {
        get { Locale(identifier: read(\.locale)) }
        set { write { $0.locale = newValue.identifier } }
    }

    /// How fast subscription time runs.
    public var timeRate: TimeRate {
        get { read(\.timeRate) }
        set { write { $0.timeRate = newValue } }
    }

    /// Whether `Transaction.all` keeps finished consumables (`SKIncludeConsumableInAppPurchaseHistory`).
    public var includesConsumablesInHistory: Bool {
        get { read(\.includesConsumablesInHistory) }
        set { write { $0.includesConsumablesInHistory = newValue } }
    }

    /// Makes one StoreKit API fail with `failure` until cleared with `nil`.
    public func setSimulatedError(_ failure: SimulatedFailure?, forAPI api: FailableAPI) async throws {
        guard failure.map({ $0.applies(to: api) }) ?? true else {
            throw SKTestError(code: .invalidAction, message: "\(api.rawValue) cannot fail with \(failure!)")
        }
        write {
            var errors = $0.simulatedErrors ?? [:]
            errors[api] = .some(failure)
            $0.simulatedErrors = errors
        }
        try await applySettings()
    }

    /// The failure an API is made to throw, if any.
    public func simulatedError(forAPI api: FailableAPI) -> SimulatedFailure? {
        read(\.simulatedErrors)[api]
    }

    /// Drops every property change: back to the configuration file's settings.
    public func resetToDefaultState() async throws {
        state.withLock {
            $0.overrides = SettingsOverrides()
            $0.changed = true
        }
        try await applySettings()
    }

    // MARK: Time

    /// The session's current time: where the clock stands, or for a session that runs, the real time
    /// it keeps up with (the store catches up at its next call).
    public var now: Date { running.map { max($0.target(), clock.now()) } ?? clock.now() }

    /// Moves time forward, running every renewal, retry, grace period and expiry that falls due.
    ///
    /// - Returns: How many lifecycle events ran.
    @discardableResult
    public func advance(by interval: TimeInterval) async throws -> Int {
        guard interval >= 0 else { throw SKTestError(code: .invalidAction, message: "time only moves forward") }
        return try await advance(to: now.addingTimeInterval(interval))
    }

    /// Moves time forward by calendar days.
    @discardableResult
    public func advance(byDays days: Int) async throws -> Int {
        try await advance(to: calendar.date(byAdding: .day, value: days, to: now) ?? now)
    }

    /// Moves time forward by calendar months.
    @discardableResult
    public func advance(byMonths months: Int) async throws -> Int {
        try await advance(to: calendar.date(byAdding: .month, value: months, to: now) ?? now)
    }

    /// Moves time forward to `date`. A session that runs goes on running from there.
    @discardableResult
    public func advance(to date: Date) async throws -> Int {
        try await control { () throws(AppStoreError) in
            let played = try await controls.advanceTime(to: date)
            clock.set(to: try await controls.currentTime())
            running?.movedAhead(to: clock.now())
            return played
        }
    }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    /// Runs a control after applying pending settings, mapping store errors to ``SKTestError``.
    func control<Result: Sendable>(_ body: () async throws(AppStoreError) -> Result) async throws -> Result {
        try await applySettings()
        do {
            return try await body()
        } catch {
            throw SKTestError(error)
        }
    }
}

extension LocalStore {
    /// A session for an example or a test that runs either on its own store in this process, selling
    /// `file` from `startDate` (the real time now when `nil`), or on a store served at `server`
    /// (`storekit serve`), whose file must be the same and whose clock is its own.
    public static func open(contentsOf file: URL, bundleID: String, server: URL?, startDate: Date? = nil) async throws -> LocalStore {
        if let server { return try await LocalStore(server: server) }
        return try LocalStore(contentsOf: file, bundleID: bundleID, startDate: startDate)
    }

    /// The URL after `--store` in command-line arguments, if any (`swift run PotionShop --store http://127.0.0.1:8080`).
    public static func storeArgument(_ arguments: [String] = CommandLine.arguments) throws -> URL? {
        guard let index = arguments.firstIndex(of: "--store") else { return nil }
        guard index + 1 < arguments.count, let url = URL(string: arguments[index + 1]), url.scheme == "http" || url.scheme == "https" else {
            throw SKTestError(code: .invalidURL, message: "--store takes the URL `storekit serve` prints, such as http://127.0.0.1:8080")
        }
        return url
    }
}
