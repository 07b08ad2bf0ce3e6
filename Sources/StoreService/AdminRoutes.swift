import AppStoreModels
import AppStoreSimulator
import Foundation
import HTTPService
import OpenStoreKit
import SimulatorConnection
import StoreKitCatalog

/// The admin API, `/v1/admin/…`: the Transaction Manager's and `SKTestSession`'s controls over HTTP.
/// Ledger records are the App Store JSON of their types (dates in milliseconds). Documented, with one
/// example per call, in `docs/admin-api.md`.
struct AdminRoutes {
    let store: SimulatedAppStore

    /// Registers every route of the admin API.
    static func register(on router: inout HTTPService.Router, store: SimulatedAppStore) {
        let routes = AdminRoutes(store: store)
        router.on("GET", "/v1/admin/transactions") { request, context in
            return try await routes.transactions(request)
        }
        router.on("GET", "/v1/admin/transactions/{id}") { request, context in
            let captured = [context["id"]]
            let id = try DeviceRoutes.transactionID(captured[0])

            guard let transaction = try await store.ledgerTransaction(id) else { throw AppStoreError.control(.noTransactionFound, "no transaction \(id)") }
            return try Self.json(AdminAPI.TransactionBody(transaction: transaction, signedTransaction: try await store.transaction(id).jws))
        }
        router.on("POST", "/v1/admin/purchases") { request, context in
            let body = try APIResponse.decode(AdminAPI.PurchaseBody.self, from: request)
            let offer = try body.offer.map { (offer) throws(APIError) -> PurchaseOffer in
                guard let parsed = offer.offer else { throw .badRequest("the purchase's offer is incomplete or of an unknown kind") }
                return PurchaseOffer(parsed)
            }
            let renewal: RenewalBehavior
            switch body.renewal ?? "untilNow" {
            case "untilNow": renewal = .renewUntilNow
            case "cancelImmediately": renewal = .cancelImmediately
            case let other: throw APIError.badRequest("renewal is untilNow or cancelImmediately, not \(other)")
            }
            let transaction = try await store.buyProduct(body.productID, account: body.account ?? "default", quantity: body.quantity ?? 1,
                                                          appAccountToken: body.appAccountToken, offer: offer,
                                                          purchaseDate: body.purchaseDate.map { AppStoreJSON.date(fromMilliseconds: $0) },
                                                          renewalBehavior: renewal)
            return try Self.json(AdminAPI.TransactionBody(transaction: transaction, signedTransaction: try await store.transaction(transaction.id).jws), status: 201)
        }
        router.on("POST", "/v1/admin/transactions/{id}/{action}") { request, context in
            let captured = [context["id"], context["action"]]
            let id = try DeviceRoutes.transactionID(captured[0])
            let action = captured[1]

            switch action {
            case "refund":
                let body = try APIResponse.decode(RefundBody.self, from: request)
                let reason: RevocationReason
                switch body.reason ?? "other" {
                case "developerIssue": reason = .refundedDueToIssue
                case "other": reason = .refundedForOtherReason
                case let other: throw APIError.badRequest("reason is developerIssue or other, not \(other)")
                }
                try await store.refundTransaction(id, reason: reason)
            case "request-refund":
                let body = try APIResponse.decode(RefundBody.self, from: request)
                try await store.requestRefund(id, reason: body.reason == "developerIssue" ? .fulfillmentIssue : .unintendedPurchase)
            case "approve": try await store.approveAskToBuyTransaction(id)
            case "decline": try await store.declineAskToBuyTransaction(id)
            case "resolve": try await store.resolveIssueForTransaction(id)
            case "finish": try await store.finish(id)
            case "stop-family-sharing": try await store.stopFamilySharing(transactionID: id)
            default: throw APIError.notFound("no transaction action \(action)")
            }
            return try await routes.transactionResponse(id)
        }
        router.on("DELETE", "/v1/admin/transactions/{id}") { request, context in
            let captured = [context["id"]]
            let id = captured[0]
            try await store.deleteTransaction(try DeviceRoutes.transactionID(id))
            return try APIResponse.json(["deleted": true])
        }
        router.on("DELETE", "/v1/admin/transactions") { request, context in
            try await store.clearTransactions()
            return try APIResponse.json(["deleted": true])
        }
        router.on("GET", "/v1/admin/subscriptions") { request, context in
            return try Self.json(SubscriptionsBody(subscriptions: try await store.subscriptionRecords(account: request.queryValue("account"))))
        }
        router.on("POST", "/v1/admin/subscriptions/{action}") { request, context in
            let action = context["action"]
            guard action == "expire" || action == "force-renew" else { throw APIError.notFound("no subscription action \(action)") }
            let body = try APIResponse.decode(ProductAccountBody.self, from: request)
            if action == "expire" {
                try await store.expireSubscription(productID: body.productID, account: body.account ?? "default")
            } else {
                try await store.forceRenewalOfSubscription(productID: body.productID, account: body.account ?? "default")
            }
            return try Self.json(SubscriptionsBody(subscriptions: try await store.subscriptionRecords(account: body.account ?? "default")))
        }
        router.on("POST", "/v1/admin/subscriptions/{id}/{action}") { request, context in
            let captured = [context["id"], context["action"]]
            let id = try DeviceRoutes.transactionID(captured[0])
            let action = captured[1]

            switch action {
            case "renewal":
                let body = try APIResponse.decode(RenewalBody.self, from: request)
                try await store.setAutoRenew(originalTransactionID: id, enabled: body.enabled)
            case "price-increase":
                let body = try APIResponse.decode(PriceIncreaseBody.self, from: request)
                switch body.action {
                case "request": try await store.requestPriceIncreaseConsent(transactionID: id)
                case "accept": try await store.consentToPriceIncrease(transactionID: id)
                case "decline": try await store.declinePriceIncrease(transactionID: id)
                default: throw APIError.badRequest("action is request, accept or decline, not \(body.action)")
                }
            case "extend":
                let body = try APIResponse.decode(ExtendBody.self, from: request)
                try await store.extendRenewalDate(originalTransactionID: id, days: body.days)
            case "resolve-billing":
                try await store.resolveBillingIssue(originalTransactionID: id)
            default: throw APIError.notFound("no subscription action \(action)")
            }
            return try await routes.transactionResponse(id)
        }
        router.on("GET", "/v1/admin/test-transactions") { request, context in
            let limit = max(1, min(try Self.number(request, "limit") ?? 100, 1_000))
            return try Self.json(AdminAPI.TestTransactionsBody(transactions: try await store.allTestTransactions(
                account: request.queryValue("account"), after: try Self.number(request, "after").map(UInt64.init), limit: limit)))
        }
        router.on("PUT", "/v1/admin/settings/overrides") { request, context in
            // A body that is not an object of known overrides changes nothing (it would otherwise
            // decode as no overrides at all, and reset every one).
            guard let object = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] else {
                throw APIError.badRequest("the body is not a JSON object of setting overrides")
            }
            let unknown = Set(object.keys).subtracting(SettingsOverrides.keys)
            guard unknown.isEmpty else {
                throw APIError.badRequest("unknown setting overrides: \(unknown.sorted().map { String($0.prefix(40)) }.joined(separator: ", ")); known are \(SettingsOverrides.keys.sorted().joined(separator: ", "))")
            }
            let overrides: SettingsOverrides
            do { overrides = try AppStoreJSON.decode(SettingsOverrides.self, from: request.body) } catch {
                throw APIError.badRequest("the body is not a set of setting overrides: \(error)")
            }
            try await store.replaceSettingsOverrides(overrides)
            return try Self.json(try await store.currentSettings())
        }
        router.on("GET", "/v1/admin/vocabulary") { _, _ in try Self.json(VocabularyBody()) }
        router.on("GET", "/v1/admin/settings") { request, context in
            return try Self.json(try await store.currentSettings())
        }
        router.on("PATCH", "/v1/admin/settings") { request, context in
            let changes = try APIResponse.decode([String: SettingValue].self, from: request)
            var assignments: [SettingAssignment] = []
            for (key, value) in changes.sorted(by: { $0.key < $1.key }) { assignments.append(try SettingAssignment(key: key, value: value.text)) }
            try await store.apply(assignments)
            return try Self.json(try await store.currentSettings())
        }
        router.on("POST", "/v1/admin/settings/reset") { request, context in
            try await store.resetToDefaultState()
            return try Self.json(try await store.currentSettings())
        }
        router.on("POST", "/v1/admin/products/{productID}/availability") { request, context in
            let captured = [context["productID"]]
            let id = captured[0]
            let body = try APIResponse.decode(AvailabilityBody.self, from: request)
            try await store.setProductAvailable(id, body.available)
            return try APIResponse.json(["productID": id, "available": body.available])
        }
        router.on("GET", "/v1/admin/clock") { request, context in
            return try await routes.clockResponse(played: nil)
        }
        router.on("POST", "/v1/admin/clock/advance") { request, context in
            let body = try APIResponse.decode(AdvanceBody.self, from: request)
            let played: Int
            switch (body.by, body.to) {
            case (let text?, nil):
                guard let step = TimeStep(text) else { throw APIError.badRequest("by must be like P1M, PT12H, 3d or 1M, not \"\(text)\"") }
                played = try await store.advanceTime { step.date(after: $0) }
            case (nil, let milliseconds?):
                played = try await store.advanceTime(to: AppStoreJSON.date(fromMilliseconds: milliseconds))
            default:
                throw APIError.badRequest("give by (a duration such as P1M) or to (milliseconds since 1970), one of them")
            }
            return try await routes.clockResponse(played: played)
        }
        router.on("GET", "/v1/admin/accounts") { request, context in
            return try Self.json(AccountsBody(accounts: try await store.allAccounts(after: request.queryValue("after"), limit: 1_000)))
        }
        router.on("GET", "/v1/admin/accounts/{name}") { request, context in
            let captured = [context["name"]]
            let name = captured[0]
            guard let account = try await store.account(named: name) else { throw APIError.notFound("no account \(name)") }
            return try Self.json(AccountBody(account: account, devices: try await store.devices(ofAccount: name)))
        }
        router.on("PUT", "/v1/admin/accounts/{name}") { request, context in
            let captured = [context["name"]]
            let name = captured[0]
            let body = try APIResponse.decode(AccountChangeBody.self, from: request)
            let storefront: String?? = body.storefront.map { code -> String? in code == "default" ? nil : code }
            let token = try body.appAccountToken.map { (text) throws(APIError) -> UUID? in
                if text == "none" { return nil }
                guard let token = UUID(uuidString: text) else { throw APIError.badRequest("appAccountToken is a UUID or none, not \(text)") }
                return token
            }
            // Every part is checked before anything changes: a device that cannot be signed in must not
            // leave the account made without it.
            for device in body.devices ?? [] {
                guard !device.trimmingCharacters(in: .whitespaces).isEmpty else { throw APIError.badRequest("a device needs a name") }
                if let existing = try await store.device(named: device), existing.account != name.precomposedStringWithCanonicalMapping {
                    throw APIError(status: 409, family: "control", code: "invalidAction",
                                   message: "device \(device) is signed in to account \(existing.account); give this account's devices names of their own")
                }
            }
            try await store.configureAccount(name, storefront: storefront, askToBuy: body.askToBuy, appAccountToken: token)
            if let family = body.familyGroup { try await store.setFamilyGroup(family == "none" ? nil : family, for: name) }
            if let allowed = body.purchasesAllowed { try await store.setPurchasesAllowed(allowed, account: name) }
            for device in body.devices ?? [] { try await store.addDevice(device, account: name) }
            guard let account = try await store.account(named: name) else { throw APIError.notFound("no account \(name)") }
            return try Self.json(AccountBody(account: account, devices: try await store.devices(ofAccount: name)))
        }
        router.on("POST", "/v1/admin/devices/{device}/purchase-intents") { request, context in
            let captured = [context["device"]]
            let body = try APIResponse.decode(PurchaseIntentBody.self, from: request)
            try await store.sendPurchaseIntent(productID: body.productID, offerID: body.offerID, device: captured[0])
            return try Self.json(["sent": true])
        }
        router.on("POST", "/v1/admin/devices/{device}/sheets/{sheet}/responses") { request, context in
            let captured = [context["device"], context["sheet"]]
            guard let sheet = CustomerSheet(rawValue: captured[1]) else {
                throw APIError.badRequest("no sheet \(captured[1]); sheets are \(CustomerSheet.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let response = try APIResponse.decode(CustomerResponse.self, from: request)
            try await store.queueCustomerResponse(response, in: sheet, device: captured[0])
            return try Self.json(["queued": response.description])
        }
        router.on("GET", "/v1/admin/devices") { request, context in
            return try Self.json(DevicesBody(devices: try await store.allDevices(after: request.queryValue("after"), limit: 1_000)))
        }
        router.on("GET", "/v1/admin/changes") { request, context in
            return try await routes.changes(request)
        }
        router.on("GET", "/v1/admin/notifications") { request, context in
            let limit = max(1, min(try Self.number(request, "limit") ?? 100, 1_000))
            let notifications: [StoredNotification]
            if let latest = try Self.number(request, "latest") {
                notifications = try await store.latestNotifications(limit: max(1, min(latest, 1_000)))
            } else {
                notifications = try await store.notifications(after: Int64(try Self.number(request, "after") ?? 0), limit: limit)
            }
            return try Self.json(AdminAPI.NotificationsBody(notifications: notifications.map(AdminAPI.NotificationBody.init)))
        }
        router.on("POST", "/v1/admin/notifications/test") { request, context in
            return try APIResponse.json(["notificationUUID": try await store.requestTestNotification()], status: 201)
        }
    }

    private func transactionResponse(_ id: UInt64) async throws -> HTTPResponse {
        guard let transaction = try await store.ledgerTransaction(id) else { return try APIResponse.json(["done": true]) }
        return try Self.json(AdminAPI.TransactionBody(transaction: transaction, signedTransaction: try await store.transaction(id).jws))
    }

    private func clockResponse(played: Int?) async throws -> HTTPResponse {
        let now = try await store.currentTime()
        var body: [String: Any] = ["now": AppStoreJSON.milliseconds(from: now), "iso": now.formatted(.iso8601)]
        if let played { body["eventsPlayed"] = played }
        return try APIResponse.json(body)
    }

    // MARK: Bodies

    static func json<Body: Encodable>(_ body: Body, status: Int = 200) throws -> HTTPResponse {
        .json(status, try AppStoreJSON.encode(body))
    }

    static func number(_ request: HTTPRequest, _ name: String) throws(APIError) -> Int? {
        guard let text = request.queryValue(name) else { return nil }
        guard let number = Int(text), number >= 0 else { throw .badRequest("\(name) must be a whole number, not \(text)") }
        return number
    }

    /// A setting's value in JSON: a string, a number or a boolean.
    struct SettingValue: Decodable {
        var text: String

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {
                text = flag ? "true" : "false"
            } else if let number = try? container.decode(Int.self) {
                text = String(number)
            } else {
                text = try container.decode(String.self)
            }
        }
    }

