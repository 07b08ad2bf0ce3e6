/// The web Transaction Manager served at `/` by `storekit serve`: plain HTML, CSS and a little
/// JavaScript, no build step, no CDN, works offline.
enum TransactionManagerPage {
    /// The page: a shell whose script fills it from the admin API.
    static let html: String = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Transaction Manager — OpenStoreKit</title>
<link rel="stylesheet" href="/assets/style.css">
<script src="/assets/manager.js" defer></script>
</head>
<body class="manager">
<header class="app-header">
  <p class="brand"><span class="app-name">OpenStoreKit</span> <span class="app-page">Transaction Manager</span></p>
  <nav aria-label="Pages"><a href="/store">Open the storefront</a></nav>
  <span id="live" class="badge">Connecting…</span>
</header>
<div id="status" class="flash" role="status" aria-live="polite"></div>
<main>
<section class="card" aria-labelledby="clock-title">
  <h2 id="clock-title">Clock</h2>
  <p>Store time: <time id="clock-now">…</time> <span class="muted">UTC</span></p>
  <div class="controls" id="clock-controls">
    <button type="button" data-action="advance" data-period="P1D" aria-label="Advance the clock by one day">+1 day</button>
    <button type="button" data-action="advance" data-period="P1W" aria-label="Advance the clock by one week">+1 week</button>
    <button type="button" data-action="advance" data-period="P1M" aria-label="Advance the clock by one month">+1 month</button>
    <button type="button" data-action="advance" data-period="P1Y" aria-label="Advance the clock by one year">+1 year</button>
  </div>
</section>
<section class="card" aria-labelledby="tx-title">
  <h2 id="tx-title">Transactions</h2>
  <form id="filters" class="controls" role="search" aria-label="Filter transactions">
    <label>Account <select id="filter-account"><option value="">All accounts</option></select></label>
    <label>Product <input id="filter-product" type="search" placeholder="Product ID" autocomplete="off"></label>
    <label>Type <select id="filter-type">
      <option value="">All types</option><option value="consumable">Consumable</option>
      <option value="nonConsumable">Non-consumable</option><option value="autoRenewable">Auto-renewable</option>
      <option value="nonRenewing">Non-renewing</option></select></label>
    <label>State <select id="filter-state">
      <option value="">All states</option><option value="purchased">Purchased</option>
      <option value="pendingApproval">Pending approval</option><option value="interrupted">Interrupted</option>
      <option value="refunded">Refunded</option><option value="revoked">Revoked</option>
      <option value="upgraded">Upgraded</option><option value="expired">Expired</option></select></label>
  </form>
  <div class="controls options">
    <label>Refund reason <select id="refund-reason">
      <option value="other" selected>Other</option><option value="developerIssue">Developer issue</option></select></label>
    <label>Price-increase step <select id="price-increase-action">
      <option value="request">Request consent</option><option value="accept">Accept</option>
      <option value="decline">Decline</option></select></label>
    <label>Extend by (days) <input id="extend-days" type="number" min="1" max="90" value="7" inputmode="numeric"></label>
  </div>
  <div class="table-scroll" id="tx-scroll" role="region" aria-labelledby="tx-title" tabindex="0">
    <table id="tx-table">
      <caption class="visually-hidden">Transactions by ascending ID; dates in UTC</caption>
      <thead><tr><th scope="col">ID</th><th scope="col">Purchased (UTC)</th><th scope="col">Account</th>
        <th scope="col">Product</th><th scope="col">Qty</th><th scope="col">Expires (UTC)</th>
        <th scope="col">State</th><th scope="col">Actions</th></tr></thead>
      <tbody id="tx-body"><tr><td colspan="8" class="empty">Loading…</td></tr></tbody>
    </table>
  </div>
  <nav class="pager" aria-label="Transaction pages">
    <button type="button" id="page-older" data-action="page-older" disabled>← Older</button> <span id="page-label">Page 1</span>
    <button type="button" id="page-newer" data-action="page-newer" disabled>Newer →</button>
  </nav>
</section>
<section class="card" aria-labelledby="accounts-title">
  <h2 id="accounts-title">Accounts and devices</h2>
  <div class="table-scroll" role="region" aria-labelledby="accounts-title" tabindex="0">
    <table>
      <thead><tr><th scope="col">Account</th><th scope="col">Storefront</th><th scope="col">Ask to Buy</th>
        <th scope="col">Family group</th><th scope="col">Purchases</th><th scope="col">Devices (storefront)</th>
        <th scope="col">Actions</th></tr></thead>
      <tbody id="accounts-body"></tbody>
    </table>
  </div>
  <form id="account-form" class="controls" aria-labelledby="account-form-title">
    <h3 id="account-form-title">Create or change an account</h3>
    <label>Name <input id="account-name" required autocomplete="off"></label>
    <label>Storefront <input id="account-storefront" placeholder="unchanged (or default)" autocomplete="off"></label>
    <label>Family group <input id="account-family" placeholder="unchanged (or none)" autocomplete="off"></label>
    <label>Sign in devices <input id="account-devices" placeholder="phone, tablet" autocomplete="off"></label>
    <label class="check"><input id="account-ask" type="checkbox"> Ask to Buy</label>
    <label class="check"><input id="account-allowed" type="checkbox" checked> In-app purchases allowed</label>
    <button type="submit" class="primary">Save account</button>
  </form>
</section>
<section class="card" aria-labelledby="settings-title">
  <h2 id="settings-title">Store settings</h2>
  <fieldset id="setting-flags" class="controls"><legend>Behaviour</legend></fieldset>
  <form id="settings-form" class="controls" aria-label="Store settings">
    <label>Time rate <select id="setting-timeRate"></select></label>
    <label>Storefront <input id="setting-storefront" autocomplete="off"></label>
    <label>Locale <input id="setting-locale" autocomplete="off"></label>
    <label>Notification URL <input id="setting-notificationURL" type="url" placeholder="none" autocomplete="off"></label>
    <button type="submit">Save</button>
    <button type="button" data-action="reset-settings" class="danger">Reset to the file's settings</button>
  </form>
  <form id="error-form" class="controls" aria-label="Simulated errors">
    <label>Simulated error for <select id="error-api"></select></label>
    <label>Failure <input id="error-value" placeholder="generic.networkError or none" autocomplete="off"></label>
    <button type="submit">Set</button>
    <p class="muted">In force: <span id="simulated-errors">none</span></p>
  </form>
</section>
<section class="card" aria-labelledby="notes-title">
  <h2 id="notes-title">Server notifications</h2>
  <div class="controls">
    <button type="button" data-action="test-notification">Send a test notification</button>
    <span class="muted">The latest 50, newest first.</span>
  </div>
  <div class="table-scroll" role="region" aria-labelledby="notes-title" tabindex="0">
    <table>
      <thead><tr><th scope="col">#</th><th scope="col">Date (UTC)</th><th scope="col">Type</th>
        <th scope="col">Transaction</th><th scope="col">Delivery</th><th scope="col">Details</th></tr></thead>
      <tbody id="notes-body"></tbody>
    </table>
  </div>
</section>
</main>
<footer class="muted">OpenStoreKit · changes made anywhere appear here live.</footer>
</body>
</html>
"""#

    /// The page's script, served at `/assets/manager.js`.
    static let script: String = #"""
"use strict";
(() => {
  const PAGE_SIZE = 50, NOTE_PAGE = 50;
  const $ = id => document.getElementById(id);
  const state = { after: null, stack: [], nextAfter: null, rows: new Map(), accounts: [], devices: [],
    settings: null, notesMax: 0, openNotes: new Set(), txToken: 0, noteToken: 0, lost: false };
  const TIME_RATES = [[0, "Real time"], [1, "1 hour is 1 day"], [2, "30 minutes is 1 day"], [3, "5 minutes is 1 day"],
    [4, "1 minute is 1 day"], [5, "30 seconds is 1 day"], [6, "1 second is 1 day"], [10, "Monthly renewal every hour"],
    [11, "Monthly renewal every 30 minutes"], [12, "Monthly renewal every 15 minutes"],
    [13, "Monthly renewal every 5 minutes"], [15, "Monthly renewal every 30 seconds"],
    [1000, "One renewal every 15 minutes"], [1001, "One renewal every 5 minutes"], [1002, "One renewal every minute"],
    [1003, "One renewal every 30 seconds"], [1004, "One renewal every 10 seconds"], [1005, "One renewal every 2 seconds"]];
  const FLAG_LABELS = { askToBuyEnabled: "Ask to Buy", interruptedPurchasesEnabled: "Interrupted purchases",
    shouldEnterBillingRetryOnRenewal: "Billing retry on renewal", billingGracePeriodIsEnabled: "Billing grace period",
    failTransactionsEnabled: "Fail transactions", disableDialogs: "Disable dialogs",
    includesConsumablesInHistory: "Consumables in history" };
  const FAILABLE_APIS = ["loadProducts", "purchase", "verification", "appStoreSync", "subscriptionStatus",
    "appTransaction", "manageSubscriptions", "refundRequest", "offerCodeRedeem"];
  const PERIOD_WORDS = { P1D: "one day", P1W: "one week", P1M: "one month", P1Y: "one year" };
  const STATE_BADGE = { purchased: "owned", pendingApproval: "pending", interrupted: "warning", refunded: "warning",
    declined: "warning" };

  // DOM helpers
  function add(parent, kid) {
    if (Array.isArray(kid)) kid.forEach(k => add(parent, k));
    else if (kid !== null && kid !== undefined && kid !== false) parent.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(key => {
      const value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === "class") el.className = value;
      else if (key === "checked" || key === "value" || key === "selected") el[key] = value;
      else el.setAttribute(key, value === true ? "" : String(value));
    });
    add(el, kids);
    return el;
  }
  function fill(parent, kids) { parent.textContent = ""; add(parent, kids); }
  const small = text => h("div", { class: "muted small" }, text);
  const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
  const enc = encodeURIComponent;

  function fmtDate(ms) {
    const d = new Date(ms === null || ms === undefined ? NaN : Number(ms));
    if (isNaN(d.getTime())) return "";
    const p = n => String(n).padStart(2, "0");
    return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
  }

  function say(message, kind) { $("status").dataset.kind = kind || "ok"; $("status").textContent = message; }

  async function api(method, path, body) {
    // The header marks the request as the page's own script: the server refuses changes without it
    // (or a JSON body), which a page of another site cannot make the browser send.
    const init = { method, headers: { Accept: "application/json", "X-OpenStoreKit-Request": "1" } };
    if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
    let res;
    try { res = await fetch(path, init); } catch (e) { throw new Error(`The store did not answer (${e.message}).`); }
    const text = await res.text();
    let data = null;
    if (text) { try { data = JSON.parse(text); } catch (e) { data = null; } }
    if (!res.ok) {
      const err = data && data.error;
      throw new Error(err && err.message ? err.message : `${method} ${path} failed: ${res.status} ${res.statusText}`);
    }
    return data || {};
  }

  // Runs an action, reports it, and refreshes everything.
  async function act(run, message, button) {
    if (button) button.disabled = true;
    try {
      const result = await run();
      say(typeof message === "function" ? message(result) : message, "ok");
      refreshAll();
      return result;
    } catch (e) { say(e.message, "error"); } finally { if (button) button.disabled = false; }
  }

  // Transactions
  const computedState = t => t.revocation ? "refunded" : t.state;
  const isFinished = t => t.finishedDate != null || t.isFinished === true || t.finished === true;

  function query() {
    const q = new URLSearchParams();
    q.set("limit", String(PAGE_SIZE));
    if (state.after !== null) q.set("after", String(state.after));
    [["account", "filter-account"], ["product", "filter-product"], ["type", "filter-type"], ["state", "filter-state"]]
      .forEach(([name, id]) => { const v = $(id).value.trim(); if (v) q.set(name, v); });
    return q.toString();
  }

  async function loadTransactions() {
    const token = ++state.txToken;
    const data = await api("GET", "/v1/admin/transactions?" + query());
    if (token !== state.txToken) return;
    state.nextAfter = data.nextAfter === undefined ? null : data.nextAfter;
    renderTransactions(data.transactions || []);
  }

  function actionsFor(t) {
    const name = `transaction ${t.id} (${t.productID})`;
    const button = (action, text, spoken, cls) => h("button",
      { type: "button", class: cls, "data-action": action, "aria-label": `${spoken} ${name}` }, text);
    const list = [];
    const sub = t.productKind === "autoRenewable" && !t.revocation;
    if (t.state === "pendingApproval") list.push(button("approve", "Approve", "Approve"), button("decline", "Decline", "Decline"));
    if (!t.revocation) list.push(button("refund", "Refund", "Refund", "danger"));
    if (t.state === "interrupted" || sub) list.push(button("resolve", "Resolve", "Resolve the issue of"));
    if (sub) {
      list.push(button("expire", "Expire", "Expire the subscription of"),
        button("renew", "Force renew", "Force the renewal of"),
        button("auto-renew-off", "Renewal off", "Turn automatic renewal off for"),
        button("auto-renew-on", "Renewal on", "Turn automatic renewal on for"),
        button("price-increase", "Price increase", "Apply the chosen price-increase step to"),
        button("extend", "Extend", "Extend by the chosen days the renewal date of"));
    }
    if (t.productKind === "autoRenewable") {
      list.push(h("a", { href: `/timeline/${enc(t.originalID)}.svg`, "data-timeline": t.originalID, target: "_blank",
        rel: "noopener", "aria-label": `Timeline of subscription ${t.originalID} (opens a new tab)` }, "Timeline"));
    }
    list.push(button("delete", "Delete", "Delete", "danger"));
    return list;
  }

  function txRow(t) {
    const st = computedState(t);
    const badges = [h("span", { class: `badge ${STATE_BADGE[st] || ""}` }, st)];
    if (!isFinished(t)) badges.push(" ", h("span", { class: "badge pending" }, "unfinished"));
    if (t.isUpgraded) badges.push(" ", h("span", { class: "badge" }, "upgraded"));
    if (t.revocation && t.revocation.type) badges.push(small(`${t.revocation.type} ${fmtDate(t.revocation.date)}`));
    return h("tr", { "data-transaction-id": t.id, "data-product-id": t.productID, "data-state": st, "data-reason": t.reason },
      h("th", { scope: "row" }, String(t.id), t.originalID !== t.id ? small(`original ${t.originalID}`) : null),
      h("td", {}, fmtDate(t.purchaseDate), t.reason && t.reason !== "purchase" ? small(t.reason) : null),
      h("td", {}, t.account, t.device ? small(t.device) : null),
      h("td", {}, h("code", {}, t.productID),
        small(t.productKind + (t.ownership && t.ownership !== "purchased" ? ` · ${t.ownership}` : ""))),
      h("td", { class: "num" }, String(t.quantity === undefined ? 1 : t.quantity)),
      h("td", {}, t.expirationDate != null ? fmtDate(t.expirationDate) : "—"),
      h("td", {}, badges),
      h("td", {}, h("div", { class: "actions" }, actionsFor(t))));
  }

  function renderTransactions(list) {
    const body = $("tx-body");
    const active = document.activeElement;
    let restore = null;
    if (active && body.contains(active) && active.dataset.action) {
      restore = { id: active.closest("tr").dataset.transactionId, action: active.dataset.action };
    }
    state.rows = new Map(list.map(t => [String(t.id), t]));
    fill(body, list.length ? list.map(txRow)
      : h("tr", {}, h("td", { colspan: 8, class: "empty" }, state.stack.length ? "No transactions on this page." : "No transactions match.")));
    $("page-label").textContent = `Page ${state.stack.length + 1}`;
    $("page-older").disabled = state.stack.length === 0;
    $("page-newer").disabled = state.nextAfter === null;
    if (restore) {
      const el = body.querySelector(`tr[data-transaction-id="${restore.id}"] [data-action="${restore.action}"]`);
      (el || $("tx-scroll")).focus();
    }
  }

  const txPath = (t, verb) => `/v1/admin/transactions/${t.id}${verb ? "/" + verb : ""}`;
  const subPath = (t, verb) => `/v1/admin/subscriptions/${t.originalID}/${verb}`;
  const ofAccount = t => ({ productID: t.productID, account: t.account });
  const ROW_ACTIONS = {
    refund: t => ["POST", txPath(t, "refund"), { reason: $("refund-reason").value }, `Refunded transaction ${t.id}.`],
    approve: t => ["POST", txPath(t, "approve"), undefined, `Approved transaction ${t.id}.`],
    decline: t => ["POST", txPath(t, "decline"), undefined, `Declined transaction ${t.id}.`],
    resolve: t => ["POST", txPath(t, "resolve"), undefined, `Resolved transaction ${t.id}.`],
    delete: t => ["DELETE", txPath(t), undefined, `Deleted transaction ${t.id}.`],
    expire: t => ["POST", "/v1/admin/subscriptions/expire", ofAccount(t), `Expired ${t.account}'s ${t.productID}.`],
    renew: t => ["POST", "/v1/admin/subscriptions/force-renew", ofAccount(t), `Renewed ${t.account}'s ${t.productID}.`],
    "auto-renew-off": t => ["POST", subPath(t, "renewal"), { enabled: false }, `Automatic renewal off for subscription ${t.originalID}.`],
    "auto-renew-on": t => ["POST", subPath(t, "renewal"), { enabled: true }, `Automatic renewal on for subscription ${t.originalID}.`],
    "price-increase": t => ["POST", subPath(t, "price-increase"), { action: $("price-increase-action").value },
      `Price increase (${$("price-increase-action").value}) for subscription ${t.originalID}.`],
    extend: t => ["POST", subPath(t, "extend"), { days: parseInt($("extend-days").value, 10) },
      `Extended subscription ${t.originalID} by ${parseInt($("extend-days").value, 10)} days.`]
  };

  $("tx-body").addEventListener("click", ev => {
    const button = ev.target.closest("button[data-action]");
    if (!button) return;
    const t = state.rows.get(button.closest("tr").dataset.transactionId);
    const make = ROW_ACTIONS[button.dataset.action];
    if (!t || !make) return;
    const [method, path, body, message] = make(t);
    act(() => api(method, path, body), message, button);
  });

  function firstPage() { state.after = null; state.stack = []; report(loadTransactions()); }
  $("page-newer").addEventListener("click", () => {
    if (state.nextAfter !== null) { state.stack.push(state.after); state.after = state.nextAfter; report(loadTransactions()); }
  });
  $("page-older").addEventListener("click", () => {
    if (state.stack.length) { state.after = state.stack.pop(); report(loadTransactions()); }
  });
  $("filters").addEventListener("submit", ev => { ev.preventDefault(); firstPage(); });
  $("filters").addEventListener("change", firstPage);
  let typing = null;
  $("filter-product").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(firstPage, 400); });

  // Accounts and devices
  async function loadAccounts() {
    const [a, d] = await Promise.all([api("GET", "/v1/admin/accounts"), api("GET", "/v1/admin/devices")]);
    state.accounts = a.accounts || [];
    state.devices = d.devices || [];
    renderAccounts();
  }

  function renderAccounts() {
    const byAccount = new Map();
    state.devices.forEach(d => { if (!byAccount.has(d.account)) byAccount.set(d.account, []); byAccount.get(d.account).push(d); });
    const none = text => h("span", { class: "muted" }, text);
    fill($("accounts-body"), state.accounts.length ? state.accounts.map(a => {
      const devices = byAccount.get(a.name) || [];
      return h("tr", { "data-account": a.name },
        h("th", { scope: "row" }, a.name),
        h("td", {}, a.storefront || none("default")),
        h("td", {}, a.askToBuy ? "On" : "Off"),
        h("td", {}, a.familyGroup || none("none")),
        h("td", {}, a.inAppPurchasesAllowed === false ? h("span", { class: "badge warning" }, "restricted") : "allowed"),
        h("td", {}, devices.length ? h("ul", { class: "device-links" }, devices.map(d => h("li", {},
          h("a", { href: `/store?account=${enc(a.name)}&device=${enc(d.name)}`,
            "aria-label": `Open the storefront as ${a.name} on ${d.name}` }, d.name)))) : none("no devices")),
        h("td", {}, h("div", { class: "actions" },
          h("button", { type: "button", "data-action": "edit-account", "aria-label": `Edit account ${a.name}` }, "Edit"),
          h("button", { type: "button", "data-action": "show-account", "aria-label": `Show the transactions of ${a.name}` },
            "Transactions"))));
    }) : h("tr", {}, h("td", { colspan: 7, class: "empty" }, "No accounts yet.")));

    const select = $("filter-account"), chosen = select.value;
    const names = state.accounts.map(a => a.name);
    if (chosen && names.indexOf(chosen) < 0) names.push(chosen);
    fill(select, [h("option", { value: "" }, "All accounts")].concat(names.map(n => h("option", { value: n }, n))));
    select.value = chosen;
  }

  $("accounts-body").addEventListener("click", ev => {
    const button = ev.target.closest("button[data-action]");
    if (!button) return;
    const account = state.accounts.find(a => a.name === button.closest("tr").dataset.account);
    if (!account) return;
    if (button.dataset.action === "show-account") {
      $("filter-account").value = account.name;
      firstPage();
      $("tx-title").scrollIntoView({ behavior: "smooth" });
    } else {
      $("account-name").value = account.name;
      $("account-storefront").value = account.storefront || "";
      $("account-family").value = account.familyGroup || "";
      $("account-devices").value = "";
      $("account-ask").checked = !!account.askToBuy;
      $("account-allowed").checked = account.inAppPurchasesAllowed !== false;
      $("account-storefront").focus();
    }
  });

  $("account-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const name = $("account-name").value.trim();
    if (!name) { say("An account needs a name.", "error"); return; }
    const body = { askToBuy: $("account-ask").checked, purchasesAllowed: $("account-allowed").checked };
    const storefront = $("account-storefront").value.trim(), family = $("account-family").value.trim();
    if (storefront) body.storefront = storefront;
    if (family) body.familyGroup = family;
    const devices = $("account-devices").value.split(/[\s,]+/).filter(Boolean);
    if (devices.length) body.devices = devices;
    act(() => api("PUT", `/v1/admin/accounts/${enc(name)}`, body), `Saved account ${name}.`,
      ev.target.querySelector("button[type=submit]"));
  });

  // Settings
  function failureText(f) {
    if (f && typeof f === "object") {
      const family = Object.keys(f)[0], inner = f[family];
      const code = inner && typeof inner === "object" ? inner._0 : inner;
      return code === undefined ? family : `${family}.${typeof code === "string" ? code : JSON.stringify(code)}`;
    }
    return typeof f === "string" ? f : JSON.stringify(f);
  }
  function describeErrors(list) {
    const pairs = [];
    if (Array.isArray(list)) { for (let i = 0; i + 1 < list.length; i += 2) pairs.push([list[i], list[i + 1]]); }
    else if (list && typeof list === "object") Object.keys(list).forEach(k => pairs.push([k, list[k]]));
    return pairs.length ? pairs.map(([name, f]) => `${name}: ${failureText(f)}`).join(", ") : "none";
  }
  function setField(id, value) { const el = $(id); if (document.activeElement !== el) el.value = value; }

  async function loadSettings() { renderSettings(await api("GET", "/v1/admin/settings")); }

  function renderSettings(s) {
    state.settings = s;
    Object.keys(s).filter(k => typeof s[k] === "boolean").forEach(key => {
      let box = $(`setting-${key}`);
      if (!box) {
        box = h("input", { type: "checkbox", id: `setting-${key}`, "data-setting": key });
        $("setting-flags").appendChild(h("label", { class: "check" }, box, " ", FLAG_LABELS[key] || key));
      }
      box.checked = s[key];
    });
    const rate = $("setting-timeRate");
    if (![].some.call(rate.options, o => o.value === String(s.timeRate))) rate.appendChild(h("option", { value: String(s.timeRate) }, `Rate ${s.timeRate}`));
    if (document.activeElement !== rate) rate.value = String(s.timeRate);
    setField("setting-storefront", s.storefront || "");
    setField("setting-locale", s.locale || "");
    setField("setting-notificationURL", s.notificationURL || "");
    $("simulated-errors").textContent = describeErrors(s.simulatedErrors);
  }

  // A failed change reloads the settings so the controls show what is in force.
  const patch = (changes, message) => act(() => api("PATCH", "/v1/admin/settings", changes), message)
    .then(s => { if (!s) report(loadSettings()); });
  $("setting-flags").addEventListener("change", ev => {
    const box = ev.target;
    if (!box.dataset.setting) return;
    patch({ [box.dataset.setting]: box.checked }, `${FLAG_LABELS[box.dataset.setting] || box.dataset.setting} is ${box.checked ? "on" : "off"}.`);
  });
  $("setting-timeRate").addEventListener("change", ev => {
    const option = ev.target.selectedOptions[0];
    patch({ timeRate: Number(ev.target.value) }, `Time rate: ${option ? option.textContent : ev.target.value}.`);
  });
  $("settings-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const s = state.settings || {}, changes = {};
    const storefront = $("setting-storefront").value.trim(), locale = $("setting-locale").value.trim();
    const url = $("setting-notificationURL").value.trim();
    if (storefront && storefront !== s.storefront) changes.storefront = storefront;
    if (locale && locale !== s.locale) changes.locale = locale;
    if (url !== (s.notificationURL || "")) changes.notificationURL = url || "none";
    if (!Object.keys(changes).length) { say("Nothing to change.", "ok"); return; }
    patch(changes, "Settings saved.");
  });
  document.querySelector('[data-action="reset-settings"]').addEventListener("click", ev =>
    act(() => api("POST", "/v1/admin/settings/reset"), "Settings are back to the file's.", ev.target));
  $("error-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const name = $("error-api").value, value = $("error-value").value.trim() || "none";
    patch({ [`simulatedError.${name}`]: value }, `Simulated error for ${name}: ${value}.`);
  });

  // Clock
  async function loadClock() {
    const c = await api("GET", "/v1/admin/clock"), el = $("clock-now");
    el.textContent = fmtDate(c.now); el.setAttribute("datetime", c.iso || "");
  }
  $("clock-controls").addEventListener("click", ev => {
    const button = ev.target.closest('button[data-action="advance"]');
    if (!button) return;
    const period = button.dataset.period;
    act(() => api("POST", "/v1/admin/clock/advance", { by: period }), r => {
      const played = typeof r.eventsPlayed === "number" ? `; ${r.eventsPlayed} event${r.eventsPlayed === 1 ? "" : "s"} played` : "";
      return `Advanced the clock by ${PERIOD_WORDS[period] || period} to ${fmtDate(r.now)} UTC${played}.`;
    }, button);
  });

  // Notifications: the server answers the latest page of the outbox (ascending); newest are shown first.
  async function loadNotifications() {
    const token = ++state.noteToken;
    const page = (await api("GET", `/v1/admin/notifications?latest=${NOTE_PAGE}`)).notifications || [];
    const max = page.length ? page[page.length - 1].sequence : 0;
    if (token !== state.noteToken) return;
    state.notesMax = max;
    renderNotifications(page.slice().reverse());
  }

  function decodeJWS(jws) {
    if (typeof jws !== "string" || jws.split(".").length !== 3) return null;
    try {
      let b64 = jws.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      while (b64.length % 4) b64 += "=";
      const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) { return null; }
  }
  // Replaces nested signed fields (signedTransactionInfo, signedRenewalInfo, …) with what they say.
  function expand(value) {
    if (Array.isArray(value)) return value.map(expand);
    if (!value || typeof value !== "object") return value;
    const out = {};
    Object.keys(value).forEach(key => {
      const decoded = /^signed/.test(key) ? decodeJWS(value[key]) : null;
      out[key] = expand(decoded || value[key]);
    });
    return out;
  }
  const pick = (...values) => values.find(v => v !== undefined && v !== null);

  function noteRow(n) {
    const delivery = n.delivery || {};
    const attempts = pick(n.deliveryAttempts, n.attempts, delivery.attempts);
    const next = pick(n.nextAttemptDate, delivery.nextAttemptDate);
    const payload = pick(n.payload, n.decodedPayload, decodeJWS(n.signedPayload));
    let summary = "not reported";
    if (Array.isArray(attempts)) {
      const ok = attempts.some(a => pick(a.result, a.sendAttemptResult) === "SUCCESS");
      summary = ok ? "delivered" : attempts.length ? `${attempts.length} failed` : "not sent";
    }
    const attemptList = Array.isArray(attempts) && attempts.length
      ? h("ul", {}, attempts.map(a => h("li", {}, `${fmtDate(pick(a.date, a.attemptDate))} UTC — ${pick(a.result, a.sendAttemptResult, "?")}`)))
      : h("p", { class: "muted" }, Array.isArray(attempts) ? "No delivery attempts yet." : "Delivery attempts are not reported.");
    const details = h("details", { "data-sequence": n.sequence, open: state.openNotes.has(n.sequence) },
      h("summary", { "aria-label": `Payload and delivery of notification ${n.sequence}` }, "Payload"),
      h("pre", {}, payload ? JSON.stringify(expand(payload), null, 2) : "The payload could not be decoded."),
      h("h4", {}, "Delivery attempts"), attemptList,
      next ? h("p", { class: "muted" }, `Next attempt ${fmtDate(next)} UTC`) : null);
    details.addEventListener("toggle", () => state.openNotes[details.open ? "add" : "delete"](n.sequence));
    const type = pick(n.notificationType, n.type, "");
    return h("tr", { "data-sequence": n.sequence, "data-notification-uuid": n.notificationUUID },
      h("th", { scope: "row" }, String(n.sequence)),
      h("td", {}, fmtDate(pick(n.signedDate, n.date))),
      h("td", {}, h("code", {}, type), n.subtype ? small(n.subtype) : null, small(n.notificationUUID)),
      h("td", {}, pick(n.transactionId, n.transactionID, "—")),
      h("td", {}, h("span", { class: `badge ${summary === "delivered" ? "owned" : summary.indexOf("failed") > 0 ? "warning" : ""}` }, summary)),
      h("td", { class: "details" }, details));
  }

  function renderNotifications(list) {
    fill($("notes-body"), list.length ? list.map(noteRow)
      : h("tr", {}, h("td", { colspan: 6, class: "empty" }, "No notifications yet.")));
  }
  document.querySelector('[data-action="test-notification"]').addEventListener("click", ev =>
    act(() => api("POST", "/v1/admin/notifications/test"), "Queued a TEST notification.", ev.target));

  // Refreshing and live updates
  function report(promise) { return promise.catch(e => say(e.message, "error")); }
  let refreshing = null, again = false;
  function refreshAll() {
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      do {
        again = false;
        const results = await Promise.all([loadTransactions, loadAccounts, loadClock, loadSettings, loadNotifications]
          .map(load => load().then(() => null, e => e)));
        const failure = results.find(Boolean);
        if (failure) say(failure.message, "error");
      } while (again);
      refreshing = null;
    })();
    return refreshing;
  }

  function live(text, kind) { const el = $("live"); el.textContent = text; el.className = `badge ${kind}`; }
  async function poll() {
    let since = -1;
    for (;;) {
      const started = Date.now();
      try {
        const data = await api("GET", `/v1/admin/changes?since=${since}&wait=25`);
        if (state.lost) { state.lost = false; say("Live updates resumed.", "ok"); }
        live("Live", "owned");
        if (typeof data.version !== "number") { await sleep(2000); continue; }
        if (data.version !== since) { since = data.version; await refreshAll(); }
        else if (Date.now() - started < 500) await sleep(1000);
      } catch (e) {
        if (!state.lost) { state.lost = true; say(`Live updates paused: ${e.message} Retrying…`, "error"); }
        live("Offline", "warning");
        await sleep(2000);
      }
    }
  }

  // Start
  fill($("setting-timeRate"), TIME_RATES.map(([value, text]) => h("option", { value: String(value) }, text)));
  fill($("error-api"), FAILABLE_APIS.map(name => h("option", { value: name }, name)));
  refreshAll();
  poll();
})();
"""#

    /// The stylesheet shared with the storefront, served at `/assets/style.css`.
    static let style: String = #"""
