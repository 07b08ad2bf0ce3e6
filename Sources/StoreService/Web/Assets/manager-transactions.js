// The transactions table: a page of the ledger at a time, filtered and ordered by the store; each
// row drawn from what the server says of it (its state, its lines, the actions that apply).
import { $, state, h, fill, small, enc, fmtDate, say, api, act, report, loadsWith } from "./manager-page.js";

const PAGE_SIZE = 50, CONFIRM_MS = 6000, COLUMNS = 9;

const presentation = t => state.presentations[String(t.id)] || { state: t.state, stateLabel: t.state, badge: "", details: [], actions: [] };

// The filters as the page's controls hold them, by the admin API's names (and the page's address's).
const FILTERS = [["account", "filter-account"], ["search", "filter-search"], ["type", "filter-type"], ["state", "filter-state"],
  ["from", "filter-from"], ["to", "filter-to"]];

// Every filter and order is the store's, over the whole ledger: the page shows what the server sends.
function query(start) {
  const q = new URLSearchParams();
  q.set("limit", String(PAGE_SIZE));
  q.set("sort", state.sort.key);
  q.set("order", state.sort.direction);
  if (start.page) q.set("page", String(start.page));
  else if (start.after !== null && start.after !== undefined) q.set("after", String(start.after));
  FILTERS.forEach(([name, id]) => { const v = $(id).value.trim(); if (v) q.set(name, v); });
  return q;
}

// The page's address says what the list shows (filters, order, page), so going back to it from a
// purchase's page, or reloading it, shows the same page.
function remember(start) {
  const q = query(start);
  q.delete("limit");
  if (q.get("sort") === "id") q.delete("sort");
  if (q.get("order") === "descending") q.delete("order");
  if (state.page > 1) q.set("page", String(state.page)); else q.delete("page");
  const address = q.toString() ? `${location.pathname}?${q}` : location.pathname;
  if (address !== location.pathname + location.search) history.replaceState(history.state, "", address);
}

/// Sets the controls from the page's address (a page opened again, or reached by going back).
export function restoreFromAddress() {
  const q = new URLSearchParams(location.search);
  FILTERS.forEach(([name, id]) => { if (q.has(name)) $(id).value = q.get(name); });
  const key = q.get("sort"), direction = q.get("order");
  if (key && [...$("sort-key").options].some(o => o.value === key)) state.sort.key = key;
  if (direction === "ascending" || direction === "descending") state.sort.direction = direction;
  $("sort-key").value = state.sort.key;
  $("sort-order").value = state.sort.direction;
  const page = Number(q.get("page") || "1"), after = q.get("after");
  state.stack = [];
  if (after) { state.start = { after }; state.page = Number.isInteger(page) && page > 1 ? page : 1; }
  else if (Number.isInteger(page) && page > 1) { state.start = { page }; state.page = page; }
  else { state.start = { after: null }; state.page = 1; }
}

// While a page is on its way the rows on screen are marked stale (aria-busy, dimmed, "Loading…");
// a newer request cancels the one before it, whose answer could only overwrite a newer choice.
let inFlight = null;
function busy(on) {
  $("tx-table").setAttribute("aria-busy", on ? "true" : "false");
  $("tx-body").classList.toggle("stale", on);
  $("tx-status").textContent = on ? "Loading…" : "";
}

export async function loadTransactions() {
  const token = ++state.txToken;
  if (inFlight) inFlight.abort();
  const controller = new AbortController();
  inFlight = controller;
  const start = state.start;
  busy(true);
  let data;
  try {
    data = await api("GET", "/v1/admin/transactions?" + query(start), undefined, controller.signal);
  } catch (e) {
    if (token !== state.txToken) return;
    inFlight = null;
    busy(false);
    // Rows that may no longer be true are not left on screen under a failed filter.
    state.rows = new Map(); state.list = [];
    fill($("tx-body"), h("tr", {}, h("td", { colspan: COLUMNS, class: "empty" }, `The transactions could not be loaded: ${e.message}`)));
    throw e;
  }
  if (token !== state.txToken) return;
  inFlight = null;
  state.next = data.next === undefined || data.next === null ? null : data.next;
  state.presentations = data.rows || {};
  state.now = Number(data.now || 0);
  state.list = data.transactions || [];
  renderTransactions();
  busy(false);
  remember(start);
}
loadsWith(loadTransactions);

