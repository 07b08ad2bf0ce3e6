"""Checks the Transaction Manager of a running `storekit serve` whose store holds about ten thousand
transactions, in headless Chromium: each filter, search, date range and order shows, page after page,
the rows the admin API lists for it over the whole store (which the Swift test compares with the CLI).

usage: large_store.py BASE_URL CHROMIUM CHROMEDRIVER

Prints one JSON object with what it saw; exits non-zero, naming the step, when a step fails.
"""
import json
import sys
import time
import urllib.parse
import urllib.request

from store_pages import Browser, Failure, run_and_report

PAGE = 50


def api_page(base, query, after=None):
    params = dict(query, limit=str(PAGE))
    if after is not None:
        params["after"] = after
    request = urllib.request.Request(f"{base}/v1/admin/transactions?{urllib.parse.urlencode(params)}",
                                     headers={"X-OpenStoreKit-Request": "1"})
    with urllib.request.urlopen(request, timeout=60) as response:
        body = json.loads(response.read())
    return [t["id"] for t in body["transactions"]], body.get("next")


def shown_ids(browser):
    return browser.script("return Array.from(document.querySelectorAll('#tx-body tr[data-transaction-id]')).map(r => Number(r.dataset.transactionId));")


def wait_for_rows(browser, expected, what, seconds=30):
    deadline = time.time() + seconds
    seen = None
    while time.time() < deadline:
        seen = shown_ids(browser)
        if seen == expected:
            return seen
        time.sleep(0.2)
    raise Failure(f"{what}: the page shows {len(seen or [])} rows {(seen or [])[:5]}…, the API {len(expected)} {expected[:5]}…")


def set_control(browser, element_id, value, event="change"):
    """Sets a control as a person would: only a change of value is an event (a search waits 300 ms for more typing)."""
    browser.script("const e = document.getElementById(arguments[0]); if (e.value === arguments[1]) return;"
                   "e.value = arguments[1]; e.dispatchEvent(new Event(arguments[2], {bubbles: true}));", element_id, value, event)


def reset(browser):
    for element_id in ["filter-state", "filter-type", "filter-from", "filter-to"]:
        set_control(browser, element_id, "")
    # Cleared as a person clears it and presses Enter: at once, with no search left waiting for more typing.
    browser.script("const e = document.getElementById('filter-search'); if (e.value === '') return;"
                   "e.value = ''; e.form.requestSubmit();")
    set_control(browser, "sort-order", "descending")
    set_control(browser, "sort-key", "id")


# Each case: what a person does on the page, and the admin API query that should list the same rows.
CASES = [
    ("State: Expired", [("filter-state", "expired", "change")], {"state": "expired"}),
    ("Type: Auto-renewable", [("filter-type", "autoRenewable", "change")], {"type": "autoRenewable"}),
    ("Search: premium", [("filter-search", "premium", "input")], {"search": "premium"}),
    ("State: Refunded", [("filter-state", "refunded", "change")], {"state": "refunded"}),
    ("Purchased in a date range", [("filter-from", "2026-01-10", "change"), ("filter-to", "2026-02-15", "change")],
     {"from": "2026-01-10", "to": "2026-02-15"}),
    ("Sorted by account", [("header", "account", None)], {"sort": "account", "order": "descending"}),
    ("Sorted by expiration date, ascending", [("sort-order", "ascending", "change"), ("sort-key", "expirationDate", "change")],
     {"sort": "expirationDate", "order": "ascending"}),
    ("Sorted by state, expired only", [("filter-state", "expired", "change"), ("sort-key", "state", "change")],
     {"sort": "state", "state": "expired"}),
]


def main():
    base, chromium, chromedriver = sys.argv[1:4]
    browser = Browser(chromium, chromedriver)

    def work(run):
        browser.set_window(1400, 1000)
        browser.open(f"{base}/")
        browser.wait_for("#tx-body tr[data-transaction-id]", "open the Transaction Manager")
        results = {}
        for name, actions, query in CASES:
            run.at(name)
            reset(browser)
            wait_for_rows(browser, api_page(base, {"order": "descending"})[0], f"{name}: the unfiltered list first")
            for element_id, value, event in actions:
                if element_id == "header":
                    browser.click(f'#tx-table th[data-sort="{value}"] button', name)
                else:
                    set_control(browser, element_id, value, event)
            full = dict({"sort": "id", "order": "descending"}, **query)
            pages = []
            expected, after = api_page(base, full)
            for number in range(3):
                wait_for_rows(browser, expected, f"{name}, page {number + 1}")
                pages.append(len(expected))
                if after is None:
                    break
                browser.click("#page-next", name)
                expected, after = api_page(base, full, after)
            results[name] = pages
        run.seen["pages"] = results

    return run_and_report(browser, work)


if __name__ == "__main__":
    sys.exit(main())
