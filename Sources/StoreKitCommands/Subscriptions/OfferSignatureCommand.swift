import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog

/// `storekit offer-signature`: signs a promotional offer with the configuration's offer key, as the
/// developer's server would, and prints the arguments `storekit purchase` takes.
struct OfferSignatureCommand: Command {
    static let declaration = CommandDeclaration("offer-signature", group: .subscriptions, abstract: "Sign a promotional offer with the .storekit file's offer key (legacy, or --jws for V2).", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("PRODUCT_ID", "the subscription's product"),
        .positional("OFFER_ID", "the promotional offer"),
        .option("--app-account-token", "UUID", "the customer's app account token"),
        .flag("--jws", "sign a JWS (StoreKit 2's promotionalOffer(_:compactJWS:))"),
    ])

    var directory: String
    var productID: String
    var offerID: String
    var token: UUID?
    var jws: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        token = try arguments.value("--app-account-token", expected: "a UUID") { UUID(uuidString: $0) }
        jws = arguments.flag("--jws")
        directory = try arguments.positional("DIR")
        productID = try arguments.positional("PRODUCT_ID")
        offerID = try arguments.positional("OFFER_ID")
    }

    func run(console: Console) async throws {
        let store = try await StoreAccess.open(directory)
        let (keyID, text) = try await OfferKeyFile.configuredKey(of: store)
        let key: P256PrivateKey
        do { key = try P256PrivateKey(pemRepresentation: text) } catch { throw CommandFailure("the subscription offers key is unusable: \(error)") }
        // The developer's server makes a fresh nonce and signs at the time of the store's world (on a
        // manual clock, the simulated now): the store accepts a signature for 24 hours from it.
        let nonce = UUID()
        let now = try await store.currentTime()
        if jws {
            let signature = try OfferSignatureCreator(signingKey: key, keyId: keyID, issuerId: "local", bundleId: store.identity.bundleId)
                .promotionalOfferSignature(productId: productID, offerIdentifier: offerID, nonce: nonce, issuedAt: now)
            console.print("--offer promotional:\(offerID) --signature \(signature)")
        } else {
            let timestamp = Int64(now.timeIntervalSince1970 * 1000)
            let message = PromotionalOfferSignature(bundleId: store.identity.bundleId, keyId: keyID, productIdentifier: productID,
                                                    subscriptionOfferID: offerID, applicationUsername: token?.uuidString.lowercased() ?? "",
                                                    nonce: nonce, timestamp: timestamp)
            console.print("--offer promotional:\(offerID) --signature \(try message.sign(with: key)) --key-id \(keyID) --nonce \(nonce.uuidString.lowercased()) --timestamp \(timestamp)")
        }
    }
}

/// `storekit availability`: takes a product off sale or puts it back.
struct AvailabilityCommand: Command {
    static let declaration = CommandDeclaration("availability", group: .store, abstract: "Take a product off sale (off) or put it back (on); subscriptions to it expire at renewal.", arguments: [
        .positional("DIR", "the store's folder"),
        .positional("PRODUCT_ID", "the product"),
        .positional("STATE", "on or off"),
    ])

    var directory: String
    var productID: String
    var available: Bool

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
        productID = try arguments.positional("PRODUCT_ID")
        let value = try arguments.positional("STATE", missing: "on or off")
        guard value == "on" || value == "off" else { throw ValidationError("availability is on or off, not \(value)") }
        available = value == "on"
    }

    func run(console: Console) async throws {
        try await StoreAccess.open(directory).setProductAvailable(productID, available)
        console.print("\(productID) is \(available ? "for sale" : "off sale")")
    }
}

/// A subscription offer key as a file the developer's server reads: JSON with `keyId`, `issuerId` and
/// `privateKey` (PEM), the shape of an API key file.
enum OfferKeyFile {
    struct Contents: Codable {
        var keyId: String
        var issuerId: String
        var privateKey: String
    }

    /// The store's `.storekit` subscription offer key: its identifier and its private key (PEM).
    static func configuredKey(of store: SimulatedAppStore) async throws -> (keyID: String, privateKey: String) {
        guard let pair = await store.storeKitConfiguration.subscriptionOffersKeyPair, let keyID = pair.id, let text = pair.privateKey else {
            throw CommandFailure("the store's .storekit file has no subscription offers key")
        }
        return (keyID, text)
    }

    /// The signer of the key in `path`, for the app `bundleID`.
    static func signer(reading path: String, bundleID: String) throws -> OfferSignatureCreator {
        let contents: Contents
        let data = try SecretFile.contents(path, option: "--offer-key-file", holding: "a private key")
        do { contents = try JSONDecoder().decode(Contents.self, from: data) } catch {
            throw CommandFailure("\(path) is not an offer key file ({\"keyId\", \"issuerId\", \"privateKey\"}): \(error.localizedDescription)")
        }
        let key: P256PrivateKey
        do { key = try P256PrivateKey(pemRepresentation: contents.privateKey) } catch {
            throw CommandFailure("the private key in \(path) is not a P-256 key in PEM: \(error)")
        }
        return OfferSignatureCreator(signingKey: key, keyId: contents.keyId, issuerId: contents.issuerId, bundleId: bundleID)
    }
}

/// `storekit offer-key`: the .storekit file's subscription offer key as the developer's server keeps
/// it, for `backend serve --offer-key-file`.
struct OfferKeyCommand: Command {
    static let declaration = CommandDeclaration("offer-key", group: .subscriptions, abstract: "Print the .storekit file's subscription offer key as an offer key file (JSON) for backend serve --offer-key-file.", arguments: [
        .positional("DIR", "the store's folder"),
    ])

    var directory: String

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        directory = try arguments.positional("DIR")
    }

    func run(console: Console) async throws {
        let (keyID, text) = try await OfferKeyFile.configuredKey(of: StoreAccess.open(directory))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = try encoder.encode(OfferKeyFile.Contents(keyId: keyID, issuerId: "local", privateKey: text))
        console.print(String(decoding: json, as: UTF8.self))
    }
}
