"""The whole retention flow of a local store, as the developer and the customers meet it.

The developer, with Apple's own AppStoreServerAPIClient (PyPI app-store-server-library, only its base
URL pointed at the store): uploads an image and three messages, has App Store review approve them
(the store's admin API), sets the default message and registers the real-time URL. Then each customer
opens the storefront in headless Chromium, taps Cancel Subscription, reads what the page shows and
gives their answer; the Transaction Manager's page of each purchase is read, and last the backend's
dashboard, once the notifications of the customers' answers have reached it.

usage: cancel_on_storefront.py SCENARIO_JSON CHROMIUM CHROMEDRIVER [AXE_JS]

SCENARIO_JSON: {"store", "key": {"keyId", "issuerId", "privateKey"}, "bundleId", "environment",
"productId", "image", "messages": {"text", "plan", "offer"}, "realtimeURL",
"customers": [{"account", "device", "answer", "subscription", "everyView"}], "backend", "backendKey", "acted",
"screenshots": a folder for the pictures docs/retention-messaging.md shows, or null}.

Prints one JSON line: {"ok": true, ...what was seen} or the failing step.
"""
import json
import os
import sys
import time
import urllib.parse
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Interop"))

from appstoreserverlibrary.api_client import AppStoreServerAPIClient
from appstoreserverlibrary.models.DefaultConfigurationRequest import DefaultConfigurationRequest
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.RealtimeUrlRequest import RealtimeUrlRequest
from appstoreserverlibrary.models.UploadMessageImage import UploadMessageImage
from appstoreserverlibrary.models.UploadMessageRequestBody import UploadMessageRequestBody

from retention_messaging_with_apple_library import png
from dashboard_checks import sign_in
from store_pages import Browser, admin, run_and_report


def set_up_messages(scenario, run):
    """The developer's side, through Apple's client: what the customers' pages will show."""
    key = scenario["key"]
    client = AppStoreServerAPIClient(key["privateKey"].encode(), key["keyId"], key["issuerId"], scenario["bundleId"],
                                     Environment(scenario["environment"]))
    client._base_url = scenario["store"]
    messages = scenario["messages"]
    run.at("upload the image and three messages with Apple's client")
    client.upload_image(uuid.UUID(scenario["image"]), png(3840, 400))
    client.upload_message(uuid.UUID(messages["text"]), UploadMessageRequestBody(
        header="Before you go", body="Premium keeps your plans in sync on every device.",
        image=UploadMessageImage(imageIdentifier=uuid.UUID(scenario["image"]), altText="Plans on a phone and a laptop")))
    client.upload_message(uuid.UUID(messages["plan"]), UploadMessageRequestBody(
        header="A plan that fits", body="Premium monthly keeps everything, billed month by month."))
    client.upload_message(uuid.UUID(messages["offer"]), UploadMessageRequestBody(
        header="Stay for less", body="Your next month is at a loyalty price."))

    def states():
        images = [item.imageState.value for item in client.get_image_list().imageIdentifiers or []]
        texts = [item.messageState.value for item in client.get_message_list().messageIdentifiers or []]
        return sorted(images + texts)

    run.seen["statesBeforeReview"] = states()
    run.at("approve them, as App Store review would")
    for identifier in [scenario["image"], *messages.values()]:
        admin(scenario["store"], "POST", f"/v1/admin/retention/{identifier}/review", {"state": "APPROVED"})
    run.seen["statesAfterReview"] = states()
    run.at("set the default message and the real-time URL")
    client.configure_default_message(scenario["productId"], "en-US", DefaultConfigurationRequest(messageIdentifier=uuid.UUID(messages["text"])))
    client.configure_realtime_url(RealtimeUrlRequest(realtimeURL=scenario["realtimeURL"]))
    run.seen["realtimeURL"] = client.get_realtime_url().realtimeURL