    struct TransactionsBody: Encodable {
        var transactions: [LedgerTransaction]
        var nextAfter: UInt64?
        /// The renewal records of the page's subscriptions, by original transaction identifier.
        var subscriptions: [String: SubscriptionRecord]
        /// The store's time, to tell a period that has ended.
        var now: Date
        /// How the Transaction Manager shows each transaction, by identifier: its state, what the row
        /// says and the actions that apply (``TransactionRow``).
        var rows: [String: TransactionRow]
    }
    /// `GET /v1/admin/vocabulary`: the names of what the pages offer to choose, as the store knows them.
    struct VocabularyBody: Encodable {
        struct Choice<Value: Encodable>: Encodable { var value: Value; var label: String }
        struct Flag: Encodable { var key: String; var label: String }
        struct State: Encodable { var state: String; var label: String }
        var timeRates = TimeRate.allCases.map { Choice(value: $0.rawValue, label: $0.label) }
        var settingFlags = [("askToBuyEnabled", "Ask to Buy"), ("interruptedPurchasesEnabled", "Interrupted purchases"),
                            ("shouldEnterBillingRetryOnRenewal", "Billing retry on renewal"), ("billingGracePeriodIsEnabled", "Billing grace period"),
                            ("failTransactionsEnabled", "Fail transactions"), ("disableDialogs", "Disable dialogs"),
                            ("includesConsumablesInHistory", "Consumables in history")].map { Flag(key: $0.0, label: $0.1) }
        var failableAPIs = FailableAPI.allCases.map(\.rawValue)
        var transactionStates = TransactionRow.states.map { State(state: $0, label: TransactionRow.label(of: $0)) }
    }
    struct SubscriptionsBody: Encodable { var subscriptions: [SubscriptionRecord] }
    struct AccountsBody: Encodable { var accounts: [StoreAccount] }
    struct AccountBody: Encodable { var account: StoreAccount; var devices: [StoreDevice] }
    struct DevicesBody: Encodable { var devices: [StoreDevice] }

