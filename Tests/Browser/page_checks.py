"""Checks the Transaction Manager, the storefront and a timeline page of a running `storekit serve` in
headless Chromium: what each subscription row says after the action that causes it, every state
filter, search and order, Ask to Buy on the storefront, live updates, error pages, the timeline's
labels at phone width, axe-core in light and dark, and the README's screenshots.

usage: page_checks.py BASE_URL SCREENSHOT_DIR CHROMIUM CHROMEDRIVER AXE_JS

Prints one JSON object with what it saw; exits non-zero, naming the step, when a step fails.
"""
import json
import os
import sys
import time
import urllib.request

from store_pages import Browser, Failure, run_and_report

PRO = "com.example.shop.pro"
GEMS = "com.example.shop.gems.small"
POTION = "com.example.shop.potion"
PREMIUM = "com.example.shop.plus.premium.monthly"
STANDARD = "com.example.shop.plus.standard.monthly"
STATES = ["purchased", "pendingApproval", "declined", "interrupted", "refunded", "revoked", "upgraded", "expired"]


def api(base, method, path, body=None):
    """One call of the store's APIs, as a script beside the browser makes it."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, method=method, data=data,
                                     headers={"Content-Type": "application/json", "X-OpenStoreKit-Request": "1"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"{}")


def wait_until(what, check, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise Failure(f"{what} did not happen within {seconds} s")


def setup(base):
    """Accounts in every state the filters know, made through the admin and device APIs."""
    ids = {}
    for name in ["r-off", "r-price", "r-refund", "r-expire", "r-grace", "r-offer", "up", "fam-a", "fam-b", "kid2", "int"]:
        api(base, "PUT", f"/v1/admin/accounts/{name}", {"devices": [f"{name}-phone"]})
    for name in ["r-off", "r-price", "r-refund", "r-expire", "r-grace"]:
        api(base, "POST", "/v1/admin/purchases", {"productID": PREMIUM, "account": name})
    # An upgrade: the first plan's transaction is marked upgraded.
    api(base, "POST", "/v1/admin/purchases", {"productID": STANDARD, "account": "up"})
    api(base, "POST", "/v1/admin/purchases", {"productID": PREMIUM, "account": "up"})
    # A refund of a family purchase revokes the member's copy.
    for name in ["fam-a", "fam-b"]:
        api(base, "PUT", f"/v1/admin/accounts/{name}", {"familyGroup": "fam"})
    shared = api(base, "POST", "/v1/admin/purchases", {"productID": PRO, "account": "fam-a"})["transaction"]["id"]
    api(base, "POST", f"/v1/admin/transactions/{shared}/refund", {"reason": "other"})
    # A declined Ask to Buy request, made by the child's app.
    api(base, "PUT", "/v1/admin/accounts/kid2", {"askToBuy": True})
    asked = api(base, "POST", "/v1/devices/kid2-phone/purchases", {"productID": GEMS})
    if asked.get("outcome") != "pending":
        raise Failure(f"setup: the child's request answered {asked}")
    waiting = api(base, "GET", "/v1/admin/transactions?account=kid2&state=pendingApproval")["transactions"]
    if len(waiting) != 1:
        raise Failure(f"setup: the child has {len(waiting)} requests waiting")
    ids["declined"] = waiting[0]["id"]
    api(base, "POST", f"/v1/admin/transactions/{ids['declined']}/decline", {})
    # And one left waiting.
    api(base, "POST", "/v1/devices/kid2-phone/purchases", {"productID": POTION})
    # An interrupted purchase.
    api(base, "PATCH", "/v1/admin/settings", {"interruptedPurchasesEnabled": True})
    api(base, "POST", "/v1/devices/int-phone/purchases", {"productID": POTION})
    api(base, "PATCH", "/v1/admin/settings", {"interruptedPurchasesEnabled": False})
    return ids


def row(account, extra=""):
    """The row of an account's current subscription period."""
    return f'tr[data-account="{account}"][data-subscription-state]{extra}'