// The actions that move a purchase along (approve, decline, resolve) stay on the row with a link to
// the purchase's page; the rest wait in a menu, so every row is one line of buttons.
const ON_ROW = new Set(["approve", "decline", "resolve"]);

function actionControl(t, a) {
  const name = `transaction ${t.id} (${t.productID})`;
  return a.href
    ? h("a", { href: a.href, "data-timeline": t.originalID, "aria-label": `${a.label} of subscription ${t.originalID}` }, a.label)
    : h("button", { type: "button", class: a.destructive ? "danger" : null, "data-action": a.action, "aria-label": `${a.label} ${name}` }, a.label);
}

function actionsFor(t, row) {
  const onRow = row.actions.filter(a => ON_ROW.has(a.action)), inMenu = row.actions.filter(a => !ON_ROW.has(a.action));
  const controls = onRow.map(a => actionControl(t, a));
  controls.push(h("a", { href: `/transactions/${t.id}`, class: "detail-link", "aria-label": `Details of transaction ${t.id}` }, "Details"));
  if (inMenu.length) {
    const open = state.openMenu === String(t.id);
    controls.push(h("details", { class: "row-menu", "data-menu-for": t.id, open },
      h("summary", { "aria-label": `More actions for transaction ${t.id} (${t.productID})` }, "More"),
      h("div", { class: "menu" }, inMenu.map(a => actionControl(t, a)))));
  }
  return controls;
}

const money = (milliunits, currency) => milliunits === undefined || milliunits === null ? "—"
  : `${(Number(milliunits) / 1000).toFixed(2)} ${currency || ""}`.trim();

// A product identifier may break after each dot (a line break opportunity, no character added).
const breakable = id => String(id).split(".").flatMap((part, i, all) => i < all.length - 1 ? [part + ".", h("wbr", {})] : [part]);

function tokenCell(t) {
  if (!t.appAccountToken) return "—";
  const token = String(t.appAccountToken).toLowerCase();
  return h("code", { class: "token", title: token, "data-token": token }, token.slice(0, 8) + "…");
}

function txRow(t) {
  const row = presentation(t);
  const badges = [h("span", { class: `badge ${row.badge}` }, row.stateLabel)];
  if (t.state === "purchased" && t.finishedDate == null) badges.push(" ", h("span", { class: "badge pending" }, "unfinished"));
  // Imported from data Apple signed: it keeps Apple's identifiers (storekit store import).
  if (t.imported) badges.push(" ", h("span", { class: "badge", title: "imported from data the App Store signed" }, "imported"));
  const lines = row.details.map((d, i) => [i ? " · " : null, h("span", { "data-detail": d.detail }, d.text)]);
  const quantity = t.quantity !== undefined && t.quantity > 1 ? ` ×${t.quantity}` : "";
  return h("tr", { "data-transaction-id": t.id, "data-product-id": t.productID, "data-account": t.account, "data-state": row.state, "data-reason": t.reason,
    "data-subscription-state": row.subscriptionState, "data-auto-renew": row.autoRenew === undefined || row.autoRenew === null ? null : String(row.autoRenew),
    "data-price-increase": row.priceIncrease, "data-offer": t.offer ? String(t.offer.type) : null },
    h("th", { scope: "row" }, `#${t.id}`, t.originalID !== t.id ? small(`of #${t.originalID}`) : null),
    h("td", { class: "date", "data-label": "Purchased" }, fmtDate(t.purchaseDate), t.reason && t.reason !== "purchase" ? small(t.reason) : null),
    h("td", { "data-label": "Account" }, t.account, t.device ? small(t.device) : null, t.appAccountToken ? small(tokenCell(t)) : null),
    h("td", { "data-label": "Product" }, h("code", {}, breakable(t.productID)),
      small(t.productKind + quantity + (t.ownership && t.ownership !== "purchased" ? ` · ${t.ownership}` : ""))),
    h("td", { class: "num", "data-label": "Price" }, money(t.price, t.currency)),
    h("td", { "data-label": "Storefront" }, t.storefront || "—"),
    h("td", { class: "date", "data-label": "Expires" }, t.expirationDate != null ? fmtDate(t.expirationDate) : "—"),
    h("td", { "data-label": "State" }, badges, lines.length ? h("p", { class: "lines" }, lines) : null),
    h("td", { "data-label": "Actions" }, h("div", { class: "actions" }, actionsFor(t, row))));
}

