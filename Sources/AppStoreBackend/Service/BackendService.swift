import AppStoreModels
import AppStoreSigning
import Foundation
import HTTPService
import ServiceLogging
import Synchronization

/// The backend's HTTP endpoints, over its storage:
///
/// - `POST /apple/notifications`: Apple's webhook body `{"signedPayload"}`, verified, recorded once by
///   UUID, 200 only after the commit; 4xx for anything unverified or malformed, which changes nothing.
/// - `POST /apple/retention`: the developer's Get Retention Message endpoint (Retention Messaging
///   API): the App Store's `{"signedPayload"}` verified, answered from the backend's rules
///   (``RetentionRule``), each answer recorded for the figures; 404 when no rule applies, so the App
///   Store shows the default message.
/// - `POST /v1/transactions`: `{"signedTransaction", "userID"?}` from an app before it finishes a
///   purchase; answers the customer's entitlements.
/// - `GET /v1/customers/{id}/entitlements`, `…/history` and `…/explain?productId=`: by app account
///   token or user id; `explain` says in words why the customer is or is not entitled.
///
/// - `GET /v1/metrics` and `/v1/metrics/cohorts`: the subscription figures by day and the cohort
///   table (docs/analytics.md).
/// - `/dashboard`: the same figures as a page, behind a sign-in form that takes a backend key.
///
/// The `/v1` endpoints need `Authorization: Bearer KEY` with a key from `storekit backend key create`.
public struct BackendService: Sendable {
    public let storage: any BackendStorage
    public let intake: SignedDataIntake
    public let ledger: CustomerLedger
    /// The backend's "now" (see ``BackendClock``): what it verifies moves it on, for a local store.
    public let clock: BackendClock
    /// The reconciliation running by itself, when the backend has one (`/health` reports it).
    public var reconciliation: ReconciliationSchedule?
    /// Where refusals are logged (a notice for each `4xx`); every `5xx` is logged by the router, once,
    /// with its request's id.
    public let logger: Logger
    /// Where ingestion is counted, when the server exports metrics (`backend serve --metrics`).
    public var metrics: BackendMetrics?
    /// The token the dashboard's forms carry (random per service), which the cross-site check asks of
    /// every form post.
    public let formToken: String
    /// Whose commission the proceeds figures take off (the API, the dashboard and its exports).
    public var commission: CommissionProgram = .standard
    /// Signs the promotional offers of retention rules (`backend serve --offer-key`): the developer's
    /// subscription offer key, which the App Store checks the offer's signature against.
    public var offerSigner: OfferSignatureCreator?
    /// The currency every amount is also reported in, with its rates (`backend serve --currency --rates`):
    /// the dashboard's, and the API's when a request names no other.
    public var reporting: ReportingCurrency?
    /// A local store's address (`backend serve --store-pages`, or its `--api-url`): the customer page
    /// links each transaction to the store's page of it, `/transactions/{id}`.
    public var storePages: URL?
    /// The routes ``handle(_:)`` answers with, compiled once.
    private let inProcessRoutes = CompiledRoutes()
    /// Real time, by which dashboard sessions expire: never the App Store's clock (``clock``), which
    /// for Xcode data is a store's manual clock, so a session would never end, or end when the
    /// store's clock moved.
    public var sessionClock: @Sendable () -> Date = { Date() }
    /// Refusals logged per client: twenty per ten seconds, the rest counted (see ``LogBudget``).
    public let refusalLogBudget = LogBudget()

    /// - Parameters:
    ///   - now: The machine's clock, when `clock` is not given (a test's clock).
    ///   - clock: Whose time subscriptions expire by (by default `now`'s).
    public init(storage: any BackendStorage, intake: SignedDataIntake, now: @escaping @Sendable () -> Date = { Date() }, clock: BackendClock? = nil,
                logger: Logger = .disabled, formToken: String = FormToken.make()) {
        let clock = clock ?? BackendClock(.system, system: now)
        self.formToken = formToken
        self.storage = storage
        self.intake = intake
        self.clock = clock
        self.ledger = CustomerLedger(storage: storage, now: { clock.now() })
        self.logger = logger
    }

