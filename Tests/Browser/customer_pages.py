"""Checks what customers read on a running `storekit serve` in headless Chromium (issue 55): prices in
the customer's storefront currency on the storefront, the introductory offer's amount and period, the
price consent sheet naming the price after a trial, a plan switch named by its display name, a way to
resubscribe after cancelling; and a purchase's page with its dates in words and its actions (sent
through the admin API, as the Transaction Manager sends them). Each page at 1400 and 390 px, light
and dark, with axe-core.

usage: customer_pages.py BASE_URL SCENARIO_JSON CHROMIUM CHROMEDRIVER AXE_JS SCREENSHOT_DIR

SCENARIO_JSON: {"intro": {account, device, transaction}, "trialConsent": {...}, "switcher": {...},
"resubscriber": {...}, "premiumMonthly", "standardMonthly"}

Prints one JSON object with what it saw; exits non-zero, naming the step, when a step fails.
"""
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from store_pages import Browser, Failure, run_and_report


def storefront_url(base, who):
    return f"{base}/store?" + urllib.parse.urlencode({"account": who["account"], "device": who["device"]})


def current_plan(browser):
    return browser.script("const p = document.querySelector('p.current-plan'); return p ? p.textContent : null;")


def wait_text(browser, script, check, what, seconds=30):
    deadline = time.time() + seconds
    value = None
    while time.time() < deadline:
        value = browser.script(script)
        if check(value):
            return value
        time.sleep(0.2)
    raise Failure(f"{what}: still {value!r} after {seconds} s")


def every_view(browser, name, axe_source, shots, seen, extra=None):
    """axe-core at 1400 and 390 px, light and dark; no sideways scrolling at 390; a screenshot of each."""
    for scheme in ["light", "dark"]:
        browser.color_scheme(scheme)
        for width, height in [(1400, 1000), (390, 844)]:
            browser.set_window(width, height)
            browser.settle()
            key = f"{name}-{width}-{scheme}"
            seen["axe"][key] = browser.axe(axe_source)
            widths = browser.script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth];")
            if widths[0] > widths[1]:
                raise Failure(f"{key}: the page scrolls sideways ({widths[0]} > {widths[1]} px)")
            if extra:
                extra(key)
            browser.script("window.scrollTo(0, 0);")
            browser.screenshot(os.path.join(shots, f"{key}.png"), width=width, restore=(width, height))
    browser.color_scheme("light")
    browser.set_window(1400, 1000)