def subscription_states(browser, base, seen):
    step = "open the Transaction Manager"
    browser.open(f"{base}/")
    browser.wait_for(row("r-off"), step)

    step = "renewal off: the row says it will not renew, and offers Renewal on only"
    browser.click(row("r-off") + ' button[data-action="auto-renew-off"]', step)
    browser.wait_for(row("r-off", '[data-auto-renew="false"]'), step)
    buttons = browser.script("return Array.from(document.querySelectorAll(arguments[0])).map(b => b.dataset.action);", row("r-off") + " button")
    if "auto-renew-off" in buttons or "auto-renew-on" not in buttons:
        raise Failure(f"{step}: the row offers {buttons}")
    seen["renewalOffText"] = browser.script("return document.querySelector(arguments[0]).textContent;", row("r-off") + ' [data-detail="auto-renew"]')

    step = "price increase: the row says consent is pending"
    browser.click(row("r-price") + ' button[data-action="price-increase"]', step)
    browser.wait_for(row("r-price", '[data-price-increase="pending"]'), step)
    seen["priceIncreaseText"] = browser.script("return document.querySelector(arguments[0]).textContent;", row("r-price") + ' [data-detail="price-increase"]')

    step = "refund: a second press confirms; the row says refunded, with the reason and date"
    if browser.press_twice(row("r-refund") + ' button[data-action="refund"]', step) != "purchased":
        raise Failure(f"{step}: one press refunded it")
    browser.wait_for(row("r-refund", '[data-state="refunded"]'), step)
    seen["refundText"] = browser.script("return document.querySelector(arguments[0]).textContent;", row("r-refund") + ' [data-detail="refund"]')
    actions = browser.script("return Array.from(document.querySelectorAll(arguments[0])).map(b => b.dataset.action);", row("r-refund") + " button")
    seen["refundedActions"] = actions

    step = "expire: the row says expired"
    browser.click(row("r-expire") + ' button[data-action="expire"]', step)
    browser.wait_for(row("r-expire", '[data-subscription-state="expired"][data-state="expired"]'), step)
    seen["expiredText"] = browser.script("return document.querySelector(arguments[0]).textContent;", row("r-expire") + ' [data-detail="subscription-state"]')

    step = "an offer: bought on the storefront, the row names the introductory offer"
    browser.open(f"{base}/store?account=r-offer&device=r-offer-phone")
    browser.click(f'article[data-product-id="{STANDARD}"] button[data-action="buy"]', step)
    browser.wait_for(f'article[data-product-id="{STANDARD}"][data-state="current"]', step)
    browser.open(f"{base}/")
    browser.wait_for('tr[data-account="r-offer"][data-offer]', step)
    seen["offerText"] = browser.script("return document.querySelector(arguments[0]).textContent;", 'tr[data-account="r-offer"] [data-detail="offer"]')

    step = "grace period: billing retry and grace on, a month later the row says in grace period"
    browser.click("#setting-shouldEnterBillingRetryOnRenewal", step)
    browser.wait_for("#setting-shouldEnterBillingRetryOnRenewal:checked", step)
    browser.click("#setting-billingGracePeriodIsEnabled", step)
    browser.wait_for("#setting-billingGracePeriodIsEnabled:checked", step)
    wait_until(f"{step} (settings saved)", lambda: api(base, "GET", "/v1/admin/settings").get("billingGracePeriodIsEnabled"))
    browser.click('button[data-action="advance"][data-period="P1M"]', step)
    browser.wait_for(row("r-grace", '[data-subscription-state="inGracePeriod"]'), step)
    seen["graceText"] = browser.script("return document.querySelector(arguments[0]).textContent;", row("r-grace") + ' [data-detail="subscription-state"]')
    buttons = browser.script("return Array.from(document.querySelectorAll(arguments[0])).map(b => b.dataset.action);", row("r-grace") + " button")
    if "resolve" not in buttons:
        raise Failure(f"{step}: the row offers {buttons}, not Resolve billing")

    step = "billing retry: after the grace period the row says in billing retry"
    browser.click('button[data-action="advance"][data-period="P1M"]', step)
    browser.wait_for(row("r-grace", '[data-subscription-state="inBillingRetryPeriod"]'), step)
    seen["billingRetryText"] = browser.script("return document.querySelector(arguments[0]).textContent;", row("r-grace") + ' [data-detail="subscription-state"]')
    api(base, "PATCH", "/v1/admin/settings", {"shouldEnterBillingRetryOnRenewal": False, "billingGracePeriodIsEnabled": False})


