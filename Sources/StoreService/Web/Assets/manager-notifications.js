// The outbox: the latest notifications, newest first, each with its decoded payload and its delivery
// attempts.
import { $, state, h, fill, small, fmtDate, api, act, loadsWith } from "./manager-page.js";

const NOTE_PAGE = 50;

// The server answers the latest page of the outbox (ascending); newest are shown first.
async function loadNotifications() {
  const token = ++state.noteToken;
  const page = (await api("GET", `/v1/admin/notifications?latest=${NOTE_PAGE}`)).notifications || [];
  if (token !== state.noteToken) return;
  renderNotifications(page.slice().reverse());
}
loadsWith(loadNotifications);

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
    // Failed attempts with none to come: the App Store gave up (six in production, one in Sandbox).
    summary = ok ? "delivered" : !attempts.length ? "not sent" : next ? `${attempts.length} failed` : `given up after ${attempts.length} failed`;
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
