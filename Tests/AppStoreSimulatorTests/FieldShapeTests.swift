import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// What a Sandbox store signs has the shape of what Apple signs: for every kind of payload the real
/// sandbox vectors hold, the same keys present (by state: auto-renew on or off, expired) with the same
/// JSON types. Keys that depend on the scenario rather than on the kind (offers, tokens, device
/// verification, grace dates) are left out of the comparison.
@Suite(.timeLimit(.minutes(10)), .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
struct FieldShapeTests {
    /// Keys whose presence depends on the scenario (an offer, a token, a device), not on the kind.
    static let scenarioKeys: Set<String> = [
        "offerType", "offerIdentifier", "offerDiscountType", "offerPeriod", "appAccountToken", "deviceVerification",
        "deviceVerificationNonce", "eligibleWinBackOfferIds", "priceIncreaseStatus", "gracePeriodExpiresDate",
        "revocationType", "revocationPercentage", "autoRenewProductId",
    ]

    /// A payload's shape: each key (nested `data.` keys of notifications included) and its JSON type.
    static func shape(_ object: [String: JSONValue], prefix: String = "") -> [String: String] {
        var shape: [String: String] = [:]
        for (key, value) in object where !scenarioKeys.contains(key) {
            let name = prefix + key
            switch value {
            case .object(let nested) where key == "data": shape.merge(Self.shape(nested, prefix: "data.")) { $1 }
            case .string: shape[name] = "string"
            case .integer, .number: shape[name] = "number"
            case .bool: shape[name] = "bool"
            case .array: shape[name] = "array"
            case .object: shape[name] = "object"
            case .null: shape[name] = "null"
            }
        }
        return shape
    }

    static func object(_ jws: String) throws -> [String: JSONValue] {
        try AppStoreJSON.makeDecoder().decode([String: JSONValue].self, from: try CompactJWS(jws).payloadData)
    }

    static func string(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    static func integer(_ value: JSONValue?) -> Int64? {
        if case .integer(let number)? = value { return number }
        return nil
    }

    /// The kind of a renewal info: auto-renew on or off while active, or expired.
    static func renewalKind(_ info: [String: JSONValue]) -> String? {
        if string(info["autoRenewProductId"]) != string(info["productId"]) { return nil }   // a pending plan change
        if info["expirationIntent"] != nil { return "renewal info, expired" }
        return integer(info["autoRenewStatus"]) == 1 ? "renewal info, auto-renew on" : "renewal info, auto-renew off"
    }

    static func transactionKind(_ transaction: [String: JSONValue]) -> String {
        "transaction, \(string(transaction["type"]) ?? "?") \(string(transaction["transactionReason"]) ?? "?")"
            + (transaction["revocationDate"] != nil ? " revoked" : "")
    }

    /// Every kind found in a set of notifications and standalone payloads, with its shapes.
    static func kinds(notifications: [String], transactions: [String], renewals: [String]) throws -> [String: [[String: String]]] {
        var kinds: [String: [[String: String]]] = [:]
        func add(renewal jws: String) throws {
            let info = try object(jws)
            if let kind = renewalKind(info) { kinds[kind, default: []].append(shape(info)) }
        }
        func add(transaction jws: String) throws {
            let transaction = try object(jws)
            kinds[transactionKind(transaction), default: []].append(shape(transaction))
        }
        for jws in notifications {
            let payload = try object(jws)
            var data: [String: JSONValue] = [:]
            if case .object(let nested)? = payload["data"] { data = nested }
            let kind = ["notification", string(payload["notificationType"]), string(payload["subtype"])].compactMap { $0 }.joined(separator: " ")
            kinds[kind, default: []].append(shape(payload))
            if let renewal = string(data["signedRenewalInfo"]) { try add(renewal: renewal) }
            if let transaction = string(data["signedTransactionInfo"]) { try add(transaction: transaction) }
        }
        for jws in transactions { try add(transaction: jws) }
        for jws in renewals { try add(renewal: jws) }
        return kinds
    }

    /// Apple's real sandbox vectors, by kind.
    static func appleKinds() throws -> [String: [[String: String]]] {
        let files = SharedTestData.files(in: "apple-vectors/real-sandbox", withExtension: "jws")
        func texts(_ part: String) throws -> [String] {
            try files.filter { $0.lastPathComponent.contains("-\(part)") }.map {
                String(decoding: try Data(contentsOf: $0), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        return try kinds(notifications: try texts("notification"), transactions: try texts("transaction"), renewals: try texts("renewal"))
    }

    /// A Sandbox store with an app Apple ID plays the story of the vectors: subscribe, renew, turn
    /// auto-renew off, expire, resubscribe, ask for a refund (CONSUMPTION_REQUEST, REFUND), TEST.
    static func ourKinds() async throws -> [String: [[String: String]]] {
        let start = Date(timeIntervalSince1970: 1_767_225_600)
        let store = try await SimulatedAppStore.create(
            configuration: TestStore.shopConfiguration,
            identity: StoreIdentity(bundleId: "com.example.shop", environment: .sandbox, appAppleId: 1_470_168_868),
            authority: TestStore.authority, storage: InMemoryLedgerStorage(), clock: ManualStoreClock(startingAt: start))
        let monthly = "com.example.shop.plus.standard.monthly"
        let first = try await store.buyProduct(monthly, account: "alice")
        // The plan starts with a six-month introductory offer: renew past it.
        try await store.advanceTime(by: 200 * 86_400)
        try await store.setAutoRenew(originalTransactionID: first.originalID, enabled: false)
        try await store.advanceTime(by: 40 * 86_400)
        let again = try await store.buyProduct(monthly, account: "alice")
        try await store.requestRefund(again.id)
        _ = try await store.requestTestNotification()
        let notifications = try await store.notifications().map(\.signedPayload)
        let statuses = try await store.subscriptionStatuses(groupID: ExampleShop.plus, account: "alice")
        return try kinds(notifications: notifications, transactions: [], renewals: statuses.map(\.signedRenewalInfo))
    }

    @Test("every kind of payload in Apple's sandbox vectors has the same keys and JSON types when this store signs it")
    func shapesMatchApple() async throws {
        let apple = try Self.appleKinds()
        let ours = try await Self.ourKinds()
        var compared = 0
        for (kind, appleShapes) in apple.sorted(by: { $0.key < $1.key }) {
            guard let ourShapes = ours[kind] else { continue }
            compared += 1
            // Within a kind Apple's own vectors agree; ours must equal the union of keys Apple sends for it.
            let appleKeys = appleShapes.reduce(into: [String: String]()) { $0.merge($1) { first, _ in first } }
            for shape in ourShapes {
                let missing = Set(appleKeys.keys).subtracting(shape.keys).sorted()
                let extra = Set(shape.keys).subtracting(appleKeys.keys).sorted()
                #expect(missing.isEmpty, "\(kind): Apple sends \(missing), this store does not")
                #expect(extra.isEmpty, "\(kind): this store sends \(extra), Apple does not")
                for (key, type) in shape where appleKeys[key] != nil {
                    #expect(appleKeys[key] == type, "\(kind): \(key) is \(type) here, \(appleKeys[key]!) in Apple's")
                }
            }
        }
        // The story covers the vectors' kinds: renewal info on, off and expired; purchases, renewals
        // and refunds; and every notification type the vectors hold but plan changes.
        let expected: Set<String> = [
            "renewal info, auto-renew on", "renewal info, auto-renew off", "renewal info, expired",
            "transaction, Auto-Renewable Subscription PURCHASE", "transaction, Auto-Renewable Subscription RENEWAL",
            "notification DID_RENEW", "notification DID_CHANGE_RENEWAL_STATUS AUTO_RENEW_DISABLED", "notification EXPIRED VOLUNTARY",
            "notification SUBSCRIBED RESUBSCRIBE", "notification CONSUMPTION_REQUEST", "notification REFUND", "notification TEST",
        ]
        let covered = Set(apple.keys).intersection(ours.keys)
        #expect(expected.isSubset(of: covered), "not compared: \(expected.subtracting(covered).sorted()); this store's kinds: \(ours.keys.sorted())")
        #expect(compared >= expected.count)
    }
}