def storefront_ask_to_buy(browser, base, seen):
    step = "Ask to Buy on the storefront: the card says waiting for approval"
    browser.open(f"{base}/store?account=kid&device=ipad")
    browser.click(f'article[data-product-id="{PRO}"] button[data-action="buy"]', step)
    browser.wait_for(f'article[data-product-id="{PRO}"][data-waiting] button[disabled]', step)
    seen["waitingBadge"] = browser.script("return document.querySelector(arguments[0]).textContent;",
                                          f'article[data-product-id="{PRO}"] [data-badge="waiting"]')
    seen["waitingButtonName"] = browser.script("return document.querySelector(arguments[0]).getAttribute('aria-label');",
                                               f'article[data-product-id="{PRO}"] button')

    step = "asking again (the form sent as the page would) makes no second request"
    again = browser.script_async(
        "const done = arguments[arguments.length - 1];"
        "const form = document.querySelector(arguments[0]);"
        "fetch(form.action, {method: 'POST', body: new URLSearchParams(new FormData(form)),"
        " headers: {Accept: 'application/json', 'X-OpenStoreKit-Request': '1'}}).then(r => r.json()).then(done, e => done({error: String(e)}));",
        f'article[data-product-id="{PRO}"] form')
    seen["secondAsk"] = again.get("message")
    pending = api(base, "GET", "/v1/admin/transactions?account=kid&state=pendingApproval&limit=100")["transactions"]
    seen["pendingRequestsForPro"] = len([t for t in pending if t["productID"] == PRO])
    seen["pendingRequestID"] = next((t["id"] for t in pending if t["productID"] == PRO), None)

    step = "an approval appears on the open storefront without a reload"
    browser.script("document.body.dataset.sameLoad = 'yes';")
    api(base, "POST", f"/v1/admin/transactions/{seen['pendingRequestID']}/approve", {})
    browser.wait_for(f'article[data-product-id="{PRO}"][data-state="owned"]', step)
    if browser.script("return document.body.dataset.sameLoad;") != "yes":
        raise Failure(f"{step}: the page was reloaded")


