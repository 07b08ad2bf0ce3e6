"""Drives the storefront and the Transaction Manager of a running `storekit serve` in headless Chromium.

Speaks the W3C WebDriver protocol to Debian's chromedriver with the standard library only. Prints one
JSON object with what it saw; exits non-zero, naming the step, when a step fails. Writes screenshots.

usage: store_pages.py BASE_URL SCREENSHOT_DIR CHROMIUM CHROMEDRIVER
"""
import base64
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
PRO = "com.example.shop.pro"
GEMS = "com.example.shop.gems.small"
MONTHLY = "com.example.shop.plus.premium.monthly"
POTION = "com.example.shop.potion"


class Failure(Exception):
    pass


# How long a page's script may run before WebDriver gives up on it.
SCRIPT_SECONDS = 120


class Browser:
    def __init__(self, chromium, chromedriver, extra_args=()):
        self.driver, self.port = self.start_driver(chromedriver)
        self.base = f"http://127.0.0.1:{self.port}"
        options = {"binary": chromium,
                   "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                            "--window-size=1200,1500", "--force-device-scale-factor=1", *extra_args]}
        # A script may run for two minutes (WebDriver's default is 30 s): axe-core on a page of the
        # Transaction Manager has taken longer than that while the whole suite loaded both cores.
        capabilities = {"browserName": "chrome", "goog:chromeOptions": options, "timeouts": {"script": SCRIPT_SECONDS * 1000}}
        session = self.call("POST", "/session", {"capabilities": {"alwaysMatch": capabilities}})
        self.session = f"/session/{session['sessionId']}"

    @staticmethod
    def start_driver(chromedriver):
        """chromedriver on a free port. A port found free can be taken by another test before
        chromedriver binds it: then chromedriver exits, and it is started again on another port.
        Only an answer from this chromedriver counts (its /status names its build)."""
        for _ in range(5):
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            driver = subprocess.Popen([chromedriver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 60
            while driver.poll() is None and time.time() < deadline:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5) as response:
                        status = json.loads(response.read()).get("value", {})
                    if "build" in status:
                        return driver, port
                except (urllib.error.URLError, ConnectionError, ValueError):
                    pass
                time.sleep(0.1)
            driver.kill()
            driver.wait(timeout=10)
        raise Failure("chromedriver did not start")

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=SCRIPT_SECONDS + 60) as response:
                return json.loads(response.read() or b"{}").get("value")
        except urllib.error.HTTPError as error:
            raise Failure(f"WebDriver {method} {path}: {error.read().decode(errors='replace')[:300]}")

    def open(self, url):
        self.call("POST", self.session + "/url", {"url": url})

    def script(self, source, *arguments):
        return self.call("POST", self.session + "/execute/sync", {"script": source, "args": list(arguments)})

    def script_async(self, source, *arguments):
        """Runs script that calls its last argument with the result (WebDriver's asynchronous script)."""
        return self.call("POST", self.session + "/execute/async", {"script": source, "args": list(arguments)})


    def settle(self):
        """Waits until the page's animations and transitions have finished and two frames have been
        drawn since: the page as a person sees it once it stops moving."""
        self.script_async(
            "const done = arguments[arguments.length - 1];"
            "Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)))"
            ".then(() => requestAnimationFrame(() => requestAnimationFrame(() => done(true))));")
    def wait_for(self, selector, what, seconds=30):
        """The first element matching `selector`, waiting for the page (or its live refresh) to show it."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            found = self.script("return document.querySelector(arguments[0]) !== null;", selector)
            if found:
                # A live redraw may replace the element between the check and the lookup: look again.
                element = self.wait_for_element(selector)
                if element is not None:
                    return element
            time.sleep(0.2)
        raise Failure(f"{what}: nothing matched {selector} within {seconds} s on {self.script('return location.href;')}")

    def press_twice(self, selector, what):
        """Presses a button that asks for a second press, and presses it again at once: one script, so
        a slow machine never lets the confirmation lapse between the presses. Answers the row's state
        after the first press."""
        self.wait_for(selector, what)
        state = self.script(
            "const b = document.querySelector(arguments[0]); b.click();"
            "const row = b.closest('tr'); const first = row ? row.dataset.state : null;"
            "const again = document.querySelector(arguments[0] + '[data-confirming]');"
            "if (!again) return 'no confirmation asked';"
            "again.click(); return first;", selector)
        if state == "no confirmation asked":
            raise Failure(f"{what}: the first press of {selector} did not ask for confirmation")
        return state

    def wait_for_element(self, selector):
        """The WebDriver id of the first match, or None when a redraw removed it since it was seen."""
        try:
            return self.call("POST", self.session + "/element", {"using": "css selector", "value": selector})[ELEMENT]
        except Failure as failure:
            if "no such element" in str(failure):
                return None
            raise

    def click(self, selector, what):
        # The Transaction Manager redraws its rows when the store changes: an element found a moment
        # ago may be gone, so a stale one is looked up again. An action in a row's closed menu is
        # reached as a person reaches it: the menu is opened first.
        for attempt in range(10):
            element = self.wait_for(selector, what)
            self.script("const e = document.querySelector(arguments[0]); const menu = e && e.closest('details');"
                        "if (menu && !menu.open) menu.querySelector('summary').click();", selector)
            try:
                self.call("POST", f"{self.session}/element/{element}/click", {})
                return
            except Failure as failure:
                if "stale element" not in str(failure) or attempt == 9:
                    raise
                time.sleep(0.2)

    def press_key(self, key):
        """Presses and releases one key (a WebDriver key code, such as Tab: \ue004) in the focused element."""
        self.call("POST", self.session + "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}]}]})

    def attribute(self, selector, name):
        return self.script("const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;", selector, name)

    def set_window(self, width, height):
        self.call("POST", self.session + "/window/rect", {"width": width, "height": height})

    def screenshot(self, path, width=1200, restore=(1200, 1500)):
        # The whole page: the window grows to the document's height first.
        self.set_window(width, 800)
        height = self.script("return Math.min(5000, document.documentElement.scrollHeight);")
        self.set_window(width, max(600, int(height) + 120))
        self.script("window.scrollTo(0, 0);")
        self.settle()
        with open(path, "wb") as file:
            file.write(base64.b64decode(self.call("GET", self.session + "/screenshot")))
        self.set_window(*restore)

    def color_scheme(self, scheme):
        """Emulates prefers-color-scheme (light or dark) through the DevTools protocol."""
        self.call("POST", self.session + "/goog/cdp/execute",
                  {"cmd": "Emulation.setEmulatedMedia", "params": {"features": [{"name": "prefers-color-scheme", "value": scheme}]}})

    def axe(self, source):
        """axe-core's violations on the open page: [{id, impact, targets}]."""
        self.script(source + "\n;window.__axeLoaded = true; return true;")
        result = self.script_async(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact,"
            " help: v.help, targets: v.nodes.slice(0, 5).map(n => n.target.join(' '))})))).catch(e => done([{id: 'axe-failed', help: String(e)}]));")
        return result

    def element_screenshot(self, element, path):
        with open(path, "wb") as file:
            file.write(base64.b64decode(self.call("GET", f"{self.session}/element/{element}/screenshot")))

    def close(self):
        try:
            self.call("DELETE", self.session)
        except (Failure, OSError):
            pass
        finally:
            self.driver.terminate()
            try:
                self.driver.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.driver.kill()
                self.driver.wait(timeout=10)


def admin(base, method, path, body):
    """One call of the store's admin API, as a script beside the browser would make it."""
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"{}")


