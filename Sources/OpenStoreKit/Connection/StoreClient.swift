import AppStoreModels
import AppStoreSigning
import Foundation
import StoreKitCatalog
import Synchronization

/// One app on one device, connected to an App Store: what StoreKit's static calls talk to.
///
/// StoreKit code calls statics (`Product.products(for:)`, `Transaction.updates`, `AppStore.sync()`);
/// they go to the *active* client: the task's ``current`` client if one is bound with
/// ``withCurrent(_:)``, else the process ``default``. Explicit clients let one test drive several
/// devices and accounts: values fetched through a client (products, transactions) remember it, so
/// `product.purchase()` and `transaction.finish()` act on the device they came from.
///
/// Connecting a client is launching the app on the device: the store queues the device's
/// unfinished transactions, so the first `Transaction.updates` loop sees them once, as StoreKit does.
///
/// Everything signed the store sends is verified here, on the device side, with the store's root
/// certificate, this app's bundle identifier and environment, and the device's verification ID.
public final class StoreClient: Sendable, CustomStringConvertible {
    /// How this client reaches its store.
    public let transport: any StoreTransport
    /// The device this client is the app on.
    public let device: String
    /// What signed data is verified against.
    public let verificationContext: VerificationContext
    let verifier: SignedDataVerifier?
    /// Why no verifier could be made (every value is then unverified).
    let verifierProblem: String?
    /// The device's `Transaction.updates` feed, shared by every listener of this client.
    let transactionFeed: UpdateBroadcast
    /// How many `Transaction.updates` listeners listen on this client now (for tests that must know
    /// a listener started before they change the store).
    package var transactionUpdateListenerCount: Int { transactionFeed.listenerCount }
    /// The device's `Status.updates` feed, shared by every listener of this client.
    let statusFeed: UpdateBroadcast
    /// The device's messages, purchase intents and storefront changes, each shared the same way.
    let messageFeed: UpdateBroadcast
    let purchaseIntentFeed: UpdateBroadcast
    let storefrontFeed: UpdateBroadcast
    /// `AppStore.canMakePayments` as last read from the store: at launch, after each purchase and
    /// after `AppStore.sync()`.
    let paymentsAllowed: Mutex<Bool>
    /// The storefront the app last saw (`Storefront.current`, `Storefront.updates`): a purchase with
    /// `onStorefrontChange` asks the app when the account's storefront is no longer this one.
    let observedStorefront: Mutex<Storefront?>

    /// Connects to a store as the app on `device`, launching it there. A process with no Info.plist
    /// (Linux executables) takes the store's bundle identifier as `Bundle.main.bundleIdentifier`.
    ///
    /// - Throws: StoreKit's errors when the store cannot be reached or does not know the device.
    public static func connect(to transport: any StoreTransport, device: String) async throws -> StoreClient {
        let context = try await storeKitCall { try await transport.verificationContext(device: device) }
        let client = StoreClient(transport: transport, device: device, context: context)
        MainBundleIdentity.adopt(context.bundleId)
        try await storeKitCall { try await transport.launch(device: device) }
        await client.refreshPaymentsAllowed()
        return client
    }

    /// Acts for a device without being its app (the web storefront buying on a device, a tool reading
    /// its entitlements): unlike ``connect(to:device:)`` this does not launch the app, so the device's
    /// unfinished transactions are not queued for its updates again.
    public static func attach(to transport: any StoreTransport, device: String) async throws -> StoreClient {
        let context = try await storeKitCall { try await transport.verificationContext(device: device) }
        let client = StoreClient(transport: transport, device: device, context: context)
        await client.refreshPaymentsAllowed()
        return client
    }

    init(transport: any StoreTransport, device: String, context: VerificationContext) {
        self.transport = transport
        self.device = device
        self.verificationContext = context
        self.transactionFeed = UpdateBroadcast(name: "Transaction.updates") {
            try await transport.nextUpdates(device: device, channel: .transactions)
        }
        self.statusFeed = UpdateBroadcast(name: "Status.updates") {
            try await transport.nextUpdates(device: device, channel: .statuses)
        }
        self.messageFeed = UpdateBroadcast(name: "Message.messages") {
            try await transport.nextUpdates(device: device, channel: .messages)
        }
        self.purchaseIntentFeed = UpdateBroadcast(name: "PurchaseIntent.intents") {
            try await transport.nextUpdates(device: device, channel: .purchaseIntents)
        }
        self.storefrontFeed = UpdateBroadcast(name: "Storefront.updates") {
            try await transport.nextUpdates(device: device, channel: .storefronts)
        }
        self.paymentsAllowed = Mutex(false)
        self.observedStorefront = Mutex(nil)
        var options = SignedDataVerifier.Options()
        options.verifiesLocalEnvironments = true
        do {
            let roots = try context.rootCertificates.map { (der) throws(SigningError) in try Certificate(derRepresentation: der) }
            self.verifier = try SignedDataVerifier(rootCertificates: roots, bundleId: context.bundleId,
                                                   environment: AppStoreModels.Environment(rawValue: context.environment),
                                                   options: options)
            self.verifierProblem = nil
        } catch {
            self.verifier = nil
            self.verifierProblem = "cannot verify signed data from this store: \(error)"
        }
    }

