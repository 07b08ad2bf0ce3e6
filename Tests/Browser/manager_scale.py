"""The Transaction Manager of a running `storekit serve` whose store holds many transactions and
accounts, in headless Chromium: one load per navigation, a visible loading state while a request is
in flight (and a request a newer one superseded cancelled), a page by number, back from a purchase's
Details to the same page, an account found by its name, and the layout at 1400 and 390 px in light
and dark, with axe-core clean. It also times how long rows take to reach the screen.

usage: manager_scale.py BASE_URL CHROMIUM CHROMEDRIVER AXE_SCRIPT ACCOUNT_BEYOND_1000 [--timings-only]

The page's fetch is watched from before its scripts run (DevTools' addScriptToEvaluateOnNewDocument):
each request is recorded when it starts and when it ends or is cancelled, and requests to the list can
be held back until released, so the loading state is seen for certain, not by luck of timing.
Prints one JSON object with what it saw; exits non-zero, naming the step, when a step fails.
"""
import json
import sys
import time
import urllib.parse
import urllib.request

from store_pages import Browser, Failure, run_and_report

PAGE = 50

# Records every fetch the page makes; while window.__hold is true, requests to the transaction list
# wait until window.__release() is called.
WATCH = """
(() => {
  const original = window.fetch.bind(window);
  window.__requests = [];
  window.__hold = false;
  let waiting = [];
  window.__release = () => { const w = waiting; waiting = []; w.forEach(go => go()); };
  window.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input.url;
    const entry = { url, started: performance.now(), ended: null, aborted: false };
    window.__requests.push(entry);
    const signal = init && init.signal;
    if (signal) signal.addEventListener('abort', () => { entry.aborted = true; });
    const held = window.__hold && url.includes('/v1/admin/transactions') ? new Promise(go => waiting.push(go)) : Promise.resolve();
    return held.then(() => {
      if (signal && signal.aborted) throw new DOMException('cancelled', 'AbortError');
      return original(input, init);
    }).then(r => { entry.ended = performance.now(); return r; }, e => { entry.ended = performance.now(); throw e; });
  };
  // When the first rows were drawn, from the start of the navigation.
  document.addEventListener('DOMContentLoaded', () => {
    const body = document.getElementById('tx-body');
    if (!body) return;
    new MutationObserver(() => {
      if (!window.__firstRows && body.querySelector('tr[data-transaction-id]')) window.__firstRows = performance.now();
    }).observe(body, { childList: true });
  });
})();
"""

# Draws happen when the rows change: this notes when the list's body last changed.
OBSERVE = """
window.__drawn = [];
new MutationObserver(() => window.__drawn.push(performance.now()))
  .observe(document.getElementById('tx-body'), { childList: true });
"""


def api_page(base, query):
    params = dict(query, limit=str(PAGE))
    request = urllib.request.Request(f"{base}/v1/admin/transactions?{urllib.parse.urlencode(params)}",
                                     headers={"X-OpenStoreKit-Request": "1"})
    with urllib.request.urlopen(request, timeout=60) as response:
        body = json.loads(response.read())
    return [t["id"] for t in body["transactions"]], body.get("next")


def shown_ids(browser):
    return browser.script("return Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]')).map(r => Number(r.dataset.transactionId));")


def wait_until(what, check, seconds=30):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)
    raise Failure(f"{what}: not within {seconds} s")


def wait_for_rows(browser, expected, what, seconds=30):
    deadline = time.time() + seconds
    seen = None
    while time.time() < deadline:
        seen = shown_ids(browser)
        if seen == expected and not browser.script("return document.getElementById('tx-body').classList.contains('stale');"):
            return seen
        time.sleep(0.05)
    raise Failure(f"{what}: the page shows {len(seen or [])} rows {(seen or [])[:5]}…, the API {len(expected)} {expected[:5]}…")


