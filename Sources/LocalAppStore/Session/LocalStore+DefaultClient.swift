import Foundation
import OpenStoreKit

extension LocalStore {
    /// Runs `body` with the app on `device` as the process-wide ``StoreClient/default``, one such
    /// body at a time in the process.
    ///
    /// StoreKit code often reaches the store from detached tasks (`Task.detached { for await … in
    /// Transaction.updates }`), which do not inherit a task-local client, so it needs the process
    /// default. Tests run in parallel; this gate makes the ones that use the default take turns,
    /// and puts the previous default back afterwards.
    public func withDefaultClient<Result: Sendable>(device: String = "device", account: String = "default",
                                                    isolation: isolated (any Actor)? = #isolation,
                                                    _ body: (StoreClient) async throws -> Result) async throws -> Result {
        await DefaultClientGate.shared.acquire()
        let previous = StoreClient.default
        defer {
            StoreClient.default = previous
            Task { await DefaultClientGate.shared.release() }
        }
        let client = try await connectDefault(device: device, account: account)
        return try await body(client)
    }

    /// Launches an app before any client is set, then connects `device` as the process-wide default,
    /// and runs `body` with both, one such body at a time in the process.
    ///
    /// This is how an app starts on a device: its `init` may start listening to `Transaction.updates`
    /// before it (or the test) sets ``StoreClient/default``; those listeners must still hear everything.
    public func withDefaultClient<App, Result: Sendable>(device: String = "device", account: String = "default",
                                                         launchingFirst launch: () throws -> App,
                                                         isolation: isolated (any Actor)? = #isolation,
                                                         _ body: (StoreClient, App) async throws -> Result) async throws -> Result {
        await DefaultClientGate.shared.acquire()
        let previous = StoreClient.default
        defer {
            StoreClient.default = previous
            Task { await DefaultClientGate.shared.release() }
        }
        StoreClient.default = nil
        let app = try launch()
        let client = try await connectDefault(device: device, account: account)
        return try await body(client, app)
    }
}

/// A process-wide turn-taking gate for the default client.
actor DefaultClientGate {
    static let shared = DefaultClientGate()
    private var isHeld = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        if !isHeld {
            isHeld = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            isHeld = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
