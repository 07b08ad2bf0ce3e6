"""Checks the backend's subscription dashboard in headless Chromium: the sign-in form (a wrong key is
refused, a right one opens the page), the figures against the backend's own /v1/metrics answers,
the charts and the cohort heat map, the range form, signing out, axe-core at desktop and phone width
in light and dark, no sideways scrolling at 390 px, and the screenshots in docs/.

The money table (revenue, proceeds, refunds, MRR before and after with its movements) against the
API's days, and the customer page: found by an upper-case app account token and by an original
transaction id, its entitlements and transactions equal to the customer API's, its notifications.

The backend reports in dollars too, at RATES (GBP:1.25): the table's "all in USD" row adds the
currencies' rows at that rate.

The reporting currency converts the cards and the charts too; the default range starts at the first
subscriber's month; the product and group filters show the API's figures of one product or group;
"MRR after" is in view at 1400 px. The customer page shows money, storefront and links to the
store's pages (STORE_PAGES), and at 390 px every transaction's Expires, Refunded and Entitles
without sideways scrolling.

usage: dashboard_checks.py BASE_URL KEY SCREENSHOT_DIR CHROMIUM CHROMEDRIVER AXE_JS TOKEN ORIGINAL_TRANSACTION_ID RATES STORE_PAGES

Prints one JSON object with what it saw; exits non-zero, naming the step, when a step fails.
"""
import datetime
import http.server
import json
import os
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from decimal import Decimal

from store_pages import Browser, Failure, run_and_report


def api(base, key, path):
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


class CookieCatcher(http.server.BaseHTTPRequestHandler):
    """Another local server, on another port: what a hostile local process would run. It keeps
    every Cookie header the browser sends it (cookies ignore ports)."""
    caught = []

    def do_GET(self):
        CookieCatcher.caught.append(self.headers.get("Cookie") or "")
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<p id=caught>caught</p>")

    def log_message(self, *arguments):
        pass


def replay(base, path, cookie):
    """The hostile server's replay of a caught cookie: the status and the body it got."""
    request = urllib.request.Request(base + path, headers={"Cookie": cookie})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def grouped(number):
    return f"{number:,}"


def money(amount):
    return f"{amount:.2f}"


def unscroll(browser):
    """axe scrolls what it checks into view: the cohort table goes back to its first column."""
    browser.script("document.querySelectorAll('.scroll').forEach(e => e.scrollLeft = 0); window.scrollTo(0, 0);")


def sign_in(browser, key):
    browser.script("document.getElementById('key').value = arguments[0];"
                   "document.querySelector('form[action=\"/dashboard/login\"] button').click();", key)


