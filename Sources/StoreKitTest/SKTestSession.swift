import BlockingWork
import Foundation
import LocalAppStore
import StoreKit
import StoreKitCatalog

/// Xcode's StoreKit test session, over this package's local App Store: code written against
/// `SKTestSession` compiles and runs unchanged.
///
/// ```swift
/// let session = try SKTestSession(configurationFileNamed: "Products")
/// session.disableDialogs = true
/// session.clearTransactions()
/// let product = try await Product.products(for: ["com.example.pro"]).first!
/// _ = try await product.purchase()
/// try session.refundTransaction(identifier: session.allTransactions()[0].identifier)
/// ```
///
/// As in Xcode, creating a session makes it the store of the process: StoreKit's calls
/// (`Product.products(for:)`, `Transaction.updates`, …) reach it, as the app on device `"device"`
/// signed in to account `"default"`. Its time starts now and runs with the real time, at the pace of
/// ``timeRate``: subscriptions renew, enter billing retry and expire by themselves.
///
/// Differences from Xcode, each for a reason:
/// - Each session starts with an empty store. In Xcode every session controls one environment per
///   device, whose transactions last until ``clearTransactions()``; tests that clear it in `setUp`
///   behave the same either way.
/// - The synchronous methods block their caller until the store has done the work, as Xcode's do;
///   the work runs on threads of its own, never waiting for the cooperative pool. Do not call them
///   from the main actor while something the store waits for needs the main actor.
/// - The store sells with bundle identifier `com.example.app` unless ``init(contentsOf:bundleID:)``
///   names the app's (there is no app bundle on Linux).
/// - Sessions share the process's default store client, so tests that use them run one at a time, as
///   Apple asks of tests that change the test environment (XCTest does; mark Swift Testing suites
///   `.serialized`).
public final class SKTestSession: Sendable {
    /// How fast subscription time passes (Xcode's `SKTestSession.TimeRate`).
    public typealias TimeRate = StoreKitCatalog.TimeRate

    /// The local store underneath, for what Xcode has no control for: more devices and accounts, moving
    /// time ahead (`advance(by:)`), the notifications the store sent.
    public let localStore: LocalStore
    /// The app's connection to the store, the process's default while this is the newest session.
    private let client: StoreClient

    /// The bundle identifier a session's store sells under unless told otherwise.
    public static let defaultBundleID = "com.example.app"

    /// Loads the configuration file `filename` (`"Products"` or `"Products.storekit"`) from the test
    /// target's resources and opens a session on it.
    ///
    /// On Linux a test target's resources are a folder beside the test binary; add the file to the
    /// target in `Package.swift` (`resources: [.copy("Products.storekit")]`). The calling test
    /// target's own resources are searched first, then every other resource bundle beside the binary.
    ///
    /// - Parameter callerFileID: Where the call is, to find the calling target's resources; leave it
    ///   to its default.
    /// - Throws: ``SKTestError`` `.fileNotFound` naming where it looked when no such file is there.
    public convenience init(configurationFileNamed filename: String, callerFileID: String = #fileID) throws {
        try self.init(contentsOf: ConfigurationFileLocator.locate(filename, callerFileID: callerFileID))
    }

    /// Opens a session on the configuration file at `fileURL`.
    ///
    /// - Throws: ``SKTestError`` `.invalidURL` for a URL that is not a file's, `.fileNotFound` when
    ///   nothing is there, `.invalidAction` naming each problem of a file that does not read.
    public convenience init(contentsOf fileURL: URL) throws {
        try self.init(contentsOf: fileURL, bundleID: Self.defaultBundleID)
    }

    /// Opens a session on the configuration file at `fileURL`, selling to the app `bundleID`.
    public init(contentsOf fileURL: URL, bundleID: String) throws {
        guard fileURL.isFileURL else {
            throw SKTestError(code: .invalidURL, message: "\(fileURL.absoluteString) is not a file URL; pass the .storekit file's location")
        }
        guard FileManager.default.fileExists(atPath: fileURL.path) else {
            throw SKTestError(code: .fileNotFound, message: "no configuration file at \(fileURL.path)")
        }
        let session: LocalStore
        do {
            session = try LocalStore(contentsOf: fileURL, bundleID: bundleID, time: .running)
        } catch let error as SKTestError {
            throw error
        } catch {
            throw SKTestError(code: .invalidAction, message: "\(fileURL.path) cannot be used: \(error)")
        }
        localStore = session
        client = try BlockingWork.synchronously { try await session.connectDefault(device: "device", account: "default") }
    }

    // MARK: Settings