def watch_new_documents(browser):
    browser.call("POST", browser.session + "/goog/cdp/execute", {"cmd": "Page.enable", "params": {}})
    browser.call("POST", browser.session + "/goog/cdp/execute", {"cmd": "Page.addScriptToEvaluateOnNewDocument", "params": {"source": WATCH}})


def requests(browser, part):
    return browser.script("return window.__requests.filter(r => r.url.includes(arguments[0]));", part)


def open_manager(browser, base, path="/"):
    """Opens the manager and waits until it has drawn its rows and is waiting for changes (its start is over)."""
    started = time.time()
    browser.open(f"{base}{path}")
    browser.wait_for("#tx-body tr[data-transaction-id], #tx-body td.empty", "open the Transaction Manager")
    wait_until("the page waits for changes", lambda: requests(browser, "/v1/admin/changes?since="))
    timing = browser.script(
        "const list = window.__requests.find(r => r.url.includes('/v1/admin/transactions'));"
        "return {firstRows: window.__firstRows || (list && list.ended), list: list && (list.ended - list.started)};")
    return timing, time.time() - started


def set_control(browser, element_id, value, event="change"):
    browser.script("const e = document.getElementById(arguments[0]); if (e.value === arguments[1]) return;"
                   "e.value = arguments[1]; e.dispatchEvent(new Event(arguments[2], {bubbles: true}));", element_id, value, event)


def timed_change(browser, action, expected, what):
    """Does `action` in the page and answers how long, in ms, until the expected rows were drawn."""
    browser.script(OBSERVE)
    start = browser.script("return performance.now();")
    action()
    wait_for_rows(browser, expected, what)
    drawn = browser.script("return window.__drawn.length ? window.__drawn[window.__drawn.length - 1] : null;")
    return round(drawn - start, 1) if drawn is not None else None


def timings(browser, base, seen):
    """Time to screen: the first page after navigation, and each kind of change."""
    seen["timings"] = {}
    for label, query in [("navigation", {}), ("navigation_consumable_expires_ascending", {"type": "consumable", "sort": "expirationDate", "order": "ascending"})]:
        path = "/" + ("?" + urllib.parse.urlencode(query) if query else "")
        browser.open("about:blank")
        timing, _ = open_manager(browser, base, path)
        seen["timings"][label + "_ms"] = round(timing["firstRows"], 1)
    browser.open("about:blank")
    open_manager(browser, base)
    changes = [
        ("state_expired", lambda: set_control(browser, "filter-state", "expired"), {"state": "expired"}),
        ("type_consumable", lambda: (set_control(browser, "filter-state", "", "input"), set_control(browser, "filter-type", "consumable")),
         {"type": "consumable"}),
        ("sort_expires_ascending", lambda: (set_control(browser, "sort-order", "ascending"), set_control(browser, "sort-key", "expirationDate")),
         {"type": "consumable", "sort": "expirationDate", "order": "ascending"}),
        ("next_page", lambda: browser.script("document.getElementById('page-next').click();"), None),
        ("page_by_number_50", lambda: browser.script(
            "const i = document.getElementById('page-number'); i.value = '50'; document.getElementById('page-jump').requestSubmit();"),
         {"type": "consumable", "sort": "expirationDate", "order": "ascending", "page": "50"}),
    ]
    query = {}
    for label, action, wanted in changes:
        if wanted is None:
            ids, after = api_page(base, dict(query, sort=query.get("sort", "id"), order=query.get("order", "descending")))
            wanted = dict(query, after=after)
        expected = api_page(base, dict({"sort": "id", "order": "descending"}, **wanted))[0]
        seen["timings"][label + "_ms"] = timed_change(browser, action, expected, label)
        query = {k: v for k, v in wanted.items() if k not in ("after", "page")}


