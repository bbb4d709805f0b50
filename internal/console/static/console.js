// twinlake console: plain JavaScript, no dependencies. Every name that
// comes from the server is put in the page with textContent (never
// innerHTML), so a key named <script>...</script> renders as text.
"use strict";

const API = "api/";
const state = { session: null, timer: null, page: null };

// el builds an element: el("td", {class: "num"}, "text", childNode, ...).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat()) {
    if (k === undefined || k === null) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

// fill replaces e's children, skipping the null and false a condition
// leaves (replaceChildren would show them as text).
function fill(e, ...kids) {
  e.replaceChildren(...kids.flat().filter(k => k !== null && k !== undefined && k !== false));
}

function toast(msg) {
  const t = document.getElementById("status");
  t.textContent = msg;
  t.classList.add("show");
  clearTimeout(toast.t);
  toast.t = setTimeout(() => t.classList.remove("show"), 4000);
}

class APIError extends Error {
  constructor(status, body) { super(body.message || body.code || ("HTTP " + status)); this.status = status; this.code = body.code; }
}

// api calls the console's JSON API; a change carries the CSRF token.
async function api(method, path, body, opts) {
  opts = opts || {};
  const headers = {};
  if (method !== "GET" && state.session) headers["X-Twinlake-CSRF"] = state.session.csrf;
  if (opts.poll) headers["X-Twinlake-Poll"] = "1";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(API + path, { method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body) });
  if (resp.status === 204) return null;
  let data = {};
  try { data = await resp.json(); } catch (e) { data = {}; }
  if (!resp.ok) {
    const err = new APIError(resp.status, data);
    if (resp.status === 401 && path !== "login") signedOut("Your session ended; sign in again.");
    throw err;
  }
  return data;
}

function q(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") u.set(k, v);
  const s = u.toString();
  return s ? "?" + s : "";
}

function seg(s) { return encodeURIComponent(s); }

function bytes(n) {
  if (n === undefined || n === null || n < 0) return "—";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + " " + u[i];
}

function secs(s) {
  if (s === undefined || s === null) return "—";
  if (s < 1) return s > 0 ? s.toFixed(2) + " s" : "0 s";
  if (s < 120) return s.toFixed(1) + " s";
  if (s < 7200) return (s / 60).toFixed(1) + " min";
  return (s / 3600).toFixed(1) + " h";
}

function ago(t) {
  if (!t) return "never";
  const d = (Date.now() - new Date(t).getTime()) / 1000;
  return secs(Math.max(d, 0)) + " ago";
}

// shortError keeps the end of a long error chain, the part that says why.
function shortError(msg) {
  const parts = String(msg).split(": ");
  const tail = parts.slice(-2).join(": ");
  return tail.length > 90 ? tail.slice(0, 90) + "…" : tail;
}

function badge(text, kind) { return el("span", { class: "badge " + kind }, text); }

function statusKind(s) {
  switch ((s || "").toUpperCase()) {
    case "OK": return "ok";
    case "WAITING": case "BEHIND": case "HELD": return "warn";
    case "MISSING": case "FAILED": return "bad";
  }
  return "info";
}

// ---- sign-in and navigation ----

function signedOut(msg) {
  state.session = null;
  stopPolling();
  document.getElementById("nav").hidden = true;
  document.getElementById("who").hidden = true;
  document.getElementById("signout").hidden = true;
  fill(document.getElementById("page"));
  document.getElementById("login").hidden = false;
  document.getElementById("login-error").textContent = msg || "";
  document.getElementById("accessKey").focus();
}

function signedIn(s) {
  state.session = s;
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  const who = document.getElementById("who");
  who.textContent = "Signed in as " + s.accessKey;
  who.hidden = false;
  document.getElementById("signout").hidden = false;
  route();
}

document.getElementById("login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const err = document.getElementById("login-error");
  err.textContent = "";
  try {
    const s = await api("POST", "login", {
      accessKey: document.getElementById("accessKey").value,
      secretKey: document.getElementById("secretKey").value,
    });
    document.getElementById("secretKey").value = "";
    signedIn(s);
  } catch (e) {
    err.textContent = "Sign-in failed: " + e.message;
  }
});

document.getElementById("signout").addEventListener("click", async () => {
  try { await api("POST", "logout"); } catch (e) { /* the session is gone either way */ }
  signedOut("Signed out.");
});

const pages = {};

function stopPolling() {
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
  state.gen = (state.gen || 0) + 1;
}

// poll fetches now and then every interval while the page is shown and the
// tab visible: at most one request per interval, none in a hidden tab. An
// answer that arrives after the user moved on is dropped.
function poll(page, fetchFn, render, interval) {
  stopPolling();
  const gen = state.gen = (state.gen || 0) + 1;
  const tick = async () => {
    if (state.gen !== gen) return;
    if (document.visibilityState === "visible") {
      try {
        const v = await fetchFn();
        if (state.gen === gen) render(v);
      } catch (e) { if (e.status !== 401 && state.gen === gen) showError(e); }
    }
    if (state.gen === gen && state.session) state.timer = setTimeout(tick, interval);
  };
  tick();
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && state.session && !state.timer) route();
});

