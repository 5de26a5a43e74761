// mcp-harness report: draws the #data JSON (harness/src/report/html.rs). Text only ever goes
// in through textContent, so nothing recorded is parsed as markup.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("data").textContent);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function ms(x) { return x >= 100 ? x.toFixed(0) + " ms" : x.toFixed(1) + " ms"; }

  const t = data.totals;
  document.getElementById("totals").textContent =
    data.runs.length + " runs: " + t.passed + " passed, " + t.warn_only + " warned, " + t.failed + " failed, " + t.skipped + " skipped, " +
    t.error + " errors, " + t.not_exercised + " not exercised, " + t.not_applicable + " not applicable; " + t.warned + " with warnings, " + t.noted + " with notes; wall time " + ms(data.wall_ms) + ".";

  // Filters: status, transport, text.
  const filters = document.getElementById("filters");
  function select(label, options) {
    const l = add(filters, el("label", null, label + " "));
    const s = add(l, el("select"));
    for (const [value, text] of options) { const o = add(s, el("option", null, text)); o.value = value; }
    return s;
  }
  const byStatus = select("status", [["", "all"], ["not-passed", "not passed"], ["passed", "passed"], ["warned", "warned"], ["failed", "failed"],
    ["not_exercised", "not exercised"], ["not_applicable", "not applicable"], ["skipped", "skipped"], ["error", "error"],
    ["warn", "with warnings"], ["note", "with notes"]]);
  const transports = Array.from(new Set(data.runs.map(r => r.transport))).sort();
  const byTransport = select("transport", [["", "all"]].concat(transports.map(x => [x, x])));
  const textLabel = add(filters, el("label", null, "text "));
  const byText = add(textLabel, el("input"));
  byText.type = "search";
  byText.placeholder = "scenario, path, target, message";
  const shown = add(filters, el("span", "meta"));
  const openAll = add(filters, el("button", null, "open shown"));
  const closeAll = add(filters, el("button", null, "close all"));

  const table = document.getElementById("runs");
  const head = add(add(table, el("thead")), el("tr"));
  for (const h of ["#", "scenario", "transport", "target", "status", "duration"]) add(head, el("th", null, h));
  const body = add(table, el("tbody"));
  const rows = [];
  for (const run of data.runs) {
    const tr = add(body, el("tr", "run"));
    tr.id = "run-" + run.n;
    tr.dataset.status = run.status;
    tr.dataset.transport = run.transport;
    add(tr, el("td", "num", run.n));
    add(tr, el("td", null, run.scenario));
    add(tr, el("td", null, run.transport));
    add(tr, el("td", null, run.target));
    const status = add(tr, el("td"));
    add(status, el("span", "badge " + run.status, run.status.replace(/_/g, " ")));
    if (run.warnings.length) add(status, el("span", "badge warn", "warn " + run.warnings.length));
    if (run.notes.length) add(status, el("span", "badge note", "note " + run.notes.length));
    if (run.baseline) add(status, el("span", "badge baseline", run.baseline.replace(/_/g, " ")));
    add(tr, el("td", "num", run.duration_ms + " ms"));
    const detailRow = add(body, el("tr", "detail"));
    detailRow.hidden = true;
    const cell = add(detailRow, el("td"));
    cell.colSpan = 6;
    const haystack = [run.scenario, run.path, run.target, run.reason || ""]
      .concat(run.failures.concat(run.warnings, run.notes).map(f => f.check + " " + f.message)).join("\n").toLowerCase();
    const row = { run, tr, detailRow, cell, haystack, drawn: false };
    rows.push(row);
    tr.addEventListener("click", () => toggle(row));
  }

  function matches(row) {
    const r = row.run, s = byStatus.value;
    if (s === "not-passed" && r.status === "passed") return false;
    if (s === "warn" && !r.warnings.length) return false;
    if (s === "note" && !r.notes.length) return false;
    if (["passed", "warned", "failed", "not_exercised", "not_applicable", "skipped", "error"].includes(s) && r.status !== s) return false;
    if (byTransport.value && r.transport !== byTransport.value) return false;
    const q = byText.value.trim().toLowerCase();
    return !q || row.haystack.includes(q);
  }
  function applyFilters() {
    let n = 0;
    for (const row of rows) {
      const ok = matches(row);
      row.tr.hidden = !ok;
      if (!ok) row.detailRow.hidden = true;
      n += ok ? 1 : 0;
    }
    shown.textContent = n + " of " + rows.length + " shown";
  }
  for (const f of [byStatus, byTransport]) f.addEventListener("change", applyFilters);
  byText.addEventListener("input", applyFilters);
  openAll.addEventListener("click", () => rows.filter(r => !r.tr.hidden).forEach(r => open(r, true)));
  closeAll.addEventListener("click", () => rows.forEach(r => open(r, false)));

  function toggle(row) { open(row, row.detailRow.hidden); }
  function open(row, yes) {
    if (yes && !row.drawn) { draw(row.cell, row.run); row.drawn = true; }
    row.detailRow.hidden = !yes;
    row.tr.classList.toggle("open", yes);
  }

  function findings(parent, title, list) {
    if (!list.length) return;
    add(parent, el("h3", null, title));
    const ul = add(parent, el("ul", "findings"));
    for (const f of list) {
      const li = add(ul, el("li", f.level, f.check + ": " + f.message));
      if (f.reference) add(li, el("div", "meta", f.level + ": " + f.reference));
    }
  }

  function draw(cell, run) {
    const d = add(cell, el("div", "run-detail"));
    add(d, el("div", "meta", run.path + " · " + run.transport + " · " + run.target + " · " + run.duration_ms + " ms"));
    if (run.reason) add(d, el("p", null, run.reason));
    findings(d, "Failures", run.failures);
    findings(d, "Warnings (unmet SHOULDs)", run.warnings);
    findings(d, "Notes (rules of our SPEC.md, not MCP's)", run.notes);
    if (run.checks.length) {
      add(d, el("h3", null, "Checks"));
      const tb = add(d, el("table", "checks"));
      const h = add(tb, el("tr"));
      for (const x of ["check", "basis", "rests on", "judged"]) add(h, el("th", null, x));
      for (const c of run.checks) {
        const tr = add(tb, el("tr"));
        add(tr, el("td", null, c.check));
        add(tr, el("td", "level", c.level));
        add(tr, el("td", null, c.reference || ""));
        add(tr, el("td", c.judgement, c.judgement.replace(/_/g, " ")));
      }
    }
    if (run.steps.length) {
      add(d, el("h3", null, "Client plan"));
      const tb = add(d, el("table", "steps"));
      for (const s of run.steps) {
        const tr = add(tb, el("tr"));
        add(tr, el("td", null, s.step));
        add(tr, el("td", null, s.what));
        add(tr, el("td", null, s.status.replace(/_/g, " ")));
        add(tr, el("td", null, s.error || ""));
        add(tr, el("td", "num", s.elapsed_ms + " ms"));
      }
    }
    if (run.client) { add(d, el("h3", null, "Client process")); add(d, el("pre", null, run.client)); }
    add(d, el("h3", null, "Wire"));
    add(d, el("div", "legend", "Arrows run between the client's lane (left) and the mock's (right); " +
      "dashed arrows belong to a GET stream. Left columns: time since the mock started, time since the previous event. " +
      "Click an event for its recorded bytes."));
    if (!run.connections.length) add(d, el("p", "meta", "nothing was recorded"));
    for (const c of run.connections) diagram(d, run, c);
    add(d, el("h3", null, "Snapshot: " + run.snapshot.state + (run.snapshot.path ? " (" + run.snapshot.path + ")" : "")));
    if (run.snapshot.diff) {
      const pre = add(d, el("pre", "diff"));
      for (const line of run.snapshot.diff.split("\n")) {
        const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : null;
        add(pre, el("span", cls, line + "\n"));
      }
    }
  }

  function diagram(parent, run, c) {
    const g = add(parent, el("div", "diagram"));
    g.dataset.run = run.n;
    g.dataset.transport = run.transport;
    g.dataset.connection = c.number;
    add(g, el("div", "conn", "connection " + c.number + " (" + c.events.length + " events)"));
    const lanes = add(g, el("div", "lanes"));
    add(lanes, el("span", "t", "t"));
    add(lanes, el("span", "dt", "Δ"));
    const names = add(lanes, el("div", "names"));
    add(names, el("span", "lane client", "client"));
    add(names, el("span", "lane mock", "mock"));
    for (const e of c.events) {
      const row = add(g, el("div", "ev " + e.direction + " " + e.kind + (e.get ? " get" : "")));
      row.dataset.kind = e.kind;
      add(row, el("span", "t", ms(e.t_ms)));
      add(row, el("span", "dt", "+" + ms(e.dt_ms)));
      const track = add(row, el("div", "track"));
      track.title = e.label;
      if (e.direction === "client_to_mock" || e.direction === "mock_to_client") {
        add(track, el("div", "arrow"));
        add(track, el("span", "label", e.label));
      } else {
        add(track, el("span", "mark", e.label));
      }
      let pre = null;
      track.addEventListener("click", () => {
        if (!pre) { pre = add(row, el("pre", "detail", e.label + (e.detail ? "\n\n" + e.detail : ""))); }
        else { pre.hidden = !pre.hidden; }
      });
    }
  }

  applyFilters();
  function fromHash() {
    const h = decodeURIComponent(location.hash.slice(1));
    if (h === "all") rows.forEach(r => open(r, true));
    const row = rows.find(r => r.tr.id === h);
    if (row) { open(row, true); row.tr.scrollIntoView(); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.body.dataset.ready = "true";
})();
