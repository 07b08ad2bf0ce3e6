"use strict";
// A purchase's page: its action buttons send the Transaction Manager's admin calls (POST, with
// X-OpenStoreKit-Request and this browser's session, which a page of another site cannot send), then
// the page is drawn again from the server. A destructive action (a refund) asks for a second press.
(() => {
  const $ = id => document.getElementById(id);
  const main = $("main");
  const id = main.dataset.transactionId, original = main.dataset.originalId;
  const ofAccount = () => ({ productID: main.dataset.productId, account: main.dataset.account });
  const tx = verb => `/v1/admin/transactions/${id}/${verb}`;
  const sub = verb => `/v1/admin/subscriptions/${original}/${verb}`;
  const value = (name, fallback) => ($(name) ? $(name).value : fallback);
  // What each action sends: path, body, and what the page says once it is done.
  const ACTIONS = {
    refund: () => [tx("refund"), { reason: value("refund-reason", "other") }, "Refunded."],
    approve: () => [tx("approve"), undefined, "Approved."],
    decline: () => [tx("decline"), undefined, "Declined."],
    resolve: () => [tx("resolve"), undefined, "Resolved."],
    expire: () => ["/v1/admin/subscriptions/expire", ofAccount(), "Expired."],
    renew: () => ["/v1/admin/subscriptions/force-renew", ofAccount(), "Renewed."],
    "auto-renew-off": () => [sub("renewal"), { enabled: false }, "Automatic renewal is off: the subscription ends with this period."],
    "auto-renew-on": () => [sub("renewal"), { enabled: true }, "Automatic renewal is on again."],
    "price-increase": () => [sub("price-increase"), { action: value("price-increase-action", "request") }, "Price increase step done."],
    extend: () => {
      const days = Number(value("extend-days", "7"));
      if (!Number.isInteger(days) || days < 1 || days > 90) return null;
      return [sub("extend"), { days }, `Extended by ${days} days.`];
    }
  };

  function sessionHeaders(headers) {
    let secret = null;
    try { secret = localStorage.getItem("osk_session"); } catch (e) { secret = null; }
    if (secret) headers["X-OpenStoreKit-Session"] = secret;
    return headers;
  }

  function tell(text, kind) {
    $("action-status").textContent = text;
    $("action-status").dataset.kind = kind || "ok";
  }

  // Draws the page again from the server (the facts, payloads and actions as they are now), keeping
  // the focus on the same action when it is still offered.
  async function redraw(focusAction, message) {
    const response = await fetch(location.href, { headers: sessionHeaders({ Accept: "text/html" }), cache: "no-store" });
    if (!response.ok) throw new Error(`the page answered ${response.status}`);
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("main");
    if (!fresh) return;
    main.replaceChildren(...Array.from(fresh.childNodes).map(node => document.importNode(node, true)));
    if ($("action-status")) tell(message, "ok");
    const again = focusAction && main.querySelector(`button[data-action="${focusAction}"]`);
    (again || main).focus();
  }

  document.addEventListener("click", async ev => {
    const button = ev.target.closest("button[data-action]");
    if (!button || !main.contains(button)) return;
    const make = ACTIONS[button.dataset.action];
    if (!make) return;
    if (button.classList.contains("danger") && button.dataset.confirming !== "yes") {
      button.dataset.confirming = "yes";
      button.dataset.label = button.textContent;
      button.textContent = `Confirm ${button.dataset.action}`;
      tell(`Press “Confirm ${button.dataset.action}” to ${button.dataset.action} transaction ${id}; it cannot be undone.`, "info");
      return;
    }
    const call = make();
    if (!call) { tell("Give a whole number of days from 1 to 90.", "error"); return; }
    const [path, body, done] = call;
    button.disabled = true;
    try {
      const init = { method: "POST", headers: sessionHeaders({ Accept: "application/json", "X-OpenStoreKit-Request": "1" }) };
      if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
      const response = await fetch(path, init);
      if (!response.ok) {
        let reason = `the store answered ${response.status}`;
        try { const answer = await response.json(); reason = answer.errorMessage || answer.message || reason; } catch (e) { /* not JSON */ }
        throw new Error(reason);
      }
      await redraw(button.dataset.action, done);
    } catch (e) {
      button.disabled = false;
      tell(`Not done: ${e.message}`, "error");
    }
  });
})();
