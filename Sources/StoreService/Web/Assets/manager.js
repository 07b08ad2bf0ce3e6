"use strict";
// The Transaction Manager: the page's script fills it from the admin API (/v1/admin/…) and keeps it
// live through the store's change feed. Every request carries X-OpenStoreKit-Request, which the server
// requires of a change and which a page of another site cannot make the browser send.
(() => {
  const PAGE_SIZE = 50, NOTE_PAGE = 50, CONFIRM_MS = 6000;
  const $ = id => document.getElementById(id);
  const state = {
    order: "newest", after: null, stack: [], nextAfter: null, rows: new Map(), list: [], subscriptions: {}, now: 0,
    sort: { key: "id", direction: "descending" }, accounts: [], devices: [], settings: null, openNotes: new Set(),
    txToken: 0, noteToken: 0, lost: false
  };
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
  const STATE_WORDS = { purchased: "purchased", pendingApproval: "pending approval", interrupted: "interrupted",
    declined: "declined", refunded: "refunded", revoked: "revoked", upgraded: "upgraded", expired: "expired" };
  const STATE_BADGE = { purchased: "owned", pendingApproval: "pending", interrupted: "pending", refunded: "warning",
    revoked: "warning", declined: "warning", expired: "", upgraded: "info" };
  const SUBSCRIPTION_WORDS = { subscribed: "subscribed", expired: "expired", inGracePeriod: "in grace period",
    inBillingRetryPeriod: "in billing retry", revoked: "revoked" };
  const INTENTS = { 1: "the customer cancelled", 2: "billing failed", 3: "the customer declined a price increase",
    4: "the product was no longer for sale", 5: "another reason" };
  const OFFER_TYPES = { 1: "introductory offer", 2: "promotional offer", 3: "offer code", 4: "win-back offer" };
  const DISCOUNTS = { FREE_TRIAL: "free trial", PAY_AS_YOU_GO: "pay as you go", PAY_UP_FRONT: "pay up front", ONE_TIME: "one time" };
  const REFUND_REASONS = { 0: "other reason", 1: "developer issue" };

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
  const money = (milliunits, currency) => `${(Number(milliunits) / 1000).toFixed(2)} ${currency || ""}`.trim();

  // The banner: in the page's flow (it never covers a control), dismissible, replaced by the next message.
  function say(message, kind) {
    $("banner").dataset.kind = kind || "ok";
    $("banner-text").textContent = message;
    $("banner").hidden = false;
  }
  $("banner-dismiss").addEventListener("click", () => { $("banner").hidden = true; });

  async function api(method, path, body) {
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
    } catch (e) { say(e.message, "error"); } finally { if (button && button.isConnected) button.disabled = false; }
  }

  // Transactions

  /// The state the list shows, as the server's filter names it.
  function rowState(t) {
    if (t.revocation) return t.revocation.type === "FAMILY_REVOKE" ? "revoked" : "refunded";
    if (t.isUpgraded) return "upgraded";
    if (t.state === "purchased" && t.expirationDate != null && Number(t.expirationDate) <= state.now) return "expired";
    return t.state;
  }
  const isFinished = t => t.finishedDate != null;
  const subscriptionOf = t => t.productKind === "autoRenewable" ? state.subscriptions[String(t.originalID)] : null;
  const isCurrentPeriod = (t, sub) => sub && sub.latestTransactionID === t.id;

  function query() {
    const q = new URLSearchParams();
    q.set("limit", String(PAGE_SIZE));
    q.set("order", state.order);
    if (state.after !== null) q.set("after", String(state.after));
    [["account", "filter-account"], ["search", "filter-search"], ["type", "filter-type"], ["state", "filter-state"]]
      .forEach(([name, id]) => { const v = $(id).value.trim(); if (v) q.set(name, v); });
    return q.toString();
  }

  async function loadTransactions() {
    const token = ++state.txToken;
    let data;
    try {
      data = await api("GET", "/v1/admin/transactions?" + query());
    } catch (e) {
      // Rows that may no longer be true are not left on screen under a failed filter.
      if (token === state.txToken) {
        state.rows = new Map(); state.list = [];
        fill($("tx-body"), h("tr", {}, h("td", { colspan: 8, class: "empty" }, `The transactions could not be loaded: ${e.message}`)));
      }
      throw e;
    }
    if (token !== state.txToken) return;
    state.nextAfter = data.nextAfter === undefined ? null : data.nextAfter;
    state.subscriptions = data.subscriptions || {};
    state.now = Number(data.now || 0);
    state.list = data.transactions || [];
    renderTransactions();
  }

  // What a subscription row says about its subscription.
  function subscriptionLines(t, sub) {
    const lines = [];
    if (t.offer) {
      const kind = OFFER_TYPES[t.offer.type] || "offer";
      const discount = DISCOUNTS[t.offer.discountType] || "";
      lines.push(h("li", { "data-detail": "offer" }, `Offer: ${kind}${discount ? ", " + discount : ""}` +
        (t.offer.discountType === "FREE_TRIAL" ? "" : ` at ${money(t.price, t.currency)}`)));
    }
    if (t.revocation) {
      lines.push(h("li", { "data-detail": "refund" },
        `${t.revocation.type === "FAMILY_REVOKE" ? "Revoked" : "Refunded"} ${fmtDate(t.revocation.date)} UTC, reason: ${REFUND_REASONS[t.revocation.reason] || t.revocation.reason}`));
    }
    if (!sub) return lines;
    if (!isCurrentPeriod(t, sub)) {
      if (!t.revocation && !t.isUpgraded) lines.push(h("li", {}, `An earlier period; the subscription is now ${SUBSCRIPTION_WORDS[sub.state] || sub.state}`));
      return lines;
    }
    let words = `Subscription: ${SUBSCRIPTION_WORDS[sub.state] || sub.state}`;
    if (sub.state === "expired" && sub.expirationIntent) words += ` (${INTENTS[sub.expirationIntent] || "reason " + sub.expirationIntent})`;
    if (sub.state === "inGracePeriod" && sub.gracePeriodExpirationDate) words += ` until ${fmtDate(sub.gracePeriodExpirationDate)} UTC`;
    if (sub.state === "inBillingRetryPeriod" && sub.billingRetryEndDate) words += ` until ${fmtDate(sub.billingRetryEndDate)} UTC`;
    lines.push(h("li", { "data-detail": "subscription-state" }, words));
    if (sub.state !== "expired" && sub.state !== "revoked") {
      lines.push(h("li", { "data-detail": "auto-renew" }, sub.autoRenewEnabled
        ? `Renews${sub.autoRenewProductID && sub.autoRenewProductID !== t.productID ? " as " + sub.autoRenewProductID : ""}`
        : "Will not renew (automatic renewal off)"));
    }
    if (sub.priceIncrease) {
      lines.push(h("li", { "data-detail": "price-increase" },
        { pending: "Price increase: waiting for the customer's consent", agreed: "Price increase: agreed", declined: "Price increase: declined" }[sub.priceIncrease]
          || `Price increase: ${sub.priceIncrease}`));
    }
    return lines;
  }

  function actionsFor(t, st, sub) {
    const name = `transaction ${t.id} (${t.productID})`;
    const button = (action, text, cls) => h("button",
      { type: "button", class: cls, "data-action": action, "aria-label": `${text} ${name}` }, text);
    const list = [];
    if (st === "pendingApproval") list.push(button("approve", "Approve"), button("decline", "Decline"));
    if (st === "interrupted") list.push(button("resolve", "Resolve"));
    if (t.state === "purchased" && !t.revocation && t.ownership !== "familyShared") list.push(button("refund", "Refund", "danger"));
    if (isCurrentPeriod(t, sub) && !t.revocation) {
      const active = sub.state === "subscribed" || sub.state === "inGracePeriod" || sub.state === "inBillingRetryPeriod";
      if (sub.state === "inGracePeriod" || sub.state === "inBillingRetryPeriod") list.push(button("resolve", "Resolve billing"));
      if (active) {
        list.push(button("expire", "Expire"), button("renew", "Force renew"));
        list.push(sub.autoRenewEnabled ? button("auto-renew-off", "Renewal off") : button("auto-renew-on", "Renewal on"));
      }
      if (sub.state === "subscribed") list.push(button("price-increase", "Price increase"), button("extend", "Extend"));
    }
    if (t.productKind === "autoRenewable") {
      list.push(h("a", { href: `/timeline/${enc(t.originalID)}`, "data-timeline": t.originalID,
        "aria-label": `Timeline of subscription ${t.originalID}` }, "Timeline"));
    }
    list.push(button("delete", "Delete", "danger"));
    return list;
  }

  function txRow(t) {
    const st = rowState(t), sub = subscriptionOf(t);
    const badges = [h("span", { class: `badge ${STATE_BADGE[st] || ""}` }, STATE_WORDS[st] || st)];
    if (t.state === "purchased" && !isFinished(t)) badges.push(" ", h("span", { class: "badge pending" }, "unfinished"));
    // Imported from data Apple signed: it keeps Apple's identifiers (storekit store import).
    if (t.imported) badges.push(" ", h("span", { class: "badge", title: "imported from data the App Store signed" }, "imported"));
    const lines = subscriptionLines(t, sub);
    return h("tr", { "data-transaction-id": t.id, "data-product-id": t.productID, "data-account": t.account, "data-state": st, "data-reason": t.reason,
      "data-subscription-state": isCurrentPeriod(t, sub) ? sub.state : null,
      "data-auto-renew": isCurrentPeriod(t, sub) ? String(sub.autoRenewEnabled) : null,
      "data-price-increase": isCurrentPeriod(t, sub) && sub.priceIncrease ? sub.priceIncrease : null,
      "data-offer": t.offer ? String(t.offer.type) : null },
      h("th", { scope: "row" }, `#${t.id}`, t.originalID !== t.id ? small(`original #${t.originalID}`) : null),
      h("td", { "data-label": "Purchased" }, fmtDate(t.purchaseDate), t.reason && t.reason !== "purchase" ? small(t.reason) : null),
      h("td", { "data-label": "Account" }, t.account, t.device ? small(t.device) : null),
      h("td", { "data-label": "Product" }, h("code", {}, t.productID),
        small(t.productKind + (t.ownership && t.ownership !== "purchased" ? ` · ${t.ownership}` : ""))),
      h("td", { class: "num", "data-label": "Quantity" }, String(t.quantity === undefined ? 1 : t.quantity)),
      h("td", { "data-label": "Expires" }, t.expirationDate != null ? fmtDate(t.expirationDate) : "—"),
      h("td", { "data-label": "State" }, badges, lines.length ? h("ul", { class: "subscription" }, lines) : null),
      h("td", { "data-label": "Actions" }, h("div", { class: "actions" }, actionsFor(t, st, sub))));
  }

  const SORT_VALUE = { id: t => t.id, purchaseDate: t => Number(t.purchaseDate), account: t => t.account,
    productID: t => t.productID, expirationDate: t => Number(t.expirationDate || 0), state: t => rowState(t) };

  function emptyText() {
    const st = $("filter-state").value, search = $("filter-search").value.trim();
    if (state.stack.length) return "No more transactions.";
    if (search) return `No transaction matches “${search}”.`;
    if (st) return `No ${STATE_WORDS[st] || st} transactions.`;
    if ($("filter-account").value || $("filter-type").value) return "No transactions match these filters.";
    return "No transactions yet: buy something on the storefront, or with storekit purchase.";
  }

  function renderTransactions() {
    const body = $("tx-body");
    const active = document.activeElement;
    let restore = null;
    if (active && body.contains(active) && active.dataset.action) {
      restore = { id: active.closest("tr").dataset.transactionId, action: active.dataset.action };
    }
    const { key, direction } = state.sort;
    const list = state.list.slice();
    if (key !== "id" && key !== "purchaseDate") {
      const value = SORT_VALUE[key], sign = direction === "ascending" ? 1 : -1;
      list.sort((a, b) => { const x = value(a), y = value(b); return (x < y ? -1 : x > y ? 1 : 0) * sign || (b.id - a.id); });
    }
    state.rows = new Map(list.map(t => [String(t.id), t]));
    fill(body, list.length ? list.map(txRow) : h("tr", {}, h("td", { colspan: 8, class: "empty" }, emptyText())));
    const confirming = confirmingButton();
    if (confirming) arm(confirming, state.rows.get(state.confirming.id));
    document.querySelectorAll("#tx-table th[data-sort]").forEach(th => {
      if (th.dataset.sort === key) th.setAttribute("aria-sort", direction); else th.removeAttribute("aria-sort");
    });
    $("tx-caption").textContent = `Transactions, ${state.order === "newest" ? "newest" : "oldest"} first; dates in UTC`;
    $("page-label").textContent = `Page ${state.stack.length + 1}`;
    $("page-previous").disabled = state.stack.length === 0;
    $("page-next").disabled = state.nextAfter === null;
    if (restore) {
      const el = body.querySelector(`tr[data-transaction-id="${restore.id}"] [data-action="${restore.action}"]`);
      (el || $("tx-scroll")).focus();
    }
  }

  document.querySelectorAll("#tx-table th[data-sort] button.sort").forEach(button => button.addEventListener("click", () => {
    const key = button.closest("th").dataset.sort;
    const direction = state.sort.key === key && state.sort.direction === "descending" ? "ascending" : "descending";
    state.sort = { key, direction };
    if (key === "id" || key === "purchaseDate") {
      // The ledger's own order: the store pages through it, newest or oldest first.
      state.order = direction === "descending" ? "newest" : "oldest";
      firstPage();
    } else {
      renderTransactions();
    }
  }));

  const txPath = (t, verb) => `/v1/admin/transactions/${t.id}${verb ? "/" + verb : ""}`;
  const subPath = (t, verb) => `/v1/admin/subscriptions/${t.originalID}/${verb}`;
  const ofAccount = t => ({ productID: t.productID, account: t.account });

  /// The days to extend by, checked before anything is sent.
  function extendDays() {
    const input = $("extend-days"), text = input.value.trim(), days = Number(text);
    const ok = /^\d+$/.test(text) && days >= 1 && days <= 90;
    input.setAttribute("aria-invalid", ok ? "false" : "true");
    $("extend-hint").textContent = ok ? "" : "Give a whole number of days from 1 to 90.";
    return ok ? days : null;
  }
  $("extend-days").addEventListener("input", extendDays);

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
    extend: t => {
      const days = extendDays();
      return days === null ? null : ["POST", subPath(t, "extend"), { days }, `Extended subscription ${t.originalID} by ${days} days.`];
    }
  };
  // Refunds and deletions cannot be undone: the button asks for a second press.
  const CONFIRMED = { refund: "Confirm refund", delete: "Confirm delete" };

  // The row awaiting its second press survives redraws (a live refresh redraws every row).
  function arm(button, t) {
    const confirmText = CONFIRMED[button.dataset.action];
    button.dataset.confirming = "yes";
    button.dataset.label = button.textContent;
    button.dataset.spoken = button.getAttribute("aria-label");
    button.classList.add("confirming");
    button.textContent = confirmText;
    button.setAttribute("aria-label", `${confirmText} of transaction ${t.id} (${t.productID})`);
  }

  function confirmingButton() {
    const c = state.confirming;
    return c ? document.querySelector(`#tx-body tr[data-transaction-id="${c.id}"] button[data-action="${c.action}"]`) : null;
  }

  function disarm(button) {
    const c = state.confirming;
    if (c && button.closest("tr") && button.closest("tr").dataset.transactionId === c.id && button.dataset.action === c.action) state.confirming = null;
    if (!button.dataset.confirming) return;
    delete button.dataset.confirming;
    button.classList.remove("confirming");
    button.textContent = button.dataset.label;
    button.setAttribute("aria-label", button.dataset.spoken);
  }

  $("tx-body").addEventListener("click", ev => {
    const button = ev.target.closest("button[data-action]");
    if (!button) return;
    const t = state.rows.get(button.closest("tr").dataset.transactionId);
    const make = ROW_ACTIONS[button.dataset.action];
    if (!t || !make) return;
    const confirmText = CONFIRMED[button.dataset.action];
    if (confirmText && !button.dataset.confirming) {
      const confirming = { id: String(t.id), action: button.dataset.action };
      state.confirming = confirming;
      arm(button, t);
      say(`Press “${confirmText}” again to ${button.dataset.action} transaction ${t.id}; it cannot be undone.`, "info");
      setTimeout(() => {
        if (state.confirming !== confirming) return;
        const current = confirmingButton();
        state.confirming = null;
        if (current) disarm(current);
      }, CONFIRM_MS);
      return;
    }
    state.confirming = null;
    const request = make(t);
    if (!request) return;
    const [method, path, body, message] = request;
    act(() => api(method, path, body), message, button);
  });
  $("tx-body").addEventListener("focusout", ev => {
    const button = ev.target.closest && ev.target.closest("button[data-confirming]");
    if (button && !button.contains(ev.relatedTarget)) disarm(button);
  });

  function firstPage() { state.after = null; state.stack = []; report(loadTransactions()); }
  $("page-next").addEventListener("click", () => {
    if (state.nextAfter !== null) { state.stack.push(state.after); state.after = state.nextAfter; report(loadTransactions()); }
  });
  $("page-previous").addEventListener("click", () => {
    if (state.stack.length) { state.after = state.stack.pop(); report(loadTransactions()); }
  });
  $("filters").addEventListener("submit", ev => { ev.preventDefault(); firstPage(); });
  $("filters").addEventListener("change", ev => { if (ev.target.id !== "filter-search") firstPage(); });
  let typing = null;
  $("filter-search").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(firstPage, 300); });

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
        h("td", { "data-label": "Storefront" }, a.storefront || none("default")),
        h("td", { "data-label": "Ask to Buy" }, a.askToBuy ? "On" : "Off"),
        h("td", { "data-label": "Family group" }, a.familyGroup || none("none")),
        h("td", { "data-label": "Purchases" }, a.inAppPurchasesAllowed === false ? h("span", { class: "badge warning" }, "restricted") : "allowed"),
        h("td", { "data-label": "App account token" }, a.appAccountToken ? h("code", { "data-token": a.appAccountToken }, a.appAccountToken) : none("none")),
        h("td", { "data-label": "Devices" }, devices.length ? h("ul", { class: "device-links" }, devices.map(d => h("li", {},
          h("a", { href: `/store?account=${enc(a.name)}&device=${enc(d.name)}`,
            "aria-label": `${d.name}: open the storefront as ${a.name}` }, d.name)))) : none("no devices")),
        h("td", { "data-label": "Actions" }, h("div", { class: "actions" },
          h("button", { type: "button", "data-action": "edit-account", "aria-label": `Edit account ${a.name}` }, "Edit"),
          h("button", { type: "button", "data-action": "show-account", "aria-label": `Transactions of ${a.name}` },
            "Transactions"))));
    }) : h("tr", {}, h("td", { colspan: 8, class: "empty" }, "No accounts yet: create one below, or buy on the storefront.")));

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
      $("account-token").value = account.appAccountToken || "";
      $("account-devices").value = "";
      $("account-ask").checked = !!account.askToBuy;
      $("account-allowed").checked = account.inAppPurchasesAllowed !== false;
      $("account-storefront").focus();
    }
  });

  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  $("account-form").addEventListener("submit", ev => {
    ev.preventDefault();
    const name = $("account-name").value.trim();
    if (!name) { $("account-name").setAttribute("aria-invalid", "true"); say("An account needs a name.", "error"); $("account-name").focus(); return; }
    $("account-name").removeAttribute("aria-invalid");
    const token = $("account-token").value.trim();
    if (token && token !== "none" && !UUID.test(token)) {
      $("account-token").setAttribute("aria-invalid", "true");
      say("An app account token is a UUID (such as 0a1b2c3d-0000-4000-8000-000000000001), or none.", "error");
      $("account-token").focus();
      return;
    }
    $("account-token").removeAttribute("aria-invalid");
    const body = { askToBuy: $("account-ask").checked, purchasesAllowed: $("account-allowed").checked };
    const storefront = $("account-storefront").value.trim(), family = $("account-family").value.trim();
    if (storefront) body.storefront = storefront;
    if (family) body.familyGroup = family;
    if (token) body.appAccountToken = token.toLowerCase();
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
    if (url && !/^https?:\/\/\S+$/.test(url)) { say("The notification URL is an http or https address, or empty for none.", "error"); return; }
    if (storefront && storefront !== s.storefront) changes.storefront = storefront;
    if (locale && locale !== s.locale) changes.locale = locale;
    if (url !== (s.notificationURL || "")) changes.notificationURL = url || "none";
    if (!Object.keys(changes).length) { say("Nothing to change.", "info"); return; }
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
    if (token !== state.noteToken) return;
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
      h("summary", {}, "Payload"),
      h("pre", {}, payload ? JSON.stringify(expand(payload), null, 2) : "The payload could not be decoded."),
      h("h3", { class: "small" }, "Delivery attempts"), attemptList,
      next ? h("p", { class: "muted" }, `Next attempt ${fmtDate(next)} UTC`) : null);
    details.addEventListener("toggle", () => state.openNotes[details.open ? "add" : "delete"](n.sequence));
    const type = pick(n.notificationType, n.type, "");
    return h("tr", { "data-sequence": n.sequence, "data-notification-uuid": n.notificationUUID },
      h("th", { scope: "row" }, `#${n.sequence}`),
      h("td", { "data-label": "Date" }, fmtDate(pick(n.signedDate, n.date))),
      h("td", { "data-label": "Type" }, h("code", {}, type), n.subtype ? small(n.subtype) : null, small(n.notificationUUID)),
      h("td", { "data-label": "Transaction" }, pick(n.transactionId, n.transactionID, "—")),
      h("td", { "data-label": "Delivery" }, h("span", { class: `badge ${summary === "delivered" ? "owned" : summary.indexOf("failed") > 0 ? "warning" : ""}` }, summary)),
      h("td", { class: "details", "data-label": "Details" }, details));
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
        if (state.lost) { state.lost = false; say("Live updates resumed.", "info"); }
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
