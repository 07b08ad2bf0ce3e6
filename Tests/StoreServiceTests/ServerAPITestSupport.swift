import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import Foundation
import StoreKitCatalog
import StoreService
import TestSupport

/// A served Sandbox store with an API key, and requests signed as Apple's libraries sign them.
struct ServedServerAPI {
    let scratch = Scratch()
    let store: SimulatedAppStore
    let server: StoreServer
    let key: P256PrivateKey
    let record: APIKeyRecord
    static let bundleID = "com.example.shop"

    /// The n-th transaction ID of the (Sandbox) store: 16 digits, as Apple's.
    static func transactionID(_ n: UInt64) -> UInt64 { LedgerCounters(for: .sandbox).nextTransactionID + n }

    /// `text` with `{n}` replaced by the n-th transaction ID, for n from 0 to 9.
    static func withTransactionIDs(_ text: String) -> String {
        (0..<10).reduce(text) { text, n in text.replacingOccurrences(of: "{\(n)}", with: String(transactionID(UInt64(n)))) }
    }

    private init(environment: AppStoreModels.Environment) async throws {
        store = try await TestStores.directory(in: scratch, bundleID: Self.bundleID, environment: environment).store
        key = try P256PrivateKey.generate()
        record = try await store.registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
        server = try StoreServer(store: store)
    }

    /// Runs `body` with the store served; the server is stopped when `body` returns or throws. (A store
    /// of another `environment` than Sandbox has other transaction IDs than ``transactionID(_:)``.)
    static func with(environment: AppStoreModels.Environment = .sandbox, _ body: (ServedServerAPI) async throws -> Void) async throws {
        let api = try await ServedServerAPI(environment: environment)
        do {
            try await body(api)
            await api.server.stop()
        } catch {
            await api.server.stop()
            throw error
        }
    }

    /// A valid bearer token, made now.
    func token() throws -> String {
        try ServerAPIToken.make(key: key, keyId: record.keyId, issuerId: record.issuerId, bundleId: Self.bundleID, issuedAt: Date())
    }

    /// Sends a request to the API; `token` nil sends none.
    func send(_ method: String, _ path: String, body: Data? = nil, token: String?? = .none) async throws -> Exchange {
        var headers: [(name: String, value: String)] = []
        switch token {
        case .none: headers.append(("Authorization", "Bearer \(try self.token())"))
        case .some(let value?): headers.append(("Authorization", "Bearer \(value)"))
        case .some(nil): break
        }
        return try await Exchange.send(method, URL(string: server.url.absoluteString + path)!, body: body, headers: headers)
    }

    func send(_ method: String, _ path: String, json: String) async throws -> Exchange {
        try await send(method, path, body: Data(json.utf8))
    }
}

extension Exchange {
    /// Apple's `errorCode` in the body.
    var apiErrorCode: Int? { json?["errorCode"] as? Int }
}