function route() {
  if (!state.session) return;
  const hash = location.hash.replace(/^#\/?/, "") || "sites";
  const [name, ...rest] = hash.split("?")[0].split("/");
  const page = pages[name] ? name : "sites";
  stopPolling();
  state.page = page;
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.dataset.page === page) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  const root = document.getElementById("page");
  fill(root);
  const params = new URLSearchParams(location.hash.includes("?") ? location.hash.split("?")[1] : "");
  pages[page](root, params, rest);
}

// A page change moves keyboard and screen-reader focus to the new page.
window.addEventListener("hashchange", () => {
  route();
  if (state.session) document.getElementById("main").focus({ preventScroll: true });
});

function showError(e) {
  if (e.status === 401) return; // the sign-in form says it
  const box = document.getElementById("page-error");
  if (box) box.textContent = e.message;
  else toast(e.message);
}

function errorBox() { return el("p", { id: "page-error", class: "error", role: "alert" }); }

// ---- Sites ----

pages.sites = (root) => {
  root.append(el("h1", {}, "Sites"), errorBox(),
    el("section", { class: "card", "aria-labelledby": "sites-h" }, el("h2", { id: "sites-h" }, "Joined sites"), el("div", { id: "sites-table" }, "Loading…")),
    el("section", { class: "card", "aria-labelledby": "links-h" }, el("h2", { id: "links-h" }, "Replication links from this site"), el("div", { id: "links-table" })),
    el("section", { "aria-labelledby": "charts-h" }, el("h2", { id: "charts-h" }, "Last hour: lag and backlog"),
      el("p", { class: "legend" }, el("span", { class: "l1" }, "lag (oldest pending age)"), el("span", { class: "l2" }, "backlog (changes)")),
      el("div", { id: "charts", class: "grid" })));
  poll("sites", () => api("GET", "sites", undefined, { poll: true }), renderSites, (state.session.pollSeconds || 2) * 1000);
};

function renderSites(v) {
  const err = document.getElementById("page-error");
  if (err) err.textContent = "";
  const sites = el("table", { id: "sites" },
    el("thead", {}, el("tr", {}, ["Site", "Role", "Health", "Last contact", "Endpoint"].map(h => el("th", { scope: "col" }, h)))),
    el("tbody", {}, v.sites.map(s => el("tr", { "data-site": s.name },
      el("td", { class: "name" }, s.name, s.local ? el("span", { class: "muted" }, " (this site)") : null),
      el("td", { class: "role" }, s.role || (s.error ? "unknown" : "—")),
      el("td", { class: "health" }, s.online ? badge("online", "ok") : badge("unreachable", "bad"),
        s.error ? el("div", { class: "muted small", title: s.error }, "role not readable: " + shortError(s.error)) : null),
      el("td", { class: "contact" }, s.local ? "—" : ago(s.lastContact)),
      el("td", { class: "mono" }, s.endpoint || "")))));
  fill(document.getElementById("sites-table"), v.enabled ? el("p", { class: "muted" }, "Site replication is on; this is " + v.site + ".")
    : el("p", { class: "muted" }, "Site replication is not configured on this site."), sites);
  const cols = ["Peer", "Link", "Backlog", "Backlog bytes", "Lag", "Retry queue", "Dropped", "Throughput", "Latency"];
  const links = el("table", { id: "links" },
    el("thead", {}, el("tr", {}, cols.map((h, i) => el("th", { scope: "col", class: i > 1 ? "num" : null }, h)))),
    el("tbody", {}, (v.links || []).map(l => el("tr", { "data-link": l.target },
      el("td", {}, l.target),
      el("td", {}, l.online ? badge("up", "ok") : badge("down", "bad")),
      el("td", { class: "num backlog" }, String(l.pending + l.retrying)),
      el("td", { class: "num" }, bytes(l.pendingBytes + l.retryingBytes)),
      el("td", { class: "num lag", "data-seconds": String(l.lagSeconds) }, secs(l.lagSeconds)),
      el("td", { class: "num retry" }, String(l.retrying)),
      el("td", { class: "num dropped" }, l.dropped < 0 ? "—" : String(l.dropped)),
      el("td", { class: "num" }, l.sentBytes < 0 ? "—" : bytes(l.throughput) + "/s"),
      el("td", { class: "num" }, l.online ? l.latencyMs.toFixed(1) + " ms" : "—")))));
  fill(document.getElementById("links-table"), (v.links || []).length ? links : el("p", { class: "muted" }, "No links."),
    el("p", { class: "muted" }, "Sampled " + new Date(v.sampled).toLocaleTimeString() + "; the page refreshes every " + v.stepSeconds + " s."));
  const charts = document.getElementById("charts");
  fill(charts, ...(v.links || []).map(l => el("figure", { class: "card" },
    el("figcaption", {}, "Link to " + l.target),
    chart(v.history[l.target] || [], l.target))));
}

