import AppStoreModels
import AppStoreSigning
import AppStoreSimulator
import Foundation
import HTTPClient
import HTTPService
import StoreKitCatalog

/// The App Store Server API, `/inApps/…`, at Apple's paths with Apple's query parameters, bodies,
/// response models and error codes, for a backend pointed at this store instead of Apple's.
/// Requests carry `Authorization: Bearer <ES256 JWT>` signed with a key from `storekit api-key create`.
struct ServerAPIRoutes {
    let store: SimulatedAppStore
    /// Real time, for the tokens' expiry (the store's own clock may be months away on a manual store).
    let wallClock: any StoreClock
    /// Runs the Retention Messaging API's performance tests against the developer's URL.
    let performanceTests: RetentionPerformanceTester

    /// A page of history, refunds or notification history holds at most this many items.
    static let pageSize = 20

    /// Registers the API under `/inApps`: each of Apple's paths a route of its own (so each is timed
    /// under its own metrics label), behind the API's token check, with Apple's error bodies for
    /// every failure and for the router's own refusals. Queries reach the routes as sent: a malformed
    /// value is Apple's error of that parameter (`?revision=%%%` is an invalid revision, 4000005).
    func register(on router: inout Router) {
        let api = self
        router.group("/inApps", middleware: [ServerAPIAuthentication(routes: api), ServerAPIStoreTime(store: store), ServerAPIErrorMapping()],
                     refusalResponse: Self.refusal) { group in
            func on(_ method: String, _ pattern: String, _ responder: @escaping @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) {
                group.on(method, pattern, query: .lenient, responder)
            }
            on("GET", "/v1/transactions/{transactionId}") { _, context in
                let id = try Self.transactionID(context["transactionId"])
                guard let transaction = try await api.store.ledgerTransaction(id), transaction.isPurchased else { throw ServerAPIError.transactionIdNotFound }
                return try Self.json(TransactionInfoResponse(signedTransactionInfo: try await api.store.signedForServer([transaction])[0]))
            }
            for version in ["v1", "v2"] {
                on("GET", "/\(version)/history/{transactionId}") { request, context in
                    try await api.history(request, version: version, transactionID: try Self.transactionID(context["transactionId"]))
                }
            }
            on("GET", "/v1/subscriptions/{transactionId}") { request, context in
                try await api.statuses(request, transactionID: try Self.transactionID(context["transactionId"]))
            }
            on("GET", "/v2/refund/lookup/{transactionId}") { request, context in
                try await api.refunds(request, transactionID: try Self.transactionID(context["transactionId"]))
            }
            on("GET", "/v1/lookup/{orderId}") { _, context in
                guard let transactions = try await api.store.orderTransactions(context["orderId"]) else {
                    return try Self.json(OrderLookupResponse(status: 1, signedTransactions: []))
                }
                return try Self.json(OrderLookupResponse(status: 0, signedTransactions: try await api.store.signedForServer(transactions)))
            }
            on("PUT", "/v1/subscriptions/extend/{originalTransactionId}") { request, context in
                try await api.extend(request, originalTransactionID: context["originalTransactionId"])
            }
            on("POST", "/v1/subscriptions/extend/mass") { request, _ in try await api.massExtend(request) }
            on("GET", "/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}") { _, context in
                guard let result = try await api.store.massExtension(context["requestIdentifier"]), result.productID == context["productId"] else {
                    throw ServerAPIError.statusRequestNotFound
                }
                return try Self.json(MassExtendRenewalDateStatusResponse(
                    requestIdentifier: result.requestIdentifier, complete: true, completeDate: AppStoreJSON.milliseconds(from: result.completeDate),
                    succeededCount: Int64(result.succeededCount), failedCount: Int64(result.failedCount)))
            }
            on("POST", "/v1/notifications/test") { _, _ in
                try Self.json(SendTestNotificationResponse(testNotificationToken: try await api.store.requestTestNotification()))
            }
            on("GET", "/v1/notifications/test/{testNotificationToken}") { _, context in
                let token = context["testNotificationToken"]
                guard UUID(uuidString: token) != nil else { throw ServerAPIError.invalidTestNotificationToken }
                guard let (notification, delivery) = try await api.store.testNotification(uuid: token.lowercased()) else {
                    throw ServerAPIError.testNotificationNotFound
                }
                return try Self.json(CheckTestNotificationResponse(signedPayload: notification.signedPayload, sendAttempts: delivery.sendAttempts))
            }
            on("POST", "/v1/notifications/history") { request, _ in try await api.notificationHistory(request) }
            for version in ["v1", "v2"] {
                on("PUT", "/\(version)/transactions/consumption/{transactionId}") { request, context in
                    let id = try Self.transactionID(context["transactionId"])
                    try ConsumptionValidation.validate(request.body, version: version)
                    guard try await api.store.ledgerTransaction(id) != nil else { throw ServerAPIError.transactionIdNotFound }
                    return HTTPResponse(status: 202)
                }
            }
            on("PUT", "/v1/transactions/{originalTransactionId}/appAccountToken") { request, context in
                try await api.setAppAccountToken(request, originalTransactionID: context["originalTransactionId"])
            }
            on("GET", "/v1/transactions/appTransactions/{transactionId}") { _, context in
                let id = try Self.transactionID(context["transactionId"])
                guard let signed = try await api.store.serverAppTransaction(ofTransaction: id) else { throw ServerAPIError.transactionIdNotFound }
                return try Self.json(AppTransactionInfoResponse(signedAppTransactionInfo: signed))
            }
            on("POST", "/v1/transactions/{transactionId}/finish") { _, context in
                let id = try Self.transactionID(context["transactionId"])
                guard let transaction = try await api.store.ledgerTransaction(id), transaction.isPurchased else { throw ServerAPIError.transactionIdNotFound }
                try await api.store.finish(id)
                return HTTPResponse(status: 200)
            }
            RetentionMessagingRoutes(store: api.store, performanceTests: api.performanceTests).register(on: &group)
        }
    }

