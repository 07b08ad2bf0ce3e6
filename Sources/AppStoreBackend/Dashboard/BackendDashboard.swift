import AppStoreModels
import Foundation
import HTTPService

/// The backend's dashboard (`/dashboard`): the subscription figures of docs/analytics.md as a page
/// for people, drawn on the server (SVG, no script, no CDN), readable at phone width.
///
/// It is behind the backend's keys like `/v1`: a sign-in form takes a key (from
/// `storekit backend key create`) and opens a session of two random halves, kept by the backend only
/// as a digest of both with its key and an expiry in real time: one half in a cookie (`HttpOnly`,
/// `SameSite=Strict`, path `/dashboard`), the other (the page secret) in the addresses of the
/// dashboard's own links and forms. Cookies ignore ports, so every other server on 127.0.0.1 may
/// receive the cookie; it never sees this server's addresses (another port is another origin, and
/// the pages send no referrer to other origins), so the cookie alone opens nothing: every page, CSV
/// and sign-out needs both halves. The key itself never goes into a cookie; signing out ends the
/// session, and revoking the key ends its sessions. The sign-in form carries the server's form token,
/// so a page of another site cannot sign a browser in.
struct BackendDashboard: Sendable {
    let service: BackendService

    /// How long a session lasts, in real time (``BackendService/sessionClock``).
    static let sessionLifetime: TimeInterval = 12 * 3_600
    /// The query parameter (and form field) that carries a session's page secret.
    static let sessionField = "session"

    /// The session cookie's name for the port the request came to: another local server's pages
    /// never receive a cookie of this one by name.
    static func cookieName(for request: HTTPRequest) -> String {
        "osk_backend_session_" + HostCheck.port(of: request)
    }
    static let frame = PageTemplate(PackageResources.frame_html)
    static let login = PageTemplate(PackageResources.login_html)
    static let overview = PageTemplate(PackageResources.overview_html)
    /// How many days the dashboard shows when no range is asked for.
    static let defaultDays: Int64 = 365