// chart draws lag (left scale) and backlog (right scale) over the last hour.
function chart(samples, name) {
  const NS = "http://www.w3.org/2000/svg";
  const W = 600, H = 160, P = 34;
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  const last = samples[samples.length - 1];
  svg.setAttribute("aria-label", `Link to ${name}: ${samples.length} samples; now lag ${last ? secs(last.lag) : "—"}, backlog ${last ? last.backlog : "—"}`);
  // The axis spans the history there is (up to the hour), so the first
  // minutes after someone opens the page are not squeezed into a corner.
  const now = Date.now();
  const first = samples.length ? new Date(samples[0].t).getTime() : now;
  const span = Math.min(3600e3, Math.max(60e3, now - first));
  const t0 = now - span;
  const maxLag = Math.max(1, ...samples.map(s => s.lag));
  const maxBk = Math.max(1, ...samples.map(s => s.backlog));
  const x = t => P + (W - 2 * P) * Math.min(1, Math.max(0, (new Date(t).getTime() - t0) / span));
  const line = (cls, f, max) => {
    const p = document.createElementNS(NS, "polyline");
    p.setAttribute("class", cls);
    p.setAttribute("points", samples.map(s => `${x(s.t).toFixed(1)},${(H - 20 - (H - 34) * f(s) / max).toFixed(1)}`).join(" "));
    return p;
  };
  const axis = document.createElementNS(NS, "line");
  for (const [k, v] of Object.entries({ x1: P, y1: H - 20, x2: W - P, y2: H - 20, class: "axis" })) axis.setAttribute(k, v);
  const label = (txt, xx, yy, anchor) => {
    const t = document.createElementNS(NS, "text");
    t.setAttribute("x", xx); t.setAttribute("y", yy); t.setAttribute("text-anchor", anchor || "start");
    t.textContent = txt;
    return t;
  };
  svg.append(axis, line("lag", s => s.lag, maxLag), line("backlog", s => s.backlog, maxBk),
    label(secs(maxLag), 2, 14), label(String(maxBk), W - 2, 14, "end"), label("−" + secs(span / 1000), P, H - 4), label("now", W - P, H - 4, "end"));
  return svg;
}

// ---- Tables DR ----

const runbook = {
  "failover": "Promote this site: a final scan applies everything verified, then replica_catalog turns off and every warehouse here accepts client writes. Do this when the primary is lost.",
  "resync-open": "Open a catalog resync window on this former primary: inbound warehouse replication is accepted again, client writes to warehouses stay refused, the catalog is left untouched.",
  "rebuild": "Rebuild this site's catalog from the promoted site: the current catalog is backed up, then replaced by the peer's. Client writes stay refused until it finishes.",
  "catalog-reset": "Back up and delete this replica's catalog, so the scanner rebuilds it from the replicated metadata.",
  "backfill": "Write catalog identity records for every warehouse, namespace, table and view that lacks one, so the replica can verify them.",
};

pages["tables-dr"] = (root, params) => {
  const offset = Number(params.get("offset") || 0);
  root.append(el("h1", {}, "Tables disaster recovery"), errorBox(),
    el("div", { id: "dr-summary", class: "card" }, "Loading…"),
    el("section", { class: "card", "aria-labelledby": "rb-h" }, el("h2", { id: "rb-h" }, "Runbook actions"),
      el("p", { class: "muted" }, "Each action says what it will do and asks you to type a warehouse name to confirm."),
      Object.keys(runbook).map(a => el("button", { type: "button", class: a === "failover" || a === "catalog-reset" ? "danger" : "secondary", "data-action": a, onclick: () => confirmAction(a) }, actionLabel(a))),
      el("div", { id: "action-result", role: "status" })),
    el("section", { class: "card", "aria-labelledby": "ent-h" }, el("h2", { id: "ent-h" }, "Tables and views"), el("div", { id: "dr-entries" })),
    el("section", { class: "card", "aria-labelledby": "ev-h" }, el("h2", { id: "ev-h" }, "Scanner events"), el("div", { id: "dr-events" })));
  poll("tables-dr", () => api("GET", "tables-dr" + q({ offset, limit: 100 }), undefined, { poll: true }), v => renderDR(v, offset),
    (state.session.pollSeconds || 2) * 1000);
};

function actionLabel(a) {
  return { "failover": "Fail over", "resync-open": "Resync open", "rebuild": "Rebuild", "catalog-reset": "Catalog reset", "backfill": "Backfill" }[a];
}