def filters_and_search(browser, base, seen):
    step = "every state filter shows rows of that state only"
    browser.open(f"{base}/")
    browser.wait_for("#tx-body tr[data-transaction-id]", step)
    counts = {}
    for value in STATES:
        browser.script("const s = document.getElementById('filter-state'); s.value = arguments[0]; s.dispatchEvent(new Event('change', {bubbles: true}));", value)
        # The page answers the filter with a new list: wait for a list of that state only.
        def shown():
            states = browser.script("return Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]')).map(r => r.dataset.state);")
            return states if states and all(state == value for state in states) else None
        try:
            states = wait_until(f"{step}: {value}", shown, seconds=20)
        except Failure:
            raise Failure(f"{step}: the {value} filter shows {browser.script('return Array.from(document.querySelectorAll(arguments[0])).map(r => r.dataset.state);', '#tx-body tr[data-transaction-id]')}")
        counts[value] = len(states)
    seen["stateFilterCounts"] = counts
    browser.script("const s = document.getElementById('filter-state'); s.value = ''; s.dispatchEvent(new Event('change', {bubbles: true}));")

    step = "newest first by default"
    ids = wait_until(step, lambda: browser.script(
        "const rows = Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]'));"
        "return rows.length > 5 ? rows.map(r => Number(r.dataset.transactionId)) : null;"))
    if ids != sorted(ids, reverse=True):
        raise Failure(f"{step}: the rows run {ids}")
    seen["firstRows"] = ids[:3]

    step = "sorting by ID turns the order around"
    browser.click('#tx-table th[data-sort="id"] button', step)
    ids = wait_until(step, lambda: (lambda rows: rows if rows and rows == sorted(rows) else None)(browser.script(
        "return Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]')).map(r => Number(r.dataset.transactionId));")))
    seen["oldestFirst"] = ids[:3]
    browser.click('#tx-table th[data-sort="id"] button', step)

    step = "search by transaction ID"
    target = seen["firstRows"][1]
    browser.script("const s = document.getElementById('filter-search'); s.value = arguments[0]; s.dispatchEvent(new Event('input', {bubbles: true}));", str(target))
    found = wait_until(step, lambda: (lambda rows: rows if rows == [target] else None)(browser.script(
        "return Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]')).map(r => Number(r.dataset.transactionId));")))
    seen["searchByID"] = found

    step = "search by part of a product ID"
    browser.script("const s = document.getElementById('filter-search'); s.value = 'potion'; s.dispatchEvent(new Event('input', {bubbles: true}));")
    products = wait_until(step, lambda: (lambda rows: rows if rows and all("potion" in p for p in rows) else None)(browser.script(
        "return Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]')).map(r => r.dataset.productId);")))
    seen["searchByProduct"] = sorted(set(products))
    browser.script("const s = document.getElementById('filter-search'); s.value = 'no-such-product'; s.dispatchEvent(new Event('input', {bubbles: true}));")
    seen["emptySearch"] = wait_until(step, lambda: browser.script(
        "const e = document.querySelector('#tx-body td.empty'); return e && e.textContent.indexOf('no-such-product') >= 0 ? e.textContent : null;"))
    browser.script("const s = document.getElementById('filter-search'); s.value = ''; s.dispatchEvent(new Event('input', {bubbles: true}));")


def error_pages(browser, base, seen):
    step = "an unknown account and device: an HTML page, and nothing created"
    browser.open(f"{base}/store?account=nobody&device=nowhere")
    browser.wait_for("main h2", step)
    seen["unknownDevicePage"] = browser.script("return [document.contentType, document.querySelector('main h2').textContent];")
    names = [a["name"] for a in api(base, "GET", "/v1/admin/accounts")["accounts"]]
    seen["nobodyCreated"] = "nobody" in names
    browser.open(f"{base}/timeline/999999")
    browser.wait_for("main h2", step)
    seen["unknownTimelinePage"] = browser.script("return [document.contentType, document.querySelector('main h2').textContent];")


def timeline_at_phone_width(browser, base, shots, seen):
    step = "the timeline at 390 px: readable labels, none overlapping another or leaving the picture"
    original = api(base, "GET", "/v1/admin/transactions?account=r-grace&limit=1")["transactions"][0]["originalID"]
    browser.set_window(390, 844)
    browser.open(f"{base}/timeline/{original}")
    browser.wait_for("svg text.label", step)
    report = browser.script("""
        // The page holds the picture at three widths; the one this screen shows is checked.
        const shown = Array.from(document.querySelectorAll('main svg')).find(s => s.getBoundingClientRect().width > 0);
        const svg = shown.getBoundingClientRect();
        const box = shown.parentElement.getBoundingClientRect();
        const labels = Array.from(shown.querySelectorAll('text.label, text.tick, text.lane')).map(e => {
          const r = e.getBoundingClientRect();
          return {text: e.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom,
                  size: parseFloat(getComputedStyle(e).fontSize)};
        });
        const overlaps = [];
        for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
          const a = labels[i], b = labels[j];
          if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
            overlaps.push(a.text + ' / ' + b.text);
        }
        const outside = labels.filter(l => l.left < svg.left - 0.5 || l.right > svg.right + 0.5 || l.top < svg.top - 0.5 || l.bottom > svg.bottom + 0.5)
          .map(l => l.text);
        return {labels: labels.length, overlaps, outside, smallest: Math.min(...labels.map(l => l.size * svg.width / shown.viewBox.baseVal.width)),
                fits: svg.right <= box.right + 0.5 && svg.left >= box.left - 0.5, pictureWidth: svg.width, boxWidth: box.width,
                viewport: window.innerWidth, legend: document.querySelectorAll('.legend li').length,
                back: !!document.querySelector('main a[href="/"]')};""")
    if report["overlaps"] or report["outside"] or not report["fits"]:
        raise Failure(f"{step}: {report}")
    seen["timeline"] = report
    browser.screenshot(os.path.join(shots, "timeline-390.png"), width=390)
    browser.set_window(1200, 1500)


