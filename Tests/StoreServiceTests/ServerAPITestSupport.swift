import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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

    init() async throws {
        store = try StoreDirectory.create(at: scratch.url.appendingPathComponent("store"),
                                          configuration: try StoreKitConfiguration.load(contentsOf: ExampleShop.file).configuration,
                                          identity: StoreIdentity(bundleId: Self.bundleID, environment: .sandbox), clockMode: .manual,
                                          start: Date(timeIntervalSince1970: 1_767_225_600))
        key = try P256PrivateKey.generate()
        record = try await store.registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
        server = try StoreServer(store: store)
    }

    /// A valid bearer token, made now.
    func token() throws -> String {
        try ServerAPIToken.make(key: key, keyId: record.keyId, issuerId: record.issuerId, bundleId: Self.bundleID, issuedAt: Date())
    }

    /// Sends a request to the API; `token` nil sends none.
    func send(_ method: String, _ path: String, body: Data? = nil, token: String?? = .none) async throws -> Exchange {
        var request = URLRequest(url: URL(string: server.url.absoluteString + path)!)
        request.httpMethod = method
        request.httpBody = body
        switch token {
        case .none: request.setValue("Bearer \(try self.token())", forHTTPHeaderField: "Authorization")
        case .some(let value?): request.setValue("Bearer \(value)", forHTTPHeaderField: "Authorization")
        case .some(nil): break
        }
        let (data, response) = try await TestHTTP.session.detachedData(for: request)
        let http = response as? HTTPURLResponse
        return Exchange(status: http?.statusCode ?? 0, body: data, contentType: http?.value(forHTTPHeaderField: "Content-Type"))
    }

    func send(_ method: String, _ path: String, json: String) async throws -> Exchange {
        try await send(method, path, body: Data(json.utf8))
    }
}

extension Exchange {
    /// Apple's `errorCode` in the body.
    var apiErrorCode: Int? { json?["errorCode"] as? Int }
}