function renderDR(v, offset) {
  state.dr = v;
  const st = v.status;
  const rb = st.rebuild || {};
  fill(document.getElementById("dr-summary"), el("dl", { class: "kv" },
    el("dt", {}, "This site"), el("dd", { id: "dr-role" }, (v.site || "") + " — " + v.role),
    el("dt", {}, "Scanner state"), el("dd", { id: "dr-state" }, st.state + (st.promoting ? " (promoting)" : "")),
    el("dt", {}, "Consistency"), el("dd", {}, st.consistency || "—"),
    el("dt", {}, "Cycles"), el("dd", {}, String(st.cycles) + (st.lastCycle ? ", last " + ago(st.lastCycle) + " taking " + secs(st.cycleTime / 1e9) : "")),
    el("dt", {}, "Resync window"), el("dd", {}, st.resyncWindow ? "open" : "closed"),
    el("dt", {}, "Rebuild"), el("dd", { id: "dr-rebuild" }, rb.state ? rb.state + (rb.lastError ? ": " + rb.lastError : "") + (rb.backup ? ", backup " + rb.backup : "") : "none"),
    el("dt", {}, "Backfill"), el("dd", { id: "dr-backfill" }, v.backfill ? v.backfill.state + ` (${v.backfill.written} written, ${v.backfill.unchanged} unchanged)` + (v.backfill.error ? ": " + v.backfill.error : "") : "none")));
  const verifiedAge = e => {
    const t = (v.verifiedAt || {})[e.warehouse + "/" + e.namespace.join("\x1f") + "/" + e.name + "/" + e.kind];
    return t ? el("span", { title: "committed " + new Date(t).toLocaleString() }, ago(t)) : "—";
  };
  const rows = st.entries.map(e => el("tr", { "data-entry": e.warehouse + "/" + e.namespace.join(".") + "/" + e.name },
    el("td", {}, e.warehouse), el("td", {}, e.namespace.join(".")), el("td", {}, e.name), el("td", {}, e.kind),
    el("td", { class: "status" }, badge(e.status, statusKind(e.status))),
    el("td", {}, reason(e)),
    el("td", { class: "num" }, String(e.verified)), el("td", { class: "num" }, String(e.latest)),
    el("td", { class: "age" }, e.verified >= 0 ? verifiedAge(e) : "—")));
  const pager = el("p", {},
    offset > 0 ? el("a", { href: "#/tables-dr?offset=" + Math.max(0, offset - 100) }, "← previous") : null, " ",
    el("span", { class: "muted" }, `${st.entries.length ? offset + 1 : 0}–${offset + st.entries.length} of ${st.total}`), " ",
    offset + st.entries.length < st.total ? el("a", { href: "#/tables-dr?offset=" + (offset + 100) }, "next →") : null);
  fill(document.getElementById("dr-entries"), st.entries.length ? el("table", { id: "dr-table" },
    el("thead", {}, el("tr", {}, ["Warehouse", "Namespace", "Name", "Kind", "State", "Reason", "Verified version", "Latest", "Verified version's age"].map(h => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows)) : el("p", { class: "muted" }, st.state === "disabled" ? "This site is not a Tables replica: it has no replica state to show." : "No tables tracked yet."), pager);
  const evs = v.eventsAllowed ? (v.events.length ? el("ol", { class: "timeline", id: "dr-events-list" }, v.events.map(e => el("li", {},
    el("strong", {}, new Date(e.time).toLocaleTimeString()), " ", el("code", {}, e.funcname), " ", e.path || "", " ", e.msg || "",
    e.error ? el("span", { class: "error" }, " " + e.error) : null)))
    : el("p", { class: "muted" }, "No scanner events since " + (v.eventsFrom ? new Date(v.eventsFrom).toLocaleTimeString() : "this page opened") + "."))
    : el("p", { class: "muted" }, "Your policies do not allow reading trace events (admin:ServerTrace).");
  fill(document.getElementById("dr-events"), evs);
}

function reason(e) {
  switch (e.status) {
    case "OK": return "verified: every file of the version is here";
    case "BEHIND": return `${e.behind} version(s) behind the latest replicated metadata`;
    case "MISSING": return "files not replicated yet: " + (e.missingFiles || []).slice(0, 3).join(", ") + ((e.missingFiles || []).length > 3 ? " …" : "");
    case "WAITING": return "waiting for replicated metadata";
  }
  return e.transaction ? "transaction " + e.transaction : "";
}

function confirmAction(action) {
  const v = state.dr || { warehouses: [], site: "" };
  fill(document.getElementById("action-result"));
  const names = v.warehouses.length ? v.warehouses : [v.site];
  const input = el("input", { id: "confirm-name", autocomplete: "off", "aria-describedby": "confirm-help" });
  const go = el("button", { type: "submit", class: "danger", disabled: true, id: "confirm-go" }, actionLabel(action));
  const out = el("p", { class: "error", role: "alert" });
  const dlg = el("dialog", { "aria-labelledby": "confirm-h" },
    el("form", { method: "dialog" },
      el("h2", { id: "confirm-h" }, actionLabel(action) + " on " + (v.site || "this site")),
      el("p", {}, runbook[action]),
      el("label", { for: "confirm-name" }, v.warehouses.length ? "Type a warehouse name to confirm" : "Type the site name to confirm"),
      input,
      el("p", { id: "confirm-help", class: "muted" }, (v.warehouses.length ? "Warehouses: " : "Site: ") + names.join(", ")),
      out,
      el("button", { type: "button", class: "secondary", onclick: () => dlg.close() }, "Cancel"), go));
  input.addEventListener("input", () => { go.disabled = !names.includes(input.value); });
  dlg.querySelector("form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    go.disabled = true;
    try {
      const r = await api("POST", "tables-dr/" + action, { confirm: input.value });
      dlg.close();
      dlg.remove();
      fill(document.getElementById("action-result"), el("p", { id: "action-done" }, actionLabel(action) + " started: ", el("code", {}, JSON.stringify(r.result))),
        el("p", { class: "muted" }, "Progress shows above as the scanner reports it."));
    } catch (e) {
      out.textContent = e.message;
      go.disabled = false;
    }
  });
  document.body.append(dlg);
  dlg.showModal();
  input.focus();
}

// ---- Buckets ----

pages.buckets = (root, params) => {
  const bucket = params.get("bucket");
  if (bucket) return bucketPage(root, bucket, params.get("prefix") || "", params.get("token") || "");
  const offset = Number(params.get("offset") || 0);
  const name = el("input", { id: "new-bucket", placeholder: "new-bucket-name" });
  root.append(el("h1", {}, "Buckets"), errorBox(),
    el("form", { class: "card row", onsubmit: async (ev) => {
      ev.preventDefault();
      try { await api("POST", "buckets", { name: name.value }); toast("Bucket " + name.value + " created."); route(); } catch (e) { showError(e); }
    } }, el("div", {}, el("label", { for: "new-bucket" }, "Create a bucket"), name), el("button", { type: "submit" }, "Create")),
    el("div", { id: "bucket-list" }, "Loading…"));
  api("GET", "buckets" + q({ offset, limit: 100 })).then(v => {
    fill(document.getElementById("bucket-list"), el("table", { id: "buckets" },
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Bucket"), el("th", { scope: "col" }, "Created"))),
      el("tbody", {}, v.buckets.map(b => el("tr", {}, el("td", {}, el("a", { href: "#/buckets?" + new URLSearchParams({ bucket: b.name }) }, b.name)),
        el("td", {}, new Date(b.created).toLocaleString()))))),
    el("p", {}, offset > 0 ? el("a", { href: "#/buckets?offset=" + Math.max(0, offset - 100) }, "← previous") : null, " ",
      el("span", { class: "muted" }, `${v.total ? offset + 1 : 0}–${offset + v.buckets.length} of ${v.total}`), " ",
      offset + v.buckets.length < v.total ? el("a", { href: "#/buckets?offset=" + (offset + 100) }, "next →") : null));
  }).catch(showError);
};

function objectURL(bucket, key, versionId) {
  return API + "buckets/" + seg(bucket) + "/object" + q({ key, versionId });
}

function bucketPage(root, bucket, prefix, token) {
  const crumbs = el("nav", { class: "crumbs", "aria-label": "Prefix" }, el("a", { href: "#/buckets" }, "Buckets"), " / ",
    el("a", { href: "#/buckets?" + new URLSearchParams({ bucket }) }, bucket), " / ");
  let acc = "";
  for (const part of prefix.split("/").filter(Boolean)) {
    acc += part + "/";
    crumbs.append(el("a", { href: "#/buckets?" + new URLSearchParams({ bucket, prefix: acc }) }, part), " / ");
  }
  const file = el("input", { id: "upload-file", type: "file" });
  const keyIn = el("input", { id: "upload-key", placeholder: "key (default: prefix + file name)" });
  const prog = el("progress", { id: "upload-progress", max: "100", value: "0", "aria-label": "Upload progress" });
  const progText = el("span", { id: "upload-status", role: "status" });
  root.append(el("h1", {}, "Bucket ", bucket), crumbs, errorBox(),
    el("section", { class: "card", "aria-labelledby": "up-h" }, el("h2", { id: "up-h" }, "Upload"),
      el("div", { class: "row" }, el("div", {}, el("label", { for: "upload-file" }, "File"), file),
        el("div", {}, el("label", { for: "upload-key" }, "Key"), keyIn),
        el("button", { type: "button", id: "upload-go", onclick: () => upload(bucket, prefix, file, keyIn, prog, progText) }, "Upload")),
      el("p", {}, prog, " ", progText)),
    el("section", { class: "card", "aria-labelledby": "obj-h" }, el("h2", { id: "obj-h" }, "Objects under ", el("code", {}, prefix || "/")), el("div", { id: "objects" }, "Loading…")),
    el("section", { class: "card", "aria-labelledby": "ver-h" }, el("h2", { id: "ver-h" }, "Versions"), el("div", { id: "versions" }, el("p", { class: "muted" }, "Choose “Versions” on an object."))),
    el("section", { class: "card", "aria-labelledby": "set-h" }, el("h2", { id: "set-h" }, "Bucket settings"), el("div", { id: "settings" }, "Loading…")));
  api("GET", "buckets/" + seg(bucket) + "/objects" + q({ prefix, token, limit: 200 })).then(v => {
    const rows = v.objects.map(o => o.prefix
      ? el("tr", { "data-key": o.key }, el("td", { class: "key" }, el("a", { href: "#/buckets?" + new URLSearchParams({ bucket, prefix: o.key }) }, o.key.slice(prefix.length))), el("td", {}, "folder"), el("td", {}), el("td", {}))
      : el("tr", { "data-key": o.key },
        el("td", { class: "key" }, o.key.slice(prefix.length)),
        el("td", { class: "num" }, bytes(o.size)),
        el("td", {}, new Date(o.lastModified).toLocaleString()),
        el("td", {}, el("a", { href: objectURL(bucket, o.key), download: "", class: "download" }, "Download"), " ",
          el("button", { type: "button", class: "secondary", onclick: () => versions(bucket, o.key) }, "Versions"),
          el("button", { type: "button", class: "danger", onclick: () => del(bucket, o.key) }, "Delete"))));
    fill(document.getElementById("objects"), rows.length ? el("table", { id: "object-table" },
      el("thead", {}, el("tr", {}, ["Name", "Size", "Modified", "Actions"].map(h => el("th", { scope: "col" }, h)))), el("tbody", {}, rows))
      : el("p", { class: "muted" }, "Nothing here."),
    v.next ? el("p", {}, el("a", { href: "#/buckets?" + new URLSearchParams({ bucket, prefix, token: v.next }) }, "next page →")) : null);
  }).catch(showError);
  loadSettings(bucket);
}

function upload(bucket, prefix, file, keyIn, prog, progText) {
  const f = file.files[0];
  if (!f) { progText.textContent = "Choose a file first."; return; }
  if (f.size > state.session.maxUpload) { progText.textContent = `The file is larger than the console's upload limit (${bytes(state.session.maxUpload)}).`; return; }
  const key = keyIn.value || prefix + f.name;
  const xhr = new XMLHttpRequest();
  xhr.open("PUT", objectURL(bucket, key));
  xhr.setRequestHeader("X-Twinlake-CSRF", state.session.csrf);
  xhr.setRequestHeader("Content-Type", f.type || "application/octet-stream");
  xhr.upload.onprogress = (e) => { if (e.lengthComputable) { prog.value = Math.round(100 * e.loaded / e.total); progText.textContent = `${bytes(e.loaded)} of ${bytes(e.total)}`; } };
  xhr.onload = () => {
    if (xhr.status === 200) { prog.value = 100; progText.textContent = "Uploaded " + key + "."; setTimeout(route, 300); }
    else { let m = xhr.statusText; try { m = JSON.parse(xhr.responseText).message; } catch (e) { /* keep status text */ } progText.textContent = "Upload failed: " + m; }
  };
  xhr.onerror = () => { progText.textContent = "Upload failed: network error."; };
  xhr.send(f);
}

async function del(bucket, key, versionId) {
  if (!confirm(`Delete ${key}${versionId ? " version " + versionId : ""} from ${bucket}?`)) return;
  try {
    await api("DELETE", "buckets/" + seg(bucket) + "/object" + q({ key, versionId }));
    toast("Deleted " + key + ".");
    route();
  } catch (e) { showError(e); }
}

async function versions(bucket, key) {
  try {
    const v = await api("GET", "buckets/" + seg(bucket) + "/versions" + q({ key }));
    fill(document.getElementById("versions"), el("p", {}, "Versions of ", el("code", {}, key)), el("table", { id: "version-table" },
      el("thead", {}, el("tr", {}, ["Version", "Size", "Modified", "", "Actions"].map(h => el("th", { scope: "col" }, h)))),
      el("tbody", {}, v.objects.map(o => el("tr", {},
        el("td", { class: "mono" }, o.versionId || "null"), el("td", { class: "num" }, o.deleteMarker ? "delete marker" : bytes(o.size)),
        el("td", {}, new Date(o.lastModified).toLocaleString()), el("td", {}, o.isLatest ? badge("latest", "info") : ""),
        el("td", {}, o.deleteMarker ? null : el("a", { href: objectURL(bucket, key, o.versionId), download: "" }, "Download"), " ",
          el("button", { type: "button", class: "danger", onclick: () => del(bucket, key, o.versionId || "null") }, "Delete version")))))));
    document.getElementById("versions").scrollIntoView();
  } catch (e) { showError(e); }
}

async function loadSettings(bucket) {
  try {
    const s = await api("GET", "buckets/" + seg(bucket) + "/settings");
    const ver = el("select", { id: "set-versioning" }, ["Enabled", "Suspended"].map(o => el("option", { value: o, selected: s.versioning === o }, o)));
    if (!s.versioning) ver.prepend(el("option", { value: "", selected: true }, "Off (never enabled)"));
    const enc = el("select", { id: "set-encryption" }, el("option", { value: "", selected: !s.encryption }, "None"), el("option", { value: "AES256", selected: s.encryption === "AES256" }, "SSE-S3 (AES256)"));
    fill(document.getElementById("settings"), el("form", { class: "row", onsubmit: async (ev) => {
      ev.preventDefault();
      if (!confirm(`Change ${bucket}: versioning ${s.versioning || "off"} → ${ver.value || "off"}, encryption ${s.encryption || "none"} → ${enc.value || "none"}?`)) return;
      try { await api("PUT", "buckets/" + seg(bucket) + "/settings", { versioning: ver.value, encryption: enc.value }); toast("Settings saved."); loadSettings(bucket); } catch (e) { showError(e); }
    } }, el("div", {}, el("label", { for: "set-versioning" }, "Versioning"), ver), el("div", {}, el("label", { for: "set-encryption" }, "Default encryption"), enc),
      el("button", { type: "submit" }, "Save settings")));
  } catch (e) {
    fill(document.getElementById("settings"), el("p", { class: "muted" }, "Settings not readable: " + e.message));
  }
}

// ---- Tables ----

pages.tables = (root, params) => {
  const wh = params.get("warehouse"), ns = params.get("namespace"), name = params.get("name");
  root.append(el("h1", {}, "Tables"), errorBox());
  if (wh && ns && name) return tablePage(root, wh, ns, name, params.get("kind") || "table");
  if (wh) return warehousePage(root, wh, ns || "", params.get("token") || "");
  const typed = el("input", { id: "wh-name" });
  root.append(el("div", { id: "wh-list" }, "Loading…"),
    el("form", { class: "card row", onsubmit: (ev) => { ev.preventDefault(); location.hash = "#/tables?" + new URLSearchParams({ warehouse: typed.value }); } },
      el("div", {}, el("label", { for: "wh-name" }, "Open a warehouse by name"), typed), el("button", { type: "submit" }, "Open")));
  api("GET", "warehouses").then(v => {
    fill(document.getElementById("wh-list"), v.error ? el("p", { class: "muted" }, "Warehouses cannot be listed: " + v.error) :
      el("table", { id: "warehouses" }, el("thead", {}, el("tr", {}, ["Warehouse", "Created", "Encryption", "Soft delete"].map(h => el("th", { scope: "col" }, h)))),
        el("tbody", {}, v.warehouses.map(w => el("tr", {}, el("td", {}, el("a", { href: "#/tables?" + new URLSearchParams({ warehouse: w.name }) }, w.name)),
          el("td", {}, new Date(w.created).toLocaleString()), el("td", {}, w.encryption || "none"), el("td", {}, w.softDelete || "—"))))));
  }).catch(showError);
};

function warehousePage(root, wh, ns, token) {
  const crumbs = el("nav", { class: "crumbs", "aria-label": "Namespace" }, el("a", { href: "#/tables" }, "Warehouses"), " / ",
    el("a", { href: "#/tables?" + new URLSearchParams({ warehouse: wh }) }, wh));
  if (ns) crumbs.append(" / ", ns);
  root.append(crumbs, el("section", { class: "card" }, el("h2", {}, "Namespaces"), el("div", { id: "ns-list" }, "Loading…")));
  api("GET", "warehouses/" + seg(wh) + "/namespaces" + q({ parent: ns })).then(v => {
    fill(document.getElementById("ns-list"), v.namespaces.length ? el("ul", {}, v.namespaces.map(n => el("li", {},
      el("a", { href: "#/tables?" + new URLSearchParams({ warehouse: wh, namespace: n.join(".") }) }, n.join("."))))) : el("p", { class: "muted" }, "No namespaces here."));
  }).catch(showError);
  if (!ns) return;
  root.append(el("section", { class: "card" }, el("h2", {}, "Tables and views in ", ns), el("div", { id: "table-list" }, "Loading…")));
  api("GET", "warehouses/" + seg(wh) + "/tables" + q({ namespace: ns, token, limit: 200 })).then(v => {
    const link = (id, kind) => el("li", {}, el("a", { href: "#/tables?" + new URLSearchParams({ warehouse: wh, namespace: ns, name: id.name, kind }) }, id.name), kind === "view" ? " (view)" : "");
    fill(document.getElementById("table-list"), el("ul", { id: "tables" }, v.tables.map(t => link(t, "table")), (v.views || []).map(t => link(t, "view"))),
      v.next ? el("a", { href: "#/tables?" + new URLSearchParams({ warehouse: wh, namespace: ns, token: v.next }) }, "next page →") : null);
  }).catch(showError);
}

function tablePage(root, wh, ns, name, kind) {
  root.append(el("nav", { class: "crumbs", "aria-label": "Table" }, el("a", { href: "#/tables" }, "Warehouses"), " / ",
    el("a", { href: "#/tables?" + new URLSearchParams({ warehouse: wh }) }, wh), " / ",
    el("a", { href: "#/tables?" + new URLSearchParams({ warehouse: wh, namespace: ns }) }, ns), " / ", name),
  el("div", { id: "table-detail" }, "Loading…"));
  api("GET", "warehouses/" + seg(wh) + "/table" + q({ namespace: ns, name, kind })).then(t => {
    const fields = (t.schema && t.schema.fields) || [];
    const spec = (t.partitionSpec && t.partitionSpec.fields) || [];
    const maxRows = Math.max(1, ...t.snapshots.map(s => Number(s.rows) || 0));
    fill(document.getElementById("table-detail"), 
      el("section", { class: "card" }, el("h2", {}, (kind === "view" ? "View " : "Table ") + ns + "." + name),
        el("dl", { class: "kv" }, el("dt", {}, "Format version"), el("dd", {}, String(t.formatVersion || "—")),
          el("dt", {}, "Location"), el("dd", { class: "mono" }, t.location || "—"), el("dt", {}, "Metadata"), el("dd", { class: "mono" }, t.metadataLocation))),
      el("div", { class: "grid" },
        el("section", { class: "card" }, el("h2", {}, "Schema"), el("table", { id: "schema" },
          el("thead", {}, el("tr", {}, ["ID", "Field", "Type", "Required"].map(h => el("th", { scope: "col" }, h)))),
          el("tbody", {}, fields.map(f => el("tr", {}, el("td", {}, String(f.id)), el("td", {}, f.name), el("td", { class: "mono" }, typeof f.type === "string" ? f.type : JSON.stringify(f.type)), el("td", {}, f.required ? "yes" : "no")))))),
        kind === "view" ? null : el("section", { class: "card" }, el("h2", {}, "Partition spec"), spec.length ? el("ul", {}, spec.map(f => el("li", {}, f.name + " = " + f.transform + "(source " + f["source-id"] + ")"))) : el("p", { class: "muted" }, "Unpartitioned."))),
      t.sql && t.sql.length ? el("section", { class: "card", id: "view-sql" }, el("h2", {}, "SQL"), t.sql.map(r => el("div", {}, el("p", { class: "muted" }, r.dialect), el("pre", { class: "mono" }, r.sql)))) : null,
      el("section", { class: "card" }, el("h2", {}, "Properties"), Object.keys(t.properties).length ? el("table", { id: "props" }, el("tbody", {}, Object.entries(t.properties).sort().map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", { class: "mono" }, v))))) : el("p", { class: "muted" }, "No properties.")),
      kind === "view" ? null : el("section", { class: "card" }, el("h2", {}, "Snapshot history"), t.snapshots.length ? el("ol", { class: "timeline", id: "snapshots" }, t.snapshots.slice().reverse().map(s => el("li", {},
        el("strong", {}, new Date(s.time).toLocaleString()), " ", el("code", {}, s.id), " ", s.id === t.currentSnapshot ? badge("current", "info") : "", " ",
        s.operation || "", " — rows ", s.rows || "?", " (+" + (s.addedRows || 0) + "), data files ", s.files || "?", " (+" + (s.addedFiles || 0) + ")",
        el("div", { class: "bar", style: null, "data-w": String(Math.round(100 * (Number(s.rows) || 0) / maxRows)) }))))
        : el("p", { class: "muted" }, "No snapshots yet.")));
    for (const b of document.querySelectorAll(".bar[data-w]")) b.style.width = b.dataset.w + "%";
  }).catch(showError);
}

// ---- Server ----

pages.server = (root) => {
  root.append(el("h1", {}, "Server"), errorBox(), el("div", { id: "server" }, "Loading…"));
  api("GET", "server").then(v => {
    const i = v.info;
    const used = i.diskTotal ? (i.diskTotal - i.diskFree) / i.diskTotal : 0;
    const bar = el("div", { class: "diskbar", role: "img", "aria-label": `Disk ${Math.round(used * 100)}% used` }, el("div", {}));
    bar.firstChild.style.width = Math.round(used * 100) + "%";
    fill(document.getElementById("server"), 
      el("section", { class: "card" }, el("dl", { class: "kv", id: "server-info" },
        el("dt", {}, "Site"), el("dd", {}, i.siteName), el("dt", {}, "Version"), el("dd", { id: "server-version" }, i.version),
        el("dt", {}, "Uptime"), el("dd", {}, secs(i.uptimeSeconds)), el("dt", {}, "Address"), el("dd", {}, i.address),
        el("dt", {}, "Deployment"), el("dd", { class: "mono" }, i.deploymentID),
        el("dt", {}, "Buckets / objects"), el("dd", {}, `${i.buckets} / ${i.objects} (${bytes(i.totalBytes)})`),
        el("dt", {}, "Disk"), el("dd", {}, `${bytes(i.diskTotal - i.diskFree)} used of ${bytes(i.diskTotal)}, ${bytes(i.diskFree)} free`, bar))),
      v.configError ? el("p", { class: "muted" }, "Settings are not shown: " + v.configError) : null,
      v.config.map(sc => el("section", { class: "card" }, el("h2", {}, "Settings: " + sc.subsys), el("table", { "data-subsys": sc.subsys },
        el("thead", {}, el("tr", {}, ["Key", "Value", "Source", "Change"].map(h => el("th", { scope: "col" }, h)))),
        el("tbody", {}, sc.keys.map(kv => settingRow(sc.subsys, kv)))))));
  }).catch(showError);
};

function settingRow(subsys, kv) {
  const id = "cfg-" + subsys + "-" + kv.key;
  const input = el("input", { id, value: kv.value, "aria-label": subsys + " " + kv.key });
  return el("tr", {}, el("th", { scope: "row" }, el("label", { for: id }, kv.key), kv.help ? el("div", { class: "muted" }, kv.help) : null),
    el("td", {}, input), el("td", {}, kv.source),
    el("td", {}, el("button", { type: "button", class: "secondary", onclick: async () => {
      if (input.value === kv.value) return;
      if (!confirm(`Change ${subsys} ${kv.key} from "${kv.value}" to "${input.value}"?`)) return;
      try { await api("PUT", "server/config/" + seg(subsys), { [kv.key]: input.value }); toast(`${subsys} ${kv.key} changed.`); route(); } catch (e) { showError(e); }
    } }, "Change")));
}

// ---- start ----

api("GET", "session").then(signedIn).catch(() => signedOut(""));