    /// The router's refusals in Apple's terms: a path or query that cannot be decoded is a bad
    /// request; a path or method the API does not have is Apple's "no such resource".
    static func refusal(_ error: RoutingError, _ request: HTTPRequest) -> HTTPResponse {
        if error.status == 400 { return ServerAPIError.generalBadRequest.with(error.message).response }
        return ServerAPIError(404, 4_040_000, "No such resource: \(request.method) \(request.path).").response
    }

    // MARK: Authentication

    /// Whether a request carries a valid API token: an ES256 JWT signed by an active key of the store.
    fileprivate func authenticate(_ request: HTTPRequest) async throws {
        guard let header = request.headers["authorization"], header.hasPrefix("Bearer ") else { throw ServerAPIError.unauthorized }
        let token = String(header.dropFirst("Bearer ".count))
        guard let keyID = try? ServerAPIToken.keyID(of: token),
              let key = try await store.apiKeys().first(where: { $0.keyId == keyID && $0.revokedDate == nil }),
              let publicKey = try? P256PublicKey(pemRepresentation: key.publicKey),
              (try? ServerAPIToken.verify(token, publicKey: publicKey, keyId: key.keyId, issuerId: key.issuerId, bundleId: store.identity.bundleId,
                                          now: wallClock.now())) != nil
        else { throw ServerAPIError.unauthorized }
    }

    // MARK: History

    /// The position after which a page starts, carried opaquely in `revision` and `paginationToken`.
    struct Cursor: Codable {
        var date: Int64
        var id: UInt64
    }

    static func encode(_ cursor: Cursor) -> String {
        Base64URL.encode((try? JSONEncoder().encode(cursor)) ?? Data())
    }

    static func decodeCursor(_ text: String, error: ServerAPIError) throws(ServerAPIError) -> Cursor {
        guard let data = Base64URL.decode(text), let cursor = try? JSONDecoder().decode(Cursor.self, from: data) else { throw error }
        return cursor
    }