def main():
    base, scenario_path, chromium, chromedriver, axe_path, shots = sys.argv[1:7]
    with open(scenario_path) as file:
        scenario = json.load(file)
    with open(axe_path, encoding="utf-8") as file:
        axe_source = file.read()
    os.makedirs(shots, exist_ok=True)
    browser = Browser(chromium, chromedriver)

    def work(run):
        seen = run.seen
        seen["axe"] = {}

        intro = scenario["intro"]
        step = run.at("a GBP customer at an introductory price: its amount and period, in pounds")
        browser.set_window(1400, 1000)
        browser.open(storefront_url(base, intro))
        browser.wait_for("p.current-plan", step)
        seen["introPlan"] = current_plan(browser)
        seen["introPrices"] = browser.script("return Array.from(document.querySelectorAll('.price')).map(p => p.textContent);")
        every_view(browser, "storefront-gbp", axe_source, shots, seen)

        trial = scenario["trialConsent"]
        step = run.at("a EUR customer in a free trial asked to consent to a price: what they pay after the trial, in euros")
        browser.open(storefront_url(base, trial))
        browser.wait_for("[data-price-consent]", step)
        seen["trialConsent"] = browser.script("return document.querySelector('[data-price-consent]').textContent;")
        seen["trialPlan"] = current_plan(browser)
        every_view(browser, "storefront-consent", axe_source, shots, seen)

        switcher = scenario["switcher"]
        step = run.at("a plan switch on the storefront: the next plan named by its display name")
        browser.open(storefront_url(base, switcher))
        browser.click(f'article[data-product-id="{scenario["standardMonthly"]}"] button[data-action="buy"]', step)
        seen["switchPlan"] = wait_text(browser, "const p = document.querySelector('p.current-plan'); return p ? p.textContent : '';",
                                       lambda text: "renews as" in text, step)
        seen["switchBanner"] = browser.script("return document.getElementById('banner-text').textContent;")

        resubscriber = scenario["resubscriber"]
        step = run.at("after cancelling, Resubscribe turns automatic renewal back on")
        browser.open(storefront_url(base, resubscriber))
        browser.wait_for('button[data-action="resubscribe"]', step)
        seen["beforeResubscribe"] = {"plan": current_plan(browser),
                                     "cancelOffered": browser.script("return !!document.querySelector('button[data-action=\"cancel\"]');"),
                                     "label": browser.attribute('button[data-action="resubscribe"]', "aria-label")}
        every_view(browser, "storefront-resubscribe", axe_source, shots, seen)
        browser.click('button[data-action="resubscribe"]', step)
        browser.wait_for('button[data-action="cancel"]', step)
        seen["afterResubscribe"] = {"plan": current_plan(browser), "banner": browser.script("return document.getElementById('banner-text').textContent;"),
                                    "resubscribeOffered": browser.script("return !!document.querySelector('button[data-action=\"resubscribe\"]');")}

        step = run.at("a purchase's page: every payload date in words, with its time zone")
        browser.open(f"{base}/transactions/{intro['transaction']}")
        browser.wait_for("#signed-transaction", step)
        dates = browser.script(
            "const out = {bare: [], words: []};"
            "document.querySelectorAll('.payloads pre:not(.jws)').forEach(pre => pre.textContent.split('\\n').forEach(line => {"
            "  if (/\"\\w+Date\"\\s*:\\s*\\d{12,}/.test(line)) { (line.includes('UTC') ? out.words : out.bare).push(line.trim()); } }));"
            "out.facts = Array.from(document.querySelectorAll('dl.facts dt')).map(dt => [dt.textContent, dt.nextElementSibling.textContent]);"
            "return out;")
        seen["payloadDates"] = {"bare": dates["bare"], "words": dates["words"][:6], "count": len(dates["words"])}
        seen["facts"] = {term: value for term, value in dates["facts"] if term}
        seen["actions"] = browser.script("return Array.from(document.querySelectorAll('.transaction-actions button[data-action]')).map(b => b.dataset.action);")

        def actions_fit(key):
            clipped = browser.script(
                "return Array.from(document.querySelectorAll('.transaction-actions button')).filter(b => {"
                " const r = b.getBoundingClientRect(); return r.width === 0 || r.right > document.documentElement.clientWidth; }).map(b => b.dataset.action);")
            if clipped:
                raise Failure(f"{key}: action buttons cut off or hidden: {clipped}")
        every_view(browser, "transaction-page", axe_source, shots, seen, extra=actions_fit)

        step = run.at("the purchase's page: Renewal off, sent through the admin API, then the page as the store has it")
        browser.click('.transaction-actions button[data-action="auto-renew-off"]', step)
        browser.wait_for('.transaction-actions button[data-action="auto-renew-on"]', step)
        seen["afterRenewalOff"] = {
            "status": browser.script("return document.getElementById('action-status').textContent;"),
            "renewal": len(re.findall(r'"autoRenewStatus"\s*:\s*0\b', browser.script(
                "const p = document.getElementById('signed-renewal-info'); return p ? p.textContent : '';")))}

        step = run.at("the purchase's page: a refund asks for a second press, then the page shows the refund")
        browser.click('.transaction-actions button[data-action="refund"]', step)
        seen["refundConfirm"] = browser.script("const b = document.querySelector('.transaction-actions button[data-action=\"refund\"]'); return b ? b.textContent : null;")
        browser.click('.transaction-actions button[data-action="refund"]', step)
        wait_text(browser, "return document.querySelector('section[data-state]') ? document.querySelector('section[data-state]').dataset.state : '';",
                  lambda state: state == "refunded", step)
        seen["afterRefund"] = {"state": browser.script("return document.querySelector('section[data-state]').dataset.state;"),
                               "actions": browser.script("return Array.from(document.querySelectorAll('.transaction-actions button[data-action]')).map(b => b.dataset.action);")}

        step = run.at("what another site's page could send to the same admin action is refused")
        def status(headers, body):
            request = urllib.request.Request(f"{base}/v1/admin/subscriptions/{intro['original']}/renewal", method="POST", data=body, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status
            except urllib.error.HTTPError as error:
                return error.code
        # A form post or a no-cors fetch: a simple body, no header of ours; and a request its page makes with an Origin of its own.
        seen["crossSiteStatuses"] = [status({"Content-Type": "text/plain"}, b'{"enabled": true}'),
                                     status({"Content-Type": "application/json", "X-OpenStoreKit-Request": "1", "Origin": "http://attacker.example"},
                                            b'{"enabled": true}')]

    return run_and_report(browser, work)


if __name__ == "__main__":
    sys.exit(main())