    struct RefundBody: Decodable { var reason: String? }
    struct ProductAccountBody: Decodable { var productID: String; var account: String? }
    struct RenewalBody: Decodable { var enabled: Bool }
    struct PriceIncreaseBody: Decodable { var action: String }
    struct ExtendBody: Decodable { var days: Int }
    struct ChangesBody: Encodable { var version: Int64 }

    /// How many ledger rows one filtered page reads at most before it answers with what it found and
    /// where to go on (`nextAfter`): a rare match in a large store costs several short requests, never
    /// one long one.
    static let filteredScanLimit = 2_000

    /// `GET /v1/admin/transactions`: a page of the ledger, oldest first (`order=newest` for newest
    /// first), filtered by account, part of a product identifier (`product`), type and state;
    /// `search` is a transaction identifier or part of a product identifier. Each page carries the
    /// renewal records of its subscriptions and the store's time, so a row can say where its
    /// subscription stands.
    private func transactions(_ request: HTTPRequest) async throws -> HTTPResponse {
        let limit = max(1, min(try Self.number(request, "limit") ?? 100, 1_000))
        let account = request.queryValue("account").flatMap { $0.isEmpty ? nil : $0 }
        var product = request.queryValue("product").flatMap { $0.isEmpty ? nil : $0.lowercased() }
        let kind = request.queryValue("type").flatMap { $0.isEmpty ? nil : $0 }
        let state = request.queryValue("state").flatMap { $0.isEmpty ? nil : $0 }
        let newestFirst: Bool
        switch request.queryValue("order") ?? "oldest" {
        case "oldest": newestFirst = false
        case "newest": newestFirst = true
        case let other: throw APIError.badRequest("order is oldest or newest, not \(other)")
        }
        if let state, !TransactionRow.states.contains(state) {
            throw APIError.badRequest("state is one of \(TransactionRow.states.joined(separator: ", ")), not \(state)")
        }
        // A search for a number is a transaction identifier; anything else is part of a product identifier.
        var searchedID: UInt64?
        if let search = request.queryValue("search")?.trimmingCharacters(in: .whitespaces), !search.isEmpty {
            if let id = UInt64(search) { searchedID = id } else { product = search.lowercased() }
        }
        let now = try await store.currentTime()
        let productPart = product
        let store = self.store
        // Each subscription is read once per request, however many of its periods the scan meets.
        var subscriptions: [UInt64: SubscriptionRecord?] = [:]
        func matches(_ transaction: LedgerTransaction) async throws -> Bool {
            guard (account.map { transaction.account == $0 } ?? true),
                  (productPart.map { transaction.productID.lowercased().contains($0) } ?? true),
                  (kind.map { transaction.productKind.rawValue == $0 } ?? true) else { return false }
            guard let state else { return true }
            // An ended period's state (expired, or in grace) is its subscription's to say.
            var subscription: SubscriptionRecord?
            if TransactionRow.stateNeedsSubscription(transaction, now: now) {
                if let known = subscriptions[transaction.originalID] {
                    subscription = known
                } else {
                    subscription = try await store.subscriptionRecord(originalTransactionID: transaction.originalID)
                    subscriptions[transaction.originalID] = .some(subscription)
                }
            }
            return TransactionRow.state(of: transaction, subscription: subscription, now: now) == state
        }
        if let searchedID {
            var found: [LedgerTransaction] = []
            if let transaction = try await store.ledgerTransaction(searchedID), try await matches(transaction) { found.append(transaction) }
            return try await page(found, nextAfter: nil, now: now)
        }
        var after = try Self.number(request, "after").map(UInt64.init)
        guard product != nil || kind != nil || state != nil else {
            let rows = try await store.ledgerTransactions(account: account, after: after, limit: limit, newestFirst: newestFirst)
            return try await page(rows, nextAfter: rows.count == limit ? rows.last?.id : nil, now: now)
        }
        var found: [LedgerTransaction] = []
        var scanned = 0
        while found.count < limit, scanned < Self.filteredScanLimit {
            let chunk = try await store.ledgerTransactions(account: account, after: after, limit: 500, newestFirst: newestFirst)
            for transaction in chunk {
                scanned += 1
                after = transaction.id
                if try await matches(transaction) {
                    found.append(transaction)
                    if found.count == limit { break }
                }
            }
            guard chunk.count == 500 else {
                return try await page(found, nextAfter: found.count == limit ? after : nil, now: now)
            }
        }
        return try await page(found, nextAfter: after, now: now)
    }

