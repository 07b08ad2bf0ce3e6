import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQL
import BlockingWork
import Foundation
import StoreKitCatalog

/// Opening store directories and presenting what they hold, for the store commands.
enum StoreAccess {
    /// Makes a store folder (its ledger written and synced) off the cooperative pool.
    static func create(at url: URL, configuration: StoreKitConfiguration, identity: StoreIdentity, clockMode: StoreDirectory.ClockMode,
                       start: Date, ocspURL: String?) async throws -> SimulatedAppStore {
        try await BlockingWork.run("StoreAccess.create") { () throws(AppStoreError) in
            try StoreDirectory.create(at: url, configuration: configuration, identity: identity, clockMode: clockMode, start: start, ocspURL: ocspURL)
        }
    }

    /// Opens the store in `path`; a store on the real clock first plays the events that fell due,
    /// unless another process (a server, another command) holds the lifecycle lease and plays them.
    ///
    /// `path` may also be a `postgres://` URL: a store in a database (`storekit store create --database`).
    static func open(_ path: String) async throws -> SimulatedAppStore {
        try BackendDatabase.refusePassword(in: path, given: "STORE", environment: nil, databaseFile: false)
        let location = StoreLocation(path)
        // Opening reads the ledger and may wait for another process's lock: off the cooperative pool,
        // which commands run in tests share with every other test.
        let (store, clockMode, _) = try await location.openWithDetails()
        if clockMode == .real {
            // What cannot be played now is played by the next holder of the lease; the command's own
            // work does not depend on it, so it is not failed for it.
            _ = try? await store.processDueEvents()
        }
        return store
    }

    /// A JWS's payload as a JSON object (it was signed by the store, so it is decoded, not re-verified).
    static func payloadObject(_ jws: String) -> Any {
        guard let compact = try? CompactJWS(jws), let object = try? JSONSerialization.jsonObject(with: compact.payloadData) else {
            return ["error": "undecodable payload"]
        }
        return object
    }

    /// A transaction identifier argument.
    static func transactionID(_ text: String, name: String = "TRANSACTION_ID") throws(ValidationError) -> UInt64 {
        guard let id = UInt64(text) else { throw ValidationError("\(name) must be a number, not \"\(text)\"") }
        return id
    }

    /// One line describing a ledger transaction.
    static func line(_ transaction: LedgerTransaction) -> String {
        var parts = ["#\(transaction.id)", transaction.productID, transaction.productKind.rawValue, "account \(transaction.account)",
                     iso(transaction.purchaseDate)]
        if transaction.originalID != transaction.id { parts.append("original #\(transaction.originalID)") }
        if let expiration = transaction.expirationDate { parts.append("expires \(iso(expiration))") }
        if transaction.reason == .renewal { parts.append("renewal") }
        if transaction.ownership == .familyShared { parts.append("family-shared") }
        if transaction.quantity > 1 { parts.append("×\(transaction.quantity)") }
        switch transaction.state {
        case .purchased: break
        case .pendingApproval: parts.append("PENDING ASK TO BUY")
        case .interrupted: parts.append("INTERRUPTED")
        case .declined: parts.append("DECLINED")
        }
        if let revocation = transaction.revocation { parts.append("REVOKED \(iso(revocation.date))") }
        if transaction.isUpgraded { parts.append("upgraded") }
        if let offer = transaction.offer { parts.append("offer \(offer.discountType.rawValue)\(offer.id.map { " \($0)" } ?? "")") }
        if transaction.isPurchased { parts.append(transaction.isFinished ? "finished" : "unfinished") }
        // Which data Apple signed and which this store made: imported transactions keep Apple's identifiers.
        parts.append(transaction.isImported ? "imported" : "local")
        return parts.joined(separator: "  ")
    }

    /// An instant as ISO 8601 in UTC (`2026-01-31T10:00:00Z`); the format style is a value, so a long
    /// listing does not build a formatter per line.
    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// Parses an instant: ISO 8601 (`2026-01-31T10:00:00Z`) or a date (`2026-01-31`, midnight UTC).
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withFullDate]
        return formatter.date(from: text)
    }
}