def accessibility_and_screenshots(browser, base, shots, axe_source, seen):
    pages = [("transaction-manager", f"{base}/", "#tx-body tr[data-transaction-id]"),
             ("storefront", f"{base}/store?account=alice&device=phone", "article[data-product-id]")]
    violations = {}
    for scheme in ["light", "dark"]:
        browser.color_scheme(scheme)
        for name, url, ready in pages:
            step = f"axe-core on the {name} in {scheme} mode"
            browser.set_window(1400, 1000)
            browser.open(url)
            browser.wait_for(ready, step)
            browser.settle()
            violations[f"{name}-{scheme}"] = browser.axe(axe_source)
            for width in [1400, 390]:
                browser.screenshot(os.path.join(shots, f"{name}-{width}-{scheme}.png"), width=width, restore=(1400, 1000))
            browser.set_window(390, 844)
            browser.open(url)
            browser.wait_for(ready, step)
            violations[f"{name}-{scheme}-390"] = browser.axe(axe_source)
        step = f"axe-core on a timeline in {scheme} mode"
        browser.set_window(1400, 1000)
        original = api(base, "GET", "/v1/admin/transactions?account=r-grace&limit=1")["transactions"][0]["originalID"]
        browser.open(f"{base}/timeline/{original}")
        browser.wait_for("svg", step)
        violations[f"timeline-{scheme}"] = browser.axe(axe_source)
        # The picture follows the scheme: its background is the page's surface, not white in the dark.
        seen[f"timelineBackground-{scheme}"] = browser.script(
            "const s = Array.from(document.querySelectorAll('main svg')).find(s => s.getBoundingClientRect().width > 0);"
            "return getComputedStyle(s.querySelector('rect.tl-bg')).fill;")
        step = f"axe-core on a purchase's page in {scheme} mode"
        browser.open(f"{base}/transactions/{original}")
        browser.wait_for("#signed-transaction", step)
        violations[f"purchase-{scheme}"] = browser.axe(axe_source)
    browser.color_scheme("light")
    seen["axe"] = violations