class Run:
    """One script's run: the step it is at and what it has seen."""

    def __init__(self):
        self.step = "start"
        self.seen = {}

    def at(self, step):
        self.step = step
        return step


def run_and_report(browser, work):
    """Runs work(run) with the browser, closes the browser, and prints one JSON line: {"ok": true, ...}
    with what was seen, or the step that failed and why. Returns the exit status."""
    run = Run()
    try:
        work(run)
    except Exception as failure:
        print(json.dumps({"ok": False, "step": run.step, "error": f"{type(failure).__name__}: {failure}", "seen": run.seen}), flush=True)
        return 1
    finally:
        browser.close()
    print(json.dumps({"ok": True, **run.seen}))
    return 0


def main():
    base, shots, chromium, chromedriver = sys.argv[1:5]
    os.makedirs(shots, exist_ok=True)
    browser = Browser(chromium, chromedriver)

    def work(run):
        seen = run.seen
        step = run.at("buy Pro on the storefront")
        browser.open(f"{base}/store?account=alice&device=phone")
        browser.click(f'article[data-product-id="{PRO}"] button[data-action="buy"]', step)
        browser.wait_for(f'article[data-product-id="{PRO}"][data-state="owned"]', step)
        seen["storefrontMessage"] = browser.script("const f = document.getElementById('banner-text'); return f ? f.textContent : '';")

        step = run.at("see the purchase in the Transaction Manager")
        browser.open(f"{base}/")
        browser.wait_for(f'tr[data-product-id="{PRO}"][data-state="purchased"]', step)
        seen["proTransaction"] = int(browser.attribute(f'tr[data-product-id="{PRO}"]', "data-transaction-id"))

        step = run.at("refund it in the Transaction Manager (a second press confirms)")
        browser.press_twice(f'tr[data-transaction-id="{seen["proTransaction"]}"] button[data-action="refund"]', step)
        browser.wait_for(f'tr[data-transaction-id="{seen["proTransaction"]}"][data-state="refunded"]', step)

        step = run.at("see the refund on the storefront")
        browser.open(f"{base}/store?account=alice&device=phone")
        browser.wait_for(f'article[data-product-id="{PRO}"][data-state="available"]', step)

        step = run.at("ask to buy gems on the child's tablet")
        browser.open(f"{base}/store?account=kid&device=ipad")
        browser.click(f'article[data-product-id="{GEMS}"] button[data-action="buy"]', step)
        browser.wait_for("#banner:not([hidden])", step)
        message = browser.script("return document.getElementById('banner-text').textContent;")
        if "approval" not in message:
            raise Failure(f"{step}: the storefront said {message!r}")

        step = run.at("approve the request in the Transaction Manager")
        browser.open(f"{base}/")
        browser.click(f'tr[data-product-id="{GEMS}"][data-state="pendingApproval"] button[data-action="approve"]', step)
        browser.wait_for(f'tr[data-product-id="{GEMS}"][data-state="purchased"]', step)
        seen["approvedTransaction"] = int(browser.attribute(f'tr[data-product-id="{GEMS}"]', "data-transaction-id"))

        step = run.at("subscribe on the storefront")
        browser.open(f"{base}/store?account=alice&device=phone")
        browser.click(f'article[data-product-id="{MONTHLY}"] button[data-action="buy"]', step)
        browser.wait_for(f'article[data-product-id="{MONTHLY}"][data-state="current"]', step)
        browser.screenshot(os.path.join(shots, "storefront.png"))

        step = run.at("advance the clock a month and see the renewal")
        browser.open(f"{base}/")
        browser.wait_for(f'tr[data-product-id="{MONTHLY}"]', step)
        browser.click('button[data-action="advance"][data-period="P1M"]', step)
        browser.wait_for(f'tr[data-product-id="{MONTHLY}"][data-reason="renewal"]', step)
        seen["renewals"] = browser.script("return document.querySelectorAll(arguments[0]).length;",
                                          f'tr[data-product-id="{MONTHLY}"][data-reason="renewal"]')
        browser.screenshot(os.path.join(shots, "transaction-manager.png"))

        step = run.at("see a purchase made elsewhere appear without a reload")
        marker = browser.script("document.body.dataset.sameLoad = 'yes'; return document.body.dataset.sameLoad;")
        elsewhere = admin(base, "POST", "/v1/admin/purchases", {"productID": POTION, "account": "bob"})["transaction"]["id"]
        browser.wait_for(f'tr[data-transaction-id="{elsewhere}"][data-product-id="{POTION}"]', step)
        if browser.script("return document.body.dataset.sameLoad;") != marker:
            raise Failure(f"{step}: the page was reloaded")
        seen["liveTransaction"] = elsewhere

        step = run.at("give the subscription a billing problem and a recovery")
        original = browser.attribute(f'tr[data-product-id="{MONTHLY}"] a[data-timeline]', "data-timeline")
        if not original:
            raise Failure(f"{step}: the subscription row has no timeline link")
        admin(base, "PATCH", "/v1/admin/settings", {"shouldEnterBillingRetryOnRenewal": True, "billingGracePeriodIsEnabled": True})
        admin(base, "POST", "/v1/admin/clock/advance", {"by": "P1M"})
        admin(base, "POST", "/v1/admin/clock/advance", {"by": "P1W"})
        admin(base, "PATCH", "/v1/admin/settings", {"shouldEnterBillingRetryOnRenewal": False})
        admin(base, "POST", f"/v1/admin/subscriptions/{original}/resolve-billing", {})
        admin(base, "POST", "/v1/admin/clock/advance", {"by": "P2M"})

        step = run.at("open the subscription's timeline")
        browser.open(f"{base}/timeline/{original}.svg")
        svg = browser.wait_for("svg", step)
        browser.wait_for("svg rect.period", step)
        seen["timelinePeriods"] = browser.script("return document.querySelectorAll('svg rect.period').length;")
        seen["timelineStretches"] = browser.script("return document.querySelectorAll('svg rect.grace-period, svg rect.billing-retry').length;")
        seen["timelineTitle"] = browser.script("const t = document.querySelector('svg title'); return t ? t.textContent : '';")
        browser.element_screenshot(svg, os.path.join(shots, "timeline.png"))

    return run_and_report(browser, work)


if __name__ == "__main__":
    sys.exit(main())