    /// Every purchase waits for a parent's approval (``approveAskToBuyTransaction(identifier:)``).
    public var askToBuyEnabled: Bool {
        get { localStore.askToBuyEnabled }
        set { localStore.askToBuyEnabled = newValue }
    }

    /// No purchase confirmation sheets: there are none here, so this changes nothing.
    public var disableDialogs: Bool {
        get { localStore.disableDialogs }
        set { localStore.disableDialogs = newValue }
    }

    /// Every purchase is interrupted until resolved with ``resolveIssueForTransaction(identifier:)``.
    public var interruptedPurchasesEnabled: Bool {
        get { localStore.interruptedPurchasesEnabled }
        set { localStore.interruptedPurchasesEnabled = newValue }
    }

    /// Every purchase fails with ``failureError`` (Apple deprecated it in iOS 17 for
    /// ``setSimulatedError(_:forAPI:)``).
    public var failTransactionsEnabled: Bool {
        get { localStore.failTransactionsEnabled }
        set { localStore.failTransactionsEnabled = newValue }
    }

    /// The error purchases fail with while ``failTransactionsEnabled`` is on.
    public var failureError: SKError.Code {
        get { localStore.failureError }
        set { localStore.failureError = newValue }
    }

    /// Every renewal fails and enters billing retry.
    public var shouldEnterBillingRetryOnRenewal: Bool {
        get { localStore.shouldEnterBillingRetryOnRenewal }
        set { localStore.shouldEnterBillingRetryOnRenewal = newValue }
    }

    /// Failed renewals get a billing grace period first (only while renewals fail).
    public var billingGracePeriodIsEnabled: Bool {
        get { localStore.billingGracePeriodIsEnabled }
        set { localStore.billingGracePeriodIsEnabled = newValue }
    }

    /// The storefront (ISO 3166-1 alpha-3), `"USA"` unless the file says otherwise.
    public var storefront: String {
        get { localStore.storefront }
        set { localStore.storefront = newValue }
    }

    /// The locale product metadata is presented in.
    public var locale: Locale {
        get { localStore.locale }
        set { localStore.locale = newValue }
    }

    /// How fast subscription time passes: `.oneRenewalEveryTwoSeconds` renews every two seconds.
    /// Set it before buying; a period that started keeps its length.
    public var timeRate: TimeRate {
        get { localStore.timeRate }
        set { localStore.timeRate = newValue }
    }

    /// Drops every property change: back to the configuration file's settings.
    public func resetToDefaultState() {
        report("resetToDefaultState") { try await $0.resetToDefaultState() }
    }

    // MARK: Transactions

    /// Every transaction in the store.
    public func allTransactions() -> [SKTestTransaction] {
        (try? BlockingWork.synchronously { [localStore] in await localStore.allTransactions() }) ?? []
    }

    /// Deletes every transaction.
    public func clearTransactions() {
        report("clearTransactions") { try await $0.clearTransactions() }
    }

