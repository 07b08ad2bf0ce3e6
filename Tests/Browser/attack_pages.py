"""Opens pages in headless Chromium as an attacker's visitor would, and reports what happened.

    python3 attack_pages.py CHROMIUM CHROMEDRIVER ATTACK_URL REBIND_URL BACKEND_REBIND_URL NOTIFICATION

ATTACK_URL is a page of another origin that tries to drive the store and the backend
(Tests/Browser/attack.html); it is done when its title is "done". REBIND_URL and BACKEND_REBIND_URL
are the store's and the backend's addresses under a name that is not theirs, mapped to 127.0.0.1 in
the browser (as DNS rebinding would): the store must refuse its page, and a write from that origin
must fail, to the store (a DELETE) and to the backend (NOTIFICATION, posted as JSON). The last line
of the output is a JSON report.
"""
import json
import sys
import time

from store_pages import Browser, Failure


def main():
    chromium, chromedriver, attack_url, rebind_url, backend_rebind_url, notification = sys.argv[1:7]
    rebind_host = rebind_url.split("//", 1)[1].split(":", 1)[0]
    browser = Browser(chromium, chromedriver, extra_args=[f"--host-resolver-rules=MAP {rebind_host} 127.0.0.1"])
    report = {}
    try:
        browser.open(attack_url)
        deadline = time.time() + 60
        while browser.script("return document.title") != "done":
            if time.time() > deadline:
                raise Failure("the attack page did not finish")
            time.sleep(0.1)
        report["attackFinished"] = True
        browser.open(rebind_url + "/")
        report["rebindPage"] = browser.script("return document.body ? document.body.innerText : ''")
        report["rebindDelete"] = browser.script_async(
            "const done = arguments[arguments.length - 1];"
            "fetch('/v1/admin/transactions', {method: 'DELETE', headers: {'X-OpenStoreKit-Request': '1'}})"
            ".then(r => done(r.status)).catch(e => done('failed: ' + e.message));")
        browser.open(backend_rebind_url + "/health")
        report["backendRebindNotification"] = browser.script_async(
            "const done = arguments[arguments.length - 1];"
            "fetch('/apple/notifications', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: arguments[0]})"
            ".then(r => done(r.status)).catch(e => done('failed: ' + e.message));", notification)
        report["ok"] = True
    except Failure as failure:
        report["ok"] = False
        report["failure"] = str(failure)
    finally:
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