    private func history(_ request: HTTPRequest, version: String, transactionID: UInt64) async throws -> HTTPResponse {
        let start = try Self.milliseconds(request.queryValue("startDate"), error: .invalidStartDate)
        let end = try Self.milliseconds(request.queryValue("endDate"), error: .invalidEndDate)
        if let start, let end, start > end { throw ServerAPIError.startDateAfterEndDate }
        let productIDs = Set(request.query["productId"] ?? [])
        let productTypes = try Set((request.query["productType"] ?? []).map { (text) throws(ServerAPIError) -> CatalogProduct.Kind in
            switch text {
            case "AUTO_RENEWABLE": return .autoRenewable
            case "NON_RENEWABLE": return .nonRenewable
            case "CONSUMABLE": return .consumable
            case "NON_CONSUMABLE": return .nonConsumable
            default: throw .invalidProductType
            }
        })
        let groups = Set(request.query["subscriptionGroupIdentifier"] ?? [])
        let descending: Bool
        switch request.queryValue("sort") ?? "ASCENDING" {
        case "ASCENDING": descending = false
        case "DESCENDING": descending = true
        default: throw ServerAPIError.invalidSort
        }
        let ownership: LedgerTransaction.Ownership?
        switch request.queryValue("inAppOwnershipType") {
        case nil: ownership = nil
        case "PURCHASED": ownership = .purchased
        case "FAMILY_SHARED": ownership = .familyShared
        default: throw ServerAPIError.invalidInAppOwnershipType
        }
        let revoked: Bool?
        switch request.queryValue("revoked") {
        case nil: revoked = nil
        case "true", "True": revoked = true
        case "false", "False": revoked = false
        default: throw ServerAPIError.invalidRevoked
        }
        let cursor = try request.queryValue("revision").map { (text) throws(ServerAPIError) in try Self.decodeCursor(text, error: .invalidRequestRevision) }
        guard let all = try await store.customerTransactions(ofTransaction: transactionID) else { throw ServerAPIError.transactionIdNotFound }
        var selected = all.filter { transaction in
            if version == "v1", transaction.productKind == .consumable, transaction.isFinished { return false }
            let date = AppStoreJSON.milliseconds(from: transaction.purchaseDate)
            if let start, date < start { return false }
            if let end, date >= end { return false }
            if !productIDs.isEmpty, !productIDs.contains(transaction.productID) { return false }
            if !productTypes.isEmpty, !productTypes.contains(transaction.productKind) { return false }
            if !groups.isEmpty, !groups.contains(transaction.subscriptionGroupID ?? "") { return false }
            if let ownership, transaction.ownership != ownership { return false }
            if let revoked, transaction.isRevoked != revoked { return false }
            return true
        }
        selected.sort { (AppStoreJSON.milliseconds(from: $0.purchaseDate), $0.id) < (AppStoreJSON.milliseconds(from: $1.purchaseDate), $1.id) }
        if descending { selected.reverse() }
        let (page, hasMore, next) = Self.page(selected, after: cursor, descending: descending) { Cursor(date: AppStoreJSON.milliseconds(from: $0.purchaseDate), id: $0.id) }
        let identity = store.identity
        return try Self.json(HistoryResponse(revision: next.map(Self.encode) ?? request.queryValue("revision") ?? Self.encode(Cursor(date: 0, id: 0)),
                                             hasMore: hasMore, bundleId: identity.bundleId, appAppleId: identity.appAppleId,
                                             environment: identity.environment.rawValue, signedTransactions: try await store.signedForServer(page)))
    }

    private func refunds(_ request: HTTPRequest, transactionID: UInt64) async throws -> HTTPResponse {
        let cursor = try request.queryValue("revision").map { (text) throws(ServerAPIError) in try Self.decodeCursor(text, error: .invalidRequestRevision) }
        guard let all = try await store.customerTransactions(ofTransaction: transactionID) else { throw ServerAPIError.transactionIdNotFound }
        let refunded = all.filter { $0.revocation != nil && $0.ownership == .purchased }.sorted {
            (AppStoreJSON.milliseconds(from: $0.revocation!.date), $0.id) < (AppStoreJSON.milliseconds(from: $1.revocation!.date), $1.id)
        }
        let (page, hasMore, next) = Self.page(refunded, after: cursor, descending: false) {
            Cursor(date: AppStoreJSON.milliseconds(from: $0.revocation!.date), id: $0.id)
        }
        return try Self.json(RefundHistoryResponse(signedTransactions: try await store.signedForServer(page),
                                                   revision: next.map(Self.encode) ?? request.queryValue("revision") ?? Self.encode(Cursor(date: 0, id: 0)),
                                                   hasMore: hasMore))
    }

