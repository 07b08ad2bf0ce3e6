import AppStoreSigning
import AppStoreSimulator
import Foundation

/// `storekit api-key create`: a new In-App Purchase key for the store's App Store Server API.
struct APIKeyCreateCommand: Command {
    static let declaration = CommandDeclaration("api-key create", group: .server, abstract: "Make an In-App Purchase key for the store's App Store Server API; print its ID, issuer ID and private key (PKCS#8 PEM).", arguments: [
        .positional("DIR", "the store's folder"),
        .flag("--json", "print {keyId, issuerId, privateKey} as JSON"),
    ])

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
    static let declaration = CommandDeclaration("api-key revoke", group: .server, abstract: "Revoke an API key: requests signed with it get 401 from now on.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("KEY_ID", "the key's ID"),
    ])

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
    static let declaration = CommandDeclaration("api-key list", group: .server, abstract: "List the store's API keys (revoked ones marked).", arguments: [
        .positional("DIR", "the store's folder"),
    ])

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