    func register(on router: inout Router) {
        let dashboard = self
        router.on("GET", "/dashboard/assets/dashboard.css") { _, _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/css; charset=utf-8"), ("Cache-Control", "no-cache")],
                         body: Data(PackageResources.dashboard_css))
        }
        router.on("GET", "/dashboard") { request, _ in
            guard let session = await dashboard.signedIn(request) else { return Self.page(dashboard.loginPage(problem: nil)) }
            return await dashboard.overviewPage(request, session: session)
        }
        router.on("GET", "/dashboard/customers") { request, _ in
            guard let session = await dashboard.signedIn(request) else { return Self.page(dashboard.loginPage(problem: nil), status: 401) }
            return await dashboard.customerPage(request, session: session)
        }
        // Every table as CSV, for the days the page shows (signed in, like the page).
        router.on("GET", "/dashboard/export/{file}") { request, context in
            guard await dashboard.signedIn(request) != nil else { return Self.page(dashboard.loginPage(problem: nil), status: 401) }
            return await dashboard.export(context["file"], request)
        }
        router.on("POST", "/dashboard/login") { request, _ in
            let key = FormBody(request.body)["key"] ?? ""
            guard !key.isEmpty, (try? await dashboard.service.storage.hasKey(hash: ServiceKeys.digest(key))) == true else {
                return Self.page(dashboard.loginPage(problem: "That is not one of this backend's keys."), status: 401)
            }
            let (cookie, pageSecret) = (FormToken.make(), FormToken.make())
            let expires = dashboard.service.sessionClock().addingTimeInterval(Self.sessionLifetime)
            do {
                try await dashboard.service.storage.openSession(hash: Self.sessionHash(cookie: cookie, page: pageSecret), keyHash: ServiceKeys.digest(key),
                                                                expires: expires)
            } catch {
                return Self.page(dashboard.loginPage(problem: "The backend could not open a session: its database did not answer."), status: 503)
            }
            return HTTPResponse(status: 303, headers: [
                ("Location", "/dashboard?\(Self.sessionField)=\(pageSecret)"), ("Cache-Control", "no-store"), ("Referrer-Policy", "same-origin"),
                ("Set-Cookie", "\(Self.cookieName(for: request))=\(cookie); Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=\(Int(Self.sessionLifetime))"),
            ])
        }
        router.on("POST", "/dashboard/logout") { request, _ in
            if let cookie = Self.cookie(in: request), let page = FormBody(request.body)[Self.sessionField] {
                try? await dashboard.service.storage.endSession(hash: Self.sessionHash(cookie: cookie, page: page))
            }
            return HTTPResponse(status: 303, headers: [
                ("Location", "/dashboard"), ("Cache-Control", "no-store"),
                ("Set-Cookie", "\(Self.cookieName(for: request))=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0"),
            ])
        }
    }

    /// The page secret of the open session (not expired in real time, its key not revoked) that the
    /// request's cookie and its `session` parameter name together; `nil` when either is missing or
    /// they name none (a cookie replayed by another local server, which never sees the secret).
    func signedIn(_ request: HTTPRequest) async -> String? {
        guard let cookie = Self.cookie(in: request), let page = request.queryValue(Self.sessionField), !page.isEmpty else { return nil }
        let open = (try? await service.storage.hasSession(hash: Self.sessionHash(cookie: cookie, page: page), now: service.sessionClock())) == true
        return open ? page : nil
    }

    /// What the backend keeps of a session: a digest of both halves.
    static func sessionHash(cookie: String, page: String) -> String { ServiceKeys.digest(cookie + "." + page) }

    /// The page secret as a hidden form field, for the dashboard's own forms.
    static func sessionInput(_ session: String) -> String {
        #"<input type="hidden" name="\#(sessionField)" value="\#(HTML.escape(session))">"#
    }

    /// The header's links: to the other page, and signing out (with the page secret).
    func headerActions(_ session: String, other: (path: String, label: String)) -> String {
        let secret = HTML.escape(session)
        return #"<a href="\#(other.path)?\#(Self.sessionField)=\#(secret)">\#(other.label)</a> <form method="post" action="/dashboard/logout"><input type="hidden" name="form_token" value="\#(HTML.escape(service.formToken))">\#(Self.sessionInput(session))<button type="submit">Sign out</button></form>"#
    }

    /// The session id in the dashboard's cookie for this port, if the request carries one.
    static func cookie(in request: HTTPRequest) -> String? {
        let name = cookieName(for: request)
        let header = request.headers.first { $0.key.lowercased() == "cookie" }?.value ?? ""
        for pair in header.split(separator: ";") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == name { return String(parts[1]).removingPercentEncoding }
        }
        return nil
    }

    /// A session id as a cookie value: percent-encoded beyond letters, digits and `-._~`.
    static func cookieValue(_ key: String) -> String {
        key.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? ""
    }

    static func page(_ html: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: [
            ("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
            // Never inside another site's frame (a sign-in form under someone else's page).
            ("Content-Security-Policy", "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"),
            // same-origin, not no-referrer: with no-referrer the browser sends "Origin: null" with its forms.
            ("X-Frame-Options", "DENY"), ("Referrer-Policy", "same-origin"),
        ], body: Data(html.utf8))
    }

    func loginPage(problem: String?) -> String {
        let main = Self.login.fill(["form-token": HTML.escape(service.formToken), "problem": problem.map(Self.problemMarkup) ?? ""])
        return Self.frame.fill(["title": "Sign in — subscriptions — OpenStoreKit", "main": main])
    }

    /// How the charts group days: by day, week or month; `auto` picks by the range's length.
    enum Grouping: String, CaseIterable {
        case auto, day, week, month

        /// The grouping a range of `days` gets: days up to three months, weeks up to a year, months beyond.
        func resolved(days: Int64) -> Grouping {
            guard self == .auto else { return self }
            return days <= 92 ? .day : days <= 366 ? .week : .month
        }
    }

    /// The product and group a request filters the figures by (`product`, `group`), each `nil` for all.
    struct Filter: Hashable {
        var productID: String?
        var groupID: String?

        init(_ request: HTTPRequest) {
            productID = request.queryValue("product").flatMap { $0.isEmpty ? nil : $0 }
            groupID = request.queryValue("group_id").flatMap { $0.isEmpty ? nil : $0 }
        }

        /// The filter's part of a page's address (`&amp;product=…`), escaped for HTML.
        var query: String {
            [("product", productID), ("group_id", groupID)].compactMap { name, value in
                value.map { "&amp;\(name)=\(HTML.escape($0.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))) ?? $0))" }
            }.joined()
        }

        func query(from: CalendarDay, to: CalendarDay) -> MetricsQuery { MetricsQuery(from: from, to: to, productID: productID, groupID: groupID) }
    }

    /// The days a request asks for, or the default, and what was wrong with what it asked for, if
    /// anything: the page then shows the default with the problem. The default is the last year up to
    /// the newest notification, starting no earlier than the month of the first subscriber (of the
    /// filtered products): a store younger than a year shows no empty months before its first sale.
    func range(of request: HTTPRequest) async throws -> (from: CalendarDay, to: CalendarDay, problem: String?) {
        var problem: String?
        if request.queryValue("from") != nil || request.queryValue("to") != nil {
            do {
                let (from, to) = try BackendService.dayRange(of: request)
                if to.number - from.number < MetricsQuery.longestRange { return (from, to, nil) }
                problem = "Show at most \(MetricsQuery.longestRange) days at once; these are the usual days instead."
            } catch {
                problem = "\(error.description) These are the usual days instead."
            }
        }
        let last = try await latestDay()
        return (try await defaultStart(last: last, filter: Filter(request)), last, problem)
    }

    /// The first day of the default range ending on `last`: a year back, or the first of the month
    /// of the first day with a subscriber (active, in a trial, or new) if that is later.
    func defaultStart(last: CalendarDay, filter: Filter) async throws -> CalendarDay {
        let yearBack = last.adding(days: 1 - Self.defaultDays)
        let report = try await service.storage.metrics(filter.query(from: yearBack, to: last))
        guard let first = report.days.first(where: { $0.activeSubscriptions > 0 || $0.freeTrials > 0 || $0.newSubscriptions > 0 || $0.trialsStarted > 0 })
        else { return yearBack }
        return max(yearBack, first.day.firstOfMonth)
    }

    /// The day of the newest notification (or today, before any).
    func latestDay() async throws -> CalendarDay {
        let calendar = try ReportingCalendar(timeZone: try await service.storage.metricsTimeZone())
        let latest = try await service.storage.latestNotificationDate().map { calendar.day(AppStoreJSON.milliseconds(from: $0)) }
        return latest ?? calendar.day(AppStoreJSON.milliseconds(from: service.ledger.now()))
    }

    func overviewPage(_ request: HTTPRequest, session: String) async -> HTTPResponse {
        let metrics: MetricsReport
        let cohorts: CohortReport
        let retention: [RetentionFigure]
        let range: (from: CalendarDay, to: CalendarDay, problem: String?)
        let latest: CalendarDay
        let grouping = Grouping(rawValue: request.queryValue("group") ?? "auto") ?? .auto
        let filter = Filter(request)
        let scopes: [MetricScope]
        do {
            range = try await self.range(of: request)
            latest = try await latestDay()
            scopes = try await service.storage.metricScopes()
            metrics = try await service.storage.metrics(filter.query(from: range.from, to: range.to))
            cohorts = try await service.storage.cohorts(from: range.from.firstOfMonth.firstOfMonth(adding: -11), to: range.to)
            retention = try await service.storage.retentionFigures()
        } catch {
            return Self.page(Self.frame.fill(["title": "Subscriptions — OpenStoreKit", "main": Self.problemMarkup("\(error)")]), status: 503)
        }
        let (from, to) = (range.from, range.to)
        let chosen = grouping.resolved(days: to.number - from.number + 1)
        var asOf = ""
        if let date = metrics.asOf { asOf = HTML.escape(", figures as of \(date.formatted(.iso8601))") }
        let query = "from=\(from)&amp;to=\(to)\(filter.query)&amp;\(Self.sessionField)=\(HTML.escape(session))"
        let main = Self.overview.fill([
            "from": from.description, "to": to.description,
            "filters": Self.filterFields(scopes, filter: filter),
            "presets": Self.presets(latest: latest, grouping: grouping, session: session, filter: filter),
            "session-field": Self.sessionInput(session),
            "groupings": Grouping.allCases.map { option in
                let label = option == .auto ? "By the range (now by \(chosen.rawValue))" : "By \(option.rawValue)"
                return #"<option value="\#(option.rawValue)"\#(option == grouping ? " selected" : "")>\#(label)</option>"#
            }.joined(),
            "problem": range.problem.map(Self.problemMarkup) ?? "",
            "last-day": HTML.escape(metrics.days.last?.day.description ?? to.description),
            "figures": Self.figures(metrics, reporting: service.reporting),
            "rates": Self.rates(metrics, reporting: service.reporting),
            "money": Self.money(metrics, commission: service.commission, reporting: service.reporting),
            "commission": service.commission == .standard ? "30%, or 15% after a subscriber's first year of paid service"
                : "15%, the Small Business Program's",
            "charts": Self.charts(metrics, grouping: chosen, commission: service.commission, reporting: service.reporting, automatic: grouping == .auto),
            "scope": HTML.escape(filter.productID.map { "Only \($0)" } ?? filter.groupID.map { "Only subscription group \($0)" } ?? "Every product"),
            "cohorts": Self.cohortTable(cohorts),
            "retention": Self.retentionTable(retention),
            "time-zone": HTML.escape(metrics.timeZone),
            "daily-csv": "/dashboard/export/daily.csv?\(query)",
            "cohorts-csv": "/dashboard/export/cohorts.csv?\(query)",
            "money-csv": "/dashboard/export/money.csv?\(query)",
        ])
        let actions = headerActions(session, other: ("/dashboard/customers", "Customers"))
        return Self.page(Self.frame.fill(["title": "Subscriptions — OpenStoreKit", "as-of": asOf, "header-actions": actions, "main": main]),
                         status: range.problem == nil ? 200 : 400)
    }

    /// Links to the usual ranges, each ending on the newest notification's day.
    static func presets(latest: CalendarDay, grouping: Grouping, session: String, filter: Filter? = nil) -> String {
        let ranges: [(String, Int64)] = [("Last 7 days", 7), ("Last 30 days", 30), ("Last 90 days", 90), ("Last 12 months", 365)]
        return ranges.map { label, days in
            let group = grouping == .auto ? "" : "&amp;group=\(grouping.rawValue)"
            return #"<li><a href="/dashboard?from=\#(latest.adding(days: 1 - days))&amp;to=\#(latest)\#(group)\#(filter?.query ?? "")&amp;\#(sessionField)=\#(HTML.escape(session))">\#(label)</a></li>"#
        }.joined()
    }

    /// The product and group filters: every product the figures know of, under its group.
    static func filterFields(_ scopes: [MetricScope], filter: Filter) -> String {
        var html = HTML()
        html.raw(#"<div class="field"><label for="product">Product</label><select id="product" name="product"><option value="">All products</option>"#)
        for scope in scopes {
            html.raw(#"<option value=""#)
            html.add(scope.productID)
            html.raw(scope.productID == filter.productID ? #"" selected>"# : #"">"#)
            html.add(scope.productID)
            html.raw("</option>")
        }
        html.raw(#"</select></div><div class="field"><label for="group_id">Subscription group</label><select id="group_id" name="group_id"><option value="">All groups</option>"#)
        var seen: Set<String> = []
        for scope in scopes where seen.insert(scope.groupID).inserted {
            html.raw(#"<option value=""#)
            html.add(scope.groupID)
            html.raw(scope.groupID == filter.groupID ? #"" selected>"# : #"">"#)
            html.add(scope.groupID)
            html.raw("</option>")
        }
        html.raw("</select></div>")
        return html.text
    }

    /// `daily.csv` (every figure of every day shown), `money.csv` (the money table) or `cohorts.csv` (the
    /// cohort table), as the page shows them.
    func export(_ file: String, _ request: HTTPRequest) async -> HTTPResponse {
        do {
            let range = try await self.range(of: request)
            if let problem = range.problem { return HTTPResponse(status: 400, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(problem.utf8)) }
            let csv: String
            switch file {
            case "daily.csv":
                csv = Self.dailyCSV(try await service.storage.metrics(Filter(request).query(from: range.from, to: range.to)), commission: service.commission)
            case "money.csv":
                let rows = Self.moneyRows(try await service.storage.metrics(Filter(request).query(from: range.from, to: range.to)), commission: service.commission,
                                          reporting: service.reporting)
                csv = CSV.row(["currency"] + (rows.first?.cells.map(\.name) ?? [])) + "\r\n"
                    + rows.map { CSV.row([$0.currency] + $0.cells.map(\.value)) + "\r\n" }.joined()
            case "cohorts.csv":
                csv = Self.cohortsCSV(try await service.storage.cohorts(from: range.from.firstOfMonth.firstOfMonth(adding: -11), to: range.to))
            default:
                return HTTPResponse(status: 404, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data("no export \(file): daily.csv, money.csv or cohorts.csv".utf8))
            }
            return HTTPResponse(status: 200, headers: [
                ("Content-Type", "text/csv; charset=utf-8"), ("Cache-Control", "no-store"),
                ("Content-Disposition", #"attachment; filename="subscriptions-\#(range.from)-\#(range.to)-\#(file)""#),
            ], body: Data(csv.utf8))
        } catch {
            return HTTPResponse(status: 503, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data("\(error)".utf8))
        }
    }

    /// One row per day: every figure the API answers (``MetricsReport/dailyCSV(_:)``).
    static func dailyCSV(_ report: MetricsReport, commission: CommissionProgram = .standard) -> String { report.dailyCSV(commission) }

    /// One row per cohort month: its size, then how many were retained and the share, month by month.
    static func cohortsCSV(_ report: CohortReport) -> String {
        let longest = report.cohorts.map(\.retained.count).max() ?? 0
        var lines = [(["month", "subscriptions"] + (0..<longest).flatMap { ["retained_month_\($0 + 1)", "retention_percent_month_\($0 + 1)"] })
            .map(CSV.cell).joined(separator: ",")]
        for cohort in report.cohorts {
            var fields = [cohort.month.monthDescription, String(cohort.subscriptions)]
            for index in 0..<longest {
                fields += index < cohort.retained.count ? [String(cohort.retained[index]), String(cohort.retentionPercent[index])] : ["", ""]
            }
            lines.append(CSV.row(fields))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// The range's rates (``RateFigures``), each with its definition beside it, and ARR (MRR × 12) on the last day.
    static func rates(_ report: MetricsReport, reporting: ReportingCurrency? = nil) -> String {
        guard let last = report.days.last else { return "" }
        let rates = report.rates
        var items: [(String, String, String, String)] = [
            ("churn_rate", "Churn rate", RateFigures.percent(rates.churn),
             rates.churnPeriods.isEmpty ? "Shown for 30 days or more: " + RateFigures.churnDefinition : RateFigures.churnDefinition),
            ("trial_conversion_rate", "Trial conversion rate", RateFigures.percent(rates.trialConversion),
             "\(rates.trialsConverted) of \(rates.trialsEnded) ended, \(rates.trialsPending) pending: " + RateFigures.trialConversionDefinition),
            ("refund_rate", "Refund rate", RateFigures.percent(rates.refund),
             "\(rates.paidTransactionsRefunded) of \(rates.paidTransactions): " + RateFigures.refundDefinition),
        ]
        if let total = Self.reportingTotal(last.mrrMicros, reporting) {
            items.append(("arr.all", "ARR, all in \(total.currency)", Money.text(units: Money.rounded(total.amount) * 12),
                          "twelve times the last day's MRR, every currency at the reporting rates"))
        }
        for (currency, micros) in last.mrrMicros.sorted(by: { $0.key < $1.key }) {
            // Twelve times the MRR shown (in whole cents), so the two figures agree as a reader checks them.
            items.append(("arr.\(currency)", "ARR, \(currency)", Money.text(units: Money.units(micros: micros) * 12), "twelve times the last day's MRR"))
        }
        var html = HTML()
        for (name, label, value, definition) in items {
            html.raw(#"<li data-figure=""#)
            html.add(name)
            html.raw(#""><span class="name">"#)
            html.add(label)
            html.raw(#"</span> <span class="value">"#)
            html.add(value)
            html.raw(#"</span> <span class="definition">"#)
            html.add(definition)
            html.raw("</span></li>\n")
        }
        return html.text
    }

    /// Revenue, proceeds and refunds over the range, and MRR from the day before it to its last day
    /// with every movement between: one row per currency, each cell named as the API names it, each
    /// rounded once from the exact sum (the movements so that they add up to the change shown).
    static func moneyRows(_ report: MetricsReport, commission: CommissionProgram,
                          reporting: ReportingCurrency? = nil) -> [(currency: String, cells: [(name: String, value: String)])] {
        guard let last = report.days.last else { return [] }
        var sums: [String: [String: Decimal]] = [:]
        var movements: [MRRMovement: [String: Decimal]] = [:]
        for day in report.days {
            let exact = day.exactMoney(commission)
            for name in ["revenue", "proceeds", "refunded", "reversed", "prorated_refunded"] {
                for (currency, amount) in exact[name] ?? [:] { sums[name, default: [:]][currency, default: 0] += amount }
            }
            for (movement, byCurrency) in day.mrrMovementMicros {
                for (currency, micros) in byCurrency { movements[movement, default: [:]][currency, default: 0] += Money.exact(micros: micros) }
            }
        }
        let before = report.mrrBeforeMicros.mapValues(Money.exact(micros:))
        let after = last.mrrMicros.mapValues(Money.exact(micros:))
        let currencies = Set(sums.values.flatMap(\.keys)).union(after.keys).union(before.keys).union(movements.values.flatMap(\.keys)).sorted()
        func row(_ amounts: (String) -> Decimal, start: Decimal, moved: (MRRMovement) -> Decimal, end: Decimal) -> [(name: String, value: String)] {
            var cells = ["revenue", "proceeds", "refunded", "reversed", "prorated_refunded"].map { ($0, Money.text(units: amounts($0))) }
            cells.append(("mrr_before", Money.text(units: start)))
            let shown = Money.allocate(from: start, movementOrder.map(moved))
            cells += zip(movementOrder, shown).map { ("mrr_movement.\($0.rawValue)", Money.text(units: $1)) }
            cells.append(("mrr_after", Money.text(units: end)))
            return cells
        }
        var rows = currencies.map { currency in
            (currency: currency, cells: row({ sums[$0]?[currency] ?? 0 }, start: before[currency] ?? 0, moved: { movements[$0]?[currency] ?? 0 },
                                            end: after[currency] ?? 0))
        }
        // Every currency added up in the reporting one, at its rates (when every currency has one).
        if let reporting, (try? reporting.check(Set(currencies))) != nil {
            rows.append((currency: "all in \(reporting.currency)", cells: row({ reporting.exactTotal(sums[$0] ?? [:]) }, start: reporting.exactTotal(before),
                                                                             moved: { reporting.exactTotal(movements[$0] ?? [:]) },
                                                                             end: reporting.exactTotal(after))))
        }
        return rows
    }

    /// The movements as the page lists them: increases, then decreases.
    static let movementOrder: [MRRMovement] = [.new, .expansion, .reactivation, .contraction, .churned]

    /// The money table (``moneyRows(_:commission:)``) as HTML.
    static func money(_ report: MetricsReport, commission: CommissionProgram, reporting: ReportingCurrency? = nil) -> String {
        let rows = moneyRows(report, commission: commission, reporting: reporting)
        guard !rows.isEmpty else { return #"<p>No money in these days.</p>"# }
        let order = movementOrder
        var html = HTML()
        html.raw(#"<div class="scroll" role="region" aria-label="Money by currency, scrolls sideways" tabindex="0"><table class="money"><thead><tr><th scope="col">Currency</th><th scope="col">Revenue</th><th scope="col">Proceeds</th><th scope="col">Refunded</th><th scope="col">Reversed</th><th scope="col">Prorated refunds</th><th scope="col">MRR before</th>"#)
        for movement in order { html.raw(#"<th scope="col">\#(movement.rawValue.prefix(1).uppercased() + movement.rawValue.dropFirst())</th>"#) }
        html.raw(#"<th scope="col">MRR after</th></tr></thead><tbody>"#)
        for (currency, cells) in rows {
            html.raw(#"<tr data-currency=""#)
            html.add(currency)
            html.raw(#""><th scope="row">"#)
            html.add(currency)
            html.raw("</th>")
            for (name, value) in cells {
                html.raw(#"<td data-money=""#)
                html.add(name)
                html.raw(#"">"#)
                html.add(value)
                html.raw("</td>")
            }
            html.raw("</tr>")
        }
        html.raw("</tbody></table></div>")
        if let reporting, rows.last?.currency.hasPrefix("all in ") == true {
            html.raw(#"<p class="muted" data-rates>"#)
            html.add("All in \(reporting.currency) adds every currency at " + reporting.rates.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                     + " (backend serve --currency --rates).")
            html.raw("</p>")
        }
        return html.text
    }

    static func problemMarkup(_ message: String) -> String {
        var html = HTML()
        html.raw(#"<p class="card problem" role="alert">"#)
        html.add(message)
        html.raw("</p>")
        return html.text
    }

    /// The last day's figures and the range's sums, each marked with its API name for checks.
    /// MRR of every currency in the reporting one, at its rates, when it has a rate for each.
    static func reportingTotal(_ micros: [String: Int64], _ reporting: ReportingCurrency?) -> (currency: String, amount: Decimal)? {
        guard let reporting, !micros.isEmpty, (try? reporting.check(Set(micros.keys))) != nil else { return nil }
        return (reporting.currency, reporting.exactTotal(micros.mapValues(Money.exact(micros:))))
    }

    static func figures(_ report: MetricsReport, reporting: ReportingCurrency? = nil) -> String {
        guard let last = report.days.last else { return #"<li><span class="name">Notifications</span> <span class="value">none recorded yet</span></li>"# }
        func sum(_ value: (DailyMetrics) -> Int64) -> Int64 { report.days.reduce(0) { $0 + value($1) } }
        var items: [(name: String, label: String, value: String)] = [
            ("active_subscriptions", "Active subscriptions", grouped(last.activeSubscriptions)),
            ("trials", "In a free trial", grouped(last.freeTrials)),
            ("in_grace_period", "In a grace period", grouped(last.gracePeriod)),
        ]
        if let total = reportingTotal(last.mrrMicros, reporting) {
            items.append(("mrr.all", "MRR, all in \(total.currency)", Money.text(units: Money.rounded(total.amount))))
        }
        for (currency, micros) in last.mrrMicros.sorted(by: { $0.key < $1.key }) {
            items.append(("mrr.\(currency)", "MRR, \(currency)", Money.text(micros: micros)))
        }
        items += [
            ("new_subscriptions", "New in these days", grouped(sum(\.newSubscriptions))),
            ("trial_conversions", "Trials converted", grouped(sum(\.trialConversions))),
            ("intro_conversions", "Introductory to full price", grouped(sum(\.introductoryConversions))),
            ("trial_cancellations", "Trials cancelled", grouped(sum(\.trialCancellations))),
            ("renewals", "Renewals", grouped(sum(\.renewals))),
            ("churned_voluntary", "Churned, cancelled", grouped(sum(\.churnedVoluntary))),
            ("churned_involuntary", "Churned, billing", grouped(sum(\.churnedInvoluntary))),
            ("refund_ends", "Ended by a refund", grouped(sum(\.refundEnds))),
            ("refunds", "Refunds", grouped(sum(\.refunds))),
            ("refunds_reversed", "Refunds reversed", grouped(sum(\.refundsReversed))),
        ]
        var html = HTML()
        for item in items {
            html.raw(#"<li data-figure=""#)
            html.add(item.name)
            html.raw(#""><span class="name">"#)
            html.add(item.label)
            html.raw(#"</span> <span class="value">"#)
            html.add(item.value)
            html.raw("</span></li>\n")
        }
        return html.text
    }

    static func grouped(_ number: Int64) -> String { number.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US"))) }

    /// The charts of a range. Lines read stock figures at the end of each period of `grouping`; bars
    /// sum flows over theirs. With the grouping chosen by the range (`automatic`), bars are summed over
    /// longer periods (a week, a month) when side by side they would be thinner than 3 of the chart's 420
    /// units (about 3 px at phone width): a year's five MRR movements by week would be 1 px each.
    static func charts(_ report: MetricsReport, grouping: Grouping = .week, commission: CommissionProgram = .standard,
                       reporting: ReportingCurrency? = nil, automatic: Bool = false) -> String {
        let all = report.days
        guard !all.isEmpty else { return "" }
        // Stock figures are read at the end of each period (its last day), flows summed over it.
        func split(_ grouping: Grouping) -> [[DailyMetrics]] {
            switch grouping {
            case .day, .auto: return all.map { [$0] }
            case .week: return stride(from: 0, to: all.count, by: 7).map { Array(all[$0..<min($0 + 7, all.count)]) }
            case .month:
                return all.reduce(into: [[DailyMetrics]]()) { groups, day in
                    if let last = groups.last?.last, last.day.firstOfMonth == day.day.firstOfMonth { groups[groups.count - 1].append(day) } else { groups.append([day]) }
                }
            }
        }
        let periods = split(grouping)
        let days = periods.map { $0.last! }
        let labels = periods.map { $0[0].day }
        let stockWords = grouping == .day || grouping == .auto ? "Daily values" : "Values at the end of each \(grouping.rawValue)"
        // The bars' periods: wide enough for the most series a bar chart draws side by side (five movements).
        var barGrouping = grouping == .auto ? .day : grouping
        let plotWidth = DashboardChart.width - DashboardChart.left - DashboardChart.right
        while automatic, barGrouping != .month, plotWidth * 0.8 / Double(split(barGrouping).count * 5) - 1 < 3 {
            barGrouping = barGrouping == .day ? .week : .month
        }
        let barPeriods = split(barGrouping)
        let barLabels = barPeriods.map { $0[0].day }
        let flowWords = barGrouping == .day ? "Daily sums" : "Sums by \(barGrouping.rawValue)"
        let count = { (value: Double) in grouped(Int64(value.rounded())) }
        var charts: [DashboardChart] = []
        // Every currency in the reporting one, first, when the reporting currency has a rate for each.
        let seenCurrencies = Set(all.flatMap { $0.mrrMicros.keys }).union(all.flatMap(\.moneyFlowCurrencies))
            .union(all.flatMap { $0.mrrMovementMicros.values.flatMap(\.keys) })
        if let reporting, !seenCurrencies.isEmpty, (try? reporting.check(seenCurrencies)) != nil {
            let code = reporting.currency
            let rate = { (currency: String) in NSDecimalNumber(decimal: reporting.rates[currency] ?? 0).doubleValue }
            let moneyText = { (value: Double) in Money.text(cents: Int64((value * 100).rounded())) }
            let moneyBy = barGrouping == .day ? "by day" : "by \(barGrouping.rawValue)"
            charts.append(DashboardChart(id: "mrr-all", title: "MRR, all in \(code)", style: .lines, labels: labels,
                                         series: [.init(name: "MRR (all in \(code))", values: days.map { day in
                                             day.mrrMicros.reduce(0.0) { $0 + Double($1.value) / 1_000_000 * rate($1.key) }
                                         })], format: moneyText, covers: stockWords))
            func converted(_ amounts: (DailyMetrics) -> [String: Decimal]) -> [Double] {
                barPeriods.map { period in period.reduce(0.0) { sum, day in
                    sum + amounts(day).reduce(0.0) { $0 + NSDecimalNumber(decimal: $1.value).doubleValue * rate($1.key) }
                } }
            }
            charts.append(DashboardChart(id: "revenue-all", title: "Revenue and proceeds, all in \(code), \(moneyBy)", style: .bars, labels: barLabels, series: [
                .init(name: "Revenue", values: converted { $0.revenue }),
                .init(name: "Proceeds", values: converted { $0.proceeds(commission) }),
            ], format: moneyText, covers: flowWords))
            charts.append(DashboardChart(id: "mrr-movement-all", title: "MRR movement, all in \(code), \(moneyBy)", style: .bars, labels: barLabels,
                                         series: movementOrder.map { movement in
                .init(name: movement.rawValue.prefix(1).uppercased() + movement.rawValue.dropFirst(),
                      values: converted { ($0.mrrMovementMicros[movement] ?? [:]).mapValues(Money.exact(micros:)) })
            }, format: moneyText, covers: flowWords))
        }
        for currency in Set(days.flatMap(\.mrrMicros.keys)).sorted() {
            charts.append(DashboardChart(id: "mrr-\(currency.lowercased())", title: "MRR, \(currency)", style: .lines, labels: labels,
                                         series: [.init(name: "MRR (\(currency))", values: days.map { Double($0.mrrMicros[currency] ?? 0) / 1_000_000 })],
                                         format: { Money.text(micros: Int64(($0 * 1_000_000).rounded())) }, covers: stockWords))
        }
        // Money, summed over each period, per currency.
        func summedMoney(_ value: (DailyMetrics) -> Int64, per unit: Double) -> [Double] {
            barPeriods.map { Double($0.reduce(0) { $0 + value($1) }) / unit }
        }
        let moneyText = { (value: Double) in Money.text(cents: Int64((value * 100).rounded())) }
        let moneyBy = barGrouping == .day ? "by day" : "by \(barGrouping.rawValue)"
        let moneyCurrencies = Set(all.flatMap(\.moneyFlowCurrencies)).sorted()
        for currency in moneyCurrencies {
            charts.append(DashboardChart(id: "revenue-\(currency.lowercased())", title: "Revenue and proceeds, \(currency), \(moneyBy)", style: .bars,
                                         labels: barLabels, series: [
                .init(name: "Revenue", values: barPeriods.map { NSDecimalNumber(decimal: $0.reduce(Decimal(0)) { $0 + ($1.revenue[currency] ?? 0) }).doubleValue }),
                .init(name: "Proceeds", values: barPeriods.map { NSDecimalNumber(decimal: $0.reduce(Decimal(0)) { $0 + ($1.proceeds(commission)[currency] ?? 0) }).doubleValue }),
            ], format: moneyText, covers: flowWords))
        }
        for currency in Set(all.flatMap { $0.mrrMovementMicros.values.flatMap(\.keys) }).sorted() {
            let order: [MRRMovement] = [.new, .expansion, .reactivation, .contraction, .churned]
            charts.append(DashboardChart(id: "mrr-movement-\(currency.lowercased())", title: "MRR movement, \(currency), \(moneyBy)", style: .bars,
                                         labels: barLabels, series: order.map { movement in
                .init(name: movement.rawValue.prefix(1).uppercased() + movement.rawValue.dropFirst(),
                      values: summedMoney({ $0.mrrMovementMicros[movement]?[currency] ?? 0 }, per: 1_000_000))
            }, format: moneyText, covers: flowWords))
        }
        charts.append(DashboardChart(id: "active", title: "Active subscriptions", style: .lines, labels: labels, series: [
            .init(name: "Active", values: days.map { Double($0.activeSubscriptions) }),
            .init(name: "In a free trial", values: days.map { Double($0.freeTrials) }),
            .init(name: "In a grace period", values: days.map { Double($0.gracePeriod) }),
        ], format: count, covers: stockWords))
        // Flows, summed over each period (from the first day shown).
        func summed(_ value: (DailyMetrics) -> Int64) -> [Double] { barPeriods.map { Double($0.reduce(0) { $0 + value($1) }) } }
        let by = barGrouping == .day ? "by day" : "by \(barGrouping.rawValue)"
        charts.append(DashboardChart(id: "trials", title: "Trials and conversions, \(by)", style: .bars, labels: barLabels, series: [
            .init(name: "Trials started", values: summed(\.trialsStarted)),
            .init(name: "Converted to paid", values: summed(\.trialConversions)),
        ], format: count, covers: flowWords))
        charts.append(DashboardChart(id: "churn", title: "Churn, \(by)", style: .bars, labels: barLabels, series: [
            .init(name: "Cancelled (voluntary)", values: summed(\.churnedVoluntary)),
            .init(name: "Billing (involuntary)", values: summed(\.churnedInvoluntary)),
            .init(name: "Reactivated", values: summed(\.reactivations)),
        ], format: count, covers: flowWords))
        return charts.map(\.markup).joined(separator: "\n")
    }

    /// The cohort table as a heat map: each cell's shade follows its share, its text says it.
    static func cohortTable(_ report: CohortReport) -> String {
        guard !report.cohorts.isEmpty else { return #"<p>No subscriptions started in these months.</p>"# }
        let longest = report.cohorts.map(\.retained.count).max() ?? 0
        var html = HTML()
        html.raw(#"<div class="scroll" role="region" aria-label="Cohort table, scrolls sideways" tabindex="0"><table class="cohorts"><thead><tr><th scope="col">Started in</th><th scope="col">Subscriptions</th>"#)
        for month in 0..<longest { html.raw(#"<th scope="col">Month \#(month + 1)</th>"#) }
        html.raw("</tr></thead><tbody>")
        for cohort in report.cohorts {
            html.raw(#"<tr data-cohort=""#)
            html.add(cohort.month.monthDescription)
            html.raw(#""><th scope="row">"#)
            html.add(cohort.month.monthDescription)
            html.raw("</th><td>\(cohort.subscriptions)</td>")
            for index in 0..<longest {
                guard index < cohort.retained.count, cohort.subscriptions > 0 else { html.raw("<td></td>"); continue }
                // The share picks the cell's shade between the scheme's two heat colours (dashboard.css).
                let share = Double(cohort.retained[index]) / Double(cohort.subscriptions)
                html.raw(#"<td class="heat" style="--share: \#(Self.shareText(share))" data-retained="\#(cohort.retained[index])">\#(cohort.retentionPercent[index])%</td>"#)
            }
            html.raw("</tr>")
        }
        html.raw("</tbody></table></div>")
        return html.text
    }

    /// What each retention message the backend chose led to (``RetentionFigure``), the most shown first;
    /// "saved" is the share of customers who did not cancel.
    static func retentionTable(_ figures: [RetentionFigure]) -> String {
        guard !figures.isEmpty else {
            return #"<p>No cancellation has asked the backend yet. Rules: <code>storekit backend retention-rule add</code>; the store's real-time URL: <code>/apple/retention</code>.</p>"#
        }
        var html = HTML()
        html.raw(#"<div class="scroll" role="region" aria-label="Retention messages, scroll sideways" tabindex="0"><table class="retention"><thead><tr><th scope="col">Message</th>"#)
        for column in ["Shown", "Kept", "Switched", "Redeemed", "Cancelled", "Saved"] { html.raw(#"<th scope="col">\#(column)</th>"#) }
        html.raw("</tr></thead><tbody>")
        for figure in figures {
            let saved = figure.shown == 0 ? 0 : Double(figure.shown - figure.cancelled) / Double(figure.shown)
            html.raw(#"<tr data-message=""#)
            html.add(figure.messageIdentifier)
            html.raw(#""><th scope="row"><span class="message-name">"#)
            html.add(figure.messageName ?? "Unnamed message")
            html.raw(#"</span> <code class="message-id muted">"#)
            html.add(figure.messageIdentifier)
            html.raw("</code></th>")
            for value in [figure.shown, figure.kept, figure.switched, figure.redeemed, figure.cancelled] { html.raw("<td>\(value)</td>") }
            html.raw("<td>\(Self.shareText(saved))</td></tr>")
        }
        html.raw("</tbody></table></div>")
        return html.text
    }

    /// A shade of blue for a share from 0 to 1: from near white to a middle blue, light enough at its
    /// darkest (relative luminance 0.27) for the dark text on it to keep a contrast above 5.5:1.
    /// A share from 0 to 1 as a percentage for CSS, to a tenth ("66.7%").
    static func shareText(_ share: Double) -> String {
        String(format: "%.1f%%", max(0, min(1, share)) * 100)
    }
}