def dense_rows_and_purchase_page(browser, base, shots, seen):
    step = "the transactions table: one line of actions per row, the rest in a menu; price, storefront and token shown"
    browser.set_window(1400, 1000)
    browser.open(f"{base}/")
    browser.wait_for(row("r-grace"), step)
    report = browser.script("""
        const rows = Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]'));
        const heights = rows.map(r => r.getBoundingClientRect().height).sort((a, b) => a - b);
        const grace = document.querySelector(arguments[0]);
        const cells = Array.from(grace.children).map(c => c.dataset.label || '');
        return {rows: rows.length, medianHeight: heights[Math.floor(heights.length / 2)], tallest: heights[heights.length - 1],
                price: grace.querySelector('td[data-label=Price]').textContent, storefront: grace.querySelector('td[data-label=Storefront]').textContent,
                menuClosed: !grace.querySelector('details.row-menu').open,
                visibleButtons: Array.from(grace.querySelectorAll('.actions button, .actions a, .actions summary'))
                  .filter(b => b.getBoundingClientRect().height > 0).map(b => b.textContent)};""", row("r-grace"))
    seen["denseRows"] = report

    step = "a purchase's page: the decoded transaction and renewal info, its notifications with their attempts, its timeline"
    browser.click(row("r-grace") + " a.detail-link", step)
    browser.wait_for("#signed-transaction", step)
    seen["purchasePage"] = browser.script("""
        return {transaction: document.getElementById('signed-transaction').textContent,
                renewal: (document.getElementById('signed-renewal-info') || {}).textContent || '',
                notifications: Array.from(document.querySelectorAll('tr[data-notification-sequence] td[data-label="Type"]')).map(c => c.textContent),
                attempts: Array.from(document.querySelectorAll('tr[data-notification-sequence] td[data-label="Delivery attempts"]')).map(c => c.textContent),
                timeline: Array.from(document.querySelectorAll('main svg')).some(s => s.getBoundingClientRect().width > 0)};""")
    browser.screenshot(os.path.join(shots, "purchase.png"), width=1200)

    step = "at 390 px: sorting is offered, and Tab reaches only controls a person can see"
    browser.set_window(390, 844)
    browser.open(f"{base}/")
    browser.wait_for("#tx-body tr[data-transaction-id]", step)
    seen["sortVisibleAt390"] = browser.script("const r = document.getElementById('sort-key').getBoundingClientRect(); return r.width > 40 && r.height > 20;")
    browser.script("const s = document.getElementById('sort-key'); s.value = 'account'; s.dispatchEvent(new Event('change', {bubbles: true}));")
    accounts = wait_until(step, lambda: (lambda names: names if names and names == sorted(names, reverse=True) and len(set(names)) > 1 else None)(
        browser.script("return Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]')).map(r => r.dataset.account);")))
    seen["sortedAt390"] = accounts[:3]
    browser.script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    invisible = []
    for _ in range(60):
        browser.press_key("\ue004")
        focused = browser.script("""
            const e = document.activeElement; if (!e || e === document.body) return null;
            const r = e.getBoundingClientRect(), style = getComputedStyle(e);
            return {name: e.tagName + (e.id ? '#' + e.id : '') + ' ' + (e.textContent || '').trim().slice(0, 30),
                    seen: r.width >= 4 && r.height >= 4 && style.visibility !== 'hidden' && style.opacity !== '0'};""")
        if focused and not focused["seen"]:
            invisible.append(focused["name"])
    seen["invisibleFocus"] = invisible
    browser.set_window(1200, 1500)


def account_form(browser, base, seen):
    step = "the account form refuses a device of another account beside the field, and makes nothing"
    browser.open(f"{base}/")
    browser.wait_for("#account-form", step)
    browser.script("document.getElementById('account-name').value = 'carol';"
                   "document.getElementById('account-devices').value = 'carol-phone, phone';")
    browser.click("#account-form button[type=submit]", step)
    browser.wait_for("#account-form-error:not([hidden])", step)
    seen["accountFormError"] = browser.script(
        "return [document.getElementById('account-form-error').textContent,"
        " document.getElementById('account-devices').getAttribute('aria-invalid'),"
        " document.activeElement && document.activeElement.id];")
    names = [a["name"] for a in api(base, "GET", "/v1/admin/accounts")["accounts"]]
    seen["carolCreated"] = "carol" in names


def main():
    base, shots, chromium, chromedriver, axe_path = sys.argv[1:6]
    os.makedirs(shots, exist_ok=True)
    with open(axe_path) as file:
        axe_source = file.read()
    browser = Browser(chromium, chromedriver)

    def work(run):
        run.seen["setup"] = setup(base)
        for part in [subscription_states, storefront_ask_to_buy, filters_and_search, error_pages, account_form]:
            run.at(part.__name__)
            part(browser, base, run.seen)
        run.at("dense rows and a purchase's page")
        dense_rows_and_purchase_page(browser, base, shots, run.seen)
        run.at("timeline")
        timeline_at_phone_width(browser, base, shots, run.seen)
        run.at("accessibility")
        accessibility_and_screenshots(browser, base, shots, axe_source, run.seen)

    return run_and_report(browser, work)


if __name__ == "__main__":
    sys.exit(main())