def cancel(browser, scenario, customer, run, axe):
    """One customer: Cancel Subscription on the storefront, what the page shows, their answer."""
    account, device, answer = customer["account"], customer["device"], customer["answer"]
    query = urllib.parse.urlencode({"account": account, "device": device})
    run.at(f"{account}: open the storefront")
    browser.open(f"{scenario['store']}/store?{query}")
    run.at(f"{account}: tap Cancel Subscription")
    browser.click('button[data-action="cancel"]', run.step)
    run.at(f"{account}: the cancellation page")
    browser.wait_for("section.cancellation[data-attempt]", run.step, seconds=90)
    shown = browser.script(
        "const s = document.querySelector('section.cancellation'); const img = s.querySelector('img.retention-image');"
        "const text = sel => { const e = s.querySelector(sel); return e ? e.textContent : null; };"
        "return {source: s.dataset.source, kind: s.dataset.kind, message: s.dataset.messageId,"
        " failure: text('[data-realtime-failure]'), header: text('.retention-header'), body: text('.retention-body'), suggestion: text('.suggestion'), offer: text('.offer'),"
        " image: img ? {alt: img.alt, loaded: img.complete && img.naturalWidth > 0, width: img.naturalWidth} : null,"
        " answers: Array.from(s.querySelectorAll('button[data-answer]')).map(b => b.dataset.answer)};")
    shown["accessEnds"] = browser.script("const e = document.querySelector('[data-access-ends]'); return e ? e.textContent : null;")
    shown["pageText"] = browser.script("return document.querySelector('section.cancellation').textContent;")
    run.seen[account] = shown
    if scenario.get("screenshots") and shown.get("image"):
        browser.screenshot(os.path.join(scenario["screenshots"], "cancellation-page.png"))
    if axe:
        shown["axe"] = browser.axe(axe)
        if customer.get("everyView"):
            shown["views"] = every_view(browser, axe)
    run.at(f"{account}: answer {answer}")
    browser.click(f'button[data-answer="{answer}"]', run.step)
    browser.wait_for(f'section.cancellation[data-outcome="{answer}"]', run.step, seconds=90)
    shown["outcome"] = browser.script("return document.querySelector('.outcome').textContent;")
    run.at(f"{account}: back on the storefront")
    browser.click('a[href^="/store?"]', run.step)
    browser.wait_for("section.group", run.step)
    shown["cancelOfferedAfter"] = browser.script("return document.querySelector('button[data-action=\"cancel\"]') !== null;")
    shown["planAfter"] = browser.script("const p = document.querySelector('p.current-plan'); return p ? p.textContent : null;")
    shown["resubscribeOffered"] = browser.script("return document.querySelector('button[data-action=\"resubscribe\"]') !== null;")
    run.seen[account] = shown


def every_view(browser, axe):
    """axe-core on the open page at 1400 and 390 px, light and dark, and whether it scrolls sideways."""
    views = {}
    for scheme in ["light", "dark"]:
        browser.color_scheme(scheme)
        for width in [1400, 390]:
            browser.set_window(width, 900)
            browser.settle()
            views[f"{width}-{scheme}"] = {"axe": browser.axe(axe), "sideways": browser.script(
                "return document.documentElement.scrollWidth > document.documentElement.clientWidth;")}
    browser.color_scheme("light")
    browser.set_window(1200, 1500)
    return views


def transaction_manager(browser, scenario, customer, run):
    """The Transaction Manager's page of the purchase: its cancellation attempts."""
    run.at(f"{customer['account']}: the Transaction Manager's page of the purchase")
    browser.open(f"{scenario['store']}/transactions/{customer['subscription']}")
    browser.wait_for("tr[data-cancellation]", run.step)
    return browser.script(
        "return Array.from(document.querySelectorAll('tr[data-cancellation]')).map(r => ({outcome: r.dataset.outcome, text: r.textContent}));")


def backend_dashboard(browser, scenario, run, axe):
    """The backend's dashboard: a row per message with what it led to, once `acted` answers are in."""
    run.at("the backend's dashboard: sign in")
    browser.open(f"{scenario['backend']}/dashboard")
    browser.wait_for("#key", run.step)
    sign_in(browser, scenario["backendKey"])
    run.at("the backend's dashboard: the retention messages")
    browser.wait_for("#retention-title", run.step)
    # The signed-in page's address carries the session's page secret (the cookie alone opens nothing).
    signed_in = browser.script("return location.href;")
    read = ("return Array.from(document.querySelectorAll('table.retention tr[data-message]'))"
            ".map(r => [r.dataset.message, ...Array.from(r.querySelectorAll('td')).map(c => c.textContent)]);")
    deadline = time.time() + 120
    rows = browser.script(read)
    # Cells: shown, kept, switched, redeemed, cancelled, saved.
    while sum(int(row[3]) + int(row[4]) + int(row[5]) for row in rows) < scenario["acted"] and time.time() < deadline:
        time.sleep(0.5)
        browser.open(signed_in)
        browser.wait_for("#retention-title", run.step)
        rows = browser.script(read)
    run.seen["dashboard"] = {row[0]: row[1:] for row in rows}
    run.seen["dashboardNames"] = browser.script(
        "const out = {}; document.querySelectorAll('table.retention tr[data-message]').forEach(r => {"
        " out[r.dataset.message] = r.querySelector('.message-name').textContent; }); return out;")
    if axe:
        run.seen["dashboardAxe"] = browser.axe(axe)
        run.seen["dashboardViews"] = every_view(browser, axe)


def main():
    scenario_path, chromium, chromedriver = sys.argv[1:4]
    axe_path = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    with open(scenario_path) as file:
        scenario = json.load(file)
    axe = open(axe_path).read() if axe_path else None
    browser = Browser(chromium, chromedriver)

    def work(run):
        set_up_messages(scenario, run)
        for customer in scenario["customers"]:
            cancel(browser, scenario, customer, run, axe)
        run.seen["transactionManager"] = {customer["account"]: transaction_manager(browser, scenario, customer, run)
                                          for customer in scenario["customers"]}
        backend_dashboard(browser, scenario, run, axe)

    return run_and_report(browser, work)


if __name__ == "__main__":
    sys.exit(main())
