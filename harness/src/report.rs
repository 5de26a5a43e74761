//! Reports: a terminal summary for people, `results.json` and JUnit XML for CI, and the
//! two files of their own modules: [`html`] (`index.html`, the runs with their wire as
//! sequence diagrams) and [`markdown`] (`summary.md`, for a CI job summary).
//!
//! A reports folder is also read back ([`read`]): `mcp-harness merge` joins the folders of a
//! partitioned run's shards, and the matrix reads each client's `results.json`. What
//! `results.json` leaves out (each run's transcript and recorded wire, which its readers do
//! not need) comes back from `transcripts/` and `wire.json`, so a merged `index.html` draws
//! the same diagrams as a whole run's.

pub mod html;
pub mod markdown;

use crate::error::HarnessError;
use crate::transcript::Redactor;
use mcp_results::{Document, Partition, RunResult, SnapshotStatus, Status, Verdict};
use mcp_scenario::basis::Level;
use mcp_scenario::{TransportName, WireEvent};

use quick_xml::escape::escape;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

pub use mcp_results::Totals;

/// One line per run that did not pass, with its reasons, then the totals line; secrets
/// redacted.
pub fn summary(results: &[RunResult], wall_ms: u64) -> String {
    let mut s = String::new();
    for r in results {
        let label = format!("{} [{}, {}]", r.scenario, r.transport.as_str(), r.target);
        match r.status {
            Status::Passed => {
                let flags = match (r.warnings.len(), r.notes.len()) {
                    (0, 0) => String::new(),
                    (w, n) => format!(", {w} warning(s), {n} note(s)"),
                };
                let _ = writeln!(s, "PASS  {label} ({} ms{flags})", r.duration_ms);
                weighed_lines(&mut s, r);
                if let SnapshotStatus::Mismatch { diff, .. } = &r.snapshot {
                    for line in diff.lines() {
                        let _ = writeln!(s, "        {line}");
                    }
                }
                if let SnapshotStatus::Created { path } = &r.snapshot {
                    let _ = writeln!(
                        s,
                        "NEW   {label}: first snapshot written to {} (review and commit it)",
                        path.display()
                    );
                }
            }
            Status::Warned => {
                let _ = writeln!(s, "WARN  {label} ({} ms): {}", r.duration_ms, r.reason.as_deref().unwrap_or(""));
                weighed_lines(&mut s, r);
            }
            Status::Skipped => {
                let _ = writeln!(s, "SKIP  {label}: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::Error => {
                let _ = writeln!(s, "ERROR {label}: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::Pending => {
                let _ = writeln!(s, "PEND  {label}: pending: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::NotRun => {
                let _ = writeln!(s, "NOTRUN {label}: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::NotExercised => {
                let expected =
                    if r.baseline == Some(Verdict::ExpectedNotExercised) { " (expected: baseline)" } else { "" };
                let _ = writeln!(s, "NOT EXERCISED{expected}  {label} — {}", r.path.display());
                let _ = writeln!(s, "      {}", r.reason.as_deref().unwrap_or(""));
                failure_lines(&mut s, r);
                weighed_lines(&mut s, r);
            }
            Status::NotApplicable => {
                let _ = writeln!(s, "N/A   {label}: {}", r.reason.as_deref().unwrap_or(""));
            }
            Status::FlakyUnderLoad => {
                let _ = writeln!(s, "FLAKY UNDER LOAD  {label} — {}", r.path.display());
                let _ = writeln!(s, "      {}", r.reason.as_deref().unwrap_or(""));
                weighed_lines(&mut s, r);
            }
            Status::Failed => {
                let expected = if r.baseline == Some(Verdict::ExpectedFailure) { " (expected: baseline)" } else { "" };
                let _ = writeln!(s, "FAIL{expected}  {label} — {}", r.path.display());
                failure_lines(&mut s, r);
                weighed_lines(&mut s, r);
                match &r.snapshot {
                    // The `snapshot` failure above says what differs and what to do.
                    SnapshotStatus::Mismatch { diff, .. } => {
                        for line in diff.lines() {
                            let _ = writeln!(s, "        {line}");
                        }
                    }
                    SnapshotStatus::Created { path } => {
                        let _ =
                            writeln!(s, "      first snapshot written to {} (review and commit it)", path.display());
                    }
                    SnapshotStatus::Withheld { path } => {
                        let _ = writeln!(
                            s,
                            "      no snapshot taken: the run failed, so its transcript waits as {}.new (`mcp-harness review` accepts it once it is right)",
                            path.display()
                        );
                    }
                    _ => {}
                }
            }
        }
        if let (Some(load), false) = (&r.load, r.status == Status::FlakyUnderLoad) {
            let first = load.attempts.first().map_or(0, |a| a.lag_ms);
            let _ = writeln!(
                s,
                "      re-run: the machine starved attempt 1 ({first} ms of scheduling lag, over the scenario's {} ms timing margin); {} attempts gave the same verdict",
                load.margin_ms,
                load.attempts.len()
            );
        }
    }
    s.push_str(&recap(results));
    let t = Totals::of(results);
    // The rarer outcomes are named only when some run had them.
    let mut extra = String::new();
    for (count, outcome) in [
        (t.pending, "pending"),
        (t.not_run, "not run"),
        (t.warn_only, "warned (a SHOULD broken, nothing held)"),
        (t.not_exercised, "not exercised"),
        (t.not_applicable, "not applicable"),
        (t.flaky_under_load, "flaky under load"),
    ] {
        if count > 0 {
            let _ = write!(extra, ", {count} {outcome}");
        }
    }
    let _ = writeln!(
        s,
        "{} passed, {} failed, {} skipped, {} errors{extra} in {:.2}s",
        t.passed,
        t.failed,
        t.skipped,
        t.error,
        wall_ms as f64 / 1000.0
    );
    if t.warned + t.noted > 0 {
        let _ = writeln!(
            s,
            "{} run(s) with warnings (unmet SHOULDs, robustness findings; --strict fails them), {} with notes (rules of our SPEC.md, not MCP's)",
            t.warned, t.noted
        );
    }
    let created = results.iter().filter(|r| matches!(r.snapshot, SnapshotStatus::Created { .. })).count();
    if created > 0 {
        let _ = writeln!(s, "{created} new snapshot(s) written beside their scenarios: review them before committing");
    }
    // The terminal is an output like the others: a reason or a target's command line may
    // quote a credential.
    Redactor::secrets_only().text(&s)
}

/// Every run that needs a look, one line each, just above the totals (the run lines above
/// may have scrolled away): failed and errored runs, then runs not exercised, each with its
/// first failing check and the file:line of that check in the scenario; what the baseline
/// expects comes last, labelled. Empty when nothing needs a look.
pub fn recap(results: &[RunResult]) -> String {
    let needs_look = |r: &&RunResult| {
        matches!(r.status, Status::Failed | Status::Error | Status::NotExercised | Status::FlakyUnderLoad)
    };
    let expected = |r: &RunResult| {
        matches!(r.baseline, Some(Verdict::ExpectedFailure | Verdict::ExpectedNotExercised | Verdict::Flaky))
    };
    let mut listed: Vec<&RunResult> = results.iter().filter(needs_look).collect();
    if listed.is_empty() {
        return String::new();
    }
    listed.sort_by_key(|r| (expected(r), !matches!(r.status, Status::Failed | Status::Error)));
    let count = |f: &dyn Fn(&RunResult) -> bool| listed.iter().filter(|r| f(r)).count();
    let (failed, unexercised) = (
        count(&|r| !expected(r) && matches!(r.status, Status::Failed | Status::Error)),
        count(&|r| !expected(r) && r.status == Status::NotExercised),
    );
    let flaky = count(&|r| !expected(r) && r.status == Status::FlakyUnderLoad);
    let mut s = format!("── needs a look: {failed} failed, {unexercised} not exercised");
    if flaky > 0 {
        let _ = write!(s, ", {flaky} flaky under load");
    }
    let known = count(&|r| expected(r));
    if known > 0 {
        let _ = write!(s, " (and {known} the baseline expects)");
    }
    s.push_str(" ──\n");
    for r in listed {
        let word = match r.status {
            Status::Failed => "FAIL",
            Status::Error => "ERROR",
            Status::FlakyUnderLoad => "FLAKY UNDER LOAD",
            _ => "NOT EXERCISED",
        };
        let label = if expected(r) { format!("{word} (expected: baseline)") } else { word.to_string() };
        let (at, why) = match r.failures.first() {
            Some(f) => (check_location(&r.path, &f.check), format!("{}: {}", f.check, f.message)),
            None => (r.path.display().to_string(), r.reason.clone().unwrap_or_default()),
        };
        let why: String = why.lines().next().unwrap_or_default().chars().take(160).collect();
        let _ = writeln!(s, "{label}  {} [{}] — {at}: {why}", r.scenario, r.transport.as_str());
    }
    s
}

/// `path:line` of the check a failure names (where the loader places it), or the path
/// alone for a rule of the harness (`always: …`) or a file it cannot read.
fn check_location(path: &Path, check: &str) -> String {
    let position = crate::checks::index_of_label(check).and_then(|i| {
        let text = std::fs::read_to_string(path).ok()?;
        mcp_scenario::load::Locator::new(path, &text).check_position(i)
    });
    match position {
        Some((line, _)) => format!("{}:{line}", path.display()),
        None => path.display().to_string(),
    }
}

/// The summary without passed, skipped, pending and not applicable runs, nor runs not
/// exercised that the baseline expects (each a line plus its indented details), for
/// `--quiet`: what is left is what needs a look.
pub fn without_passes(summary: &str) -> String {
    let mut out = String::new();
    let mut dropping = false;
    for line in summary.lines() {
        let expected_unexercised = line.starts_with("NOT EXERCISED (expected: baseline)");
        if ["PASS", "SKIP", "PEND", "N/A "].iter().any(|p| line.starts_with(p)) || expected_unexercised {
            dropping = true;
            continue;
        }
        if dropping && line.starts_with(' ') {
            continue;
        }
        dropping = false;
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// A third-party run's unmet SHOULDs and SPEC.md rules, each with what it rests on.
/// A run's failures, one line each; one resting on a client's own promise says so below it,
/// apart from MCP's rules.
fn failure_lines(s: &mut String, r: &RunResult) {
    for f in &r.failures {
        let _ = writeln!(s, "      {}: {}", f.check, f.message);
        if f.level == Level::Promise {
            let _ = writeln!(
                s,
                "        (the client's own documented promise, not an MCP rule: {})",
                f.reference.as_deref().unwrap_or("")
            );
        }
    }
}

fn weighed_lines(s: &mut String, r: &RunResult) {
    for (what, list) in [("warning", &r.warnings), ("note", &r.notes)] {
        for f in list {
            let rests_on = f.reference.as_deref().map(|x| format!(" — {}: {x}", f.level)).unwrap_or_default();
            let _ = writeln!(s, "      {what}: {}: {}{rests_on}", f.check, f.message);
        }
    }
}

/// Writes `results.json`, `junit.xml`, `index.html`, `summary.md` and `wire.json` into
/// `dir`, and each run's normalised transcript under `transcripts/` (see
/// [`transcript_path`]). `partition` is the shard this run was (`run --partition`), recorded
/// in `results.json` so that `merge` can tell a missing shard.
pub fn write(
    dir: &Path,
    results: &[RunResult],
    wall_ms: u64,
    partition: Option<Partition>,
) -> Result<(), HarnessError> {
    std::fs::create_dir_all(dir).map_err(|e| HarnessError::io(format!("creating {}", dir.display()), e))?;
    let files = [
        ("results.json", json(results, wall_ms, partition)),
        ("junit.xml", junit(results, wall_ms)),
        ("index.html", html::page(results, wall_ms)),
        ("summary.md", markdown::summary(results, wall_ms)),
        ("wire.json", wire_json(results)),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).map_err(|e| HarnessError::io(format!("writing {name}"), e))?;
    }
    write_transcripts(&dir.join("transcripts"), results)
}

/// The transcripts as plain files, one per run: what a CI artefact keeps when the snapshot
/// differs, and what `make soak` compares between repetitions. The folder is emptied first
/// so that a file there always belongs to this run.
fn write_transcripts(dir: &Path, results: &[RunResult]) -> Result<(), HarnessError> {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(HarnessError::io(format!("clearing {}", dir.display()), e)),
    }
    for r in results.iter().filter(|r| !r.transcript.is_empty()) {
        let path = dir.join(transcript_path(r));
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| HarnessError::io(format!("creating {}", parent.display()), e))?;
        }
        std::fs::write(&path, &r.transcript).map_err(|e| HarnessError::io(format!("writing {}", path.display()), e))?;
    }
    Ok(())
}

/// Where a run's transcript goes under `transcripts/`: the scenario's path (its normal
/// components only, so an absolute or `..` path stays inside) with `.<transport>.txt` for
/// `.yaml`, since two folders may hold scenarios of the same name.
pub fn transcript_path(r: &RunResult) -> std::path::PathBuf {
    let mut path: std::path::PathBuf = r
        .path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(part) => Some(part),
            _ => None,
        })
        .collect();
    path.set_extension(format!("{}.txt", r.transport.as_str()));
    path
}

