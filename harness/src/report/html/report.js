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
  // Statuses a filter or chip stands for.
  const GROUPS = {
    failed: ["failed", "error"], attention: ["failed", "error", "not_exercised", "flaky_under_load", "warned"],
    skipped: ["skipped", "not_applicable", "pending", "not_run"],
  };

  const t = data.totals;
  document.getElementById("totals").textContent =
    data.runs.length + " runs: " + t.passed + " passed, " + t.warn_only + " warned, " + t.failed + " failed, " + t.skipped + " skipped, " +
    t.error + " errors, " + t.not_exercised + " not exercised, " + (t.flaky_under_load ? t.flaky_under_load + " flaky under load, " : "") + t.not_applicable + " not applicable; " + t.warned + " with warnings, " + t.noted + " with notes; wall time " + data.wall + ".";

  // Count chips, failures first: each shows its runs.
  const chips = document.getElementById("chips");
  const count = statuses => data.runs.filter(r => statuses.includes(r.status)).length;
  const chipList = [
    ["attention", "need a look", count(GROUPS.attention)], ["failed", "failed", count(GROUPS.failed)], ["warned", "warned", count(["warned"])],
    ["not_exercised", "not exercised", count(["not_exercised"])], ["flaky_under_load", "flaky under load", count(["flaky_under_load"])], ["skipped", "skipped or n/a", count(GROUPS.skipped)],
    ["passed", "passed", count(["passed"])], ["", "all", data.runs.length],
  ];
  const chipButtons = [];
  for (const [value, text, n] of chipList) {
    if (!n && value) continue;
    const b = add(chips, el("button", "chip " + (value || "all"), n + " " + text));
    b.dataset.filter = value;
    b.addEventListener("click", () => { byStatus.value = value; applyFilters(); });
    chipButtons.push(b);
  }

  // Filters: status, transport, text.
  const filters = document.getElementById("filters");
  function select(label, options) {
    const l = add(filters, el("label", null, label + " "));
    const s = add(l, el("select"));
    for (const [value, text] of options) { const o = add(s, el("option", null, text)); o.value = value; }
    return s;
  }
  const byStatus = select("status", [["", "all"], ["attention", "needs a look (failed, not exercised, warned)"], ["not-passed", "not passed"], ["passed", "passed"], ["warned", "warned"], ["failed", "failed"],
    ["not_exercised", "not exercised"], ["flaky_under_load", "flaky under load"], ["not_applicable", "not applicable"], ["skipped", "skipped"], ["error", "error"],
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
  // Failures first (the rank says how urgently a run asks to be read), then file order.
  const ordered = data.runs.slice().sort((a, b) => a.rank - b.rank || a.n - b.n);
  for (const run of ordered) {
    const tr = add(body, el("tr", "run"));
    tr.id = "run-" + run.n;
    tr.dataset.status = run.status;
    tr.dataset.transport = run.transport;
    add(tr, el("td", "num", run.n));
    add(tr, el("td", null, run.scenario));
    add(tr, el("td", null, run.transport));
    add(tr, el("td", null, run.target));
    const status = add(tr, el("td"));
    const expected = run.baseline === "expected_failure" || run.baseline === "expected_not_exercised";
    add(status, el("span", "badge " + run.status + (expected ? " expected" : ""), run.badge));
    const extra = [];
    if (run.warnings.length) extra.push(run.warnings.length + " warning" + (run.warnings.length > 1 ? "s" : ""));
    if (run.notes.length) extra.push(run.notes.length + " note" + (run.notes.length > 1 ? "s" : ""));
    if (extra.length) add(status, el("span", "meta", extra.join(", ")));
    add(tr, el("td", "num", run.duration));
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
    if (GROUPS[s] && !GROUPS[s].includes(r.status)) return false;
    if (s === "warn" && !r.warnings.length) return false;
    if (s === "note" && !r.notes.length) return false;
    if (["passed", "warned", "not_exercised", "flaky_under_load", "not_applicable", "error"].includes(s) && r.status !== s) return false;
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
    for (const b of chipButtons) b.classList.toggle("active", b.dataset.filter === byStatus.value);
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

  // The id of a drawn wire event: what a finding links to.
  function evId(run, connection, at) { return "ev-" + run.n + "-" + connection + "-" + at; }
  function link(parent, href, text) {
    const a = add(parent, el("a", "jump", text));
    a.href = "#" + href;
    a.addEventListener("click", ev => {
      ev.preventDefault();
      const target = document.getElementById(href);
      if (!target) return;
      target.scrollIntoView({ block: "center" });
      target.classList.remove("flash"); void target.offsetWidth; target.classList.add("flash");
    });
    return a;
  }
  function findings(parent, run, title, list) {
    if (!list.length) return;
    add(parent, el("h3", null, title));
    const ul = add(parent, el("ul", "findings"));
    for (const f of list) {
      const li = add(ul, el("li", f.level, f.check + ": " + f.message));
      if (f.reference) {
        const basis = f.level === "promise" ? "the client's own documented promise, not an MCP rule" : f.level;
        add(li, el("div", "meta", basis + ": " + f.reference));
      }
      const about = f.about || [];
      if (about.length) {
        const m = add(li, el("div", "meta"));
        link(m, evId(run, about[0].connection, about[0].event),
          about.length > 1 ? "show on the wire (" + about.length + " events, marked ◆)" : "show on the wire (marked ◆)");
      } else if (f.check === "snapshot" && run.snapshot.diff) {
        link(add(li, el("div", "meta")), "snap-" + run.n, "show the diff");
      }
    }
  }

  function draw(cell, run) {
    const d = add(cell, el("div", "run-detail"));
    add(d, el("div", "meta", run.path + " · " + run.transport + " · " + run.target + " · " + run.duration));
    if (run.reason) add(d, el("p", null, run.reason));
    findings(d, run, "Failures", run.failures);
    findings(d, run, "Warnings (unmet SHOULDs)", run.warnings);
    findings(d, run, "Notes (rules of our SPEC.md, not MCP's)", run.notes);
    // A snapshot that fails the run is read next to its failure, before the rest.
    if (run.snapshot.diff && run.status === "failed") snapshot(d, run);
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
    if (!(run.snapshot.diff && run.status === "failed")) snapshot(d, run);
  }

  function snapshot(d, run) {
    const h = add(d, el("h3", null, "Snapshot: " + run.snapshot.state + (run.snapshot.path ? " (" + run.snapshot.path + ")" : "")));
    h.id = "snap-" + run.n;
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
    // The events a failed check (or unmet SHOULD) is about: marked, and linked from it.
    const about = new Map();
    for (const f of run.failures.concat(run.warnings)) {
      for (const a of f.about || []) if (a.connection === c.number) about.set(a.event, (about.get(a.event) || []).concat(f.check));
    }
    for (const e of c.events) {
      const marked = about.get(e.at);
      const row = add(g, el("div", "ev " + e.direction + " " + e.kind + (e.get ? " get" : "") + (marked ? " about" : "")));
      row.id = evId(run, c.number, e.at);
      row.dataset.kind = e.kind;
      if (marked) row.dataset.about = marked.join("; ");
      add(row, el("span", "t", ms(e.t_ms)));
      add(row, el("span", "dt", "+" + ms(e.dt_ms)));
      const track = add(row, el("div", "track"));
      track.title = marked ? e.label + "\n◆ " + marked.join("; ") : e.label;
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

  // Opens on what needs a look, when anything does.
  if (rows.some(r => r.run.rank <= 3)) byStatus.value = "attention";
  applyFilters();
  function fromHash() {
    const h = decodeURIComponent(location.hash.slice(1));
    if (h === "all") { byStatus.value = ""; applyFilters(); rows.forEach(r => open(r, true)); }
    const row = rows.find(r => r.tr.id === h);
    if (row) { row.tr.hidden = false; open(row, true); row.tr.scrollIntoView(); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
  document.body.dataset.ready = "true";
})();
