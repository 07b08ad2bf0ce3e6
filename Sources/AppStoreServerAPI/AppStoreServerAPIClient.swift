import AppStoreModels
import AppStoreSigning
import Foundation
import HTTPClient
import Synchronization

/// A client of the App Store Server API: Apple's (Sandbox, Production) or a local store's
/// (`storekit serve`), with the calls, bodies, models and error codes of Apple's own libraries.
///
/// ```swift
/// let client = try AppStoreServerAPIClient(signingKey: privateKeyPEM, keyId: "2X9R4HXF34", issuerId: issuer,
///                                          bundleId: "com.example.shop", environment: .sandbox,
///                                          baseURL: URL(string: "http://127.0.0.1:8080"))   // a local store
/// let info = try await client.getTransactionInfo("2000000123456789")
/// ```
public final class AppStoreServerAPIClient: Sendable {
    /// Apple's base URL for an environment.
    public static func baseURL(for environment: AppStoreModels.Environment) -> URL? {
        switch environment {
        case .production: return URL(string: "https://api.storekit.apple.com")
        case .sandbox: return URL(string: "https://api.storekit-sandbox.apple.com")
        case .localTesting: return URL(string: "https://local-testing-base-url")
        default: return nil
        }
    }

    public let baseURL: URL
    private let signingKey: P256PrivateKey
    private let keyId: String
    private let issuerId: String
    private let bundleId: String
    private let now: @Sendable () -> Date
    private let statedTime = Mutex<Date?>(nil)

    /// The time the server stated (its `Date` header) in its latest answer, errors included. Apple's
    /// servers state real time; a local store (`storekit serve`) states its own clock, which may run
    /// fast, jump or stand still: what "now" is for the data it signs.
    public var lastServerTime: Date? { statedTime.withLock { $0 } }

    /// - Parameters:
    ///   - signingKey: The In-App Purchase key's private key, PEM (PKCS#8, the `.p8` file).
    ///   - baseURL: Overrides Apple's base URL of `environment`, for a local store.
    ///   - now: The time tokens are issued at (the machine's clock unless a test says otherwise).
    public init(signingKey: String, keyId: String, issuerId: String, bundleId: String, environment: AppStoreModels.Environment,
                baseURL: URL? = nil, now: @escaping @Sendable () -> Date = { Date() }) throws {
        guard let url = baseURL ?? Self.baseURL(for: environment) else {
            throw AppStoreServerAPIError(httpStatusCode: 0, apiErrorCode: nil, errorMessage: "the \(environment.rawValue) environment has no App Store Server API")
        }
        self.baseURL = url
        self.signingKey = try P256PrivateKey(pemRepresentation: signingKey)
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.now = now
    }

    // MARK: Transactions

    /// `GET /inApps/v1/transactions/{transactionId}`.
    public func getTransactionInfo(_ transactionId: String) async throws -> TransactionInfoResponse {
        try await call("GET", "/inApps/v1/transactions/\(Self.segment(transactionId))")
    }

    /// The version of the transaction history call: V1 leaves finished consumables out.
    public enum HistoryVersion: String, Sendable { case v1, v2 }

    /// `GET /inApps/v1|v2/history/{transactionId}`: a page of at most 20; call again with the
    /// response's `revision` while `hasMore`.
    public func getTransactionHistory(_ transactionId: String, revision: String?, request: TransactionHistoryRequest = TransactionHistoryRequest(),
                                      version: HistoryVersion = .v2) async throws -> HistoryResponse {
        var query = request.queryItems
        if let revision { query.append(URLQueryItem(name: "revision", value: revision)) }
        return try await call("GET", "/inApps/\(version.rawValue)/history/\(Self.segment(transactionId))", query: query)
    }

    /// `GET /inApps/v1/subscriptions/{transactionId}`, optionally only the given statuses (1–5).
    public func getAllSubscriptionStatuses(_ transactionId: String, status: [Int32] = []) async throws -> StatusResponse {
        try await call("GET", "/inApps/v1/subscriptions/\(Self.segment(transactionId))", query: status.map { URLQueryItem(name: "status", value: String($0)) })
    }

    /// `GET /inApps/v2/refund/lookup/{transactionId}`.
    public func getRefundHistory(_ transactionId: String, revision: String?) async throws -> RefundHistoryResponse {
        try await call("GET", "/inApps/v2/refund/lookup/\(Self.segment(transactionId))", query: revision.map { [URLQueryItem(name: "revision", value: $0)] } ?? [])
    }

    /// `GET /inApps/v1/lookup/{orderId}`.
    public func lookUpOrderId(_ orderId: String) async throws -> OrderLookupResponse {
        try await call("GET", "/inApps/v1/lookup/\(Self.segment(orderId))")
    }

    /// `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`.
    public func setAppAccountToken(originalTransactionId: String, appAccountToken: UUID) async throws {
        let _: Empty = try await call("PUT", "/inApps/v1/transactions/\(Self.segment(originalTransactionId))/appAccountToken",
                                      body: UpdateAppAccountTokenRequest(appAccountToken: appAccountToken.uuidString.lowercased()))
    }

    /// `GET /inApps/v1/transactions/appTransactions/{transactionId}`.
    public func getAppTransactionInfo(_ transactionId: String) async throws -> AppTransactionInfoResponse {
        try await call("GET", "/inApps/v1/transactions/appTransactions/\(Self.segment(transactionId))")
    }

    /// `POST /inApps/v1/transactions/{transactionId}/finish`.
    public func finishTransaction(_ transactionId: String) async throws {
        let _: Empty = try await call("POST", "/inApps/v1/transactions/\(Self.segment(transactionId))/finish")
    }

