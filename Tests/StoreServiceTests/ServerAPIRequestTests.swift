import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import StoreService
import Testing
import TestSupport

/// Authentication as Apple's and Apple's error codes for bad requests; a fuzz of random requests
/// gets no 5xx and no crash.
@Suite(.timeLimit(.minutes(10)))
struct ServerAPIRequestTests {
    enum BadToken: String, CaseIterable, Sendable {
        case missing, garbage, expired, wrongSignature, wrongAudience, wrongBundle, unknownKey, revoked, notES256
    }

    @Test("requests without a valid token get 401 and change nothing", arguments: BadToken.allCases)
    func unauthorized(_ bad: BadToken) async throws {
        try await ServedServerAPI.with { api in
            func token(_ claims: ServerAPIToken.Claims, key: P256PrivateKey? = nil, keyID: String? = nil) throws -> String {
                try JWSSigner(key: key ?? api.key, certificateChain: [], typ: "JWT", kid: keyID ?? api.record.keyId).sign(claims)
            }
            let now = Int64(Date().timeIntervalSince1970)
            let good = ServerAPIToken.Claims(iss: api.record.issuerId, iat: now, exp: now + 300, aud: ServerAPIToken.audience, bid: ServedServerAPI.bundleID)
            let value: String?
            switch bad {
            case .missing: value = nil
            case .garbage: value = "not-a-token"
            case .expired:
                var claims = good
                claims.exp = now - 10
                value = try token(claims)
            case .wrongSignature: value = try token(good, key: try P256PrivateKey.generate())
            case .wrongAudience:
                var claims = good
                claims.aud = "someone-else"
                value = try token(claims)
            case .wrongBundle:
                var claims = good
                claims.bid = "com.example.other"
                value = try token(claims)
            case .unknownKey: value = try token(good, keyID: "NOSUCHKEY1")
            case .revoked:
                try await api.store.revokeAPIKey(api.record.keyId)
                value = try token(good)
            case .notES256:
                let header = Base64URL.encode(Data(#"{"alg":"none","kid":"\#(api.record.keyId)","typ":"JWT"}"#.utf8))
                value = header + "." + Base64URL.encode(try JSONEncoder().encode(good)) + "."
            }
            let before = try await api.store.notifications().count
            let answer = try await api.send("POST", "/inApps/v1/notifications/test", token: .some(value))
            #expect(answer.status == 401)
            #expect(try await api.store.notifications().count == before, "an unauthorized request changed the store")
            // The same request with a good token works (for keys that were not revoked).
            if bad != .revoked { #expect(try await api.send("POST", "/inApps/v1/notifications/test").status == 200) }
        }
    }

    @Test("Apple's token without iat (as its Python library makes it) is accepted")
    func tokenWithoutIssuedAt() async throws {
        try await ServedServerAPI.with { api in
            let now = Int64(Date().timeIntervalSince1970)
            let claims = ServerAPIToken.Claims(iss: api.record.issuerId, iat: nil, exp: now + 300, aud: ServerAPIToken.audience, bid: ServedServerAPI.bundleID)
            let token = try JWSSigner(key: api.key, certificateChain: [], typ: "JWT", kid: api.record.keyId).sign(claims)
            #expect(try await api.send("POST", "/inApps/v1/notifications/test", token: .some(token)).status == 200)
        }
    }

    struct BadRequest: Sendable, CustomStringConvertible {
        var method: String
        var path: String
        var body: String?
        var status: Int
        var code: Int
        var description: String { "\(method) \(path) → \(status) \(code)" }
    }

    static let badRequests: [BadRequest] = [
        BadRequest(method: "GET", path: "/inApps/v1/transactions/abc", body: nil, status: 400, code: 4_000_006),
        BadRequest(method: "GET", path: "/inApps/v1/transactions/-5", body: nil, status: 400, code: 4_000_006),
        BadRequest(method: "GET", path: "/inApps/v1/transactions/123456", body: nil, status: 404, code: 4_040_010),
        BadRequest(method: "GET", path: "/inApps/v2/history/{0}?startDate=20&endDate=10", body: nil, status: 400, code: 4_000_013),
        BadRequest(method: "GET", path: "/inApps/v2/history/{0}?startDate=yesterday", body: nil, status: 400, code: 4_000_015),
        BadRequest(method: "GET", path: "/inApps/v2/history/{0}?endDate=1e30", body: nil, status: 400, code: 4_000_016),
        BadRequest(method: "GET", path: "/inApps/v2/history/{0}?sort=SIDEWAYS", body: nil, status: 400, code: 4_000_021),
        BadRequest(method: "GET", path: "/inApps/v2/history/{0}?productType=GADGET", body: nil, status: 400, code: 4_000_022),
        BadRequest(method: "GET", path: "/inApps/v2/history/{0}?inAppOwnershipType=BORROWED", body: nil, status: 400, code: 4_000_026),
        BadRequest(method: "GET", path: "/inApps/v2/history/{0}?revoked=maybe", body: nil, status: 400, code: 4_000_030),
        BadRequest(method: "GET", path: "/inApps/v2/history/{0}?revision=%%%", body: nil, status: 400, code: 4_000_005),
        BadRequest(method: "GET", path: "/inApps/v1/subscriptions/{0}?status=9", body: nil, status: 400, code: 4_000_031),
        BadRequest(method: "PUT", path: "/inApps/v1/subscriptions/extend/{0}", body: #"{"extendByDays": 91, "extendReasonCode": 1, "requestIdentifier": "a"}"#, status: 400, code: 4_000_009),
        BadRequest(method: "PUT", path: "/inApps/v1/subscriptions/extend/{0}", body: #"{"extendByDays": 9, "extendReasonCode": 7, "requestIdentifier": "a"}"#, status: 400, code: 4_000_010),
        BadRequest(method: "PUT", path: "/inApps/v1/subscriptions/extend/{0}", body: #"{"extendByDays": 9, "extendReasonCode": 1}"#, status: 400, code: 4_000_011),
        BadRequest(method: "PUT", path: "/inApps/v1/subscriptions/extend/{0}", body: #"{"extendByDays": 9, "extendReasonCode": 1, "requestIdentifier": "a"}"#, status: 403, code: 4_030_004),
        BadRequest(method: "PUT", path: "/inApps/v1/subscriptions/extend/x", body: #"{}"#, status: 400, code: 4_000_008),
        BadRequest(method: "POST", path: "/inApps/v1/subscriptions/extend/mass", body: #"{"extendByDays": 5, "extendReasonCode": 1, "requestIdentifier": "b", "productId": "com.example.shop.pro"}"#, status: 400, code: 4_000_023),
        BadRequest(method: "POST", path: "/inApps/v1/subscriptions/extend/mass", body: #"{"extendByDays": 5, "extendReasonCode": 1, "requestIdentifier": "b", "productId": "com.example.shop.plus.premium.monthly", "storefrontCountryCodes": []}"#, status: 400, code: 4_000_027),
        BadRequest(method: "GET", path: "/inApps/v1/subscriptions/extend/mass/com.example.shop.plus.premium.monthly/nothing", body: nil, status: 404, code: 4_040_009),
        BadRequest(method: "GET", path: "/inApps/v1/notifications/test/not-a-token", body: nil, status: 400, code: 4_000_020),
        BadRequest(method: "GET", path: "/inApps/v1/notifications/test/7e3fb20b-4cdb-47cc-936d-99d65f608138", body: nil, status: 404, code: 4_040_008),
        BadRequest(method: "POST", path: "/inApps/v1/notifications/history", body: #"{"endDate": 1767225600000}"#, status: 400, code: 4_000_015),
        BadRequest(method: "POST", path: "/inApps/v1/notifications/history", body: #"{"startDate": 1767225600000, "endDate": 1767225500000}"#, status: 400, code: 4_000_013),
        BadRequest(method: "POST", path: "/inApps/v1/notifications/history", body: #"{"startDate": 1000, "endDate": 1767225600000}"#, status: 400, code: 4_000_012),
        BadRequest(method: "POST", path: "/inApps/v1/notifications/history", body: #"{"startDate": 1767225600000, "endDate": 1767225600001, "notificationType": "REFUND", "transactionId": "{0}"}"#, status: 400, code: 4_000_019),
        BadRequest(method: "POST", path: "/inApps/v1/notifications/history", body: #"{"startDate": 1767225600000, "endDate": 1767225600001, "notificationType": "NOT_A_TYPE"}"#, status: 400, code: 4_000_018),
        BadRequest(method: "POST", path: "/inApps/v1/notifications/history?paginationToken=bogus", body: #"{"startDate": 1767225600000, "endDate": 1767225600001}"#, status: 400, code: 4_000_014),
        BadRequest(method: "POST", path: "/inApps/v1/notifications/history", body: #"{"startDate": "soon", "endDate": 2}"#, status: 400, code: 4_000_000),
        BadRequest(method: "PUT", path: "/inApps/v1/transactions/consumption/0", body: #"{"customerConsented": false}"#, status: 400, code: 4_000_035),
        BadRequest(method: "PUT", path: "/inApps/v1/transactions/consumption/0", body: #"{"customerConsented": true, "consumptionStatus": 9}"#, status: 400, code: 4_000_034),
        BadRequest(method: "PUT", path: "/inApps/v2/transactions/consumption/0", body: #"{"customerConsented": true, "sampleContentProvided": true, "deliveryStatus": "LOST"}"#, status: 400, code: 4_000_036),
        BadRequest(method: "PUT", path: "/inApps/v2/transactions/consumption/0", body: #"{"customerConsented": true, "sampleContentProvided": "yes", "deliveryStatus": "DELIVERED"}"#, status: 400, code: 4_000_041),
        BadRequest(method: "PUT", path: "/inApps/v1/transactions/{0}/appAccountToken", body: #"{"appAccountToken": "not-a-uuid"}"#, status: 400, code: 4_000_183),
        BadRequest(method: "PUT", path: "/inApps/v1/transactions/{2}/appAccountToken", body: #"{"appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}"#, status: 400, code: 4_000_187),
        BadRequest(method: "POST", path: "/inApps/v1/transactions/987654/finish", body: nil, status: 404, code: 4_040_010),
        BadRequest(method: "GET", path: "/inApps/v9/nothing", body: nil, status: 404, code: 4_040_000),
    ]

    @Test("bad requests get Apple's HTTP status and error code as JSON", arguments: badRequests)
    func badRequest(_ bad: BadRequest) async throws {
        try await ServedServerAPI.with { api in
            // Transaction {0} is a consumable of alice's, {1} her monthly subscription, {2} its renewal (not an original).
            _ = try await api.store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone"))
            _ = try await api.store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: "alice", device: "phone"))
            try await api.store.advanceTime(by: 40 * 86_400)
            let answer = try await api.send(bad.method, ServedServerAPI.withTransactionIDs(bad.path),
                                            body: bad.body.map { Data(ServedServerAPI.withTransactionIDs($0).utf8) })
            #expect(answer.status == bad.status, "\(String(decoding: answer.body, as: UTF8.self))")
            #expect(answer.apiErrorCode == bad.code)
            #expect(answer.contentType == "application/json")
        }
    }

    @Test("10,000 random requests across the endpoints: never a 5xx, always Apple's error body, the server still answers")
    func fuzz() async throws {
        try await ServedServerAPI.with { api in
            _ = try await api.store.purchase(PurchaseRequest(productID: ExampleShop.gems, account: "alice", device: "phone"))
            _ = try await api.store.purchase(PurchaseRequest(productID: ExampleShop.premiumMonthly, account: "alice", device: "phone"))
            var generator = SplitMix64(state: 0x5EED)
            let requests = (0..<10_000).map { _ in RandomRequest.make(using: &generator) }
            let failures = try await withThrowingTaskGroup(of: [String].self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var failures: [String] = []
                        var token = try api.token()
                        for (index, request) in requests[(worker * 1_250)..<((worker + 1) * 1_250)].enumerated() {
                            // A fresh token every hundred requests: a loaded run outlives one token's life.
                            if index % 100 == 99 { token = try api.token() }
                            // Every request gets an answer: a transport failure fails the test.
                            let answer = try await api.send(request.method, request.path, body: request.body, token: .some(token))
                            let valid = answer.status < 300 || answer.apiErrorCode != nil
                            if answer.status >= 500 || !valid || answer.status == 0 {
                                failures.append("\(request.method) \(request.path) → \(answer.status) \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
                            }
                        }
                        return failures
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(failures.isEmpty, "\(failures.prefix(5))")
            #expect(try await api.send("GET", ServedServerAPI.withTransactionIDs("/inApps/v1/transactions/{0}")).status == 200)
            #expect(try await api.store.integrityProblems().isEmpty)
        }
    }
}

/// A request made of random pieces of the API: paths, identifiers, queries and bodies that are
/// right, wrong, huge or of the wrong type.
struct RandomRequest {
    var method: String
    var path: String
    var body: Data?

    static let paths = [
        "/inApps/v1/transactions/{id}", "/inApps/v1/history/{id}", "/inApps/v2/history/{id}", "/inApps/v1/subscriptions/{id}",
        "/inApps/v2/refund/lookup/{id}", "/inApps/v1/lookup/{text}", "/inApps/v1/subscriptions/extend/{id}", "/inApps/v1/subscriptions/extend/mass",
        "/inApps/v1/subscriptions/extend/mass/{text}/{text}", "/inApps/v1/notifications/test", "/inApps/v1/notifications/test/{text}",
        "/inApps/v1/notifications/history", "/inApps/v1/transactions/consumption/{id}", "/inApps/v2/transactions/consumption/{id}",
        "/inApps/v1/transactions/{id}/appAccountToken", "/inApps/v1/transactions/appTransactions/{id}", "/inApps/v1/transactions/{id}/finish",
    ]
    static let methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
    static let ids = ["0", "1", "2", "999999", "-1", "abc", "18446744073709551615", "18446744073709551616", "0x10", "1.5", "%20", "", "💥"]
    static let texts = ["MZZZZZZZZZ", "M000000000", "7e3fb20b-4cdb-47cc-936d-99d65f608138", "com.example.shop.plus.premium.monthly", "x", "%00", "a%2Fb"]
    static let queries = ["", "?startDate=0", "?endDate=-1", "?startDate=1e99", "?sort=DESCENDING", "?revision=Zm9v", "?status=1&status=6",
                          "?productId=com.example.shop.gems.small&productType=CONSUMABLE", "?revoked=True", "?paginationToken=%FF", "?inAppOwnershipType=PURCHASED"]
    static let bodies: [String?] = [
        nil, "", "{", "[]", "null", "12", "\"text\"", #"{"extendByDays": 5, "extendReasonCode": 1, "requestIdentifier": "r"}"#,
        #"{"extendByDays": "5"}"#, #"{"extendByDays": 1e40, "extendReasonCode": -1}"#, #"{"startDate": 1767225600000, "endDate": 1767312000000}"#,
        #"{"startDate": 9223372036854775807, "endDate": -9223372036854775808}"#, #"{"customerConsented": true, "sampleContentProvided": true, "deliveryStatus": "DELIVERED"}"#,
        #"{"appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"}"#, #"{"appAccountToken": 7}"#, #"{"productId": null, "storefrontCountryCodes": [1, 2]}"#,
        String(repeating: "[", count: 600), #"{"notificationType": "REFUND", "notificationSubtype": 3}"#,
    ]

    static func make(using generator: inout SplitMix64) -> RandomRequest {
        func pick<T>(_ items: [T]) -> T { items[Int(generator.next() % UInt64(items.count))] }
        var path = pick(paths)
        while let range = path.range(of: "{id}") { path.replaceSubrange(range, with: pick(ids).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "0") }
        while let range = path.range(of: "{text}") { path.replaceSubrange(range, with: pick(texts)) }
        path += pick(queries)
        var body = pick(bodies).map { Data($0.utf8) }
        if generator.next() % 50 == 0 { body = Data((0..<Int(generator.next() % 4_096)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }) }
        let method = generator.next() % 4 == 0 ? pick(methods) : (path.contains("history") || path.contains("mass") || path.contains("test") ? "POST" : "GET")
        // The client sends no body with GET or DELETE.
        return RandomRequest(method: method, path: path, body: method == "GET" || method == "DELETE" ? nil : body)
    }
}