function emptyText() {
  const chosen = $("filter-state").value, search = $("filter-search").value.trim();
  if (state.page > 1) return `No transactions on page ${state.page}: the list is shorter.`;
  if (search) return `No transaction matches “${search}”.`;
  if (chosen) {
    const known = state.vocabulary.transactionStates.find(s => s.state === chosen);
    return `No ${known ? known.label : chosen} transactions.`;
  }
  if ($("filter-account").value || $("filter-type").value || $("filter-from").value || $("filter-to").value) return "No transactions match these filters.";
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
  const list = state.list;
  state.rows = new Map(list.map(t => [String(t.id), t]));
  fill(body, list.length ? list.map(txRow) : h("tr", {}, h("td", { colspan: COLUMNS, class: "empty" }, emptyText())));
  const confirming = confirmingButton();
  if (confirming) arm(confirming, state.rows.get(state.confirming.id));
  document.querySelectorAll("#tx-table th[data-sort]").forEach(th => {
    if (th.dataset.sort === key) th.setAttribute("aria-sort", direction); else th.removeAttribute("aria-sort");
  });
  const sortLabel = $("sort-key").selectedOptions[0] ? $("sort-key").selectedOptions[0].textContent : key;
  $("tx-caption").textContent = `Transactions by ${sortLabel.toLowerCase()}, ${direction}; dates in UTC`;
  $("page-label").textContent = `Page ${state.page}`;
  $("page-number").value = "";
  $("page-number").placeholder = String(state.page);
  $("page-previous").disabled = state.page <= 1;
  $("page-next").disabled = state.next === null;
  if (restore) {
    const el = body.querySelector(`tr[data-transaction-id="${restore.id}"] [data-action="${restore.action}"]`);
    (el || $("tx-scroll")).focus();
  }
}

/// Orders the list by a column: the store sorts the whole ledger, and the list starts again at page 1.
function sortBy(key, direction) {
  state.sort = { key, direction };
  $("sort-key").value = key;
  $("sort-order").value = direction;
  firstPage();
}
document.querySelectorAll("#tx-table th[data-sort] button.sort").forEach(button => button.addEventListener("click", () => {
  const key = button.closest("th").dataset.sort;
  sortBy(key, state.sort.key === key && state.sort.direction === "descending" ? "ascending" : "descending");
}));
$("sort-key").addEventListener("change", () => sortBy($("sort-key").value, $("sort-order").value));
$("sort-order").addEventListener("change", () => sortBy($("sort-key").value, $("sort-order").value));

const txPath = (t, verb) => `/v1/admin/transactions/${t.id}${verb ? "/" + verb : ""}`;
const subPath = (t, verb) => `/v1/admin/subscriptions/${t.originalID}/${verb}`;
const ofAccount = t => ({ productID: t.productID, account: t.account });

/// The days to extend by, checked before anything is sent.
function extendDays() {
  const input = $("extend-days"), text = input.value.trim(), days = Number(text);
  const ok = /^\d+$/.test(text) && days >= 1 && days <= 90;
  input.setAttribute("aria-invalid", ok ? "false" : "true");
  $("extend-hint").textContent = ok ? "" : "Give a whole number of days from 1 to 90.";
  if (!ok) input.closest("details").open = true;
  return ok ? days : null;
}
$("extend-days").addEventListener("input", extendDays);

// What each action sends: the admin API's method, path and body, and what the banner says.
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

// An action that cannot be undone asks for a second press; the row awaiting it survives redraws (a
// live refresh redraws every row).
const confirmText = action => `Confirm ${action}`;