    /// `PUT /inApps/v1/transactions/consumption/{transactionId}` with the V1 body.
    public func sendConsumptionData(_ transactionId: String, _ request: ConsumptionRequestV1) async throws {
        let _: Empty = try await call("PUT", "/inApps/v1/transactions/consumption/\(Self.segment(transactionId))", body: request)
    }

    /// `PUT /inApps/v2/transactions/consumption/{transactionId}` with the V2 body.
    public func sendConsumptionInformation(_ transactionId: String, _ request: ConsumptionRequest) async throws {
        let _: Empty = try await call("PUT", "/inApps/v2/transactions/consumption/\(Self.segment(transactionId))", body: request)
    }

    // MARK: Subscriptions

    /// `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
    public func extendSubscriptionRenewalDate(originalTransactionId: String, _ request: ExtendRenewalDateRequest) async throws -> ExtendRenewalDateResponse {
        try await call("PUT", "/inApps/v1/subscriptions/extend/\(Self.segment(originalTransactionId))", body: request)
    }

    /// `POST /inApps/v1/subscriptions/extend/mass`.
    public func extendRenewalDateForAllActiveSubscribers(_ request: MassExtendRenewalDateRequest) async throws -> MassExtendRenewalDateResponse {
        try await call("POST", "/inApps/v1/subscriptions/extend/mass", body: request)
    }

    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    public func getStatusOfSubscriptionRenewalDateExtensions(requestIdentifier: String, productId: String) async throws -> MassExtendRenewalDateStatusResponse {
        try await call("GET", "/inApps/v1/subscriptions/extend/mass/\(Self.segment(productId))/\(Self.segment(requestIdentifier))")
    }

    // MARK: Notifications

    /// `POST /inApps/v1/notifications/test`.
    public func requestTestNotification() async throws -> SendTestNotificationResponse {
        try await call("POST", "/inApps/v1/notifications/test")
    }

    /// `GET /inApps/v1/notifications/test/{testNotificationToken}`.
    public func getTestNotificationStatus(_ token: String) async throws -> CheckTestNotificationResponse {
        try await call("GET", "/inApps/v1/notifications/test/\(Self.segment(token))")
    }

    /// `POST /inApps/v1/notifications/history`: a page of at most 20; call again with the response's
    /// `paginationToken` while `hasMore`.
    public func getNotificationHistory(paginationToken: String?, _ request: NotificationHistoryRequest) async throws -> NotificationHistoryResponse {
        try await call("POST", "/inApps/v1/notifications/history", query: paginationToken.map { [URLQueryItem(name: "paginationToken", value: $0)] } ?? [],
                       body: request)
    }

    // MARK: Requests

    private struct Empty: Codable {}

    private static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? text
    }

    private func call<Response: Decodable>(_ method: String, _ path: String, query: [URLQueryItem] = []) async throws -> Response {
        try await send(method, path, query: query, body: nil)
    }

    private func call<Body: Encodable, Response: Decodable>(_ method: String, _ path: String, query: [URLQueryItem] = [],
                                                            body: Body) async throws -> Response {
        try await send(method, path, query: query, body: try JSONEncoder().encode(body))
    }

    private func send<Response: Decodable>(_ method: String, _ path: String, query: [URLQueryItem], body: Data?) async throws -> Response {
        let token = try ServerAPIToken.make(key: signingKey, keyId: keyId, issuerId: issuerId, bundleId: bundleId, issuedAt: now())
        var headers: [(name: String, value: String)] = [("Authorization", "Bearer \(token)"), ("Accept", "application/json"),
                                                        ("User-Agent", "openstorekit-app-store-server-api/1")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let answer = try await HTTPClient.shared.send(HTTPClient.Request(method, baseURL, path: path,
                                                                         query: query.map { ($0.name, $0.value ?? "") }, headers: headers,
                                                                         body: body, timeout: .seconds(30)))
        if let stated = answer.header("Date").flatMap(HTTPDate.date(from:)) { statedTime.withLock { $0 = stated } }
        guard answer.isSuccess else {
            let error = answer.header("Content-Type")?.hasPrefix("application/json") == true
                ? try? JSONDecoder().decode(ServerAPIErrorBody.self, from: answer.body) : nil
            throw AppStoreServerAPIError(httpStatusCode: answer.status, apiErrorCode: error?.errorCode, errorMessage: error?.errorMessage)
        }
        if Response.self == Empty.self, let empty = Empty() as? Response { return empty }
        do {
            return try JSONDecoder().decode(Response.self, from: answer.body)
        } catch {
            throw AppStoreServerAPIError(httpStatusCode: answer.status, apiErrorCode: nil, errorMessage: "the response is not a \(Response.self): \(error)")
        }
    }
}

/// A failed call: the HTTP status, and Apple's error code and message when the body carried them
/// (`4040010` transaction not found, `4000006` invalid transaction ID, …).
public struct AppStoreServerAPIError: Error, Hashable, Sendable, CustomStringConvertible {
    public var httpStatusCode: Int
    public var apiErrorCode: Int64?
    public var errorMessage: String?

    public init(httpStatusCode: Int, apiErrorCode: Int64?, errorMessage: String?) {
        self.httpStatusCode = httpStatusCode
        self.apiErrorCode = apiErrorCode
        self.errorMessage = errorMessage
    }

    public var description: String {
        "App Store Server API: HTTP \(httpStatusCode)" + (apiErrorCode.map { ", error \($0)" } ?? "") + (errorMessage.map { ": \($0)" } ?? "")
    }
}