    public var description: String { "StoreClient(device: \(device))" }

    /// The shared broadcast of one channel of the device's feed.
    func feed(_ channel: TransportUpdate.Channel) -> UpdateBroadcast {
        switch channel {
        case .transactions: return transactionFeed
        case .statuses: return statusFeed
        case .messages: return messageFeed
        case .purchaseIntents: return purchaseIntentFeed
        case .storefronts: return storefrontFeed
        }
    }

    /// Reads again whether the account may buy; an unreachable store leaves the last answer.
    func refreshPaymentsAllowed() async {
        guard let allowed = try? await transport.canMakePayments(device: device) else { return }
        paymentsAllowed.withLock { $0 = allowed }
    }

    // MARK: Binding

    /// The process-wide client, and the listeners waiting for one to be set.
    private struct ProcessDefault {
        var client: StoreClient?
        var waiters: [Int: CheckedContinuation<StoreClient?, Never>] = [:]
        var nextWaiter = 0
    }

    private static let processDefault = Mutex(ProcessDefault())

    /// The process-wide client StoreKit's static calls use when no task-local client is bound.
    ///
    /// Setting it also starts the update listeners that began before any client was set.
    public static var `default`: StoreClient? {
        get { processDefault.withLock { $0.client } }
        set {
            let waiters = processDefault.withLock { state in
                state.client = newValue
                guard newValue != nil else { return [CheckedContinuation<StoreClient?, Never>]() }
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume(returning: newValue) }
        }
    }

    /// The client for a listener: the task's or the process's, or, when neither is set yet, the first
    /// process-wide client set from now on (`nil` when the task is cancelled first).
    ///
    /// StoreKit is there from the app's first line; here an app may start listening to
    /// `Transaction.updates` in its `init`, before it sets ``default``, and still hear everything.
    static func awaitingActive() async -> StoreClient? {
        if let client = current { return client }
        let number = processDefault.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<StoreClient?, Never>) in
                let ready = processDefault.withLock { state -> StoreClient?? in
                    if let client = state.client { return .some(client) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiters[number] = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            processDefault.withLock { $0.waiters.removeValue(forKey: number) }?.resume(returning: nil)
        }
    }

    /// The client bound to the current task (and the tasks it creates, not detached ones).
    @TaskLocal public static var current: StoreClient?

    /// The client StoreKit's static calls use now.
    ///
    /// Without any client, calls fail with `StoreKitError.systemError` naming the missing connection,
    /// and sequences end at once.
    public static var active: StoreClient { current ?? `default` ?? disconnected }

    /// Runs `body` with this client as the task's ``current`` client.
    public func withCurrent<Result>(isolation: isolated (any Actor)? = #isolation,
                                    _ body: () async throws -> Result) async rethrows -> Result {
        try await StoreClient.$current.withValue(self, operation: body, isolation: isolation)
    }

    static let disconnected = StoreClient(
        transport: DisconnectedTransport(), device: "",
        context: VerificationContext(rootCertificates: [], bundleId: "", environment: "Xcode",
                                     deviceVerificationID: DeviceVerificationFields.missingNonce))

    /// Whether this client is the placeholder used when nothing is connected.
    var isDisconnected: Bool { self === StoreClient.disconnected }
}

/// The transport of the placeholder client: every call fails, naming what is missing.
struct DisconnectedTransport: StoreTransport {
    static let message = "no App Store connection: set StoreClient.default, bind one with client.withCurrent { … }, or start a TestSession"

    private func fail() -> StoreTransportError { .storeKit("systemError", message: Self.message) }

    func verificationContext(device: String) async throws -> VerificationContext { throw fail() }
    func products(for identifiers: [String], device: String) async throws -> [CatalogProduct] { throw fail() }
    func purchase(_ request: TransportPurchaseRequest) async throws -> TransportPurchaseOutcome { throw fail() }
    func transactions(_ view: TransactionView, device: String) async throws -> [SignedItem] { throw fail() }
    func finish(transactionID: UInt64, device: String) async throws { throw fail() }
    func launch(device: String) async throws { throw fail() }
    func nextUpdates(device: String, channel: TransportUpdate.Channel) async throws -> [TransportUpdate] { throw fail() }
    func subscriptionStatuses(groupID: String, device: String) async throws -> [TransportStatus] { throw fail() }
    func isEligibleForIntroOffer(groupID: String, device: String) async throws -> Bool { throw fail() }
    func appTransaction(device: String) async throws -> SignedItem { throw fail() }
    func storefront(device: String) async throws -> StoreKitCatalog.Storefront { throw fail() }
    func sync(device: String) async throws { throw fail() }
    func requestRefund(transactionID: UInt64, device: String) async throws { throw fail() }
    func presentSheet(_ sheet: String, device: String, about transactionID: UInt64?) async throws { throw fail() }
    func canMakePayments(device: String) async throws -> Bool { throw fail() }
    func storePolicies(device: String) async throws -> StorePolicies { throw fail() }
    func requestReview(device: String) async throws -> Bool { throw fail() }
    func promotedProducts(device: String) async throws -> [TransportPromotion] { throw fail() }
    func updatePromotedProducts(_ promotions: [TransportPromotion], device: String) async throws { throw fail() }
}
