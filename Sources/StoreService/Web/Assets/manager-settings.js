// The store's settings (flags, time rate, storefront, locale, notification URL, simulated errors) and
// its clock. The choices (time rates, flags, failable APIs) and their names come from the server.
import { $, state, h, fill, fmtDate, say, api, act, report, loadsWith } from "./manager-page.js";

const PERIOD_WORDS = { P1D: "one day", P1W: "one week", P1M: "one month", P1Y: "one year" };
const flagLabel = key => (state.vocabulary.settingFlags.find(f => f.key === key) || { label: key }).label;

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

// Drawn once the names of the choices are in (they load side by side when the page opens).
async function loadSettings() {
  const settings = await api("GET", "/v1/admin/settings");
  await state.vocabularyReady;
  renderSettings(settings);
}
loadsWith(loadSettings);

function renderSettings(s) {
  state.settings = s;
  Object.keys(s).filter(k => typeof s[k] === "boolean").forEach(key => {
    let box = $(`setting-${key}`);
    if (!box) {
      box = h("input", { type: "checkbox", id: `setting-${key}`, "data-setting": key });
      $("setting-flags").appendChild(h("label", { class: "check" }, box, " ", flagLabel(key)));
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
  patch({ [box.dataset.setting]: box.checked }, `${flagLabel(box.dataset.setting)} is ${box.checked ? "on" : "off"}.`);
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

/// The time rates and failable APIs to choose from, as the server names them.
export function fillSettingChoices() {
  fill($("setting-timeRate"), state.vocabulary.timeRates.map(r => h("option", { value: String(r.value) }, r.label)));
  fill($("error-api"), state.vocabulary.failableAPIs.map(name => h("option", { value: name }, name)));
}

// Clock
async function loadClock() {
  const c = await api("GET", "/v1/admin/clock"), el = $("clock-now");
  el.textContent = fmtDate(c.now); el.setAttribute("datetime", c.iso || "");
}
loadsWith(loadClock);

$("clock-controls").addEventListener("click", ev => {
  const button = ev.target.closest('button[data-action="advance"]');
  if (!button) return;
  const period = button.dataset.period;
  act(() => api("POST", "/v1/admin/clock/advance", { by: period }), r => {
    const played = typeof r.eventsPlayed === "number" ? `; ${r.eventsPlayed} event${r.eventsPlayed === 1 ? "" : "s"} played` : "";
    return `Advanced the clock by ${PERIOD_WORDS[period] || period} to ${fmtDate(r.now)} UTC${played}.`;
  }, button);
});