/// The `results.json` document ([`mcp_results::Document`]: format version, totals, wall
/// time, the shard when partitioned, every run), secrets redacted; also what
/// `run --format json` prints.
pub fn json(results: &[RunResult], wall_ms: u64, partition: Option<Partition>) -> String {
    // Redacted as a document, not as text: pretty-printed JSON has a space after each colon,
    // which a text pattern for `"access_token":"…"` would miss.
    let doc = Document::new(results.to_vec(), wall_ms, partition);
    let mut doc = serde_json::to_value(doc).unwrap_or_default();
    Redactor::secrets_only().value(&mut doc);
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// One run's recorded wire in `wire.json`, named so a reader can match it to its run.
#[derive(Serialize, Deserialize)]
struct RunWire {
    path: std::path::PathBuf,
    transport: TransportName,
    target: String,
    wire: Vec<Vec<WireEvent>>,
}

/// `wire.json`: each run's recorded wire (already redacted by the runner; secrets redacted
/// again, as `results.json` is), in the order of `results.json`'s runs. Only [`read`] needs
/// it, to draw a merged report's diagrams.
fn wire_json(results: &[RunResult]) -> String {
    let runs: Vec<RunWire> = results
        .iter()
        .map(|r| RunWire {
            path: r.path.clone(),
            transport: r.transport,
            target: r.target.clone(),
            wire: r.wire.clone(),
        })
        .collect();
    let mut doc = serde_json::to_value(runs).unwrap_or_default();
    Redactor::secrets_only().value(&mut doc);
    doc.to_string()
}

/// A reports folder read back: what [`write`] wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// Every run, with its transcript and wire when the folder still holds them.
    pub runs: Vec<RunResult>,
    /// The run's wall time.
    pub wall_ms: u64,
    /// The shard it was, for a partitioned run.
    pub partition: Option<Partition>,
}

