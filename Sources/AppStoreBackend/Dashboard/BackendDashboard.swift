import AppStoreModels
import Foundation
import HTTPService

/// The backend's dashboard (`/dashboard`): the subscription figures of docs/analytics.md as a page
/// for people, drawn on the server (SVG, no script, no CDN), readable at phone width.
///
/// It is behind the backend's keys like `/v1`: a sign-in form takes a key (from
/// `storekit backend key create`) and opens a session: a random id, kept by the backend as a digest
/// with its key and an expiry, which the browser holds in a cookie only this server's dashboard gets
/// (`HttpOnly`, `SameSite=Strict`, path `/dashboard`, a name carrying the port, since cookies are not
/// bound to ports). The key itself never goes into a cookie; signing out ends the session, and
/// revoking the key ends its sessions. The forms carry the server's form token, so a page of another
/// site cannot sign a browser in or out.
struct BackendDashboard: Sendable {
    let service: BackendService

    /// How long a session lasts.
    static let sessionLifetime: TimeInterval = 12 * 3_600

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
            guard await dashboard.signedIn(request) else { return Self.page(dashboard.loginPage(problem: nil)) }
            return await dashboard.overviewPage(request)
        }
        router.on("POST", "/dashboard/login") { request, _ in
            let key = FormBody(request.body)["key"] ?? ""
            guard !key.isEmpty, (try? await dashboard.service.storage.hasKey(hash: ServiceKeys.digest(key))) == true else {
                return Self.page(dashboard.loginPage(problem: "That is not one of this backend's keys."), status: 401)
            }
            var generator = SystemRandomNumberGenerator()
            let session = ServiceKeys.make(using: &generator)
            let expires = dashboard.service.ledger.now().addingTimeInterval(Self.sessionLifetime)
            do {
                try await dashboard.service.storage.openSession(hash: ServiceKeys.digest(session), keyHash: ServiceKeys.digest(key), expires: expires)
            } catch {
                return Self.page(dashboard.loginPage(problem: "The backend could not open a session: its database did not answer."), status: 503)
            }
            return HTTPResponse(status: 303, headers: [
                ("Location", "/dashboard"), ("Cache-Control", "no-store"),
                ("Set-Cookie", "\(Self.cookieName(for: request))=\(Self.cookieValue(session)); Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=\(Int(Self.sessionLifetime))"),
            ])
        }
        router.on("POST", "/dashboard/logout") { request, _ in
            if let session = Self.cookie(in: request) { try? await dashboard.service.storage.endSession(hash: ServiceKeys.digest(session)) }
            return HTTPResponse(status: 303, headers: [
                ("Location", "/dashboard"), ("Cache-Control", "no-store"),
                ("Set-Cookie", "\(Self.cookieName(for: request))=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0"),
            ])
        }
    }

    /// Whether the request's cookie names an open session (not expired, its key not revoked).
    func signedIn(_ request: HTTPRequest) async -> Bool {
        guard let session = Self.cookie(in: request) else { return false }
        return (try? await service.storage.hasSession(hash: ServiceKeys.digest(session), now: service.ledger.now())) == true
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

    func overviewPage(_ request: HTTPRequest) async -> HTTPResponse {
        var problem: String?
        var range: (from: CalendarDay, to: CalendarDay)?
        if request.queryValue("from") != nil || request.queryValue("to") != nil {
            do { range = try BackendService.dayRange(of: request) } catch { problem = error.description }
        }
        let metrics: MetricsReport
        let cohorts: CohortReport
        do {
            if range == nil {
                // The last days up to the newest notification.
                let latest = try await service.storage.latestNotificationDate().map { CalendarDay(milliseconds: AppStoreJSON.milliseconds(from: $0)) }
                let last = latest ?? CalendarDay(milliseconds: AppStoreJSON.milliseconds(from: service.ledger.now()))
                range = (last.adding(days: 1 - Self.defaultDays), last)
            }
            let (from, to) = range!
            guard to.number - from.number < MetricsQuery.longestRange else { throw BackendError.badRequest("show at most \(MetricsQuery.longestRange) days at once") }
            metrics = try await service.storage.metrics(MetricsQuery(from: from, to: to))
            cohorts = try await service.storage.cohorts(from: from.firstOfMonth.firstOfMonth(adding: -11), to: to)
        } catch {
            return Self.page(Self.frame.fill(["title": "Subscriptions — OpenStoreKit", "main": Self.problemMarkup("\(error)")]), status: 400)
        }
        let (from, to) = range!
        var asOf = ""
        if let date = metrics.asOf { asOf = HTML.escape(", figures as of \(date.formatted(.iso8601))") }
        let main = Self.overview.fill([
            "from": from.description, "to": to.description,
            "problem": problem.map(Self.problemMarkup) ?? "",
            "last-day": HTML.escape(metrics.days.last?.day.description ?? to.description),
            "figures": Self.figures(metrics),
            "charts": Self.charts(metrics),
            "cohorts": Self.cohortTable(cohorts),
        ])
        let actions = #"<form method="post" action="/dashboard/logout"><input type="hidden" name="form_token" value="\#(HTML.escape(service.formToken))"><button type="submit">Sign out</button></form>"#
        return Self.page(Self.frame.fill(["title": "Subscriptions — OpenStoreKit", "as-of": asOf, "header-actions": actions, "main": main]))
    }

    static func problemMarkup(_ message: String) -> String {
        var html = HTML()
        html.raw(#"<p class="card problem" role="alert">"#)
        html.add(message)
        html.raw("</p>")
        return html.text
    }

    /// The last day's figures and the range's sums, each marked with its API name for checks.
    static func figures(_ report: MetricsReport) -> String {
        guard let last = report.days.last else { return #"<li><span class="name">Notifications</span> <span class="value">none recorded yet</span></li>"# }
        func sum(_ value: (DailyMetrics) -> Int64) -> Int64 { report.days.reduce(0) { $0 + value($1) } }
        var items: [(name: String, label: String, value: String)] = [
            ("active_subscriptions", "Active subscriptions", grouped(last.activeSubscriptions)),
            ("trials", "In a free trial", grouped(last.freeTrials)),
            ("in_grace_period", "In a grace period", grouped(last.gracePeriod)),
        ]
        for (currency, micros) in last.mrrMicros.sorted(by: { $0.key < $1.key }) {
            items.append(("mrr.\(currency)", "MRR, \(currency)", Money.text(micros: micros)))
        }
        items += [
            ("new_subscriptions", "New in these days", grouped(sum(\.newSubscriptions))),
            ("trial_conversions", "Trials converted", grouped(sum(\.trialConversions))),
            ("renewals", "Renewals", grouped(sum(\.renewals))),
            ("churned_voluntary", "Churned, cancelled", grouped(sum(\.churnedVoluntary))),
            ("churned_involuntary", "Churned, billing", grouped(sum(\.churnedInvoluntary))),
            ("refunds", "Refunds", grouped(sum(\.refunds))),
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

    static func charts(_ report: MetricsReport) -> String {
        let days = report.days
        guard !days.isEmpty else { return "" }
        let labels = days.map(\.day)
        let count = { (value: Double) in grouped(Int64(value.rounded())) }
        var charts: [DashboardChart] = []
        for currency in Set(days.flatMap(\.mrrMicros.keys)).sorted() {
            charts.append(DashboardChart(id: "mrr-\(currency.lowercased())", title: "MRR, \(currency)", style: .lines, labels: labels,
                                         series: [.init(name: "MRR (\(currency))", values: days.map { Double($0.mrrMicros[currency] ?? 0) / 1_000_000 })],
                                         format: { Money.text(micros: Int64(($0 * 1_000_000).rounded())) }))
        }
        charts.append(DashboardChart(id: "active", title: "Active subscriptions", style: .lines, labels: labels, series: [
            .init(name: "Active", values: days.map { Double($0.activeSubscriptions) }),
            .init(name: "In a free trial", values: days.map { Double($0.freeTrials) }),
            .init(name: "In a grace period", values: days.map { Double($0.gracePeriod) }),
        ], format: count))
        // Flows, summed by week (from the first day shown), so a day's spike does not hide the trend.
        let weeks = stride(from: 0, to: days.count, by: 7).map { Array(days[$0..<min($0 + 7, days.count)]) }
        func weekly(_ value: (DailyMetrics) -> Int64) -> [Double] { weeks.map { Double($0.reduce(0) { $0 + value($1) }) } }
        let weekLabels = weeks.map { $0[0].day }
        charts.append(DashboardChart(id: "trials", title: "Trials and conversions, by week", style: .bars, labels: weekLabels, series: [
            .init(name: "Trials started", values: weekly(\.trialsStarted)),
            .init(name: "Converted to paid", values: weekly(\.trialConversions)),
        ], format: count))
        charts.append(DashboardChart(id: "churn", title: "Churn, by week", style: .bars, labels: weekLabels, series: [
            .init(name: "Cancelled (voluntary)", values: weekly(\.churnedVoluntary)),
            .init(name: "Billing (involuntary)", values: weekly(\.churnedInvoluntary)),
            .init(name: "Reactivated", values: weekly(\.reactivations)),
        ], format: count))
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

    /// A shade of blue for a share from 0 to 1: from near white to a middle blue, light enough at its
    /// darkest (relative luminance 0.27) for the dark text on it to keep a contrast above 5.5:1.
    /// A share from 0 to 1 as a percentage for CSS, to a tenth ("66.7%").
    static func shareText(_ share: Double) -> String {
        String(format: "%.1f%%", max(0, min(1, share)) * 100)
    }
}
