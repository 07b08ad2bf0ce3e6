import AppStoreModels
import Foundation
import HTTPService

/// The backend's HTTP endpoints, over its storage:
///
/// - `POST /apple/notifications`: Apple's webhook body `{"signedPayload"}`, verified, recorded once by
///   UUID, 200 only after the commit; 4xx for anything unverified or malformed, which changes nothing.
/// - `POST /v1/transactions`: `{"signedTransaction", "userID"?}` from an app before it finishes a
///   purchase; answers the customer's entitlements.
/// - `GET /v1/customers/{id}/entitlements`, `…/history` and `…/explain?productId=`: by app account
///   token or user id; `explain` says in words why the customer is or is not entitled.
///
/// The `/v1` endpoints need `Authorization: Bearer KEY` with a key from `storekit backend key create`.
public struct BackendService: Sendable {
    public let storage: any BackendStorage
    public let intake: SignedDataIntake
    public let ledger: CustomerLedger
    /// Where refusals are reported (stderr for `storekit backend serve`).
    public let log: @Sendable (String) -> Void

    public init(storage: any BackendStorage, intake: SignedDataIntake, now: @escaping @Sendable () -> Date = { Date() },
                log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.storage = storage
        self.intake = intake
        self.ledger = CustomerLedger(storage: storage, now: now)
        self.log = log
    }

    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        do {
            return try await route(request)
        } catch {
            let (status, code): (Int, String)
            switch error {
            case .badRequest: (status, code) = (400, "badRequest")
            case .unverified: (status, code) = (422, "unverified")
            case .unauthorized: (status, code) = (401, "unauthorized")
            case .storage: (status, code) = (503, "storage")
            }
            log("\(request.method) \(request.path) → \(status): \(error)")
            return Self.json(["error": ["code": code, "message": error.description]], status: status)
        }
    }

    private func route(_ request: HTTPRequest) async throws(BackendError) -> HTTPResponse {
        let path = request.pathSegments.map { $0.removingPercentEncoding ?? $0 }
        switch (request.method, path) {
        case ("POST", ["apple", "notifications"]):
            let recorded = try await storage.apply(try intake.notification(body: request.body))
            return Self.json(["recorded": recorded])
        case ("POST", ["v1", "transactions"]):
            try await authorize(request)
            struct Body: Decodable { var signedTransaction: String; var userID: String? }
            guard let body = try? JSONDecoder().decode(Body.self, from: request.body) else {
                throw .badRequest("the body is not {\"signedTransaction\": \"…\", \"userID\": \"…\"}")
            }
            let change = try intake.transaction(signedTransaction: body.signedTransaction, userID: body.userID)
            _ = try await storage.apply(change)
            guard let customer = change.transaction?.customerID else {
                return Self.json(["entitlements": [String]()] as [String: [String]])
            }
            return try Self.encoded(EntitlementsBody(customer: customer, entitlements: try await ledger.entitlements(customer: customer)))
        case ("GET", let segments) where segments.count == 4 && segments[0...1] == ["v1", "customers"] && segments[3] == "entitlements":
            try await authorize(request)
            return try Self.encoded(EntitlementsBody(customer: segments[2], entitlements: try await ledger.entitlements(customer: segments[2])))
        case ("GET", let segments) where segments.count == 4 && segments[0...1] == ["v1", "customers"] && segments[3] == "history":
            try await authorize(request)
            return try Self.encoded(HistoryBody(customer: segments[2], transactions: try await ledger.history(customer: segments[2])))
        case ("GET", let segments) where segments.count == 4 && segments[0...1] == ["v1", "customers"] && segments[3] == "explain":
            try await authorize(request)
            guard let product = request.queryValue("productId"), !product.isEmpty else { throw .badRequest("name the product with ?productId=") }
            return try Self.encoded(try await ledger.explain(customer: segments[2], productID: product))
        case ("GET", ["health"]):
            return Self.json(["status": "ok"])
        default:
            throw .badRequest("no endpoint \(request.method) \(request.path)")
        }
    }

    private func authorize(_ request: HTTPRequest) async throws(BackendError) {
        let header = request.headers.first { $0.key.lowercased() == "authorization" }?.value ?? ""
        guard header.hasPrefix("Bearer "), try await storage.hasKey(hash: ServiceKeys.digest(String(header.dropFirst(7)))) else {
            throw .unauthorized("this endpoint needs Authorization: Bearer KEY (storekit backend key create)")
        }
    }

    struct EntitlementsBody: Encodable { var customer: String; var entitlements: [CustomerEntitlement] }
    struct HistoryBody: Encodable { var customer: String; var transactions: [CustomerHistoryEntry] }

    private static func encoded<Body: Encodable>(_ body: Body) throws(BackendError) -> HTTPResponse {
        do { return .json(200, try AppStoreJSON.encode(body)) } catch { throw .storage("cannot encode the answer: \(error)") }
    }

    private static func json(_ object: Any, status: Int = 200) -> HTTPResponse {
        .json(status, (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8))
    }
}
