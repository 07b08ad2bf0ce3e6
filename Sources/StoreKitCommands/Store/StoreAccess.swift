import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import AppStoreSimulatorSQLite
import Foundation
import StoreKitCatalog

/// Opening store directories and presenting what they hold, for the store commands.
enum StoreAccess {
    /// Opens the store in `path`; a store on the real clock first plays the events that fell due,
    /// unless another process (a server, another command) holds the lifecycle lease and plays them.
    static func open(_ path: String) async throws -> SimulatedAppStore {
        let url = URL(fileURLWithPath: path)
        let store = try StoreDirectory.open(at: url)
        if try StoreDirectory.clockMode(at: url) == .real {
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

/// A length of simulated time: ISO 8601 (`P1M`, `P3D`, `PT12H`, `P1Y2M`) or short (`3d`, `1M`, `2w`, `12h`, `30m`, `45s`, `1y`).
struct TimeStep: Equatable, CustomStringConvertible {
    var years = 0, months = 0, weeks = 0, days = 0, hours = 0, minutes = 0, seconds = 0
    let text: String

    init?(_ text: String) {
        self.text = text
        if text.hasPrefix("P") {
            var inTime = false
            var number = ""
            var any = false
            for character in text.dropFirst() {
                if character == "T" { inTime = true; continue }
                if character.isNumber { number.append(character); continue }
                guard let value = Int(number), value >= 0 else { return nil }
                number = ""
                any = true
                switch (character, inTime) {
                case ("Y", false): years = value
                case ("M", false): months = value
                case ("W", false): weeks = value
                case ("D", false): days = value
                case ("H", true): hours = value
                case ("M", true): minutes = value
                case ("S", true): seconds = value
                default: return nil
                }
            }
            guard any, number.isEmpty else { return nil }
        } else {
            guard let unit = text.last, let value = Int(text.dropLast()), value >= 0 else { return nil }
            switch unit {
            case "y": years = value
            case "M": months = value
            case "w": weeks = value
            case "d": days = value
            case "h": hours = value
            case "m": minutes = value
            case "s": seconds = value
            default: return nil
            }
        }
    }

    /// The instant this step after `start`, in calendar terms (UTC).
    func date(after start: Date) -> Date {
        var components = DateComponents()
        components.year = years
        components.month = months
        components.day = days + 7 * weeks
        components.hour = hours
        components.minute = minutes
        components.second = seconds
        return SubscriptionPeriod.renewalCalendar.date(byAdding: components, to: start) ?? start
    }

    var description: String { text }
}