    /// The page of sorted `items` after `cursor`, whether more follow, and the cursor of its last item.
    static func page<Item>(_ items: [Item], after cursor: Cursor?, descending: Bool,
                           key: (Item) -> Cursor) -> ([Item], Bool, Cursor?) {
        var rest = items[...]
        if let cursor {
            rest = items.drop { item in
                let position = key(item)
                return descending ? (position.date, position.id) >= (cursor.date, cursor.id) : (position.date, position.id) <= (cursor.date, cursor.id)
            }
        }
        let page = Array(rest.prefix(pageSize))
        return (page, rest.count > pageSize, page.last.map(key))
    }

    // MARK: Statuses, extensions, tokens

    private func statuses(_ request: HTTPRequest, transactionID: UInt64) async throws -> HTTPResponse {
        let wanted = try Set((request.query["status"] ?? []).map { (text) throws(ServerAPIError) -> Int32 in
            guard let status = Int32(text), (1...5).contains(status) else { throw .invalidStatus }
            return status
        })
        guard let answer = try await store.statusResponse(ofTransaction: transactionID, statuses: wanted) else { throw ServerAPIError.transactionIdNotFound }
        return try Self.json(answer)
    }

    private func extend(_ request: HTTPRequest, originalTransactionID text: String) async throws -> HTTPResponse {
        guard let originalID = UInt64(text) else { throw ServerAPIError.invalidOriginalTransactionId }
        let body = try Self.decode(ExtendRenewalDateRequest.self, request)
        guard let days = body.extendByDays, (1...90).contains(days) else { throw ServerAPIError.invalidExtendByDays }
        guard let reason = body.extendReasonCode, (0...3).contains(reason) else { throw ServerAPIError.invalidExtendReasonCode }
        guard let requestIdentifier = body.requestIdentifier, !requestIdentifier.isEmpty, requestIdentifier.count <= 128 else {
            throw ServerAPIError.invalidRequestIdentifier
        }
        guard let transaction = try await store.ledgerTransaction(originalID) else { throw ServerAPIError.originalTransactionIdNotFound }
        guard transaction.ownership == .purchased else { throw ServerAPIError.familySharedSubscriptionExtensionIneligible }
        guard let record = try await store.subscriptionRecords(account: transaction.account).first(where: { $0.originalTransactionID == transaction.originalID })
        else { throw ServerAPIError.subscriptionExtensionIneligible }
        guard record.state == .subscribed else { throw ServerAPIError.subscriptionExtensionIneligible }
        let now = try await store.currentTime()
        guard (record.renewalExtensions ?? []).filter({ $0 > now.addingTimeInterval(-365 * 86_400) }).count < 2 else {
            throw ServerAPIError.subscriptionMaxExtension
        }
        let extended = try await store.extendRenewalDate(originalTransactionID: record.originalTransactionID, days: Int(days))
        let latest = try await store.ledgerTransaction(extended.latestTransactionID)
        return try Self.json(ExtendRenewalDateResponse(originalTransactionId: String(extended.originalTransactionID),
                                                       webOrderLineItemId: latest?.webOrderLineItemID, success: true,
                                                       effectiveDate: AppStoreJSON.milliseconds(from: extended.expirationDate)))
    }