def main():
    base, key, shots, chromium, chromedriver, axe_path, token, original, rates_text, store_pages = sys.argv[1:11]
    rates = {code: Decimal(rate) for code, rate in (pair.split(":") for pair in rates_text.split(","))}
    os.makedirs(shots, exist_ok=True)
    with open(axe_path, encoding="utf-8") as file:
        axe_source = file.read()
    browser = Browser(chromium, chromedriver)

    def work(run):
        seen = run.seen
        seen["axe"] = {}

        step = run.at("open the dashboard signed out: the sign-in form")
        browser.open(f"{base}/dashboard")
        browser.wait_for("#key", step)
        seen["axe"]["sign-in"] = browser.axe(axe_source)

        step = run.at("a wrong key is refused")
        sign_in(browser, "osk_not-a-key")
        alert = browser.wait_for("[role=alert]", step)
        seen["refusal"] = browser.script("return document.querySelector('[role=alert]').textContent.trim();")

        step = run.at("the right key opens the figures")
        sign_in(browser, key)
        browser.wait_for('[data-figure="active_subscriptions"]', step)
        figures = browser.script(
            "const out = {}; document.querySelectorAll('[data-figure]').forEach(e => out[e.dataset.figure] = e.querySelector('.value').textContent.trim());"
            "return out;")
        first = browser.script("return document.getElementById('from').value;")
        last = browser.script("return document.getElementById('to').value;")
        seen["range"] = [first, last]

        step = run.at("the figures equal the backend's answers")
        report = api(base, key, f"/v1/metrics?from={first}&to={last}")
        days = report["days"]
        today = days[-1]
        expected = {
            "active_subscriptions": grouped(today["active_subscriptions"]),
            "trials": grouped(today["trials"]),
            "in_grace_period": grouped(today["in_grace_period"]),
        }
        for currency, amount in today["mrr"].items():
            expected[f"mrr.{currency}"] = money(amount)
        for name in ["new_subscriptions", "trial_conversions", "intro_conversions", "trial_cancellations", "renewals", "churned_voluntary",
                     "churned_involuntary", "refund_ends", "refunds"]:
            expected[name] = grouped(sum(day[name] for day in days))
        # The range's rates as the API answers them (docs/analytics.md defines each), and ARR.
        def percent(share):
            return "—" if share is None else f"{share * 100:.1f}%"
        for name in ["churn_rate", "trial_conversion_rate", "refund_rate"]:
            expected[name] = percent(report["rates"][name]["value"])
        definitions = browser.script(
            "const out = {}; document.querySelectorAll('[data-figure]').forEach(e => { const d = e.querySelector('.definition');"
            " if (d) out[e.dataset.figure] = d.textContent.trim(); }); return out;")
        for name in ["churn_rate", "trial_conversion_rate", "refund_rate"]:
            if report["rates"][name]["definition"] not in definitions.get(name, ""):
                raise Failure(f"the page does not name {name}'s definition beside it: {definitions.get(name)}")
        for currency, amount in today["mrr"].items():
            expected[f"arr.{currency}"] = money(round(float(amount) * 100) * 12 / 100)
        mismatched = {name: (figures.get(name), value) for name, value in expected.items() if figures.get(name) != value}
        if mismatched:
            raise Failure(f"the page's figures differ from /v1/metrics (page, API): {mismatched}")
        seen["figures"] = figures

        step = run.at("the reporting currency converts the cards: MRR and ARR all in USD")
        all_rates = {**rates, "USD": Decimal(1)}
        converted = sum(Decimal(str(amount)) * all_rates[currency] for currency, amount in today["mrr"].items())
        if abs(Decimal(figures.get("mrr.all", "nan").replace(",", "")) - converted) > Decimal("0.01") * len(today["mrr"]):
            raise Failure(f"MRR all in USD is {figures.get('mrr.all')}, the currencies converted give {converted}")
        seen["mrrAll"] = figures.get("mrr.all")
        seen["arrAll"] = figures.get("arr.all")

        step = run.at("the default range starts at the first subscriber's month, not before")
        last_day = datetime.date.fromisoformat(last)
        year_back = last_day - datetime.timedelta(days=364)
        year = api(base, key, f"/v1/metrics?from={year_back.isoformat()}&to={last}")["days"]
        active = [d["date"] for d in year if d["active_subscriptions"] > 0 or d["trials"] > 0 or d["new_subscriptions"] > 0 or d.get("trials_started", 0) > 0]
        want_first = max(year_back, datetime.date.fromisoformat(active[0]).replace(day=1)) if active else year_back
        if first != want_first.isoformat():
            raise Failure(f"the default range starts {first}; the first subscriber's month gives {want_first}")
        seen["firstSubscriberDay"] = active[0] if active else None
        seen["churnShown"] = figures.get("churn_rate")

        step = run.at("the money table equals the API's days")
        table = browser.script(
            "const out = {}; document.querySelectorAll('tr[data-currency]').forEach(r => { const row = {};"
            " r.querySelectorAll('td[data-money]').forEach(c => row[c.dataset.money] = c.textContent.trim()); out[r.dataset.currency] = row; });"
            "return out;")
        day_before = (datetime.date.fromisoformat(first) - datetime.timedelta(days=1)).isoformat()
        before = api(base, key, f"/v1/metrics?from={day_before}&to={day_before}")["days"]
        opening = before[0]["mrr"] if before else {}
        currencies = sorted(set(today["mrr"]) | {c for day in days for c in day["sales"]} | set(opening))
        combined = table.pop("all in USD", None)
        if combined is None:
            raise Failure(f"the money table has no row of every currency in USD: {sorted(table)}")
        rates["USD"] = Decimal(1)
        for name, value in combined.items():
            # Each currency's exact amount converted, then rounded: within a cent per currency of the rounded rows.
            want = sum(Decimal(table[currency][name]) * rates[currency] for currency in table)
            if abs(Decimal(value) - want) > Decimal("0.02"):
                raise Failure(f"all in USD, {name}: {value}, the rows converted give {want}")
        if sorted(table) != currencies:
            raise Failure(f"the money table's currencies {sorted(table)} are not the API's {currencies}")
        problems = {}
        for currency in currencies:
            row = {name: Decimal(value) for name, value in table[currency].items()}
            def api_sum(name, sub=None):
                return sum(Decimal(str((day[name][sub] if sub else day[name]).get(currency, 0))) for day in days)
            # Revenue and refunds are whole cents every day: exact. Proceeds and movements are rounded
            # to the cent each day in the API, and once over the range on the page.
            checks = {"revenue": (api_sum("revenue"), Decimal("0.005") * len(days)), "refunded": (api_sum("refunded"), 0),
                      "proceeds": (api_sum("proceeds"), Decimal("0.005") * len(days)),
                      "mrr_after": (Decimal(str(today["mrr"].get(currency, 0))), 0),
                      "mrr_before": (Decimal(str(opening.get(currency, 0))), Decimal("0.01"))}
            for movement in ["new", "expansion", "reactivation", "contraction", "churned"]:
                checks[f"mrr_movement.{movement}"] = (api_sum("mrr_movement", movement), Decimal("0.005") * len(days))
            for name, (want, tolerance) in checks.items():
                if abs(row[name] - want) > tolerance:
                    problems[f"{currency} {name}"] = (str(row[name]), str(want))
            moved = sum(row[f"mrr_movement.{m}"] for m in ["new", "expansion", "reactivation", "contraction", "churned"])
            if abs(row["mrr_before"] + moved - row["mrr_after"]) > Decimal("0.03"):
                problems[f"{currency} before + movements"] = (str(row["mrr_before"] + moved), str(row["mrr_after"]))
        if problems:
            raise Failure(f"the money table differs from /v1/metrics (page, API): {problems}")
        seen["money"] = {**table, "all in USD": combined}

        step = run.at("the charts are drawn")
        charts = browser.script(
            "return Array.from(document.querySelectorAll('figure[data-chart]')).map(f => ({id: f.dataset.chart,"
            " marks: f.querySelectorAll('svg polyline, svg rect').length, label: f.querySelector('svg desc').textContent}));")
        seen["charts"] = [chart["id"] for chart in charts]
        seen["firstChart"] = charts[0]["id"] if charts else None
        seen["thinBars"] = browser.script(
            "return Array.from(document.querySelectorAll('figure[data-chart] svg rect')).filter(r => { const w = r.getBoundingClientRect().width;"
            " return w > 0 && w < 2; }).length;")
        empty = [chart["id"] for chart in charts if chart["marks"] == 0]
        if empty:
            raise Failure(f"charts without marks: {empty}")

        step = run.at("the cohort heat map equals the backend's cohort table")
        rows = browser.script(
            "return Array.from(document.querySelectorAll('tr[data-cohort]')).map(r => ({month: r.dataset.cohort,"
            " started: Number(r.querySelector('td').textContent), retained: Array.from(r.querySelectorAll('td[data-retained]')).map(c => Number(c.dataset.retained))}));")
        if not rows:
            raise Failure("the cohort table is empty")
        cohorts = api(base, key, f"/v1/metrics/cohorts?from={rows[0]['month']}-01&to={last}")["cohorts"]
        answered = [{"month": c["month"], "started": c["subscriptions"], "retained": c["retained"]} for c in cohorts]
        if answered != rows:
            raise Failure(f"the heat map differs from /v1/metrics/cohorts: page {rows[:2]}…, API {answered[:2]}…")
        seen["cohorts"] = len(rows)

        step = run.at("at 1400 px the money table shows MRR after without scrolling")
        browser.set_window(1400, 1000)
        browser.settle()
        fit = browser.script(
            "const table = document.querySelector('table.money'); const box = table.closest('.scroll');"
            "const after = Array.from(table.querySelectorAll('thead th')).find(t => t.textContent.trim() === 'MRR after');"
            "return {scroll: box.scrollWidth, client: box.clientWidth, right: Math.round(after.getBoundingClientRect().right),"
            " boxRight: Math.round(box.getBoundingClientRect().right), view: document.documentElement.clientWidth};")
        seen["moneyAt1400"] = fit
        if fit["scroll"] > fit["client"] or fit["right"] > fit["boxRight"] or fit["right"] > fit["view"]:
            raise Failure(f"at 1400 px MRR after is cut off: {fit}")
        browser.set_window(1200, 1500)

        step = run.at("axe in light and dark at desktop width; the screenshot")
        browser.color_scheme("light")
        seen["axe"]["dashboard-light"] = browser.axe(axe_source)
        unscroll(browser)
        browser.screenshot(os.path.join(shots, "dashboard.png"))
        browser.color_scheme("dark")
        seen["axe"]["dashboard-dark"] = browser.axe(axe_source)
        browser.color_scheme("light")

        step = run.at("readable at 390 px: no sideways scrolling, axe, the screenshot")
        browser.set_window(390, 900)
        browser.settle()
        widths = browser.script(
            "return {page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth,"
            " charts: Array.from(document.querySelectorAll('figure[data-chart] svg')).map(s => Math.round(s.getBoundingClientRect().right))};")
        seen["phoneWidths"] = widths
        if widths["page"] > widths["view"] or any(right > widths["view"] for right in widths["charts"]):
            raise Failure(f"at 390 px the page scrolls sideways or a chart overflows: {widths}")
        seen["axe"]["dashboard-phone"] = browser.axe(axe_source)
        browser.color_scheme("dark")
        seen["axe"]["dashboard-phone-dark"] = browser.axe(axe_source)
        browser.color_scheme("light")
        unscroll(browser)
        browser.screenshot(os.path.join(shots, "dashboard-phone.png"), width=390)

        step = run.at("the range form shows the days asked for")
        browser.set_window(1200, 1500)
        browser.script("document.getElementById('from').value = arguments[0]; document.getElementById('to').value = arguments[1];"
                       "document.querySelector('form.range button').click();", days[-14]["date"], last)
        browser.wait_for(f'input#from[value="{days[-14]["date"]}"]', step)
        secret = browser.script("return new URLSearchParams(location.search).get('session');")
        shown = browser.script("return location.href;")
        if not secret:
            raise Failure("the signed-in page's address carries no page secret")

        step = run.at("another local server on another port receives the cookie, and its replay opens nothing (#53)")
        catcher = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CookieCatcher)
        threading.Thread(target=catcher.serve_forever, daemon=True).start()
        try:
            browser.open(f"http://127.0.0.1:{catcher.server_address[1]}/dashboard")
            browser.wait_for("#caught", step)
        finally:
            catcher.shutdown()
        caught = "; ".join(c for c in CookieCatcher.caught if c)
        if "osk_backend_session_" not in caught:
            raise Failure(f"the browser sent the other port no session cookie, so this step proves nothing: {CookieCatcher.caught}")
        replays = {}
        for path in ["/dashboard", f"/dashboard/customers?q={token}", "/dashboard/export/money.csv", "/dashboard/export/daily.csv"]:
            status, body = replay(base, path, caught)
            replays[path] = status
            if "data-figure" in body or "data-customer" in body or body.startswith("currency") or body.startswith("date") or 'id="key"' not in body:
                raise Failure(f"the cookie replayed from another port opened {path}: {status} {body[:200]}")
        seen["replayed"] = replays
        browser.open(shown)
        browser.wait_for(f'input#from[value="{days[-14]["date"]}"]', step)
        seen["rangeDays"] = browser.script(
            "const d = document.querySelector('figure[data-chart=\"active\"] desc'); return d ? d.textContent : '';")

        step = run.at("every table as CSV: a row per day, a row per cohort")
        csv = browser.script_async(
            "const done = arguments[arguments.length - 1];"
            "Promise.all(Array.from(document.querySelectorAll('.exports a')).map(a => fetch(a.href).then(r => r.text().then(t => [r.status, r.headers.get('content-type'), t]))))"
            ".then(done).catch(e => done(String(e)));")
        daily, money_csv, cohort_csv = csv
        daily_lines = daily[2].strip().split("\r\n")
        seen["csv"] = {"dailyStatus": daily[0], "dailyType": daily[1], "dailyHeader": daily_lines[0].split(","), "dailyRows": len(daily_lines) - 1,
                       "cohortRows": len(cohort_csv[2].strip().split("\r\n")) - 1, "moneyHeader": money_csv[2].split("\r\n")[0].split(","),
                       "moneyRows": len(money_csv[2].strip().split("\r\n")) - 1, "firstDay": daily_lines[1].split(",")[0]}

        step = run.at("a preset: the last 30 days")
        browser.script("Array.from(document.querySelectorAll('.presets a')).find(a => a.textContent === 'Last 30 days').click();")
        browser.wait_for(f'input#from[value="{days[-30]["date"]}"]', step)
        seen["preset30"] = browser.script("return [document.getElementById('from').value, document.getElementById('to').value];")

        step = run.at("a year by month: one bar group a month, months named with their year")
        browser.open(f"{base}/dashboard?from={days[0]['date']}&to={last}&group=month&session={secret}")
        browser.wait_for('figure[data-chart="trials"]', step)
        seen["byMonth"] = browser.script(
            "const f = document.querySelector('figure[data-chart=\"trials\"]');"
            "return {desc: f.querySelector('desc').textContent, ticks: Array.from(f.querySelectorAll('text.tick')).map(t => t.textContent)};")

        step = run.at("a range too long: the page says so beside the form, with the usual days, and a way back")
        browser.open(f"{base}/dashboard?from=2000-01-01&to=2026-01-01&session={secret}")
        browser.wait_for("[role=alert]", step)
        seen["tooLong"] = browser.script(
            "return {alert: document.querySelector('[role=alert]').textContent, form: !!document.getElementById('from'),"
            " presets: document.querySelectorAll('.presets a').length, figures: document.querySelectorAll('[data-figure]').length};")

        step = run.at("the product filter: the figures of one product, as the API answers them")
        browser.set_window(1400, 1000)
        browser.open(f"{base}/dashboard?session={secret}")
        browser.wait_for("select#product", step)
        products = browser.script("return Array.from(document.querySelectorAll('select#product option')).map(o => o.value).filter(v => v);")
        groups = browser.script("return Array.from(document.querySelectorAll('select#group_id option')).map(o => o.value).filter(v => v);")
        if not products or not groups:
            raise Failure(f"the filters offer no product or no group: {products} {groups}")
        filtered = {}
        for name, value, api_name in [("product", products[0], "product_id"), ("group_id", groups[0], "group")]:
            browser.script("document.getElementById('product').value = ''; document.getElementById('group_id').value = '';"
                           "document.getElementById(arguments[0]).value = arguments[1]; document.querySelector('form.range button').click();", name, value)
            browser.wait_for(f'select#{name} option[value="{value}"][selected]', step)
            shown_from = browser.script("return document.getElementById('from').value;")
            shown_to = browser.script("return document.getElementById('to').value;")
            one = api(base, key, f"/v1/metrics?from={shown_from}&to={shown_to}&{api_name}={urllib.parse.quote(value)}")["days"]
            page_active = browser.script("return document.querySelector('[data-figure=\"active_subscriptions\"] .value').textContent.trim();")
            page_new = browser.script("return document.querySelector('[data-figure=\"new_subscriptions\"] .value').textContent.trim();")
            want = (grouped(one[-1]["active_subscriptions"]), grouped(sum(d["new_subscriptions"] for d in one)))
            if (page_active, page_new) != want:
                raise Failure(f"filtered by {name}={value}: the page shows {(page_active, page_new)}, /v1/metrics {want}")
            filtered[name] = {"value": value, "active": page_active, "new": page_new,
                              "scope": browser.script("return document.querySelector('[data-scope]').textContent;"),
                              "everything": grouped(today["active_subscriptions"])}
        seen["filtered"] = filtered
        browser.set_window(1200, 1500)

        step = run.at("a customer by an upper-case app account token: entitlements and transactions as the API answers them")
        browser.set_window(1200, 1500)
        browser.open(f"{base}/dashboard?session={secret}")
        browser.wait_for('a[href^="/dashboard/customers"]', step)
        browser.script("document.querySelector('a[href^=\"/dashboard/customers\"]').click();")
        browser.wait_for("input#q", step)
        browser.script("document.getElementById('q').value = arguments[0]; document.querySelector('form[role=search] button').click();", token.upper())
        browser.wait_for("h2[data-customer]", step)
        def customer_page():
            return browser.script(
                "return {customer: document.querySelector('h2[data-customer]').dataset.customer,"
                " entitled: Array.from(document.querySelectorAll('tr[data-product]')).map(r => r.dataset.product).sort(),"
                " transactions: Array.from(document.querySelectorAll('tr[data-transaction]')).map(r => r.dataset.transaction),"
                " notifications: document.querySelectorAll('tr[data-notification]').length};")
        page = customer_page()
        entitlements = api(base, key, f"/v1/customers/{token.upper()}/entitlements")["entitlements"]
        history = api(base, key, f"/v1/customers/{token.upper()}/history")["transactions"]
        expected = {"customer": token.lower(), "entitled": sorted(e["productId"] for e in entitlements),
                    "transactions": [t["transactionId"] for t in history]}
        if {k: page[k] for k in expected} != expected or page["notifications"] == 0:
            raise Failure(f"the customer page {page} differs from the API {expected} or shows no notifications")
        seen["customer"] = page
        browser.color_scheme("dark")
        seen["axe"]["customer-dark"] = browser.axe(axe_source)
        browser.color_scheme("light")
        seen["axe"]["customer-light"] = browser.axe(axe_source)
        browser.set_window(390, 900)
        browser.settle()
        widths = browser.script("return {page: document.documentElement.scrollWidth, view: document.documentElement.clientWidth};")
        if widths["page"] > widths["view"]:
            raise Failure(f"at 390 px the customer page scrolls sideways: {widths}")
        seen["axe"]["customer-phone"] = browser.axe(axe_source)
        browser.color_scheme("dark")
        seen["axe"]["customer-phone-dark"] = browser.axe(axe_source)
        browser.color_scheme("light")
        # Every transaction's Expires, Refunded and Entitles in view at 390 px, each under its name.
        cells = browser.script(
            "const view = document.documentElement.clientWidth; const out = {rows: 0, hidden: [], prices: [], storefronts: [], links: []};"
            "document.querySelectorAll('tr[data-transaction]').forEach(r => { out.rows++;"
            " ['Expires', 'Refunded or revoked', 'Entitles', 'Price', 'Storefront'].forEach(label => {"
            "  const c = r.querySelector(`[data-label=\"${label}\"]`); const b = c ? c.getBoundingClientRect() : null;"
            "  if (!b || b.width === 0 || b.height === 0 || b.right > view + 0.5 || b.left < 0) out.hidden.push(`${r.dataset.transaction} ${label}`); });"
            " out.prices.push(r.querySelector('[data-label=\"Price\"]').textContent);"
            " out.storefronts.push(r.querySelector('[data-label=\"Storefront\"]').textContent);"
            " const a = r.querySelector('a.store-link'); out.links.push(a ? a.href : null); });"
            "out.storefrontLine = (document.querySelector('[data-storefront]') || {}).textContent || null; return out;")
        seen["customerPhone"] = {"rows": cells["rows"], "hidden": cells["hidden"][:10], "prices": cells["prices"][:5],
                                 "storefronts": cells["storefronts"][:5], "links": cells["links"][:5], "storefrontLine": cells["storefrontLine"]}
        if cells["hidden"]:
            raise Failure(f"at 390 px these transaction cells are out of view: {cells['hidden'][:10]}")
        bad_links = [link for link in cells["links"] if not (link or "").startswith(store_pages.rstrip("/") + "/transactions/")]
        if bad_links:
            raise Failure(f"transactions without a link to the store's page: {bad_links[:5]}")
        unscroll(browser)
        browser.screenshot(os.path.join(shots, "dashboard-customer-phone.png"), width=390)
        browser.set_window(1400, 1000)
        browser.color_scheme("dark")
        seen["axe"]["customer-1400-dark"] = browser.axe(axe_source)
        browser.color_scheme("light")
        seen["axe"]["customer-1400-light"] = browser.axe(axe_source)
        browser.set_window(1200, 1500)

        step = run.at("the same customer by an original transaction id; nobody by a made-up id")
        browser.open(f"{base}/dashboard/customers?q={original}&session={secret}")
        browser.wait_for("h2[data-customer]", step)
        seen["byTransaction"] = customer_page()
        browser.open(f"{base}/dashboard/customers?q=nobody-at-all&session={secret}")
        browser.wait_for("[role=alert]", step)
        seen["nobody"] = browser.script("return document.querySelector('[role=alert]').textContent.trim();")

        step = run.at("sign out")
        browser.script("document.querySelector('form[action=\"/dashboard/logout\"] button').click();")
        browser.wait_for("#key", step)
        seen["signedOut"] = True

    return run_and_report(browser, work)


if __name__ == "__main__":
    sys.exit(main())