    /// Deletes a transaction as if it never happened (with its renewals and family copies), so a
    /// one-time purchase can be bought again and an introductory offer is offered again.
    public func deleteTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.deleteTransaction(identifier: $1) }
    }

    /// Buys a product outside the app; the transaction reaches the app through `Transaction.updates`.
    /// (Apple deprecated it in iOS 17 for ``buyProduct(identifier:options:)``.)
    public func buyProduct(productIdentifier: String) throws {
        try control { _ = try await $0.buyProduct(identifier: productIdentifier) }
    }

    /// Buys a product outside the app with StoreKit's purchase options and the testing ones
    /// (`purchaseDate(_:renewalBehavior:)`, `promotionalOffer(id:)`, `codeOffer(referenceName:)`), and
    /// returns the transaction; it also reaches the app through `Transaction.updates`.
    @discardableResult
    public func buyProduct(identifier: Product.ID, options: Set<Product.PurchaseOption> = []) async throws -> Transaction {
        try await localStore.buyProduct(identifier: identifier, options: options)
    }

    /// Refunds a transaction outside the app; the revoked transaction reaches the app through `Transaction.updates`.
    public func refundTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.refundTransaction(identifier: $1) }
    }

    /// Approves a purchase waiting for a parent; the transaction reaches the app through `Transaction.updates`.
    public func approveAskToBuyTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.approveAskToBuyTransaction(identifier: $1) }
    }

    /// Declines a purchase waiting for a parent; no transaction results.
    public func declineAskToBuyTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.declineAskToBuyTransaction(identifier: $1) }
    }

    /// Resolves an interrupted purchase (it then reaches the app through `Transaction.updates`) or a
    /// subscription's billing issue.
    public func resolveIssueForTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.resolveIssueForTransaction(identifier: $1) }
    }

    // MARK: Subscriptions

    /// Turns automatic renewal off and ends the subscription's current period now.
    public func expireSubscription(productIdentifier: String) throws {
        try control { try await $0.expireSubscription(productIdentifier: productIdentifier) }
    }

    /// Ends the subscription's current period now and renews it.
    public func forceRenewalOfSubscription(productIdentifier: String) throws {
        try control { try await $0.forceRenewalOfSubscription(productIdentifier: productIdentifier) }
    }

    /// Turns automatic renewal on for the subscription of a transaction.
    public func enableAutoRenewForTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.enableAutoRenewForTransaction(identifier: $1) }
    }

    /// Turns automatic renewal off: the subscription expires at the end of its period.
    public func disableAutoRenewForTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.disableAutoRenewForTransaction(identifier: $1) }
    }

    /// Asks the customer to consent to a price increase; the app hears a price-increase `Message`.
    public func requestPriceIncreaseConsentForTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.requestPriceIncreaseConsentForTransaction(identifier: $1) }
    }

    /// The customer consents to a price increase.
    public func consentToPriceIncreaseForTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.consentToPriceIncreaseForTransaction(identifier: $1) }
    }

    /// The customer declines a price increase: automatic renewal turns off.
    public func declinePriceIncreaseForTransaction(identifier: UInt) throws {
        try control(transaction: identifier) { try await $0.declinePriceIncreaseForTransaction(identifier: $1) }
    }


    // MARK: The same controls, taking `Int` identifiers

    public func deleteTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.deleteTransaction(identifier: $1) }
    }

    public func refundTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.refundTransaction(identifier: $1) }
    }

    public func approveAskToBuyTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.approveAskToBuyTransaction(identifier: $1) }
    }

    public func declineAskToBuyTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.declineAskToBuyTransaction(identifier: $1) }
    }

    public func resolveIssueForTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.resolveIssueForTransaction(identifier: $1) }
    }

    public func enableAutoRenewForTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.enableAutoRenewForTransaction(identifier: $1) }
    }

    public func disableAutoRenewForTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.disableAutoRenewForTransaction(identifier: $1) }
    }

    public func requestPriceIncreaseConsentForTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.requestPriceIncreaseConsentForTransaction(identifier: $1) }
    }

    public func consentToPriceIncreaseForTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.consentToPriceIncreaseForTransaction(identifier: $1) }
    }

    public func declinePriceIncreaseForTransaction(identifier: Int) throws {
        try control(transaction: identifier) { try await $0.declinePriceIncreaseForTransaction(identifier: $1) }
    }

    // MARK: Simulated failures

    /// Makes one StoreKit API throw `error` until cleared with `nil`.
    public func setSimulatedError<API: FailableStoreKitAPI>(_ error: API.Failure?, forAPI api: API) async throws {
        try await localStore.setSimulatedError(error?._errorCode.failure, forAPI: api.simulatedAPI)
    }

    /// The failure an API is made to throw, if any.
    public func simulatedError<API: FailableStoreKitAPI>(forAPI api: API) async -> API.Failure? {
        localStore.simulatedError(forAPI: api.simulatedAPI).flatMap { API.Failure(_fromErrorCode: _SKTestFailureCode(failure: $0)) }
    }

    // MARK: Running controls

    /// Runs a control of the test session and waits for it.
    private func control(_ body: @escaping @Sendable (LocalStore) async throws -> Void) throws {
        try BlockingWork.synchronously { [localStore] in try await body(localStore) }
    }

    /// Runs a control that cannot throw in Xcode's API, saying on standard error when it fails.
    private func report(_ name: String, _ body: @escaping @Sendable (LocalStore) async throws -> Void) {
        do {
            try control(body)
        } catch {
            FileHandle.standardError.write(Data("SKTestSession.\(name)() failed: \(error)\n".utf8))
        }
    }

    /// Runs a control on a transaction, named by its identifier: Xcode's controls take a `UInt`
    /// (tests write `UInt(transaction.id)`); the `Int` forms take `SKTestTransaction.identifier` and
    /// literals as they are.
    private func control(transaction identifier: some BinaryInteger, _ body: @escaping @Sendable (LocalStore, UInt64) async throws -> Void) throws {
        guard let id = UInt64(exactly: identifier) else {
            throw SKTestError(code: .noTransactionFound, message: "no transaction \(identifier)")
        }
        try control { try await body($0, id) }
    }
}
