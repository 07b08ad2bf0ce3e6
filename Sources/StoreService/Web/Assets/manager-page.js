// What the Transaction Manager's parts share: the page's state, building elements, the banner, the
// admin API, and refreshing every part after a change. Every request carries X-OpenStoreKit-Request,
// which the server requires of a change and which a page of another site cannot make the browser send.
export const $ = id => document.getElementById(id);
// A page of transactions begins at `start`: after a cursor ({ after }) or at a number ({ page }).
export const state = {
  start: { after: null }, page: 1, stack: [], next: null, rows: new Map(), list: [], presentations: {}, now: 0,
  accountsStart: null, accountsStack: [], accountsNext: null,
  sort: { key: "id", direction: "descending" }, accounts: [], devices: [], settings: null, openNotes: new Set(),
  txToken: 0, noteToken: 0, lost: false, vocabularyReady: Promise.resolve(), vocabulary: { timeRates: [], settingFlags: [], failableAPIs: [], transactionStates: [] }
};

export function add(parent, kid) {
  if (Array.isArray(kid)) kid.forEach(k => add(parent, k));
  else if (kid !== null && kid !== undefined && kid !== false) parent.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
}
export function h(tag, attrs, ...kids) {
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
export function fill(parent, kids) { parent.textContent = ""; add(parent, kids); }
export const small = text => h("div", { class: "muted small" }, text);
export const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
export const enc = encodeURIComponent;

export function fmtDate(ms) {
  const d = new Date(ms === null || ms === undefined ? NaN : Number(ms));
  if (isNaN(d.getTime())) return "";
  const p = n => String(n).padStart(2, "0");
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}`;
}

// The banner: in the page's flow (it never covers a control), dismissible, replaced by the next message.
export function say(message, kind) {
  $("banner").dataset.kind = kind || "ok";
  $("banner-text").textContent = message;
  $("banner").hidden = false;
}
$("banner-dismiss").addEventListener("click", () => { $("banner").hidden = true; });

// A store started with a token keeps this browser's session secret in this origin's storage (never
// in a cookie, which other ports' servers receive too); every request carries it.
export function sessionHeaders(headers) {
  let secret = null;
  try { secret = localStorage.getItem("osk_session"); } catch (e) { secret = null; }
  if (secret) headers["X-OpenStoreKit-Session"] = secret;
  return headers;
}

// `signal` (an AbortController's) cancels a request a newer one has made pointless: it rejects with
// an error named AbortError, which callers drop.
export async function api(method, path, body, signal) {
  const init = { method, headers: sessionHeaders({ Accept: "application/json", "X-OpenStoreKit-Request": "1" }), signal };
  if (body !== undefined) { init.body = JSON.stringify(body); init.headers["Content-Type"] = "application/json"; }
  let res;
  try { res = await fetch(path, init); } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new Error(`The store did not answer (${e.message}).`);
  }
  const text = await res.text();
  let data = null;
  if (text) { try { data = JSON.parse(text); } catch (e) { data = null; } }
  if (!res.ok) {
    const err = data && data.error;
    throw new Error(err && err.message ? err.message : `${method} ${path} failed: ${res.status} ${res.statusText}`);
  }
  return data || {};
}

export function report(promise) { return promise.catch(e => { if (e.name !== "AbortError") say(e.message, "error"); }); }

// Each part registers how it loads; a change refreshes them all, one refresh at a time.
const loaders = [];
export function loadsWith(load) { loaders.push(load); }
let refreshing = null, again = false;
export function refreshAll() {
  if (refreshing) { again = true; return refreshing; }
  refreshing = (async () => {
    do {
      again = false;
      const results = await Promise.all(loaders.map(load => load().then(() => null, e => e)));
      const failure = results.find(e => e && e.name !== "AbortError");
      if (failure) say(failure.message, "error");
    } while (again);
    refreshing = null;
  })();
  return refreshing;
}

// Runs an action, reports it, and refreshes everything.
export async function act(run, message, button) {
  if (button) button.disabled = true;
  try {
    const result = await run();
    say(typeof message === "function" ? message(result) : message, "ok");
    refreshAll();
    return result;
  } catch (e) { say(e.message, "error"); } finally { if (button && button.isConnected) button.disabled = false; }
}
