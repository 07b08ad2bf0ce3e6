// The Transaction Manager: its parts (transactions, accounts, settings and clock, notifications) fill
// the page from the admin API (/v1/admin/…), and the store's change feed keeps them live. The rules of
// what a row shows and allows, and the names of the choices, come from the server.
import { $, state, sleep, say, api, refreshAll } from "./manager-page.js";
import { fillStateFilter, restoreFromAddress } from "./manager-transactions.js";
import "./manager-accounts.js";
import { fillSettingChoices } from "./manager-settings.js";
import "./manager-notifications.js";

function live(text, kind) { const el = $("live"); el.textContent = text; el.className = `badge ${kind}`; }

// Waits for changes after `since`, the version the page was first drawn at or after.
async function poll(since) {
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

// Each part loads once when the page opens: the ledger's version is read first, so the change feed
// wakes only for changes made after it (it used to answer at once with the version, and everything
// loaded a second time). The list and the names the store gives its choices load side by side.
async function start() {
  restoreFromAddress();
  let since = -1;
  try { since = (await api("GET", "/v1/admin/changes?wait=0")).version; } catch (e) { since = -1; }
  const vocabulary = state.vocabularyReady = api("GET", "/v1/admin/vocabulary").then(v => {
    state.vocabulary = v;
    fillStateFilter();
    fillSettingChoices();
  }, e => say(e.message, "error"));
  await Promise.all([refreshAll(), vocabulary]);
  poll(typeof since === "number" ? since : -1);
}
start();
