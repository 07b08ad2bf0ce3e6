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
                // As the command line: time only moves forward (the engine would leave it where it is,
                // and an answer of 200 would say it moved).
                let target = AppStoreJSON.date(fromMilliseconds: milliseconds)
                let now = try await store.currentTime()
                guard target >= now else {
                    throw AppStoreError.control(.invalidAction, "time only moves forward: \(milliseconds) is before the store's time, \(AppStoreJSON.milliseconds(from: now))")
                }
                played = try await store.advanceTime(to: target)
            default:
                throw APIError.badRequest("give by (a duration such as P1M) or to (milliseconds since 1970), one of them")
            }
            return try await routes.clockResponse(played: played)
        }
        router.on("GET", "/v1/admin/accounts") { request, context in
            return try await routes.accounts(request)
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
        router.on("GET", "/v1/admin/devices/{device}") { _, context in
            let name = context["device"]
            guard let device = try await store.device(named: name) else { throw APIError.notFound("no device \(name)") }
            return try Self.json(device)
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
        /// Where the next page begins (its `after`); absent on the last page.
        var next: String?
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
    struct AccountsBody: Encodable {
        var accounts: [StoreAccount]
        /// Where the next page begins (its `after`); absent on the last page.
        var next: String?
        /// With `devices=true`: the devices signed in to the page's accounts, by account and name.
        var devices: [StoreDevice]?
    }
    struct AccountBody: Encodable { var account: StoreAccount; var devices: [StoreDevice] }
    struct DevicesBody: Encodable { var devices: [StoreDevice] }

    struct RefundBody: Decodable { var reason: String? }
    struct ProductAccountBody: Decodable { var productID: String; var account: String? }
    struct RenewalBody: Decodable { var enabled: Bool }
    struct PriceIncreaseBody: Decodable { var action: String }
    struct ExtendBody: Decodable { var days: Int }
    struct ChangesBody: Encodable { var version: Int64 }

    /// `GET /v1/admin/accounts`: the accounts by name, `limit` at a time (at most and by default
    /// 1,000) after `after`; with `search`, only those whose names contain it (ignoring ASCII case);
    /// with `devices=true`, the devices of the page's accounts too. `next` is where the next page begins.
    private func accounts(_ request: HTTPRequest) async throws -> HTTPResponse {
        let limit = max(1, min(try Self.number(request, "limit") ?? 1_000, 1_000))
        let search = request.queryValue("search")?.trimmingCharacters(in: .whitespaces).precomposedStringWithCanonicalMapping
        let after = request.queryValue("after").flatMap { $0.isEmpty ? nil : $0 }
        var accounts = try await store.allAccounts(matching: search?.isEmpty == false ? search : nil, after: after, limit: limit + 1)
        let next = accounts.count > limit ? accounts[limit - 1].name : nil
        accounts = Array(accounts.prefix(limit))
        var devices: [StoreDevice]?
        switch request.queryValue("devices") ?? "false" {
        case "true":
            var found: [StoreDevice] = []
            for account in accounts { found += try await store.devices(ofAccount: account.name) }
            devices = found
        case "false": break
        case let other: throw APIError.badRequest("devices is true or false, not \(other)")
        }
        return try Self.json(AccountsBody(accounts: accounts, next: next, devices: devices))
    }

    /// `GET /v1/admin/transactions`: a page of the Transaction Manager's list over the whole store
    /// (``SimulatedAppStore/listTransactions(_:)``). Filters: `account`, `product` (part of a product
    /// identifier), `type` (a product type), `state` (a listed state), `from` and `to` (purchase days,
    /// UTC, inclusive: `2026-01-31`, or milliseconds), `search` (a transaction identifier, an account's
    /// name, or part of a product identifier). `sort` is `id` (the default: the order purchases were recorded in), `account`, `productID`,
    /// `expirationDate` or `state`; `order` is `ascending` (or `oldest`) or `descending` (or `newest`).
    /// `after` is the `next` of the previous page; `page` (from 1) asks for a page by number instead,
    /// found along the indexes without reading the pages before it. Each page carries the renewal records of its
    /// subscriptions and the store's time, so a row can say where its subscription stands.
    private func transactions(_ request: HTTPRequest) async throws -> HTTPResponse {
        var listing = try Self.listing(request)
        if let search = request.queryValue("search")?.trimmingCharacters(in: .whitespaces), let id = UInt64(search) {
            // A number is a transaction identifier: that transaction, if it passes the other filters.
            let now = try await store.currentTime()
            guard let transaction = try await store.ledgerTransaction(id) else { return try await page([], next: nil, now: now) }
            let subscription = ListedState.needsSubscription(transaction, now: now)
                ? try await store.subscriptionRecord(originalTransactionID: transaction.originalID) : nil
            let state = ListedState.of(transaction, subscription: subscription, now: now)
            return try await page(listing.matches(transaction, state: state) ? [transaction] : [], next: nil, now: now)
        }
        if let search = request.queryValue("search")?.trimmingCharacters(in: .whitespaces), !search.isEmpty,
           let account = try await store.account(named: search) {
            // An account's name: that account's transactions (under the other filters), not a product's.
            if let chosen = listing.account, chosen != account.name { return try await page([], next: nil, now: try await store.currentTime()) }
            listing.account = account.name
            if let index = listing.productIDParts.lastIndex(of: search) { listing.productIDParts.remove(at: index) }
        }
        let result = try await store.listTransactions(listing)
        return try await page(result.transactions, next: result.next, now: try await store.currentTime())
    }

    /// The listing a request for transactions asks for (all but the product filters, which need the ledger's products).
    static func listing(_ request: HTTPRequest) throws(APIError) -> TransactionListing {
        var listing = TransactionListing(limit: max(1, min(try number(request, "limit") ?? 100, 1_000)))
        listing.account = request.queryValue("account").flatMap { $0.isEmpty ? nil : $0.ledgerName }
        listing.productIDParts = ["product", "search"].compactMap { name in
            // A number searched for is a transaction identifier, not part of a product's.
            request.queryValue(name).map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty || (name == "search" && UInt64($0) != nil) ? nil : $0 }
        }
        if let text = request.queryValue("type"), !text.isEmpty {
            guard let kind = CatalogProduct.Kind(rawValue: text) else {
                throw .badRequest("type is one of \(CatalogProduct.Kind.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
            }
            listing.productKind = kind
        }
        if let text = request.queryValue("sort"), !text.isEmpty {
            guard let sort = TransactionListing.SortKey(rawValue: text) else {
                throw .badRequest("sort is one of \(TransactionListing.SortKey.allCases.map(\.rawValue).joined(separator: ", ")), not \(text)")
            }
            listing.sort = sort
        }
        switch request.queryValue("order") ?? "ascending" {
        case "ascending", "oldest": listing.descending = false
        case "descending", "newest": listing.descending = true
        case let other: throw .badRequest("order is ascending or descending (oldest or newest), not \(other)")
        }
        if let text = request.queryValue("state"), !text.isEmpty {
            var states: Set<ListedState> = []
            for name in text.split(separator: ",") {
                guard let state = ListedState(rawValue: String(name)) else {
                    throw .badRequest("state is one of \(ListedState.allCases.map(\.rawValue).joined(separator: ", ")), not \(name)")
                }
                states.insert(state)
            }
            listing.states = states
        }
        listing.purchasedFrom = try day(request, "from", end: false)
        listing.purchasedBefore = try day(request, "to", end: true)
        if let from = listing.purchasedFrom, let before = listing.purchasedBefore, before <= from {
            throw .badRequest("to must not be before from")
        }
        if let text = request.queryValue("after"), !text.isEmpty {
            guard let cursor = TransactionListing.Cursor(text) else { throw .badRequest("after is the next of the previous page, not \(text)") }
            listing.after = cursor
            guard listing.cursorValue() != nil else { throw .badRequest("after \(text) is not a page of an order by \(listing.sort.rawValue)") }
        }
        if let text = request.queryValue("page"), !text.isEmpty {
            guard let number = Int(text), number >= 1, number <= 10_000_000 else { throw .badRequest("page is a page number from 1, not \(text)") }
            guard listing.after == nil else { throw .badRequest("give after or page, not both") }
            listing.skip = (number - 1) * listing.limit
        }
        return listing
    }

    /// A day filter: `2026-01-31` (UTC, inclusive) or milliseconds since 1970.
    private static func day(_ request: HTTPRequest, _ name: String, end: Bool) throws(APIError) -> Date? {
        guard let text = request.queryValue(name), !text.isEmpty else { return nil }
        guard let date = TransactionListing.day(text, end: end) else {
            throw .badRequest("\(name) is a day like 2026-01-31 or milliseconds since 1970, not \(text)")
        }
        return date
    }

    /// A page of transactions with the renewal records of its subscriptions and the store's time.
    private func page(_ transactions: [LedgerTransaction], next: TransactionListing.Cursor?, now: Date) async throws -> HTTPResponse {
        var subscriptions: [String: SubscriptionRecord] = [:]
        for originalID in Set(transactions.filter { $0.productKind == .autoRenewable }.map(\.originalID)) {
            if let record = try await store.subscriptionRecord(originalTransactionID: originalID) { subscriptions[String(originalID)] = record }
        }
        var rows: [String: TransactionRow] = [:]
        for transaction in transactions {
            rows[String(transaction.id)] = TransactionRow(transaction, subscription: subscriptions[String(transaction.originalID)], now: now)
        }
        return try Self.json(TransactionsBody(transactions: transactions, next: next?.description, subscriptions: subscriptions, now: now, rows: rows))
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