def main():
    base, chromium, chromedriver, axe_path, beyond = sys.argv[1:6]
    timings_only = "--timings-only" in sys.argv[6:]
    with open(axe_path) as file:
        axe_source = file.read()
    browser = Browser(chromium, chromedriver)

    def work(run):
        browser.set_window(1400, 900)
        watch_new_documents(browser)
        if timings_only:
            run.at("time to screen")
            timings(browser, base, run.seen)
            return

        run.at("navigation loads each part once")
        timing, _ = open_manager(browser, base)
        run.seen["loads"] = {part: len(requests(browser, part)) for part in
                             ["/v1/admin/transactions", "/v1/admin/accounts", "/v1/admin/settings", "/v1/admin/vocabulary"]}
        run.seen["firstRowsMs"] = round(timing["firstRows"], 1)
        # Every type and state the filters offer is one the store takes.
        run.seen["refusedChoices"] = browser.script_async("""
            const done = arguments[arguments.length - 1];
            const choices = [...document.querySelectorAll('#filter-type option, #filter-state option')].filter(o => o.value)
              .map(o => (o.closest('select').id === 'filter-type' ? 'type=' : 'state=') + o.value);
            Promise.all(choices.map(c => fetch('/v1/admin/transactions?limit=1&' + c, {headers: {'X-OpenStoreKit-Request': '1'}})
              .then(r => r.ok ? null : c))).then(refused => done({offered: choices.length, refused: refused.filter(Boolean)}));""")
        first, after = api_page(base, {"order": "descending"})
        wait_for_rows(browser, first, run.step)

        run.at("the loading state while a request is in flight, and a superseded request cancelled")
        before = len(requests(browser, "/v1/admin/transactions"))
        browser.script("window.__hold = true;")
        browser.script("document.getElementById('page-next').click();")
        held = wait_until(run.step, lambda: browser.script(
            "const t = document.getElementById('tx-table'), b = document.getElementById('tx-body');"
            "return t.getAttribute('aria-busy') === 'true' && b.classList.contains('stale') && Number(getComputedStyle(b).opacity) < 0.5 ? "
            "{busy: true, status: document.getElementById('tx-status').textContent,"
            " rows: b.querySelectorAll('tr[data-transaction-id]').length, opacity: getComputedStyle(b).opacity} : null;"))
        run.seen["loadingState"] = held
        # A newer choice while the first is held: the first is cancelled, the newer one's rows shown.
        set_control(browser, "filter-state", "expired")
        wait_until(run.step, lambda: len(requests(browser, "/v1/admin/transactions")) >= before + 2)
        browser.script("window.__hold = false; window.__release();")
        expired, _ = api_page(base, {"order": "descending", "state": "expired"})
        wait_for_rows(browser, expired, run.step)
        lists = requests(browser, "/v1/admin/transactions")[before:]
        run.seen["supersededCancelled"] = [r["aborted"] for r in lists]
        run.seen["busyAfter"] = browser.script("return document.getElementById('tx-table').getAttribute('aria-busy');")

        run.at("a page by number")
        set_control(browser, "sort-key", "account")
        by_account, _ = api_page(base, {"order": "descending", "state": "expired", "sort": "account"})
        wait_for_rows(browser, by_account, run.step)
        browser.script("const i = document.getElementById('page-number'); i.value = '7'; document.getElementById('page-jump').requestSubmit();")
        # The same rows as walking six pages along the cursors.
        walk = {"order": "descending", "state": "expired", "sort": "account"}
        ids, next_cursor = api_page(base, walk)
        for _ in range(6):
            ids, next_cursor = api_page(base, dict(walk, after=next_cursor))
        seventh = wait_for_rows(browser, ids, run.step)
        run.seen["pageByNumber"] = {"label": browser.script("return document.getElementById('page-label').textContent;"),
                                    "address": browser.script("return location.search;"), "rows": len(seventh),
                                    "sameAsWalking": seventh == ids}

        run.at("back from a purchase's Details keeps the page, filter and sort")
        browser.click("#tx-body tr[data-transaction-id] a.detail-link", run.step)
        browser.wait_for("#signed-transaction", run.step)
        browser.script("history.back();")
        browser.wait_for("#tx-body tr[data-transaction-id]", run.step)
        back = wait_for_rows(browser, ids, run.step)
        run.seen["backFromDetails"] = {"label": browser.script("return document.getElementById('page-label').textContent;"),
                                       "state": browser.script("return document.getElementById('filter-state').value;"),
                                       "sort": browser.script("return document.getElementById('sort-key').value;"),
                                       "samePage": back == ids}

        run.at("an account found by its name, beyond the first thousand")
        open_manager(browser, base)
        browser.script("const e = document.getElementById('filter-search'); e.value = arguments[0]; e.dispatchEvent(new Event('input', {bubbles: true}));", beyond)
        own, _ = api_page(base, {"order": "descending", "account": beyond})
        shown = wait_for_rows(browser, own, run.step)
        accounts = browser.script("return Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]')).map(r => r.dataset.account);")
        suggested = wait_until(run.step + ": suggested", lambda: browser.script(
            "const o = Array.from(document.querySelectorAll('#account-choices option')).map(o => o.value);"
            "return o.includes(arguments[0]) ? o : null;", beyond))
        browser.script("const e = document.getElementById('accounts-search'); e.value = arguments[0];"
                       "e.form.requestSubmit();", beyond)
        row = wait_until(run.step + ": accounts table", lambda: browser.script(
            "return document.querySelector('#accounts-body tr[data-account=\"' + arguments[0] + '\"]') !== null;", beyond))
        run.seen["accountByName"] = {"rows": len(shown), "onlyTheirs": set(accounts) == {beyond}, "suggested": beyond in suggested,
                                     "inAccountsTable": row}

        run.at("the layout at 1400 x 900: every column in view, rows that fit")
        open_manager(browser, base)
        browser.settle()
        run.seen["layout1400"] = browser.script("""
            const scroll = document.getElementById('tx-scroll');
            const rows = Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]'));
            const actions = rows[0].querySelector('td[data-label=Actions]').getBoundingClientRect();
            document.getElementById('tx-table').scrollIntoView({block: 'start'});
            const fit = rows.filter(r => { const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= innerHeight; }).length;
            window.scrollTo(0, 0);
            const fitAtTop = rows.filter(r => { const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= innerHeight; }).length;
            return {sideways: scroll.scrollWidth > scroll.clientWidth + 1, actionsRight: actions.right, width: innerWidth,
                    actionsVisible: actions.right <= scroll.getBoundingClientRect().right + 1 && actions.width > 0,
                    rowsInView: fit, rowsInViewAtTop: fitAtTop};""")

        run.at("the layout at 390 px")
        browser.set_window(390, 844)
        open_manager(browser, base)
        run.seen["layout390"] = browser.script("""
            const row = document.querySelector('#tx-body tr[data-transaction-id]');
            const buttons = Array.from(row.querySelectorAll('.actions a, .actions button, .actions summary')).filter(b => b.getBoundingClientRect().width > 0);
            return {pageWidth: document.documentElement.scrollWidth, width: innerWidth,
                    actions: buttons.map(b => b.textContent), jump: document.getElementById('page-number').getBoundingClientRect().width > 40};""")

        run.at("axe-core at 1400 and 390 px, light and dark")
        violations = {}
        for scheme in ["light", "dark"]:
            browser.color_scheme(scheme)
            for width, height in [(1400, 900), (390, 844)]:
                browser.set_window(width, height)
                open_manager(browser, base, "/?state=expired&sort=account&page=3")
                browser.settle()
                violations[f"{scheme}-{width}"] = browser.axe(axe_source)
        browser.color_scheme("light")
        run.seen["axe"] = violations

    return run_and_report(browser, work)


if __name__ == "__main__":
    sys.exit(main())