    private func massExtend(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try Self.decode(MassExtendRenewalDateRequest.self, request)
        guard let days = body.extendByDays, (1...90).contains(days) else { throw ServerAPIError.invalidExtendByDays }
        guard let reason = body.extendReasonCode, (0...3).contains(reason) else { throw ServerAPIError.invalidExtendReasonCode }
        guard let requestIdentifier = body.requestIdentifier, !requestIdentifier.isEmpty, requestIdentifier.count <= 128 else {
            throw ServerAPIError.invalidRequestIdentifier
        }
        guard let productID = body.productId, await store.catalog().product(id: productID)?.subscription != nil else {
            throw ServerAPIError.invalidProductId
        }
        var storefronts: Set<String>?
        if let codes = body.storefrontCountryCodes {
            guard !codes.isEmpty else { throw ServerAPIError.invalidEmptyStorefrontCountryCodeList }
            guard codes.allSatisfy({ Storefront(code: $0) != nil }) else { throw ServerAPIError.invalidStorefrontCountryCode }
            storefronts = Set(codes.map { $0.uppercased() })
        }
        if try await store.massExtension(requestIdentifier) == nil {
            try await store.extendAllActiveSubscribers(productID: productID, days: Int(days), storefronts: storefronts, requestIdentifier: requestIdentifier)
        }
        return try Self.json(MassExtendRenewalDateResponse(requestIdentifier: requestIdentifier))
    }

    private func setAppAccountToken(_ request: HTTPRequest, originalTransactionID text: String) async throws -> HTTPResponse {
        let id = try Self.transactionID(text, error: .invalidOriginalTransactionId)
        let body = try Self.decode(UpdateAppAccountTokenRequest.self, request)
        guard let tokenText = body.appAccountToken, let token = UUID(uuidString: tokenText) else { throw ServerAPIError.invalidAppAccountTokenUUID }
        guard let transaction = try await store.ledgerTransaction(id) else { throw ServerAPIError.transactionIdNotFound }
        guard transaction.ownership == .purchased else { throw ServerAPIError.familyTransactionNotSupported }
        guard transaction.originalID == transaction.id else { throw ServerAPIError.transactionIdNotOriginalTransactionId }
        try await store.setAppAccountToken(token, originalTransactionID: id)
        return HTTPResponse(status: 200)
    }

    // MARK: Notification history

    private func notificationHistory(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try Self.decode(NotificationHistoryRequest.self, request)
        guard let start = body.startDate, start >= 0 else { throw ServerAPIError.invalidStartDate }
        guard let end = body.endDate, end >= 0 else { throw ServerAPIError.invalidEndDate }
        guard start <= end else { throw ServerAPIError.startDateAfterEndDate }
        let now = AppStoreJSON.milliseconds(from: try await store.currentTime())
        guard start >= now - 180 * 86_400_000 else { throw ServerAPIError.startDateTooFarInPast }
        guard body.notificationType == nil || body.transactionId == nil else { throw ServerAPIError.multipleFiltersSupplied }
        if let type = body.notificationType, !NotificationTypeV2(rawValue: type).isKnown { throw ServerAPIError.invalidNotificationType }
        var customer: Set<UInt64>?
        if let text = body.transactionId {
            guard let id = UInt64(text) else { throw ServerAPIError.invalidTransactionId }
            guard let transactions = try await store.customerTransactions(ofTransaction: id) else { throw ServerAPIError.transactionIdNotFound }
            customer = Set(transactions.map(\.id))
        }
        var after: Int64 = 0
        if let token = request.queryValue("paginationToken") {
            guard let data = Base64URL.decode(token), let text = String(data: data, encoding: .utf8),
                  text.hasPrefix("n:"), let sequence = Int64(text.dropFirst(2)) else { throw ServerAPIError.invalidPaginationToken }
            after = sequence
        }
        var items: [NotificationHistoryResponseItem] = []
        var last = after
        var hasMore = false
        scan: while true {
            let batch = try await store.notificationHistory(from: AppStoreJSON.date(fromMilliseconds: start), to: AppStoreJSON.date(fromMilliseconds: end),
                                                            after: last, limit: 200)
            guard !batch.isEmpty else { break }
            for (record, signed) in batch {
                if items.count == Self.pageSize {
                    hasMore = true
                    break scan
                }
                last = record.sequence
                if let type = body.notificationType, record.type.rawValue != type { continue }
                if let subtype = body.notificationSubtype, record.subtype?.rawValue != subtype { continue }
                if let customer, !(record.transactionID.map(customer.contains) ?? false) { continue }
                if body.onlyFailures == true, record.delivery.isDelivered { continue }
                items.append(NotificationHistoryResponseItem(signedPayload: signed.signedPayload, sendAttempts: record.delivery.sendAttempts))
            }
        }
        return try Self.json(NotificationHistoryResponse(paginationToken: hasMore ? Base64URL.encode(Data("n:\(last)".utf8)) : nil,
                                                         hasMore: hasMore, notificationHistory: items))
    }