    /// A page of transactions with the renewal records of its subscriptions and the store's time.
    private func page(_ transactions: [LedgerTransaction], nextAfter: UInt64?, now: Date) async throws -> HTTPResponse {
        var subscriptions: [String: SubscriptionRecord] = [:]
        for originalID in Set(transactions.filter { $0.productKind == .autoRenewable }.map(\.originalID)) {
            if let record = try await store.subscriptionRecord(originalTransactionID: originalID) { subscriptions[String(originalID)] = record }
        }
        var rows: [String: TransactionRow] = [:]
        for transaction in transactions {
            rows[String(transaction.id)] = TransactionRow(transaction, subscription: subscriptions[String(transaction.originalID)], now: now)
        }
        return try Self.json(TransactionsBody(transactions: transactions, nextAfter: nextAfter, subscriptions: subscriptions, now: now, rows: rows))
    }

    /// `GET /v1/admin/changes?since=V&wait=S`: the ledger's version, at once when it is not `since`,
    /// else as soon as any process changes the store, or after `wait` seconds (at most 60). Pages use
    /// it to show changes made elsewhere without a reload.
    private func changes(_ request: HTTPRequest) async throws -> HTTPResponse {
        let since = try request.queryValue("since").map { text throws(APIError) -> Int64 in
            guard let value = Int64(text) else { throw APIError.badRequest("since must be a version number, not \(text)") }
            return value
        }
        let waitText = request.queryValue("wait") ?? "25"
        guard let wait = Double(waitText), wait >= 0, wait.isFinite else { throw APIError.badRequest("wait must be a number of seconds, not \(waitText)") }
        let deadline = ContinuousClock.now + .milliseconds(Int64(min(wait, 60) * 1000))
        var version = try await store.ledgerVersion()
        // Any process may change the ledger: the store's change watcher sees their commits too.
        while version == since, ContinuousClock.now < deadline {
            let seen = version
            await LongPoll.wait(until: deadline) { _ = try? await store.waitForChange(from: seen) }
            // A stopping server cancels its handlers: answer at once, without waiting for a busy store.
            if Task.isCancelled { break }
            version = try await store.ledgerVersion()
        }
        return try Self.json(ChangesBody(version: version))
    }
    struct PurchaseIntentBody: Decodable { var productID: String; var offerID: String? }
    struct AvailabilityBody: Decodable { var available: Bool }
    struct AdvanceBody: Decodable { var by: String?; var to: Int64? }
    struct AccountChangeBody: Decodable {
        var storefront: String?; var askToBuy: Bool?; var familyGroup: String?; var purchasesAllowed: Bool?; var devices: [String]?
        var appAccountToken: String?
    }
}

extension AdminAPI.NotificationBody {
    init(_ notification: StoredNotification) {
        self.init(sequence: notification.sequence, notificationUUID: notification.notificationUUID, notificationType: notification.type.rawValue,
                  subtype: notification.subtype?.rawValue, transactionId: notification.transactionID.map(String.init),
                  signedDate: notification.date, signedPayload: notification.signedPayload)
        delivery = DeliveryBody(attempts: notification.delivery.attempts, nextAttemptDate: notification.delivery.nextAttemptDate)
    }
}