    /// Answers a request in this process (an app's own server calling its backend), with no check of
    /// where it comes from; `storekit backend serve` puts ``router(listeningAddress:allowedHosts:)``
    /// on the network instead.
    ///
    /// The routes are compiled at the first request and kept: set ``metrics`` before.
    public func handle(_ request: HTTPRequest) async -> HTTPResponse {
        let table = inProcessRoutes.table {
            var router = Router()
            router.logger = logger
            register(on: &router)
            return router.compiled()
        }
        return await table.respond(to: request)
    }

    /// The routes with the checks a network service needs in front of them: the `Host` allow-list
    /// (DNS rebinding) and the cross-site check (a web page in a browser cannot post to it).
    public func router(listeningAddress: String, allowedHosts: [String] = []) -> Router {
        var router = Router()
        router.logger = logger
        router.add(middleware: HostCheck(listeningAddress: listeningAddress, names: allowedHosts))
        router.add(middleware: CrossSiteCheck(formToken: formToken))
        register(on: &router)
        return router
    }

    /// Registers the endpoints; each maps the backend's failures to its answers and logs them.
    public func register(on router: inout Router) {
        let service = self
        func on(_ method: String, _ pattern: String, _ respond: @escaping @Sendable (HTTPRequest, RequestContext) async throws(BackendError) -> HTTPResponse) {
            router.on(method, pattern) { request, context in
                do throws(BackendError) {
                    return try await respond(request, context)
                } catch {
                    return service.refusal(error, to: request, logger: context.logger)
                }
            }
        }
        on("POST", "/apple/notifications") { request, _ throws(BackendError) in
            let change: BackendChange
            do throws(BackendError) { change = try service.intake.notification(body: request.body) } catch {
                service.metrics?.refused()
                throw error
            }
            let recorded = try await service.storage.apply(change)
            if let signed = change.notification?.signedDate { service.clock.observe(signed) }
            service.metrics?.ingested(change, recorded: recorded, at: service.ledger.now())
            return Self.json(["recorded": recorded])
        }
        if let metrics = service.metrics {
            // Behind the same key as /v1: a scraper sends it as a bearer token.
            router.metrics = HTTPMetrics(registry: metrics.registry)
            on("GET", "/metrics") { request, _ throws(BackendError) in
                try await service.authorize(request)
                return await HTTPMetrics.scrape(metrics.registry)
            }
        }
        on("POST", "/apple/retention") { request, _ throws(BackendError) in
            let payload = try service.intake.realtimeRequest(body: request.body)
            // A captured request replayed signs no new offer: its date must be recent by the backend's
            // clock, and its identifier never seen before (kept in the database, so a restart or
            // another instance refuses it too).
            try service.checkRetentionRequestDate(payload.signedDate)
            guard try await !service.storage.hasRetentionRequest(payload.requestIdentifier) else {
                throw .conflict("the retention request \(UntrustedText.excerpt(payload.requestIdentifier)) was answered before: a replay is not answered again")
            }
            let subscriber = try await service.retentionSubscriber(payload)
            let rule = try await service.storage.retentionRules().first { $0.applies(to: subscriber) }
            // An offer is signed at the request's own time: valid in the App Store's world, whatever its
            // clock, and bound to the customer's subscription (its original transaction), so it is no
            // use to anyone else. An answer that cannot be made is not recorded as shown.
            let answer = try rule.map { (rule) throws(BackendError) in
                try rule.response(productID: payload.productId, transactionID: payload.originalTransactionId, offerSigner: service.offerSigner,
                                  nonce: UUID(), issuedAt: AppStoreJSON.date(fromMilliseconds: payload.signedDate))
            }
            let first = try await service.storage.recordRetentionRequest(RetentionRequestRecord(
                requestIdentifier: payload.requestIdentifier, originalTransactionID: payload.originalTransactionId, productID: payload.productId,
                requestedDate: payload.signedDate, ruleID: rule?.id, messageIdentifier: rule?.messageIdentifier))
            // Two copies racing: only the one recorded first gets its answer.
            guard first else { throw .conflict("the retention request \(UntrustedText.excerpt(payload.requestIdentifier)) was answered before") }
            guard let answer else { return .json(404, Data(#"{"error":"no retention rule applies"}"#.utf8)) }
            return .json(200, (try? JSONEncoder().encode(answer)) ?? Data())
        }
        on("POST", "/v1/transactions") { request, _ throws(BackendError) in
            try await service.authorize(request)
            struct Body: Decodable { var signedTransaction: String; var userID: String? }
            guard let body = try? JSONDecoder().decode(Body.self, from: request.body) else {
                throw .badRequest("the body is not {\"signedTransaction\": \"…\", \"userID\": \"…\"}")
            }
            // In Unicode's composed form, as paths are decoded: one user however their ID was typed.
            // A user id that is a UUID is keyed as one (any case), as the lookups key it.
            let change = try service.intake.transaction(signedTransaction: body.signedTransaction,
                                                        userID: body.userID.map { Self.customerKey($0.precomposedStringWithCanonicalMapping) })
            _ = try await service.storage.apply(change)
            if let signed = change.transaction?.payload.signedDate { service.clock.observe(signed) }
            guard let customer = change.transaction?.customerID else {
                return Self.json(["entitlements": [String]()] as [String: [String]])
            }
            return try Self.encoded(EntitlementsBody(customer: customer, entitlements: try await service.ledger.entitlements(customer: customer)))
        }
        on("GET", "/v1/customers/{customer}/entitlements") { request, context throws(BackendError) in
            try await service.authorize(request)
            let customer = Self.customerKey(context["customer"])
            return try Self.encoded(EntitlementsBody(customer: customer, entitlements: try await service.ledger.entitlements(customer: customer)))
        }
        on("GET", "/v1/customers/{customer}/history") { request, context throws(BackendError) in
            try await service.authorize(request)
            let customer = Self.customerKey(context["customer"])
            return try Self.encoded(HistoryBody(customer: customer, transactions: try await service.ledger.history(customer: customer)))
        }
        on("GET", "/v1/customers/{customer}/explain") { request, context throws(BackendError) in
            try await service.authorize(request)
            guard let product = request.queryValue("productId"), !product.isEmpty else { throw .badRequest("name the product with ?productId=") }
            return try Self.encoded(try await service.ledger.explain(customer: Self.customerKey(context["customer"]), productID: product))
        }
        on("GET", "/v1/metrics") { request, _ throws(BackendError) in
            try await service.authorize(request)
            let (from, to) = try Self.dayRange(of: request)
            let query = MetricsQuery(from: from, to: to, productID: request.queryValue("product_id"), groupID: request.queryValue("group"))
            let reporting = try service.reportingCurrency(asked: request)
            return try await Self.encodedJSON { try await service.storage.metrics(query).json(commission: service.commission, reporting: reporting) }
        }
        on("GET", "/v1/metrics/retention") { request, _ throws(BackendError) in
            try await service.authorize(request)
            return try Self.encoded(["messages": try await service.storage.retentionFigures()])
        }
        on("GET", "/v1/metrics/cohorts") { request, _ throws(BackendError) in
            try await service.authorize(request)
            let (from, to) = try Self.dayRange(of: request)
            return try await Self.encodedJSON { try await service.storage.cohorts(from: from, to: to).json() }
        }
        BackendDashboard(service: service).register(on: &router)
        // Healthy only while the database answers: a backend that cannot reach it says so (503,
        // `degraded` with the reason). The reconciliation's state comes along when one runs.
        on("GET", "/health") { [storage, reconciliation, clock] _, _ throws(BackendError) in
            var body: [String: Any] = [:]
            if let reconciliation {
                let state = reconciliation.current
                var report: [String: Any] = ["succeeded": state.succeeded, "failed": state.failed]
                if let failure = state.lastFailure { report["lastFailure"] = failure }
                if let waiting = state.waitingForAppStore { report["waitingForAppStore"] = waiting }
                if let through = state.lastOutcome?.through { report["completeThrough"] = AppStoreJSON.milliseconds(from: through) }
                body["reconciliation"] = report
            }
            if clock.source == .appStore, let seen = clock.latestAppStoreTime { body["appStoreTime"] = AppStoreJSON.milliseconds(from: seen) }
            do throws(BackendError) {
                try await storage.checkHealth()
            } catch {
                body["status"] = "degraded"
                if case .unavailable(let message) = error { body["reason"] = message } else { body["reason"] = "the database does not answer: \(error)" }
                var response = Self.json(body, status: 503)
                response.headers.append(("Cache-Control", "no-store"))
                return response
            }
            body["status"] = "ok"
            return Self.json(body)
        }
    }

    /// The answer to a failure. A refusal (`4xx`) is logged here as a notice naming what was asked;
    /// a failure (`5xx`) carries its reason to the router, which logs it once.
    private func refusal(_ error: BackendError, to request: HTTPRequest, logger: Logger) -> HTTPResponse {
        let (status, code): (Int, String)
        switch error {
        case .badRequest: (status, code) = (400, "badRequest")
        case .unverified: (status, code) = (422, "unverified")
        case .unauthorized: (status, code) = (401, "unauthorized")
        case .database: (status, code) = (503, "storage")
        case .encoding, .unsafeFile: (status, code) = (500, "internal")
        case .conflict: (status, code) = (409, "conflict")
        case .unavailable: (status, code) = (503, "unavailable")
        }
        var response = Self.json(["error": ["code": code, "message": error.description]], status: status)
        if status >= 500 {
            response.failure = error.description
        } else if let dropped = refusalLogBudget.admit(request.remoteAddress + " " + Self.refusalKind(request)) {
            // Anyone can send refused requests: each client's share of the log is bounded, per kind
            // of refusal (see refusalKind), so a flood of one kind never keeps another out.
            let earlier = dropped > 0 ? " (\(dropped) earlier refusals of this kind from this client were not logged)" : ""
            logger.notice("\(UntrustedText.excerpt(request.method)) \(UntrustedText.excerpt(request.path, limit: 200)) → \(status): \(error)\(earlier)",
                          metadata: request.remoteAddress.isEmpty ? [:] : ["client": request.remoteAddress])
        }
        return response
    }

    /// What a refused request was, for the log's budget: a notification (forged or foreign ones are
    /// what an operator most needs to see), a retention request, or anything else by its first path
    /// segment. On loopback every local process is 127.0.0.1, so the address alone cannot keep one
    /// process's flood from hiding another's lines; a budget per kind keeps refusals of notifications
    /// in the log whatever else floods it (docs/security.md).
    static func refusalKind(_ request: HTTPRequest) -> String {
        let segments = request.pathSegments
        switch segments.first {
        case "apple": return segments.dropFirst().first == "notifications" ? "notification" : "apple"
        case "v1": return "v1"
        case "dashboard": return "dashboard"
        default: return "other"
        }
    }

    private func authorize(_ request: HTTPRequest) async throws(BackendError) {
        let header = request.headers.first { $0.key.lowercased() == "authorization" }?.value ?? ""
        guard header.hasPrefix("Bearer "), try await storage.hasKey(hash: ServiceKeys.digest(String(header.dropFirst(7)))) else {
            throw .unauthorized("this endpoint needs Authorization: Bearer KEY (storekit backend key create)")
        }
    }

    /// The reporting currency a metrics request asks for: `?currency=USD&rates=GBP:1.27,EUR:1.08`, or
    /// `?currency=` alone for the backend's own (``reporting``), or the backend's when it names none.
    func reportingCurrency(asked request: HTTPRequest) throws(BackendError) -> ReportingCurrency? {
        let rates = request.queryValue("rates")
        guard let currency = request.queryValue("currency") else {
            if rates != nil { throw .badRequest("rates= needs the currency they convert to: currency=USD") }
            return reporting
        }
        if let rates { return try ReportingCurrency(currency: currency, ratesText: rates) }
        guard let reporting, reporting.currency == currency.uppercased() else {
            throw .badRequest("give the rates to \(currency.uppercased()) with rates=GBP:1.27,EUR:1.08"
                              + (reporting.map { " (this backend's own are to \($0.currency))" } ?? ""))
        }
        return reporting
    }

    /// A customer id as the backend keys it: an app account token (a UUID) in lower case, however it was
    /// typed or copied (pages show tokens in upper case); any other id (an app's user id) as it is.
    public static func customerKey(_ text: String) -> String {
        UUID(uuidString: text).map { $0.uuidString.lowercased() } ?? text
    }

    /// `?from=YYYY-MM-DD&to=YYYY-MM-DD`, both required.
    static func dayRange(of request: HTTPRequest) throws(BackendError) -> (CalendarDay, CalendarDay) {
        func day(_ name: String) throws(BackendError) -> CalendarDay {
            guard let text = request.queryValue(name) else { throw .badRequest("give ?\(name)=YYYY-MM-DD") }
            guard let day = CalendarDay(text) else { throw .badRequest("\(name) is not a date YYYY-MM-DD: \(text)") }
            return day
        }
        let (from, to) = (try day("from"), try day("to"))
        guard from <= to else { throw .badRequest("from (\(from)) is after to (\(to))") }
        return (from, to)
    }

    private static func encodedJSON(_ make: () async throws -> Data) async throws(BackendError) -> HTTPResponse {
        do { return .json(200, try await make()) } catch let error as BackendError { throw error } catch {
            throw .encoding("cannot encode the answer: \(error)")
        }
    }

    struct EntitlementsBody: Encodable { var customer: String; var entitlements: [CustomerEntitlement] }
    struct HistoryBody: Encodable { var customer: String; var transactions: [CustomerHistoryEntry] }

    private static func encoded<Body: Encodable>(_ body: Body) throws(BackendError) -> HTTPResponse {
        do { return .json(200, try AppStoreJSON.encode(body)) } catch { throw .encoding("cannot encode the answer: \(error)") }
    }

    private static func json(_ object: Any, status: Int = 200) -> HTTPResponse {
        .json(status, (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8))
    }
}

/// A route table compiled on first use and kept, for a value type that answers requests itself.
final class CompiledRoutes: Sendable {
    private let compiled = Mutex<RouteTable?>(nil)

    func table(_ compile: () -> RouteTable) -> RouteTable {
        compiled.withLock { table in
            if let table { return table }
            let made = compile()
            table = made
            return made
        }
    }
}

extension BackendService {
    /// What the backend knows of the subscription a real-time request is about: how long the
    /// customer has subscribed (from the first purchase's date to the request's) and whether its
    /// latest period is a free trial.
    /// How far a real-time request's `signedDate` may be from the backend's now: the App Store asks
    /// and waits at most a few seconds for the answer, so an older request is a replay.
    static let retentionRequestWindow: TimeInterval = 300

    /// Refuses a request signed outside the window around the backend's now (on the App Store's
    /// clock, for a local store's data, a request newer than any seen moves that clock on).
    func checkRetentionRequestDate(_ signedMilliseconds: Int64) throws(BackendError) {
        let signed = AppStoreJSON.date(fromMilliseconds: signedMilliseconds)
        // On the App Store's clock with nothing seen yet there is no now to compare with: the request sets it.
        if clock.source == .appStore, clock.latestAppStoreTime == nil {
            clock.observe(signed)
            return
        }
        let now = clock.now()
        if signed < now.addingTimeInterval(-Self.retentionRequestWindow) {
            throw .badRequest("the retention request was signed at \(signed.formatted(.iso8601)), more than \(Int(Self.retentionRequestWindow)) s before now (\(now.formatted(.iso8601))): a replay is not answered")
        }
        if clock.source == .system, signed > now.addingTimeInterval(Self.retentionRequestWindow) {
            throw .badRequest("the retention request was signed at \(signed.formatted(.iso8601)), in the future")
        }
        if clock.source == .appStore { clock.observe(signed) }
    }

    func retentionSubscriber(_ request: DecodedRealtimeRequestBody) async throws(BackendError) -> RetentionRule.Subscriber {
        let transactions = try await storage.transactions(sharingOriginalOf: request.originalTransactionId).map(\.payload)
        let now = AppStoreJSON.date(fromMilliseconds: request.signedDate)
        let first = transactions.compactMap { $0.originalPurchaseDate ?? $0.purchaseDate }.min() ?? now
        let latest = transactions.max { ($0.purchaseDate ?? .distantPast) < ($1.purchaseDate ?? .distantPast) }
        let inTrial = latest?.offerType == .introductoryOffer && latest?.offerDiscountType == .freeTrial && (latest?.expiresDate ?? .distantPast) > now
        return RetentionRule.Subscriber(productID: request.productId, daysSubscribed: max(0, Int(now.timeIntervalSince(first) / 86_400)), inTrial: inTrial)
    }
}
