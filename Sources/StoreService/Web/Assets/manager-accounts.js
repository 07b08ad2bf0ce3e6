// The accounts table and the account form: storefront, Ask to Buy, family group, purchase
// restriction, app account token and devices of each account.
import { $, state, h, fill, enc, say, api, act, loadsWith, fmtDate } from "./manager-page.js";
import { firstPage } from "./manager-transactions.js";

const ACCOUNTS_PAGE = 25;

// A page of accounts at a time, with their devices: a store may hold tens of thousands.
let accountsRequest = null;
async function loadAccounts() {
  if (accountsRequest) accountsRequest.abort();
  const controller = new AbortController();
  accountsRequest = controller;
  const q = new URLSearchParams({ limit: String(ACCOUNTS_PAGE), devices: "true" });
  if (state.accountsStart) q.set("after", state.accountsStart);
  const search = $("accounts-search").value.trim();
  if (search) q.set("search", search);
  const a = await api("GET", `/v1/admin/accounts?${q}`, undefined, controller.signal);
  if (accountsRequest !== controller) return;
  accountsRequest = null;
  state.accounts = a.accounts || [];
  state.devices = a.devices || [];
  state.accountsNext = a.next === undefined || a.next === null ? null : a.next;
  renderAccounts();
}
loadsWith(loadAccounts);

function accountsFrom(start) { state.accountsStart = start; loadAccounts().catch(e => { if (e.name !== "AbortError") say(e.message, "error"); }); }
$("accounts-next").addEventListener("click", () => {
  if (state.accountsNext === null) return;
  state.accountsStack.push(state.accountsStart);
  accountsFrom(state.accountsNext);
});
$("accounts-previous").addEventListener("click", () => { if (state.accountsStack.length) accountsFrom(state.accountsStack.pop()); });
let findTyping = null;
function findAccounts() { state.accountsStack = []; accountsFrom(null); }
$("accounts-search").addEventListener("input", () => { clearTimeout(findTyping); findTyping = setTimeout(findAccounts, 250); });
$("accounts-find").addEventListener("submit", ev => { ev.preventDefault(); clearTimeout(findTyping); findAccounts(); });

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
      h("td", { "data-label": "App account token" }, a.appAccountToken ? h("code", { "data-token": a.appAccountToken.toLowerCase() }, a.appAccountToken.toLowerCase()) : none("none")),
      h("td", { "data-label": "Devices" }, devices.length ? h("ul", { class: "device-links" }, devices.map(d => h("li", {},
        h("a", { href: `/store?account=${enc(a.name)}&device=${enc(d.name)}`,
          "aria-label": `${d.name}: open the storefront as ${a.name}` }, d.name), reviewNote(d)))) : none("no devices")),
      h("td", { "data-label": "Actions" }, h("div", { class: "actions" },
        h("button", { type: "button", "data-action": "edit-account", "aria-label": `Edit account ${a.name}` }, "Edit"),
        h("button", { type: "button", "data-action": "show-account", "aria-label": `Transactions of ${a.name}` },
          "Transactions"))));
  }) : h("tr", {}, h("td", { colspan: 8, class: "empty" }, $("accounts-search").value.trim()
    ? `No account's name contains “${$("accounts-search").value.trim()}”.` : "No accounts yet: create one below, or buy on the storefront.")));
  const first = state.accountsStack.length * ACCOUNTS_PAGE + 1;
  $("accounts-label").textContent = state.accounts.length ? `Accounts ${first}–${first + state.accounts.length - 1}` : "No accounts";
  $("accounts-previous").disabled = state.accountsStack.length === 0;
  $("accounts-next").disabled = state.accountsNext === null;
}

// What the app on a device asked of the customer's review (AppStore.requestReview and friends).
function reviewNote(device) {
  const requests = device.reviewRequests || [];
  if (!requests.length) return null;
  const last = requests[requests.length - 1];
  const shown = requests.filter(r => r.shown).length;
  return h("span", { class: "muted small", "data-review-requests": String(requests.length) },
    ` · review asked ${requests.length}×, prompt shown ${shown}×, last ${fmtDate(last.date)}${last.shown ? "" : " (not shown: three a year)"}`);
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
const ACCOUNT_FIELDS = ["account-name", "account-token", "account-devices", "account-storefront", "account-family"];

/// Shows a problem with the form next to it (and on the field it concerns, which gets the focus).
function formError(field, message) {
  for (const id of ACCOUNT_FIELDS) $(id).removeAttribute("aria-invalid");
  const box = $("account-form-error");
  box.textContent = message || "";
  box.hidden = !message;
  if (field) { $(field).setAttribute("aria-invalid", "true"); $(field).focus(); }
}

/// The field a failure of the store names, if any.
function fieldOf(message) {
  if (/device/i.test(message)) return "account-devices";
  if (/storefront/i.test(message)) return "account-storefront";
  if (/family/i.test(message)) return "account-family";
  if (/appAccountToken|token/i.test(message)) return "account-token";
  return null;
}

$("account-form").addEventListener("submit", async ev => {
  ev.preventDefault();
  const name = $("account-name").value.trim();
  if (!name) { formError("account-name", "An account needs a name."); return; }
  const token = $("account-token").value.trim();
  if (token && token !== "none" && !UUID.test(token)) {
    formError("account-token", "An app account token is a UUID (such as 0a1b2c3d-0000-4000-8000-000000000001), or none.");
    return;
  }
  formError(null, "");
  const body = { askToBuy: $("account-ask").checked, purchasesAllowed: $("account-allowed").checked };
  const storefront = $("account-storefront").value.trim(), family = $("account-family").value.trim();
  if (storefront) body.storefront = storefront;
  if (family) body.familyGroup = family;
  if (token) body.appAccountToken = token.toLowerCase();
  const devices = $("account-devices").value.split(/[\s,]+/).filter(Boolean);
  if (devices.length) body.devices = devices;
  const button = ev.target.querySelector("button[type=submit]");
  button.disabled = true;
  try {
    await act(async () => {
      try { return await api("PUT", `/v1/admin/accounts/${enc(name)}`, body); } catch (e) {
        // The store changed nothing: say why beside the form, on the field it concerns.
        formError(fieldOf(e.message), e.message);
        throw e;
      }
    }, `Saved account ${name}.`);
  } finally { button.disabled = false; }
});
