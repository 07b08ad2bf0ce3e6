"use strict";
// The storefront's script: its forms answer in place (the server tells what happened as JSON), and
// the page follows the store live through the change feed (approvals, refunds, renewals, the clock),
// redrawing the products without a reload. Without script the forms still work, as plain posts.
(() => {
  const $ = id => document.getElementById(id);
  const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
  // A store started with a token keeps this browser's session secret in this origin's storage (never
  // in a cookie, which other ports' servers receive too); every request carries it.
  function sessionHeaders(headers) {
    let secret = null;
    try { secret = localStorage.getItem("osk_session"); } catch (e) { secret = null; }
    if (secret) headers["X-OpenStoreKit-Session"] = secret;
    return headers;
  }
  let lost = false;

  function say(message, kind) {
    $("banner").dataset.kind = kind || "ok";
    $("banner-text").textContent = message;
    $("banner").hidden = false;
  }
  $("banner-dismiss").addEventListener("click", () => { $("banner").hidden = true; });

  // Redraws the products from the page as the server draws it now, keeping the focus where it was.
  async function redraw() {
    const response = await fetch(location.href, { headers: sessionHeaders({ Accept: "text/html" }), cache: "no-store" });
    if (!response.ok) throw new Error(`the storefront answered ${response.status}`);
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("main");
    if (!fresh) return;
    const active = document.activeElement, main = $("main");
    let focus = null;
    if (active && main.contains(active)) {
      const card = active.closest("[data-product-id]");
      focus = { product: card && card.dataset.productId, action: active.dataset.action, name: active.getAttribute("name") };
    }
    main.replaceChildren(...Array.from(fresh.childNodes).map(node => document.importNode(node, true)));
    if (focus) {
      const within = focus.product ? main.querySelector(`[data-product-id="${CSS.escape(focus.product)}"]`) : main;
      const again = within && (focus.action ? within.querySelector(`[data-action="${focus.action}"]`)
        : focus.name ? within.querySelector(`[name="${focus.name}"]`) : null);
      (again && !again.disabled ? again : main).focus();
    }
  }

  document.addEventListener("submit", async ev => {
    const form = ev.target;
    if (!form.matches("form[data-enhanced]")) return;
    ev.preventDefault();
    const button = form.querySelector("button[type=submit]");
    if (button) button.disabled = true;
    try {
      const response = await fetch(form.action, {
        method: "POST", body: new URLSearchParams(new FormData(form)),
        headers: sessionHeaders({ Accept: "application/json", "X-OpenStoreKit-Request": "1" })
      });
      let answer = {};
      try { answer = await response.json(); } catch (e) { answer = { message: `The store answered ${response.status}.`, kind: "error" }; }
      say(answer.message || "Done.", answer.kind || (response.ok ? "ok" : "error"));
      await redraw();
    } catch (e) {
      say(`The store did not answer (${e.message}).`, "error");
      if (button) button.disabled = false;
    }
  });

  async function follow() {
    let since = -1;
    for (;;) {
      const started = Date.now();
      try {
        const response = await fetch(`/v1/admin/changes?since=${since}&wait=25`,
          { headers: sessionHeaders({ Accept: "application/json", "X-OpenStoreKit-Request": "1" }), cache: "no-store" });
        if (!response.ok) throw new Error(`${response.status}`);
        const data = await response.json();
        if (lost) { lost = false; say("Live updates resumed.", "info"); }
        if (typeof data.version !== "number") { await sleep(2000); continue; }
        if (since !== -1 && data.version !== since) await redraw();
        if (data.version === since && Date.now() - started < 500) await sleep(1000);
        since = data.version;
      } catch (e) {
        if (!lost) { lost = true; say(`Live updates paused (${e.message}); retrying.`, "error"); }
        await sleep(2000);
      }
    }
  }
  follow();
})();