function arm(button, t) {
  const text = confirmText(button.dataset.action);
  button.dataset.confirming = "yes";
  button.dataset.label = button.textContent;
  button.dataset.spoken = button.getAttribute("aria-label");
  button.classList.add("confirming");
  button.textContent = text;
  button.setAttribute("aria-label", `${text} of transaction ${t.id} (${t.productID})`);
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
  const destructive = button.classList.contains("danger");
  if (destructive && !button.dataset.confirming) {
    const confirming = { id: String(t.id), action: button.dataset.action };
    state.confirming = confirming;
    arm(button, t);
    say(`Press “${confirmText(button.dataset.action)}” again to ${button.dataset.action} transaction ${t.id}; it cannot be undone.`, "info");
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
// Which row's menu is open survives the live redraws.
$("tx-body").addEventListener("toggle", ev => {
  const menu = ev.target;
  if (!menu.classList || !menu.classList.contains("row-menu")) return;
  if (menu.open) state.openMenu = menu.dataset.menuFor;
  else if (state.openMenu === menu.dataset.menuFor) state.openMenu = null;
}, true);
$("tx-body").addEventListener("focusout", ev => {
  const button = ev.target.closest && ev.target.closest("button[data-confirming]");
  if (button && !button.contains(ev.relatedTarget)) disarm(button);
});

export function firstPage() { state.start = { after: null }; state.page = 1; state.stack = []; report(loadTransactions()); }
$("page-next").addEventListener("click", () => {
  if (state.next === null) return;
  state.stack.push(state.start);
  state.start = { after: state.next };
  state.page += 1;
  report(loadTransactions());
});
$("page-previous").addEventListener("click", () => {
  if (state.page <= 1) return;
  // Back along the pages walked, or (a page reached by number) the page before it, by number.
  state.start = state.stack.length ? state.stack.pop() : (state.page === 2 ? { after: null } : { page: state.page - 1 });
  state.page -= 1;
  report(loadTransactions());
});
// A page by number: the store finds where it begins along its indexes, without the pages before it.
$("page-jump").addEventListener("submit", ev => {
  ev.preventDefault();
  const input = $("page-number"), text = input.value.trim(), page = Number(text);
  const ok = /^\d+$/.test(text) && page >= 1;
  input.setAttribute("aria-invalid", ok ? "false" : "true");
  $("page-number-error").hidden = ok;
  if (!ok) return;
  state.stack = [];
  state.start = page === 1 ? { after: null } : { page };
  state.page = page;
  report(loadTransactions());
});

$("filters").addEventListener("change", ev => {
  if (ev.target.id === "filter-from" || ev.target.id === "filter-to") {
    const from = $("filter-from").value, to = $("filter-to").value, wrong = Boolean(from && to && to < from);
    $("filter-to").setAttribute("aria-invalid", wrong ? "true" : "false");
    $("filter-dates-error").hidden = !wrong;
    if (wrong) return;
  }
  if (ev.target.id !== "filter-search" && ev.target.id !== "sort-key" && ev.target.id !== "sort-order") firstPage();
});
let typing = null;
$("filter-search").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(firstPage, 300); });
// Enter searches at once, and no search waiting for more typing comes after it.
$("filters").addEventListener("submit", ev => { ev.preventDefault(); clearTimeout(typing); firstPage(); });

/// The state filter's choices, as the server names the states.
export function fillStateFilter() {
  const select = $("filter-state"), chosen = select.value;
  fill(select, [h("option", { value: "" }, "All states")].concat(state.vocabulary.transactionStates.map(s =>
    h("option", { value: s.state }, s.label.charAt(0).toUpperCase() + s.label.slice(1)))));
  select.value = chosen;
}

// Accounts are suggested as a name is typed in the search or the account filter: the store finds
// them by part of their names, however many there are.
let suggesting = null, suggestions = null;
function suggestAccounts(text) {
  clearTimeout(suggesting);
  suggesting = setTimeout(async () => {
    if (suggestions) suggestions.abort();
    const controller = new AbortController();
    suggestions = controller;
    try {
      const data = await api("GET", `/v1/admin/accounts?limit=20&search=${enc(text)}`, undefined, controller.signal);
      fill($("account-choices"), (data.accounts || []).map(a => h("option", { value: a.name })));
    } catch (e) { if (e.name !== "AbortError") say(e.message, "error"); }
  }, 150);
}
["filter-account", "filter-search"].forEach(id => $(id).addEventListener("input", ev => {
  const text = $(id).value.trim();
  if (text && !/^\d+$/.test(text)) suggestAccounts(text);
  // A suggestion chosen for the account filter lists that account's transactions at once.
  if (id === "filter-account" && (ev.inputType === "insertReplacementText" || ev.inputType === undefined)
      && [...$("account-choices").options].some(o => o.value === text)) firstPage();
}));
