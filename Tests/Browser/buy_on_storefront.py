"""Buys one product on the storefront of a running store in headless Chromium, as a person would.

usage: buy_on_storefront.py STOREFRONT_URL ACCOUNT DEVICE PRODUCT_ID CHROMIUM CHROMEDRIVER

Prints one JSON object: {"ok": true, "message": what the page said} or the failing step.
"""
import json
import sys
import urllib.parse

from store_pages import Browser


def main():
    storefront, account, device, product, chromium, chromedriver = sys.argv[1:7]
    browser = Browser(chromium, chromedriver)
    step = "open the storefront"
    try:
        query = urllib.parse.urlencode({"account": account, "device": device})
        browser.open(f"{storefront}?{query}")
        step = f"buy {product}"
        browser.click(f'article[data-product-id="{product}"] button[data-action="buy"]', step)
        browser.wait_for(f'article[data-product-id="{product}"][data-state="owned"], article[data-product-id="{product}"][data-state="current"]', step)
        message = browser.script("return document.getElementById('banner-text').textContent;")
    except Exception as failure:
        print(json.dumps({"ok": False, "step": step, "error": f"{type(failure).__name__}: {failure}"}), flush=True)
        return 1
    finally:
        browser.close()
    print(json.dumps({"ok": True, "message": message}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
