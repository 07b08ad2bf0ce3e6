import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPClient
import OpenStoreKit
import SimulatorConnection

/// The controls of a store served by `storekit serve`, through its admin API (`docs/admin-api.md`).
///
/// Answers decode into the engine's own types (ledger records are the App Store JSON of their
/// types), and error bodies into ``AppStoreError`` with the store's codes, so a ``LocalStore`` drives
/// a served store exactly as it drives one in this process.
public struct RemoteStoreControls: StoreControls {
    /// The server, such as `http://127.0.0.1:8080`.
    public let server: URL
    /// What every request carries: the program's mark and the server's access token, when it has one.
    private let headers: [(name: String, value: String)]

    /// The admin API of the store at `server`; `token` is the server's access token, when it needs one.
    public init(server: URL, token: String? = nil) {
        self.server = server
        headers = [(DeviceAPI.programHeader, "1")] + (token.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    // MARK: Requests

    private struct Empty: Codable {}

    /// The `.storekit` configuration the store sells, as the store sends it.
    public func storeConfigurationData() async throws(AppStoreError) -> Data {
        try await send("GET", "/v1/store/configuration")
    }

    private func call<Response: Decodable>(_ method: String, _ path: String, query: [(name: String, value: String)] = [], body: [String: Any]? = nil,
                                           encoded: Data? = nil, as type: Response.Type) async throws(AppStoreError) -> Response {
        let data = try await send(method, path, query: query, body: body.flatMap { try? JSONSerialization.data(withJSONObject: $0) } ?? encoded)
        do {
            return try AppStoreJSON.decode(type, from: data)
        } catch {
            throw .storage(.failed("the store at \(server) answered \(path) with a body that is not \(type): \(error)"))
        }
    }

    /// Sends a request to the admin API: the body of a 2xx answer, or the store's error.
    private func send(_ method: String, _ path: String, query: [(name: String, value: String)] = [], body: Data? = nil) async throws(AppStoreError) -> Data {
        let request = HTTPClient.Request(method, server, path: path, query: query,
                                         headers: headers + (body == nil ? [] : [("Content-Type", "application/json")]), body: body,
                                         timeout: .seconds(120))
        let answer: HTTPClient.Response
        do {
            answer = try await HTTPClient.shared.send(request)
        } catch {
            throw .control(.serviceUnavailable, "cannot reach the store at \(server): \(error)")
        }
        guard answer.isSuccess else {
            guard let failure = try? JSONDecoder().decode(DeviceAPI.ErrorBody.self, from: answer.body) else {
                throw .control(.serviceUnavailable, "the store at \(server) answered HTTP \(answer.status)")
            }
            throw Self.error(failure.error)
        }
        return answer.body
    }

    /// The store's error, from its family and code.
    static func error(_ detail: DeviceAPI.ErrorBody.Detail) -> AppStoreError {
        switch detail.family {
        case "storeKit": return .storeKit(StoreKitErrorCode(rawValue: detail.code) ?? .unknown, detail.message)
        case "purchase": return .purchase(PurchaseErrorCode(rawValue: detail.code) ?? .purchaseNotAllowed, detail.message)
        case "refundRequest": return .refundRequest(RefundRequestErrorCode(rawValue: detail.code) ?? .failed, detail.message)
        case "verification": return .verification(VerificationErrorCode(rawValue: detail.code) ?? .invalidSignature, detail.message)
        case "control": return .control(ControlErrorCode(rawValue: detail.code) ?? .invalidAction, detail.message)
        case "storage": return .storage(StorageFailure(StorageFailure.Reason(rawValue: detail.code) ?? .failed, detail.message))
        default: return .control(.invalidAction, detail.message)
        }
    }

    private struct ClockBody: Decodable { var now: Int64 }

    private static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? text
    }

    // MARK: StoreControls

    public func addDevice(_ name: String, account: String) async throws(AppStoreError) {
        _ = try await call("PUT", "/v1/admin/accounts/\(Self.segment(account))", body: ["devices": [name]], as: Empty.self)
    }

    public func configureAccount(_ name: String, storefront: String??, askToBuy: Bool?, appAccountToken: UUID??) async throws(AppStoreError) {
        var body: [String: Any] = [:]
        if let storefront { body["storefront"] = storefront ?? "default" }
        if let askToBuy { body["askToBuy"] = askToBuy }
        if let appAccountToken { body["appAccountToken"] = appAccountToken?.uuidString.lowercased() ?? "none" }
        _ = try await call("PUT", "/v1/admin/accounts/\(Self.segment(name))", body: body, as: Empty.self)
    }

    public func setPurchasesAllowed(_ allowed: Bool, account: String) async throws(AppStoreError) {
        _ = try await call("PUT", "/v1/admin/accounts/\(Self.segment(account))", body: ["purchasesAllowed": allowed], as: Empty.self)
    }

    public func sendPurchaseIntent(productID: String, offerID: String?, device: String) async throws(AppStoreError) {
        var body: [String: Any] = ["productID": productID]
        if let offerID { body["offerID"] = offerID }
        _ = try await call("POST", "/v1/admin/devices/\(Self.segment(device))/purchase-intents", body: body, as: Empty.self)
    }

    public func reviewRequests(device: String) async throws(AppStoreError) -> [ReviewRequest] {
        try await call("GET", "/v1/admin/devices/\(Self.segment(device))", as: StoreDevice.self).reviewRequests ?? []
    }

    public func queueCustomerResponse(_ response: CustomerResponse, in sheet: CustomerSheet, device: String) async throws(AppStoreError) {
        let encoded: Data
        do { encoded = try JSONEncoder().encode(response) } catch { throw .control(.invalidAction, "cannot encode \(response): \(error)") }
        _ = try await call("POST", "/v1/admin/devices/\(Self.segment(device))/sheets/\(sheet.rawValue)/responses", encoded: encoded, as: Empty.self)
    }

    public func setFamilyGroup(_ group: String?, for account: String) async throws(AppStoreError) {
        _ = try await call("PUT", "/v1/admin/accounts/\(Self.segment(account))", body: ["familyGroup": group ?? "none"], as: Empty.self)
    }

    public func currentTime() async throws(AppStoreError) -> Date {
        AppStoreJSON.date(fromMilliseconds: try await call("GET", "/v1/admin/clock", as: ClockBody.self).now)
    }

    public func advanceTime(to date: Date) async throws(AppStoreError) -> Int {
        struct Advanced: Decodable { var eventsPlayed: Int }
        return try await call("POST", "/v1/admin/clock/advance", body: ["to": AppStoreJSON.milliseconds(from: date)], as: Advanced.self).eventsPlayed
    }

    public func replaceSettingsOverrides(_ overrides: SettingsOverrides) async throws(AppStoreError) {
        let encoded: Data
        do { encoded = try AppStoreJSON.encode(overrides) } catch { throw .storage(.failed("cannot encode settings: \(error)")) }
        _ = try await call("PUT", "/v1/admin/settings/overrides", encoded: encoded, as: Empty.self)
    }

    public func buyProduct(_ productID: String, account: String, quantity: Int, appAccountToken: UUID?, offer: PurchaseOffer?, purchaseDate: Date?,
                           renewalBehavior: RenewalBehavior) async throws(AppStoreError) -> LedgerTransaction {
        let body = AdminAPI.PurchaseBody(productID: productID, account: account, quantity: quantity, appAccountToken: appAccountToken,
                                         offer: offer.map { DeviceAPI.OfferBody(TransportOffer($0)) },
                                         purchaseDate: purchaseDate.map(AppStoreJSON.milliseconds(from:)),
                                         renewal: renewalBehavior == .cancelImmediately ? "cancelImmediately" : "untilNow")
        let encoded: Data
        do { encoded = try JSONEncoder().encode(body) } catch { throw .control(.invalidAction, "cannot send the purchase of \(productID): \(error)") }
        return try await call("POST", "/v1/admin/purchases", encoded: encoded, as: AdminAPI.TransactionBody.self).transaction
    }

    public func transaction(_ id: UInt64, device: String?) async throws(AppStoreError) -> SignedTransaction {
        let body = try await call("GET", "/v1/admin/transactions/\(id)", as: AdminAPI.TransactionBody.self)
        return SignedTransaction(transaction: body.transaction, jws: body.signedTransaction, simulatedVerificationFailure: nil)
    }

    public func ledgerTransaction(_ id: UInt64) async throws(AppStoreError) -> LedgerTransaction? {
        do {
            return try await call("GET", "/v1/admin/transactions/\(id)", as: AdminAPI.TransactionBody.self).transaction
        } catch .control(.noTransactionFound, _) {
            return nil
        }
    }

    public func allTestTransactions(account: String?, after: UInt64?, limit: Int) async throws(AppStoreError) -> [TestTransaction] {
        var all: [TestTransaction] = []
        var cursor = after
        while all.count < limit {
            var query: [(name: String, value: String)] = [("limit", String(min(1_000, limit - all.count)))]
            if let account { query.append(("account", account)) }
            if let cursor { query.append(("after", String(cursor))) }
            let page = try await call("GET", "/v1/admin/test-transactions", query: query, as: AdminAPI.TestTransactionsBody.self).transactions
            all += page
            guard let last = page.last, page.count == min(1_000, limit - (all.count - page.count)) else { break }
            cursor = last.identifier
        }
        return all
    }

    public func deleteTransaction(_ id: UInt64) async throws(AppStoreError) {
        _ = try await call("DELETE", "/v1/admin/transactions/\(id)", as: Empty.self)
    }

    public func clearTransactions() async throws(AppStoreError) {
        _ = try await call("DELETE", "/v1/admin/transactions", as: Empty.self)
    }

    public func refundTransaction(_ id: UInt64, reason: RevocationReason) async throws(AppStoreError) {
        _ = try await call("POST", "/v1/admin/transactions/\(id)/refund",
                           body: ["reason": reason == .refundedDueToIssue ? "developerIssue" : "other"], as: Empty.self)
    }

    private func transactionAction(_ id: UInt64, _ action: String) async throws(AppStoreError) {
        _ = try await call("POST", "/v1/admin/transactions/\(id)/\(action)", as: Empty.self)
    }

    public func approveAskToBuyTransaction(_ id: UInt64) async throws(AppStoreError) { try await transactionAction(id, "approve") }
    public func declineAskToBuyTransaction(_ id: UInt64) async throws(AppStoreError) { try await transactionAction(id, "decline") }
    public func resolveIssueForTransaction(_ id: UInt64) async throws(AppStoreError) { try await transactionAction(id, "resolve") }

    public func expireSubscription(productID: String, account: String) async throws(AppStoreError) {
        _ = try await call("POST", "/v1/admin/subscriptions/expire", body: ["productID": productID, "account": account], as: Empty.self)
    }

    public func forceRenewalOfSubscription(productID: String, account: String) async throws(AppStoreError) {
        _ = try await call("POST", "/v1/admin/subscriptions/force-renew", body: ["productID": productID, "account": account], as: Empty.self)
    }

    public func setAutoRenew(originalTransactionID: UInt64, enabled: Bool) async throws(AppStoreError) {
        _ = try await call("POST", "/v1/admin/subscriptions/\(originalTransactionID)/renewal", body: ["enabled": enabled], as: Empty.self)
    }

    private func priceIncrease(_ id: UInt64, _ action: String) async throws(AppStoreError) {
        _ = try await call("POST", "/v1/admin/subscriptions/\(id)/price-increase", body: ["action": action], as: Empty.self)
    }

    public func requestPriceIncreaseConsent(transactionID: UInt64) async throws(AppStoreError) { try await priceIncrease(transactionID, "request") }
    public func consentToPriceIncrease(transactionID: UInt64) async throws(AppStoreError) { try await priceIncrease(transactionID, "accept") }
    public func declinePriceIncrease(transactionID: UInt64) async throws(AppStoreError) { try await priceIncrease(transactionID, "decline") }

    /// The served store asks the developer's real-time URL within its own limit (Apple's 700 ms unless
    /// the server was given another).
    public func openCancellationPage(originalTransactionID: UInt64, locale: String) async throws(AppStoreError) -> RetentionOfferAttempt {
        try await call("POST", "/v1/admin/subscriptions/\(originalTransactionID)/cancellation", body: ["locale": locale], as: CancellationPageBody.self).attempt
    }

    public func answerCancellationPage(_ attemptID: String, outcome: RetentionOfferAttempt.Outcome) async throws(AppStoreError) -> RetentionOfferAttempt {
        try await call("POST", "/v1/admin/cancellations/\(attemptID)", body: ["outcome": outcome.rawValue], as: CancellationPageBody.self).attempt
    }

    public func notifications(after sequence: Int64, limit: Int) async throws(AppStoreError) -> [StoredNotification] {
        var all: [StoredNotification] = []
        var cursor = sequence
        while all.count < limit {
            let page = try await call("GET", "/v1/admin/notifications", query: [("after", String(cursor)), ("limit", "1000")],
                                      as: AdminAPI.NotificationsBody.self).notifications
            all += page.map {
                StoredNotification(sequence: $0.sequence, notificationUUID: $0.notificationUUID, type: NotificationTypeV2(rawValue: $0.notificationType),
                                   subtype: $0.subtype.map(Subtype.init(rawValue:)), transactionID: $0.transactionId.flatMap { UInt64($0) },
                                   signedPayload: $0.signedPayload, date: $0.signedDate)
            }
            guard let last = page.last, page.count == 1_000 else { break }
            cursor = last.sequence
        }
        return Array(all.prefix(limit))
    }
}

extension TransportOffer {
    /// The client's form of an engine offer (for sending it to a served store).
    init(_ offer: PurchaseOffer) {
        switch offer {
        case .introductory: self = .introductory
        case .promotional(let id, .legacy(let keyID, let nonce, let timestamp, let signature)?):
            self = .promotionalLegacy(offerID: id, keyID: keyID, nonce: nonce, timestamp: timestamp, signature: signature)
        case .promotional(let id, .jws(let jws)?): self = .promotionalJWS(offerID: id, jws: jws)
        case .promotional(let id, nil): self = .promotionalUnsigned(offerID: id)
        case .code(let reference): self = .code(referenceName: reference)
        case .winBack(let id): self = .winBack(offerID: id)
        }
    }
}
