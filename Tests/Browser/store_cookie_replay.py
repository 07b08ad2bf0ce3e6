"""A store started with a token, in headless Chromium, against another local server on another
port (#53): the browser signs in with ?token=, uses the Transaction Manager and the storefront, then
visits the other server, which receives the session cookie (cookies ignore ports) and replays it to
the store's pages and admin API: every replay is refused, and the browser's own session keeps working.

usage: store_cookie_replay.py BASE_URL TOKEN CHROMIUM CHROMEDRIVER

Prints one JSON object with what it saw; exits non-zero, naming the step, when a step fails.
"""
import http.server
import json
import sys
import threading
import urllib.error
import urllib.request

from store_pages import Browser, Failure, run_and_report


class CookieCatcher(http.server.BaseHTTPRequestHandler):
    caught = []

    def do_GET(self):
        CookieCatcher.caught.append(self.headers.get("Cookie") or "")
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<p id=caught>caught</p>")

    def log_message(self, *arguments):
        pass


def replay(base, method, path, cookie, headers=None, body=None):
    request = urllib.request.Request(base + path, method=method, data=body, headers={"Cookie": cookie, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def main():
    base, token, chromium, chromedriver = sys.argv[1:5]
    browser = Browser(chromium, chromedriver)

    def work(run):
        seen = run.seen
        step = run.at("sign in with ?token=: the Transaction Manager opens and reads the admin API")
        browser.open(f"{base}/?token={token}")
        browser.wait_for("#banner", step)
        seen["address"] = browser.script("return location.pathname + location.search;")
        if "token=" in seen["address"] or "osk_session=" not in seen["address"]:
            raise Failure(f"the address after sign-in is {seen['address']}")
        seen["adminStatus"] = browser.script_async(
            "const done = arguments[arguments.length - 1];"
            "import('/assets/manager-page.js').then(m => fetch('/v1/admin/transactions', {headers: m.sessionHeaders({Accept: 'application/json'})}))"
            ".then(r => done(r.status)).catch(e => done(String(e)));")
        if seen["adminStatus"] != 200:
            raise Failure(f"the page's own admin request answered {seen['adminStatus']}")

        step = run.at("a page opened without the secret in its address: the session's page secret is added from this origin")
        browser.open(f"{base}/store?account=alice&device=phone")
        browser.wait_for("#main", step)
        seen["storefront"] = browser.script("return location.pathname + location.search;")

        step = run.at("another local server on another port receives the cookie")
        catcher = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CookieCatcher)
        threading.Thread(target=catcher.serve_forever, daemon=True).start()
        try:
            browser.open(f"http://127.0.0.1:{catcher.server_address[1]}/")
            browser.wait_for("#caught", step)
        finally:
            catcher.shutdown()
        cookie = "; ".join(c for c in CookieCatcher.caught if c)
        if "storekit_session_" not in cookie:
            raise Failure(f"the other port received no session cookie, so this proves nothing: {CookieCatcher.caught}")

        step = run.at("its replays of the cookie open nothing")
        replays = {
            "GET /v1/admin/transactions": replay(base, "GET", "/v1/admin/transactions", cookie),
            "GET / as a page": replay(base, "GET", "/", cookie, {"Accept": "text/html", "Sec-Fetch-Mode": "navigate"}),
            "GET /store as a page": replay(base, "GET", "/store?account=alice&device=phone", cookie, {"Accept": "text/html"}),
            "POST /v1/admin/clock/advance": replay(base, "POST", "/v1/admin/clock/advance", cookie,
                                                   {"Content-Type": "application/json", "X-OpenStoreKit-Request": "1"}, b'{"seconds": 86400}'),
            "GET with a guessed secret": replay(base, "GET", "/v1/admin/transactions", cookie, {"X-OpenStoreKit-Session": "0" * 64}),
        }
        seen["replays"] = {name: status for name, (status, _) in replays.items()}
        for name, (status, body) in replays.items():
            if status != 401 or "alice" in body or "product" in body.lower():
                raise Failure(f"{name} replayed from another port answered {status}: {body[:200]}")

        step = run.at("the browser's own session still works")
        browser.open(f"{base}/")
        browser.wait_for("#banner", step)
        seen["afterwards"] = browser.script("return location.pathname + location.search;")

    return run_and_report(browser, work)


if __name__ == "__main__":
    sys.exit(main())