:root {
  --bg: #f4f6f9; --surface: #fff; --text: #1b2130; --muted: #5a6376; --border: #dce1e9; --accent: #2d5be3;
  --accent-soft: #e8eefc; --ok: #1a7a3a; --ok-soft: #e3f4e8; --warn: #8f5200; --warn-soft: #fdf1dc; --danger: #b3261e; --danger-soft: #fbe8e6;
  --radius: 12px; --shadow: 0 1px 2px rgba(20, 30, 50, .06), 0 2px 8px rgba(20, 30, 50, .05);
  --font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.5 var(--font); }
main, .storefront { max-width: 1200px; margin: 0 auto; padding: 16px; display: grid; gap: 16px; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible,
[tabindex]:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
h2 { margin: 0 0 12px; font-size: 1.2rem; }
h3 { margin: 0; font-size: 1rem; }
.controls > h3 { flex-basis: 100%; }
h4 { margin: 12px 0 4px; font-size: .9rem; }
code, pre { font-family: var(--mono); font-size: .85em; }
.muted { color: var(--muted); }
.small { font-size: .8rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.app-header { display: flex; align-items: center; gap: 16px; flex-wrap: wrap; padding: 12px 20px;
  background: var(--surface); border-bottom: 1px solid var(--border); }
.brand { margin: 0; font-size: 1.1rem; }
.app-name { font-weight: 700; } .app-page { color: var(--muted); }
.app-header nav { margin-left: auto; }
footer { text-align: center; padding: 16px; font-size: .85rem; }
.card, .group { background: var(--surface); border: 1px solid var(--border); border-radius: var(--radius);
  box-shadow: var(--shadow); padding: 16px 20px; min-width: 0; }
.controls { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: flex-end; margin: 0 0 12px; }
.controls.options { padding-top: 8px; border-top: 1px dashed var(--border); }
fieldset.controls { border: 1px solid var(--border); border-radius: 8px; padding: 8px 12px 12px; }
legend { padding: 0 4px; font-weight: 600; }
label { display: inline-flex; flex-direction: column; gap: 2px; font-size: .85rem; color: var(--muted); }
label.check { flex-direction: row; align-items: center; gap: 6px; color: var(--text); font-size: .9rem; }
input, select, button { font: inherit; font-size: .9rem; color: var(--text); }
input:not([type=checkbox]), select { min-height: 34px; padding: 4px 8px; border: 1px solid var(--border);
  border-radius: 8px; background: var(--surface); min-width: 0; }
input[type=number] { width: 6em; }
input[type=checkbox] { width: 18px; height: 18px; accent-color: var(--accent); }
button, .button { display: inline-flex; align-items: center; justify-content: center; min-height: 32px; padding: 4px 12px;
  border: 1px solid var(--border); border-radius: 8px; background: var(--surface); cursor: pointer;
  text-decoration: none; color: var(--text); white-space: nowrap; }
button:hover, .button:hover { background: var(--accent-soft); border-color: var(--accent); }
button:disabled { opacity: .5; cursor: not-allowed; background: var(--surface); border-color: var(--border); }
button.primary, .button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.primary:hover { filter: brightness(1.1); }
button.danger { color: var(--danger); }
button.danger:hover { background: var(--danger-soft); border-color: var(--danger); }
.flash { position: sticky; top: 0; z-index: 10; max-width: 1200px; margin: 8px auto 0; padding: 10px 16px;
  border-radius: 8px; border: 1px solid var(--ok); background: var(--ok-soft); color: var(--ok); }
.flash[data-kind=error], .flash.error { border-color: var(--danger); background: var(--danger-soft); color: var(--danger); }
.flash:empty { padding: 0; border: 0; margin: 0 auto; }
.table-scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; border: 1px solid var(--border); border-radius: 8px; }
table { width: 100%; border-collapse: collapse; }
th, td { padding: 8px 10px; text-align: left; vertical-align: top; border-bottom: 1px solid var(--border); }
thead th { background: #f8f9fb; font-size: .8rem; text-transform: uppercase; letter-spacing: .03em;
  color: var(--muted); white-space: nowrap; }
tbody tr:last-child > * { border-bottom: 0; }
tbody tr:hover { background: #fafbfd; }
td.num { text-align: right; }
td.empty { text-align: center; color: var(--muted); padding: 24px; }
tr[data-state=refunded] > :not(:last-child) { color: var(--muted); }
.actions { display: flex; flex-wrap: wrap; gap: 4px; }
.actions button, .actions a { min-height: 28px; padding: 2px 8px; font-size: .8rem; }
.actions a { display: inline-flex; align-items: center; }
.device-links { margin: 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 4px 10px; }
.pager { display: flex; align-items: center; justify-content: center; gap: 12px; margin-top: 12px; }
td.details { min-width: 12em; }
details pre { max-width: min(70vw, 720px); max-height: 420px; overflow: auto; padding: 8px; margin: 8px 0 0;
  background: #f6f8fa; border: 1px solid var(--border); border-radius: 6px; }
details ul { margin: 0; padding-left: 18px; font-size: .85rem; }
summary { cursor: pointer; color: var(--accent); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .75rem; font-weight: 600;
  line-height: 1.6; background: #eef0f4; color: var(--muted); white-space: nowrap; }
.badge.current { background: var(--accent-soft); color: var(--accent); }
.badge.owned { background: var(--ok-soft); color: var(--ok); }
.badge.pending { background: var(--warn-soft); color: var(--warn); }
.badge.warning { background: var(--danger-soft); color: var(--danger); }
.storefront > h1, .storefront > h2 { margin: 0; }
.group { display: grid; gap: 12px; }
.group > h2, .group > h3 { margin: 0; }
.plans, .products { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 12px; }
.plan, .product { position: relative; display: flex; flex-direction: column; gap: 6px; padding: 14px 16px;
  background: var(--surface); border: 1px solid var(--border); border-left: 4px solid var(--border);
  border-radius: var(--radius); box-shadow: var(--shadow); }
.plan[data-state=current], .plan[data-state=subscribed], .product[data-state=owned],
.product[data-state=purchased] { border-left-color: var(--ok); }
.plan[data-state=pending], .product[data-state=pending], .plan[data-state=pendingApproval],
.product[data-state=pendingApproval] { border-left-color: var(--warn); }
.plan[data-state=expired], .plan[data-state=refunded], .product[data-state=refunded], .plan[data-state=unavailable],
.product[data-state=unavailable] { border-left-color: var(--danger); opacity: .85; }
.plan h3, .product h3 { margin: 0; font-size: 1rem; } .price { font-size: 1.25rem; font-weight: 700; }
.offer { display: block; padding: 4px 8px; border-radius: 6px; background: var(--warn-soft); color: var(--warn);
  font-size: .85rem; font-weight: 600; }
.plan button, .product button { margin-top: auto; }
.store-buttons { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; }
.device-picker { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: flex-end; }

@media (max-width: 640px) {
  body { font-size: 14px; }
  main, .storefront { padding: 8px; gap: 10px; }
  .card, .group { padding: 12px; }
  .app-header { padding: 10px 12px; gap: 8px; }
  .app-header nav { margin-left: 0; }
  .controls > label, .device-picker > label { flex: 1 1 100%; }
  .controls > label:not(.check) > input, .controls > label > select { width: 100%; }
  table { min-width: 640px; }
  th, td { padding: 6px 8px; }
  .plans, .products { grid-template-columns: 1fr; }
  details pre { max-width: 85vw; }
}
"""#
}