    // MARK: Helpers

    static func transactionID(_ text: String, error: ServerAPIError = .invalidTransactionId) throws(ServerAPIError) -> UInt64 {
        guard !text.isEmpty, text.allSatisfy(\.isASCII), let id = UInt64(text) else { throw error }
        return id
    }

    static func milliseconds(_ text: String?, error: ServerAPIError) throws(ServerAPIError) -> Int64? {
        guard let text else { return nil }
        guard let value = Int64(text), value >= 0, value < 253_402_300_800_000 else { throw error }
        return value
    }

    static func decode<Body: Decodable>(_ type: Body.Type, _ request: HTTPRequest) throws(ServerAPIError) -> Body {
        do { return try JSONDecoder().decode(type, from: request.body) } catch {
            throw ServerAPIError.generalBadRequest.with("The body is not a \(type): \(error.localizedDescription)")
        }
    }

    static func json<Body: Encodable>(_ body: Body) throws -> HTTPResponse {
        .json(200, try JSONEncoder().encode(body))
    }

    /// A store failure in the API's terms.
    static func apiError(_ error: AppStoreError) -> ServerAPIError {
        switch error {
        case .control(.noTransactionFound, _): return .transactionIdNotFound
        case .control(.noSubscriptionFound, _): return .originalTransactionIdNotFound
        case .storage(let failure) where failure.reason == .unavailable: return .generalInternalRetryable.with(failure.message)
        case .storage(let failure): return .generalInternal.with(failure.message)
        default: return .generalBadRequest.with(error.description)
        }
    }
}

/// The Server API's token check, in front of its routes and its refusals: a request without a valid
/// token is answered `401` before anything else, as Apple's is.
struct ServerAPIAuthentication: HTTPMiddleware {
    let routes: ServerAPIRoutes

    func handle(_ request: HTTPRequest, context: RequestContext,
                next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        try await routes.authenticate(request)
        return try await next(request, context)
    }
}

/// The Server API's failures in Apple's terms: the store's errors as Apple's codes, anything else
/// Apple's general internal error.
/// States the store's clock in the `Date` header of every authenticated answer, errors included, as
/// Apple's servers state theirs: a backend reconciling against this store learns the time its signed
/// data lives in (which a manual or fast clock keeps apart from real time), and so which window of
/// notification history it may ask for.
struct ServerAPIStoreTime: HTTPMiddleware {
    let store: SimulatedAppStore

    func handle(_ request: HTTPRequest, context: RequestContext,
                next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        var response: HTTPResponse
        do {
            response = try await next(request, context)
        } catch let error as RoutingError {
            response = ServerAPIRoutes.refusal(error, request)
        } catch let error as ServerAPIError {
            response = error.response
            if response.status >= 500 { response.failure = error.description }
        }
        if let now = try? await store.currentTime() { response.headers.append(("Date", HTTPDate.string(from: now))) }
        return response
    }
}

struct ServerAPIErrorMapping: HTTPMiddleware {
    func handle(_ request: HTTPRequest, context: RequestContext,
                next: @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse) async throws -> HTTPResponse {
        do {
            return try await next(request, context)
        } catch let error as ServerAPIError {
            throw error
        } catch let error as RoutingError {
            throw error
        } catch let error as AppStoreError {
            throw ServerAPIRoutes.apiError(error)
        } catch let refusal as RetentionMessagingRefusal {
            throw ServerAPIError(refusal.status, refusal.code, refusal.message)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ServerAPIError.generalInternal.with("\(error)")
        }
    }
}
