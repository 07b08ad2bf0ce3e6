import AppStoreSigning
import AppStoreSimulator
import Foundation

/// `storekit api-key create`: a new In-App Purchase key for the store's App Store Server API.
struct APIKeyCreateCommand: Command {
    static let name = "api-key create"
    static let abstract = "Make an In-App Purchase key for the store's App Store Server API; print its ID, issuer ID and private key (PKCS#8 PEM)."
    static let usage = "DIR [--json]"

    var directory: String
    var json: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        // Key generation is the one random step: the private key is the developer's alone; the store keeps the public half.
        let key = try P256PrivateKey.generate()
        let record = try await store.registerAPIKey(publicKeyPEM: try key.publicKey.pemRepresentation)
        let privateKey = try key.pemRepresentation
        if json {
            console.print(try PrettyJSON.string(from: ["keyId": record.keyId, "issuerId": record.issuerId, "privateKey": privateKey]))
        } else {
            console.print("key ID     \(record.keyId)\nissuer ID  \(record.issuerId)\nbundle ID  \(store.identity.bundleId)\n\n\(privateKey)")
        }
    }
}

/// `storekit api-key revoke`: requests signed with the key are refused from now on.
struct APIKeyRevokeCommand: Command {
    static let name = "api-key revoke"
    static let abstract = "Revoke an API key: requests signed with it get 401 from now on."
    static let usage = "DIR KEY_ID"

    var directory: String
    var keyID: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        keyID = try arguments.positional("KEY_ID")
    }

    func run(console: Console) async throws {
        try await StoreAccess.open(directory).revokeAPIKey(keyID)
        console.print("revoked \(keyID)")
    }
}

/// `storekit api-key list`: the store's API keys.
struct APIKeyListCommand: Command {
    static let name = "api-key list"
    static let abstract = "List the store's API keys (revoked ones marked)."
    static let usage = "DIR"

    var directory: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let keys = try await StoreAccess.open(directory).apiKeys()
        console.print(keys.isEmpty ? "no API keys" : keys.map { key in
            "\(key.keyId)  issuer \(key.issuerId)  created \(StoreAccess.iso(key.createdDate))\(key.revokedDate.map { "  REVOKED \(StoreAccess.iso($0))" } ?? "")"
        }.joined(separator: "\n"))
    }
}