/// Reads `results.json` from `dir` (or the file itself when `dir` is one), and, beside it,
/// each run's transcript from `transcripts/` and its wire from `wire.json` when there. A
/// folder without `results.json` is an error that says how one is made.
pub fn read(dir: &Path) -> Result<Written, HarnessError> {
    let (file, dir) = if dir.is_file() {
        (dir.to_path_buf(), dir.parent().unwrap_or(Path::new(".")).to_path_buf())
    } else {
        (dir.join("results.json"), dir.to_path_buf())
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        HarnessError::io(
            format!("reading {} (a reports folder that `mcp-harness run --reports DIR` wrote)", file.display()),
            e,
        )
    })?;
    let doc = Document::parse(&text)
        .map_err(|e| HarnessError::io(format!("reading {}", file.display()), std::io::Error::other(e)))?;
    let mut runs = doc.runs;
    for r in &mut runs {
        if let Ok(t) = std::fs::read_to_string(dir.join("transcripts").join(transcript_path(r))) {
            r.transcript = t;
        }
    }
    if let Some(wires) = std::fs::read_to_string(dir.join("wire.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Vec<RunWire>>(&t).ok())
        .filter(|w| w.len() == runs.len())
    {
        for (r, w) in runs.iter_mut().zip(wires) {
            if w.path == r.path && w.transport == r.transport && w.target == r.target {
                r.wire = w.wire;
            }
        }
    }
    Ok(Written { runs, wall_ms: doc.wall_ms, partition: doc.partition })
}

/// JUnit XML: one testsuite per target, one testcase per run (scenario × transport) named
/// `<scenario> [<transport>]`, with the target as its class name.
///
/// A failed run is a `<failure>` whose message is its first failure and whose text is all of
/// them (and the snapshot diff). Under a baseline (`--expected-failures`) the JUnit verdicts
/// follow the baseline's, as the exit code does: an expected or flaky failure is `<skipped>`
/// (its messages still in the text), and a listed run that now passes is a `<failure>`
/// saying to remove it, so a CI test viewer agrees with the job's result. Warnings and notes
/// go to `<system-out>`, beside any verdict.
pub fn junit(results: &[RunResult], wall_ms: u64) -> String {
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let verdicts: Vec<Case> = results.iter().map(Case::of).collect();
    let count = |cases: &[&Case], want: fn(&Case) -> bool| cases.iter().filter(|c| want(c)).count();
    let all: Vec<&Case> = verdicts.iter().collect();
    let _ = writeln!(
        x,
        "<testsuites name=\"mcp-harness\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        results.len(),
        count(&all, |c| matches!(c.verdict, CaseVerdict::Failure(..))),
        count(&all, |c| matches!(c.verdict, CaseVerdict::Error(..))),
        count(&all, |c| matches!(c.verdict, CaseVerdict::Skipped(..))),
        wall_ms as f64 / 1000.0
    );
    let mut targets: Vec<&str> = Vec::new();
    for r in results {
        if !targets.contains(&r.target.as_str()) {
            targets.push(&r.target);
        }
    }
    let redactor = Redactor::secrets_only();
    for target in targets {
        let cases: Vec<(&RunResult, &Case)> =
            results.iter().zip(&verdicts).filter(|(r, _)| r.target == target).collect();
        let of_target: Vec<&Case> = cases.iter().map(|(_, c)| *c).collect();
        let time: u64 = cases.iter().map(|(r, _)| r.duration_ms).sum();
        let _ = writeln!(
            x,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            escape(redactor.text(target)),
            cases.len(),
            count(&of_target, |c| matches!(c.verdict, CaseVerdict::Failure(..))),
            count(&of_target, |c| matches!(c.verdict, CaseVerdict::Error(..))),
            count(&of_target, |c| matches!(c.verdict, CaseVerdict::Skipped(..))),
            time as f64 / 1000.0
        );
        for (r, case) in cases {
            testcase(&mut x, r, case);
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

/// What one run is in JUnit terms.
struct Case {
    verdict: CaseVerdict,
    /// Warnings, notes, and the messages of a failure the baseline expected.
    out: String,
}

enum CaseVerdict {
    Passed,
    /// (message, text)
    Failure(String, String),
    Error(String),
    Skipped(String),
}

impl Case {
    fn of(r: &RunResult) -> Case {
        let mut out = String::new();
        weighed_lines(&mut out, r);
        let mut body: Vec<String> = r.failures.iter().map(|f| format!("{}: {}", f.check, f.message)).collect();
        match &r.snapshot {
            // The `snapshot` failure among the failures names the file; the diff follows it.
            SnapshotStatus::Mismatch { diff, .. } => body.push(diff.clone()),
            SnapshotStatus::Withheld { path } => {
                body.push(format!("no snapshot taken (the run failed): pending review as {}.new", path.display()))
            }
            _ => {}
        }
        let first = markdown::first_failure(r);
        let verdict = match (r.status, r.baseline) {
            (Status::Skipped, _) => CaseVerdict::Skipped(r.reason.clone().unwrap_or_default()),
            (Status::NotApplicable, _) => {
                CaseVerdict::Skipped(format!("{}: {}", r.status.as_str(), r.reason.clone().unwrap_or_default()))
            }
            (Status::NotExercised, Some(Verdict::ExpectedNotExercised)) => {
                CaseVerdict::Skipped(format!("not exercised (baseline): {}", r.reason.clone().unwrap_or_default()))
            }
            // Not a pass, and it fails the run's exit code: a failure case, named as such.
            (Status::NotExercised, _) => CaseVerdict::Failure(
                format!("not exercised: {}", r.reason.clone().unwrap_or_default()),
                body.join("\n"),
            ),
            (Status::FlakyUnderLoad, Some(Verdict::Flaky)) => {
                CaseVerdict::Skipped(format!("flaky (baseline): {}", r.reason.clone().unwrap_or_default()))
            }
            (Status::FlakyUnderLoad, _) => CaseVerdict::Failure(
                format!("flaky under load: {}", r.reason.clone().unwrap_or_default()),
                body.join("\n"),
            ),
            // JUnit has no pending or not-run state: both are skipped cases whose message
            // starts with the status, so CI viewers tell them apart.
            (Status::Pending | Status::NotRun, _) => {
                CaseVerdict::Skipped(format!("{}: {}", r.status.as_str(), r.reason.clone().unwrap_or_default()))
            }
            (Status::Passed | Status::Warned, Some(Verdict::StaleEntry)) => CaseVerdict::Failure(
                "listed in the expected-failures baseline but passes now: remove it from the baseline".into(),
                String::new(),
            ),
            (Status::Passed | Status::Warned, _) => CaseVerdict::Passed,
            (Status::Failed | Status::Error, Some(v @ (Verdict::ExpectedFailure | Verdict::Flaky))) => {
                let why = if v == Verdict::Flaky { "flaky (baseline)" } else { "expected failure (baseline)" };
                out.insert_str(0, &format!("{}\n", body.join("\n")));
                CaseVerdict::Skipped(format!("{why}: {first}"))
            }
            (Status::Error, _) => CaseVerdict::Error(first),
            (Status::Failed, _) => CaseVerdict::Failure(first, body.join("\n")),
        };
        Case { verdict, out }
    }
}

/// One `<testcase>` element, every text redacted and escaped.
fn testcase(x: &mut String, r: &RunResult, case: &Case) {
    let redactor = Redactor::secrets_only();
    let esc = |s: &str| escape(redactor.text(s)).into_owned();
    let _ = write!(
        x,
        "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" time=\"{:.3}\"",
        esc(&format!("{} [{}]", r.scenario, r.transport.as_str())),
        esc(&r.target),
        esc(&r.path.display().to_string()),
        r.duration_ms as f64 / 1000.0
    );
    let verdict = match &case.verdict {
        CaseVerdict::Passed => String::new(),
        CaseVerdict::Failure(message, text) => {
            format!("      <failure message=\"{}\">{}</failure>\n", esc(message), esc(text))
        }
        CaseVerdict::Error(message) => format!("      <error message=\"{}\"/>\n", esc(message)),
        CaseVerdict::Skipped(message) => format!("      <skipped message=\"{}\"/>\n", esc(message)),
    };
    let out = case.out.trim_end();
    if verdict.is_empty() && out.is_empty() {
        x.push_str("/>\n");
        return;
    }
    x.push_str(">\n");
    x.push_str(&verdict);
    if !out.is_empty() {
        // JUnit has no warning state: unmet SHOULDs and SPEC.md notes go to the test case's
        // output, where CI viewers show them beside the verdict.
        let _ = writeln!(x, "      <system-out>{}</system-out>", esc(out));
    }
    x.push_str("    </testcase>\n");
}

#[cfg(test)]
mod tests {
    #[test]
    fn quiet_keeps_only_what_needs_a_look() {
        let summary = "PASS  a [stdio, t] (1 ms, 1 warning(s), 0 note(s))\n      warning: w\nN/A   b [stdio, t]: why\nNOT EXERCISED (expected: baseline)  c [stdio, t] — c.yaml\n      reason c\nNOT EXERCISED  d [stdio, t] — d.yaml\n      reason d\nFAIL  e [stdio, t] — e.yaml\n      check 1 (sent): m\n1 passed, 1 failed\n";
        assert_eq!(
            super::without_passes(summary),
            "NOT EXERCISED  d [stdio, t] — d.yaml\n      reason d\nFAIL  e [stdio, t] — e.yaml\n      check 1 (sent): m\n1 passed, 1 failed\n"
        );
    }
    use super::*;

    fn run(scenario: &str, target: &str, status: &str, baseline: Option<&str>) -> RunResult {
        serde_json::from_value(serde_json::json!({
            "scenario": scenario,
            "path": format!("scenarios/{scenario}.yaml"),
            "transport": "http",
            "target": target,
            "status": status,
            "failures": if status == "failed" { serde_json::json!([
                {"check": "check 1 (sent)", "message": "no <GET> & Bearer tok-1", "level": "must"},
                {"check": "check 2 (http)", "message": "second", "level": "must"},
            ]) } else { serde_json::json!([]) },
            "warnings": [{"check": "check 3 (http)", "message": "a SHOULD", "level": "should", "reference": "r"}],
            "baseline": baseline,
        }))
        .expect("a run")
    }

    #[test]
    fn the_recap_lists_what_needs_a_look_with_the_failing_check_line_last_before_the_totals() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("e.yaml");
        std::fs::write(
            &path,
            "name: e\nchecks:\n  # a comment\n  - sent: {method: x}\n    must: \"m\"\n  - http: {header: A}\n",
        )
        .expect("write");
        let mut failed = run("e", "bundled", "failed", None);
        failed.path = path.clone();
        failed.failures.swap(0, 1);
        let expected = run("k", "bundled", "failed", Some("expected_failure"));
        let passed = run("p", "bundled", "passed", None);
        let summary = summary(&[expected, failed, passed], 1);
        let tail: Vec<&str> = summary.lines().rev().take(5).collect();
        assert!(tail.iter().any(|l| l.starts_with("1 passed, 2 failed")), "{summary}");
        let at = format!("— {}:6: check 2 (http): second", path.display());
        let header = summary
            .lines()
            .position(|l| l == "── needs a look: 1 failed, 0 not exercised (and 1 the baseline expects) ──");
        let first = summary.lines().position(|l| l.starts_with("FAIL  e [http]") && l.ends_with(&at));
        let known =
            summary.lines().position(|l| l.starts_with("FAIL (expected: baseline)  k [http] — scenarios/k.yaml:"));
        assert!(header.is_some() && header < first && first < known, "{summary}");
        assert_eq!(recap(&[run("p", "bundled", "passed", None)]), "");
    }

    #[test]
    fn transcripts_are_written_per_run_inside_their_folder_and_stale_ones_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut a = run("http/a", "bundled", "passed", None);
        a.transcript = "A".into();
        let mut b = run("x", "bundled", "passed", None);
        b.path = "/../abs/b.yaml".into();
        b.transcript = "B".into();
        std::fs::create_dir_all(dir.path().join("transcripts")).expect("mkdir");
        std::fs::write(dir.path().join("transcripts/stale.txt"), "old").expect("write");
        write(dir.path(), &[a, b], 1, None).expect("written");
        let t = dir.path().join("transcripts");
        assert_eq!(std::fs::read_to_string(t.join("scenarios/http/a.http.txt")).expect("a"), "A");
        assert_eq!(std::fs::read_to_string(t.join("abs/b.http.txt")).expect("b"), "B");
        assert!(!t.join("stale.txt").exists());
    }

    #[test]
    fn junit_has_a_case_per_run_with_its_failure_messages_and_a_suite_per_target() {
        let x = junit(&[run("a", "bundled", "failed", None), run("b", "cmd:x", "passed", None)], 10);
        assert!(
            x.contains("<testsuites name=\"mcp-harness\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\""),
            "{x}"
        );
        assert!(
            x.contains("<testsuite name=\"bundled\" tests=\"1\" failures=\"1\"")
                && x.contains("<testsuite name=\"cmd:x\" tests=\"1\" failures=\"0\""),
            "{x}"
        );
        assert!(
            x.contains("<failure message=\"check 1 (sent): no &lt;GET&gt; &amp; Bearer &lt;redacted&gt;\">check 1 (sent): no &lt;GET&gt; &amp; Bearer &lt;redacted&gt;\ncheck 2 (http): second</failure>"),
            "{x}"
        );
        assert!(x.contains("<system-out>      warning: check 3 (http): a SHOULD — should: r</system-out>"), "{x}");
        assert!(!x.contains("tok-1"));
    }

    #[test]
    fn junit_follows_the_baseline() {
        let x = junit(
            &[
                run("expected", "cmd:x", "failed", Some("expected_failure")),
                run("flaky", "cmd:x", "failed", Some("flaky")),
                run("stale", "cmd:x", "passed", Some("stale_entry")),
                run("new", "cmd:x", "failed", Some("unexpected_failure")),
            ],
            10,
        );
        for part in [
            "tests=\"4\" failures=\"2\" errors=\"0\" skipped=\"2\"",
            "<skipped message=\"expected failure (baseline): check 1 (sent): no &lt;GET&gt;",
            "<skipped message=\"flaky (baseline): check 1 (sent)",
            "<failure message=\"listed in the expected-failures baseline but passes now",
            // An expected failure keeps its messages.
            "<system-out>check 1 (sent): no &lt;GET&gt;",
        ] {
            assert!(x.contains(part), "{part} in {x}");
        }
    }
}
